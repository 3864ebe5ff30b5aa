"""Subproblem solvers shared by the ADMM and the centralised RFS solver.

Everything here is a pure function of numpy arrays so that the same code runs in-process, in
threads or inside Dask workers and gives the same bits on every backend.

* :func:`l21_norm`, :func:`shrink_rows` — the L2,1 norm and its proximal map (ADMM-MVFS spec (A4)).
* :func:`irls_l21_ls`, :func:`fista_l21_ls` — the L2,1-regularised least squares of the W-step
  (ADMM-MVFS spec (A5a), (A5b)); :func:`l21_ls_objective` is its objective.
* :func:`class_step` — the class-partitioned Z̄ / P̄ / F update (paper Eqs. (21)–(23); spec (A3), (A4)).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

EPS = 1e-10  # ε_F = ε_D inside the square roots (ADMM-MVFS spec §3.5)


def l21_norm(A: np.ndarray) -> float:
    """Return ``||A||_{2,1}``, the sum of the Euclidean norms of the rows of ``A``."""
    return float(np.sqrt(np.einsum("ij,ij->i", A, A)).sum())


def row_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row of ``A``."""
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def shrink_rows(U: np.ndarray, tau: float) -> np.ndarray:
    """Row-wise shrinkage, the prox of ``tau * ||.||_{2,1}`` (ADMM-MVFS spec (A4)).

    ``shrink_rows(u, τ) = max(0, 1 − τ/||u||₂) u`` per row, and 0 for a zero row.
    """
    norms = row_norms(U)
    scale = np.zeros_like(norms)
    nz = norms > tau
    scale[nz] = 1.0 - tau / norms[nz]
    return U * scale[:, None]


def l21_ls_objective(X, T, W, c, gram=None, B=None, tt=None) -> float:
    """``½||XW − T||_F² + c||W||_{2,1}`` (the W-subproblem (A5) with ``c = λ/ρ``).

    With ``gram = XᵀX``, ``B = XᵀT`` and ``tt = ||T||²`` the data term is evaluated without ``X``.
    """
    if gram is not None and B is not None and tt is not None:
        fit = 0.5 * (np.sum(W * (gram @ W)) - 2.0 * np.sum(W * B) + tt)
    else:
        R = X @ W - T
        fit = 0.5 * np.sum(R * R)
    return float(fit + c * l21_norm(W))


def irls_l21_ls(W, c, *, n_iter=1, gram=None, B=None, X=None, T=None, eps=EPS):
    """IRLS steps for ``min ½||XW − T||² + c||W||_{2,1}`` (ADMM-MVFS spec (A5a)).

    Each step fixes ``D = diag(1/(2 sqrt(||w^r||² + ε)))`` at the current ``W`` and solves
    ``(XᵀX + 2cD) W = XᵀT``. With ``S = D^{-1/2}`` this is computed in the well-conditioned form
    ``W = S (S XᵀX S + 2c I)^{-1} S XᵀT`` (eigenvalues ≥ 2c), from ``gram = XᵀX`` and ``B = XᵀT``.
    Without ``gram`` (``d > n``) the push-through form ``W = D^{-1}Xᵀ(X D^{-1} Xᵀ + 2c I_n)^{-1} T``
    is used, with ``X`` and ``T``. Each step does not increase the objective (Nie et al., 2010).

    Parameters
    ----------
    W : ndarray of shape (d, C)
        Warm start (must not be identically zero: ``D`` would be infinite on every row).
    c : float
        Regularisation weight ``λ/ρ``.
    n_iter : int
        Number of reweighting steps (``inner_iters``).
    gram, B : ndarray, optional
        ``XᵀX`` (d, d) and ``XᵀT`` (d, C) for the primal form.
    X, T : ndarray, optional
        Data (n, d) and target (n, C) for the push-through form.

    Returns
    -------
    W : ndarray of shape (d, C)
    """
    for _ in range(n_iter):
        g = 2.0 * np.sqrt(np.einsum("ij,ij->i", W, W) + eps)  # diag of D^{-1}
        if gram is not None:
            s = np.sqrt(g)
            K = gram * s[:, None] * s[None, :]
            K.flat[:: K.shape[0] + 1] += 2.0 * c
            W = s[:, None] * linalg.solve(K, s[:, None] * B, assume_a="pos", check_finite=False)
        else:
            K = (X * g[None, :]) @ X.T
            K.flat[:: K.shape[0] + 1] += 2.0 * c
            theta = linalg.solve(K, T, assume_a="pos", check_finite=False)
            W = g[:, None] * (X.T @ theta)
    return W


def lipschitz(gram=None, X=None, n_power=100, seed=0) -> float:
    """Largest eigenvalue of ``XᵀX`` (the Lipschitz constant ``L = ||X||₂²`` of (A5b)).

    Exact from ``gram`` when given, else by power iteration on ``X`` with a 1 % safety margin
    (power iteration approaches ``L`` from below, an underestimate would break FISTA).
    """
    if gram is not None:
        d = gram.shape[0]
        return float(linalg.eigh(gram, eigvals_only=True, subset_by_index=[d - 1, d - 1])[0])
    v = np.random.default_rng(seed).standard_normal(X.shape[1])
    v /= np.linalg.norm(v)
    lam = 0.0
    for _ in range(n_power):
        u = X.T @ (X @ v)
        lam_new = float(np.linalg.norm(u))
        if lam_new == 0.0:
            return 0.0
        v = u / lam_new
        if abs(lam_new - lam) <= 1e-10 * lam_new:
            lam = lam_new
            break
        lam = lam_new
    return 1.01 * lam


def fista_l21_ls(W, c, L, *, n_iter=1, gram=None, B=None, X=None, T=None):
    """FISTA steps for ``min ½||XW − T||² + c||W||_{2,1}`` (ADMM-MVFS spec (A5b); Liu et al., 2009).

    Step ``1/L``; ``W ← shrink_rows(S − ∇/L, c/L)`` with Nesterov momentum restarted at each call
    (warm start from ``W``). The gradient is ``gram S − B`` when ``gram = XᵀX``, ``B = XᵀT`` are
    given, else ``Xᵀ(XS − T)``. Rows become exactly zero.
    """
    if L <= 0.0:  # X = 0: only the regulariser remains
        return np.zeros_like(W)
    Wk, S, t = W, W, 1.0
    for _ in range(n_iter):
        grad = gram @ S - B if gram is not None else X.T @ (X @ S - T)
        W_new = shrink_rows(S - grad / L, c / L)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        S = W_new + ((t - 1.0) / t_new) * (W_new - Wk)
        Wk, t = W_new, t_new
    return Wk


def reweight(R: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Diagonal of the IRLS weight ``F = diag(1/(2 sqrt(||r^j||² + ε)))`` (paper Eq. (22))."""
    return 0.5 / np.sqrt(np.einsum("ij,ij->i", R, R) + eps)


def one_hot(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot matrix ``Y`` (rows ``e_iᵀ``) of integer class codes."""
    Y = np.zeros((codes.shape[0], n_classes))
    Y[np.arange(codes.shape[0]), codes] = 1.0
    return Y


def zstep_reweight(a, Y, f, n_views, rho):
    """Z̄-step by the reweighted closed form (paper Eq. (21) = (38); ADMM-MVFS spec (A3)).

    Solves ``(2V F + ρ I) Z = 2 F Y + ρ a`` row-wise: ``Z[j] = (2 f_j Y[j] + ρ a[j]) / (2V f_j + ρ)``.
    """
    return (2.0 * f[:, None] * Y + rho * a) / (2.0 * n_views * f[:, None] + rho)


def zstep_prox(a, Y, n_views, rho):
    """Z̄-step by the exact prox of the L2,1 loss (ADMM-MVFS spec (A4)).

    ``Z̄ = (Y + shrink_rows(V a − Y, V/ρ)) / V``.
    """
    return (Y + shrink_rows(n_views * a - Y, n_views / rho)) / n_views


def class_step(Mbar, Pbar, f, codes, n_classes, n_views, rho, *, loss="l21", zstep="reweight"):
    """One class-partitioned update of the reduced ADMM (paper Eqs. (21)–(23)).

    Works on any block of rows (one class, several classes or all): every operation is row-wise,
    so splitting the classes across workers gives the same bits.

    Parameters
    ----------
    Mbar, Pbar : ndarray of shape (m, C)
        ``M̄_i^{k+1} = (1/V) Σ_v X_iv W_v^{k+1}`` and ``P̄_i^k`` of the rows in the block.
    f : ndarray of shape (m,)
        Diagonal of ``F_i^{(k)}``.
    codes : ndarray of shape (m,)
        Class index of every row (``Y_i[j] = e_iᵀ``).

    Returns
    -------
    Zbar, Pbar, f, D : ndarrays
        ``Z̄^{k+1}`` (Eq. (21)), ``P̄^{k+1}`` (Eq. (23)), ``F^{(k+1)}`` (Eq. (22)) and
        ``D = Z̄^{k+1} − M̄^{k+1}`` (the primal residual of the block, spec §3.3).
    """
    Y = one_hot(codes, n_classes)
    a = Mbar - Pbar / rho
    if loss == "fro":  # F ≡ I: (A3) and (A4) coincide for the squared loss
        Zbar = zstep_reweight(a, Y, np.ones_like(f), n_views, rho)
    elif zstep == "prox":
        Zbar = zstep_prox(a, Y, n_views, rho)
    else:
        Zbar = zstep_reweight(a, Y, f, n_views, rho)
    D = Zbar - Mbar
    Pbar = Pbar + rho * D
    f = reweight(n_views * Zbar - Y) if loss == "l21" else np.ones_like(f)
    return Zbar, Pbar, f, D
