"""Bayesian multi-instance multi-label learning with a Gaussian-process prior (MIML-GP).

He, Gu & Wang (2012). The latent functions of the Q labels over all training instances have the
prior ``N(0, K^f ⊗ K)`` (paper Eq. (4)); a bag's label is a logistic function of the bag mean of
its instance latents (collective assumption, paper Eqs. (8)-(9)) or of their maximum (standard
multi-instance assumption, paper Eqs. (36)-(41)). Learning alternates a Laplace E-step (Newton
iterations, paper Eq. (19)) with a closed-form M-step on the label covariance ``K^f``
(MIML-GP spec (27)-(32)); prediction integrates the logistic link against the Gaussian
predictive distribution by Monte Carlo (paper Eqs. (24)-(25), spec (M1)).

How the module is built
-----------------------
* The collective likelihood only sees bag sums ``F_sum = (I_Q ⊗ E^T) F``, so the whole E-step
  runs on ``n x Q`` matrices with ``C_s = K^f ⊗ K_sum``:

  - the *low-rank* path (default) factorises ``K_sum ≈ P P^T`` and solves the Newton step in the
    weight space ``F_sum = (L ⊗ P) u`` with conjugate gradients (spec (M3), equal to paper
    Eq. (35)); memory O(n m + (Q m)^2);
  - the *full-rank* path forms ``B = I + W0^{1/2} C_s W0^{1/2}`` (``Qn x Qn``) and factorises it
    (paper Eq. (21)).

* The standard likelihood works on instance latents: each Newton step selects one instance per
  bag and label (or soft-max weights), builds the ``Qn x Qn`` block matrix
  ``[K^f_pq E_p^T K E_q]`` and takes the same dense step (paper Eq. (42)).

* Cost of one EM loop on the low-rank path (the benchmark's default): the Newton steps' CG
  solves are preconditioned by the Cholesky factor of ``B1`` that the previous loop's M-step
  statistics needed anyway (~5-10 CG iterations instead of ~45; solution and stopping rule
  unchanged), warm-started at the previous weights mapped to the new factor ``L`` of ``K^f``
  (Cholesky, continuous in ``K^f``); the weighted Grams ``P^T W0_s P`` use ``syrk``. The
  M-step statistics cost one ``Qm x Qm`` Cholesky and one triangular solve per loop.
* Number of EM loops: the plain map ``K^f -> g(K^f)`` converges linearly (0.988 per loop on
  scene); by default its iterates are extrapolated by safeguarded Anderson acceleration
  (option ``em_accel``), which keeps its fixed points and stopping rule.

Both paths share :func:`_dense_newton_step`, the M-step :func:`_m_step` and the
predictive-variance code. Matrices that are ``Q n``-long vectors in the paper are kept as
``(n, Q)`` arrays whose column-major flattening is the paper's label-major order.
"""

from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import blas
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit, log_expit
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from multiview_lab.miml._bags import (
    BagClassifierMixin,
    bag_self_sums,
    bag_sum_kernel,
    kernel_matrix,
    sq_distances,
)

logger = logging.getLogger(__name__)

__all__ = [
    "MIMLGPClassifier",
    "estimate_fit_memory",
    "fit_label_thresholds",
    "median_instance_distance",
    "select_rank",
]

_CG_RTOL = 1e-10
_MAX_HALVINGS = 10
_HALVING_RTOL = 1e-12
# Anderson proposals may lower the Laplace evidence (M5) by at most this fraction of |evidence|
# below the best value since the last plain M-step (10x this while the plain steps lower the
# evidence). The EM fixed point is not exactly the evidence maximum, so accelerated iterates
# overshoot to points above it (measured: 3e-5 |evidence| on scene with 1000 bags, 7e-4 with
# 300 bags, 1.4e-3 on a toy "special" model) and the way back must not be rejected every time;
# unguarded, the extrapolation reached spurious singular fixed points on toy problems, 2-3.5
# nats (5e-2 to 1e-1 |evidence|) below the plain loop's limit.
_ACCEL_EVIDENCE_RTOL = 1e-3
# em_stop="evidence": EM loops in a row without evidence progress before stopping
_EM_PATIENCE = 5


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------
def _vec(M: np.ndarray) -> np.ndarray:
    """Column-major ``vec`` of an (n, Q) matrix: the paper's label-major ordering."""
    return M.T.ravel()


def _unvec(v: np.ndarray, n: int, Q: int) -> np.ndarray:
    return v.reshape(Q, n).T


def _psd_factor(Kf: np.ndarray) -> np.ndarray:
    """A square factor ``L`` with ``L L^T = K^f`` (eigenvalues clipped at 0; no jitter needed)."""
    lam, U = np.linalg.eigh((Kf + Kf.T) / 2)
    return U * np.sqrt(np.clip(lam, 0.0, None))


def _label_factor(Kf: np.ndarray) -> tuple[np.ndarray, bool]:
    """``L`` with ``L L^T = K^f`` for the low-rank path: the Cholesky factor when ``K^f`` is
    positive definite, else :func:`_psd_factor`. Returns ``(L, is_cholesky)``.

    Every quantity of the model is invariant under ``L -> L O`` (``O`` orthogonal); the Cholesky
    factor is preferred because it varies continuously with ``K^f``, so the weights ``U`` and the
    factor of ``B1`` of one EM loop are good warm start and preconditioner for the next one
    (eigenvectors can flip sign or rotate between loops).
    """
    try:
        return linalg.cholesky((Kf + Kf.T) / 2, lower=True, check_finite=False), True
    except np.linalg.LinAlgError:
        return _psd_factor(Kf), False


def _grad_weights(G: np.ndarray, Y: np.ndarray, c: np.ndarray):
    """``d`` and ``w`` of paper Eq. (16) / (41) in their stable forms (MIML-GP spec (16)).

    ``G`` is the bag statistic per (bag, label): the bag sum of latents (collective, ``c = 1/n_i``)
    or the (soft) maximum (standard, ``c = 1``); ``z = y c G``.
    """
    z = Y * c[:, None] * G
    s_neg = expit(-z)
    d = Y * c[:, None] * s_neg
    w = (c**2)[:, None] * expit(z) * s_neg
    return d, w


def _log_lik(G: np.ndarray, Y: np.ndarray, c: np.ndarray) -> float:
    """``log p(Y | F) = sum log sigma(z_is)`` (paper Eqs. (7)-(9))."""
    return float(np.sum(log_expit(Y * c[:, None] * G)))


def select_rank(eigvals: np.ndarray, trace_frac: float) -> int:
    """Smallest ``m`` with ``tr(Lambda_m) / tr(Lambda) > trace_frac`` (MIML-GP spec (M2)).

    ``eigvals`` are sorted in decreasing order; negative round-off eigenvalues count as 0.
    ``trace_frac >= 1`` returns ``len(eigvals)``.
    """
    lam = np.clip(eigvals, 0.0, None)
    ratio = np.cumsum(lam) / lam.sum()
    m = int(np.searchsorted(ratio, trace_frac, side="right")) + 1
    return min(m, lam.size)


def fit_label_thresholds(proba: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Per label, the threshold ``t`` maximising the accuracy of ``proba[:, s] > t`` on ``Y``.

    Candidates are the midpoints between consecutive distinct probabilities (and one below the
    smallest, one above the largest); of the maximisers the middle one (in order) is taken, so
    a training set that the probabilities separate gets a threshold in the middle of the gap.

    Parameters
    ----------
    proba : ndarray of shape (n, Q)
        Predictive probabilities of the training bags.
    Y : ndarray of shape (n, Q)
        Boolean label matrix.

    Returns
    -------
    ndarray of shape (Q,)
    """
    out = np.empty(proba.shape[1])
    for s in range(proba.shape[1]):
        p, y = proba[:, s], Y[:, s]
        u = np.unique(p)
        cand = np.concatenate([[u[0] - 1e-12], (u[1:] + u[:-1]) / 2, [u[-1] + 1e-12]])
        acc = np.mean((p[None, :] > cand[:, None]) == y[None, :], axis=1)
        best = np.flatnonzero(acc >= acc.max() - 1e-12)
        out[s] = cand[best[best.size // 2]]
    return out


def median_instance_distance(X: np.ndarray, *, max_instances: int = 2000, random_state=None):
    """Median pairwise Euclidean distance between instances (seeded subsample if large)."""
    rng = check_random_state(random_state)
    if X.shape[0] > max_instances:
        X = X[rng.choice(X.shape[0], max_instances, replace=False)]
    D = sq_distances(X, X)[np.triu_indices(X.shape[0], k=1)]
    med = float(np.sqrt(np.median(D))) if D.size else 1.0
    return med if med > 0 else 1.0


def estimate_fit_memory(
    n_bags: int,
    n_labels: int,
    n_instances: int,
    *,
    likelihood: str = "collective",
    rank: int | None = None,
) -> float:
    """Peak memory, in bytes, of the arrays one EM loop of :class:`MIMLGPClassifier` holds.

    The dominant arrays (float64, 8 bytes each), with ``N = Q n`` (labels times bags) and
    ``M = Q m`` (labels times the rank ``m`` of the low-rank ``K_sum ≈ P P^T``):

    * collective, full rank (``low_rank="none"``, or ``"eig"`` switching to it because
      ``m > full_rank_above * n``): ``C = K^f ⊗ K_sum`` and the Newton matrix ``B`` of paper
      Eq. (21), plus LAPACK's Fortran-ordered copy of ``B``: ``3 N^2``, i.e. **O((n Q)^2)**
      memory and O((n Q)^3) time per Newton step; 200 bags x 200 labels is
      ``3 x 40000^2 x 8`` bytes = 38.4e9 bytes (35.8 GiB);
    * standard likelihood (always full rank): ``K^f ⊗ 1 1^T``, the block matrix of paper
      Eq. (42), their product and ``B`` (plus a symmetrisation temporary): ``5 N^2``, and
      ``K E`` (``N_I x N``, twice): O((n Q)^2 + N_I n Q);
    * collective, low rank: ``B1`` (``M x M``) of spec (M3), its Cholesky factor, the M-step
      statistics ``R``, its transpose and ``S`` (spec Sect. 5): ``6 M^2``, plus
      ``L ⊗ L`` (``Q^3``) and the weighted Grams (``2 Q m^2``): O((m Q)^2 + Q^3).

    Every path adds ``K_sum`` and its eigendecomposition (``4 n^2``) and ``(n, Q)`` arrays.
    Measured with ``tracemalloc`` (``benchmarks/bench_miml_memory.py``, 2 EM loops): the
    peak is within 3 % of this estimate on the dense paths once it exceeds ~20 MB (up to
    ~20 % above it for tiny fits, where arrays not counted here matter), and ~20 % below it
    on the low-rank path. Prediction is not counted: on the full-rank path the fitted model
    keeps one ``N x N`` matrix (paper Eq. (24)).

    Parameters
    ----------
    n_bags, n_labels, n_instances : int
        Training bags ``n``, labels ``Q`` and instances ``N_I``.
    likelihood : {"collective", "standard"}, default="collective"
    rank : int or None, default=None
        ``m`` of the low-rank path (collective only); ``None`` is the full-rank path.

    Returns
    -------
    float
        Bytes.
    """
    n, Q = int(n_bags), int(n_labels)
    N = float(Q * n)
    base = 4.0 * n**2 + 20.0 * N + 2.0 * n_instances
    if likelihood == "standard":
        return 8.0 * (5.0 * N**2 + 2.0 * n_instances * N + base)
    if rank is None:
        return 8.0 * (3.0 * N**2 + base)
    M = float(Q * rank)
    return 8.0 * (6.0 * M**2 + float(Q) ** 3 + 2.0 * Q * float(rank) ** 2 + base)


# ----------------------------------------------------------------------------------------------
# Newton steps
# ----------------------------------------------------------------------------------------------
def _dense_newton_step(Cbig: np.ndarray, b: np.ndarray, w: np.ndarray):
    """One Newton step in the bag (or selected-instance) space, paper Eq. (21).

    ``a = b - W0^{1/2} B^{-1} W0^{1/2} C b`` with ``B = I + W0^{1/2} C W0^{1/2}``; all vectors
    label-major of length ``Qn``. Returns ``a`` and the Cholesky factor of ``B``.
    """
    sw = np.sqrt(w)
    B = Cbig * sw[:, None]
    B *= sw[None, :]
    B[np.diag_indices_from(B)] += 1.0
    cB = linalg.cho_factor(B, lower=True, overwrite_a=True, check_finite=False)
    a = b - sw * linalg.cho_solve(cB, sw * (Cbig @ b), check_finite=False)
    return a, cB


def _g_hat(Cbig: np.ndarray, sw: np.ndarray):
    """``Ĝ = W0^{1/2} B^{-1} W0^{1/2}`` (paper Eq. (24)) and ``log|B|``, ``B`` of Eq. (21).

    ``Cbig`` is overwritten (it becomes ``B``, then its inverse): memory stays at one
    ``Qn x Qn`` matrix.
    """
    B = Cbig
    B *= sw[:, None]
    B *= sw[None, :]
    B[np.diag_indices_from(B)] += 1.0
    LB = linalg.cholesky(B, lower=True, overwrite_a=True, check_finite=False)
    logdet = 2.0 * float(np.sum(np.log(np.diag(LB))))
    Binv, info = linalg.lapack.dpotri(LB, lower=1, overwrite_c=1)
    if info != 0:  # pragma: no cover - B = I + PSD is positive definite
        raise np.linalg.LinAlgError(f"dpotri failed (info={info})")
    N = Binv.shape[0]
    for i0 in range(0, N, 512):  # mirror the lower triangle, block by block (no N x N temporaries)
        i1 = min(i0 + 512, N)
        Binv[i0:i1, i1:] = Binv[i1:, i0:i1].T
        blk = Binv[i0:i1, i0:i1]
        blk[np.triu_indices(i1 - i0, 1)] = blk.T[np.triu_indices(i1 - i0, 1)]
    Binv *= sw[:, None]
    Binv *= sw[None, :]
    return Binv, logdet


def _b1_operator(P: np.ndarray, L: np.ndarray, w: np.ndarray) -> LinearOperator:
    """``B1 = I + (L^T ⊗ P^T) W0 (L ⊗ P)`` as a matvec, O(n m Q) (MIML-GP spec (M3))."""
    m, Q = P.shape[1], L.shape[0]

    def matvec(x):
        X = _unvec(np.asarray(x).ravel(), m, Q)
        return _vec(X + P.T @ (w * (P @ X @ L.T)) @ L)

    return LinearOperator((m * Q, m * Q), matvec=matvec, dtype=np.float64)


def _weighted_grams(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``P^T diag(w_s) P`` for every label ``s``, shape (Q, m, m).

    ``w >= 0`` (paper Eq. (16)), so each Gram is ``A_s^T A_s`` with ``A_s = diag(w_s)^{1/2} P``: a
    symmetric rank-k update (BLAS ``syrk``, half the flops of a general product).
    """
    m, Q = P.shape[1], w.shape[1]
    out = np.empty((Q, m, m))
    sw = np.sqrt(w)
    for s in range(Q):
        low = blas.dsyrk(1.0, P * sw[:, s : s + 1], trans=1, lower=1)  # lower triangle only
        out[s] = low
        out[s][np.triu_indices(m, 1)] = low.T[np.triu_indices(m, 1)]
    return out


def _b1_dense(P: np.ndarray, L: np.ndarray, w: np.ndarray, Gs=None) -> np.ndarray:
    """``B1`` of paper Eq. (33) as a dense ``Qm x Qm`` matrix (used after the E-step);
    ``Gs`` are the precomputed :func:`_weighted_grams`."""
    m, Q = P.shape[1], L.shape[0]
    if Gs is None:
        Gs = _weighted_grams(P, w)
    LL = L[:, :, None] * L[:, None, :]  # (s, a, b)
    B1 = np.tensordot(LL, Gs, axes=(0, 0)).transpose(0, 2, 1, 3).reshape(Q * m, Q * m)
    B1[np.diag_indices_from(B1)] += 1.0
    return B1


def _lowrank_newton_step(P, L, w, d, Fsum, U0, precond=None):
    """Newton step of the low-rank path, spec (M3) (= paper Eq. (35)).

    ``F_sum,new = (L ⊗ P) B1^{-1} (L ⊗ P)^T (W0 F_sum + d)``; ``B1`` solved by conjugate
    gradients warm-started at ``U0``. ``precond`` is an optional lower Cholesky factor of a
    nearby ``B1`` (the one of the previous EM loop, spec Sect. 4 "warm start"): CG is then
    preconditioned by that ``B1^{-1}``, which changes the iteration count, not the stopping
    rule (relative residual of ``B1`` itself below ``1e-10``) nor the solution.
    Returns ``(F_sum,new, U)`` with ``F_sum,new = P U L^T``.
    """
    m, Q = P.shape[1], L.shape[0]
    rhs = _vec(P.T @ (w * Fsum + d) @ L)
    x0 = None if U0 is None else _vec(U0)
    M = None
    if precond is not None:
        M = LinearOperator(
            (m * Q, m * Q),
            matvec=lambda r: linalg.cho_solve((precond, True), r, check_finite=False),
            dtype=np.float64,
        )
    u, info = cg(
        _b1_operator(P, L, w), rhs, x0=x0, rtol=_CG_RTOL, atol=0.0, maxiter=10 * m * Q, M=M
    )
    if info != 0:  # pragma: no cover - CG on an SPD matrix with this budget converges
        logger.warning("conjugate gradients did not reach rtol=%g (info=%d)", _CG_RTOL, info)
    U = _unvec(u, m, Q)
    return P @ U @ L.T, U


# ----------------------------------------------------------------------------------------------
# M-step
# ----------------------------------------------------------------------------------------------
def _m_step(Kf: np.ndarray, H: np.ndarray, nu: float, fix_Kf) -> np.ndarray:
    """K^f update, MIML-GP spec (32): ``K^f_new = H~ / nu = K^f - (1/nu) K^f H K^f``.

    ``fix_Kf=True`` restricts ``K^f`` to ``s I`` with ``s = tr(H~) / (Q nu)`` (the maximiser of
    the bound (27) over multiples of the identity); ``"identity"`` keeps ``K^f`` unchanged.
    """
    if fix_Kf == "identity":
        return Kf.copy()
    Ht = nu * Kf - Kf @ H @ Kf
    if fix_Kf is True:
        Q = Kf.shape[0]
        return np.eye(Q) * (np.trace(Ht) / (Q * nu))
    Knew = Ht / nu
    return (Knew + Knew.T) / 2


def m_step_bound(Kf: np.ndarray, Ht: np.ndarray, nu: float) -> float:
    """The K^f-dependent part of the bound (26), spec (27): ``-(nu/2) log|K^f| - tr(K^f^{-1} H~)/2``."""
    sign, logdet = np.linalg.slogdet(Kf)
    if sign <= 0:
        return -np.inf
    return float(-0.5 * nu * logdet - 0.5 * np.trace(np.linalg.solve(Kf, Ht)))


def _sym_logm(K: np.ndarray) -> np.ndarray | None:
    """Matrix logarithm of a symmetric positive-definite matrix (``None`` if not PD)."""
    lam, V = np.linalg.eigh((K + K.T) / 2)
    if not np.all(np.isfinite(lam)) or lam[0] <= 0:
        return None
    return (V * np.log(lam)) @ V.T


def _sym_expm(X: np.ndarray) -> np.ndarray:
    """Matrix exponential of a symmetric matrix (symmetric positive definite)."""
    lam, V = np.linalg.eigh((X + X.T) / 2)
    K = (V * np.exp(lam)) @ V.T
    return (K + K.T) / 2


class _AndersonEM:
    """Anderson acceleration of the EM fixed-point map ``K^f -> g(K^f)`` (option ``em_accel``).

    ``g`` is one Laplace E-step followed by the closed-form M-step (32); a fixed point of ``g``
    (``K^f H K^f = 0``) is what the plain EM loop converges to, and the accelerated loop has the
    same fixed points and the same stopping rule (relative change of the plain step ``g(K^f)``
    below ``eps``). Anderson's method (type II, memory ``depth``; Walker & Ni 2011, SIAM J.
    Numer. Anal. 49:1715) proposes ``x_next = g(x) - dG gamma`` with ``gamma`` the least-squares
    coefficients that best cancel the current residual ``g(x) - x`` by the last ``depth``
    residual differences ``dF``: near a fixed point it is a multi-secant quasi-Newton method for
    ``g(x) = x``. The plain map converges linearly and slowly (rate 0.988 per loop on scene,
    1000 bags, ``nu = n``: 739 loops to ``eps = 2e-6``); accelerated, 31 loops.

    Iterates are ``x = log K^f`` (symmetric matrix logarithm), so every proposal
    ``exp(x_next)`` is positive definite. Safeguards (the plain step ``g(K^f)`` is taken
    instead, and the memory cleared):

    * acceleration starts only once the residual norm has decreased ``warmup`` plain loops in
      a row (the map contracts; early on, while ``K^f`` grows, it does not);
    * restart when a residual exceeds ``restart_factor`` times the smallest one since the
      acceleration started;
    * a proposal moves no log-eigenvalue by more than ``max_step`` beyond ``g(K^f)`` (the
      extrapolation is scaled down to that length);
    * :meth:`MIMLGPClassifier._fit_em` rejects a proposal whose Laplace evidence (M5) falls
      more than ``1e-3 |evidence|`` below the best one since the last plain step (the plain
      M-step from the last accepted point is taken instead): this keeps the iterates away from
      the spurious singular fixed points of the multiplicative update ``K - K H K / nu``,
      towards which an unguarded secant extrapolation can head when an eigenvalue shrinks
      (seen on toy problems: evidence 2-3.5 nats below the plain loop's limit). The evidence
      is not a Lyapunov function of the plain map everywhere (after an overshoot, plain steps
      lower it on their way to the fixed point), so while the last plain step lowered it the
      tolerance is ``1e-2 |evidence|``.
    """

    def __init__(self, depth, *, warmup=2, restart_factor=2.0, max_step=1.0):
        self.depth = depth
        self.warmup = warmup
        self.restart_factor = restart_factor
        self.max_step = max_step
        self.reset()

    def reset(self):
        """Forget the memory; plain steps until the residual decreases ``warmup`` times."""
        self._g, self._f, self._r = [], [], []
        self._active, self._best = False, np.inf

    def propose(self, K: np.ndarray, gK: np.ndarray) -> tuple[np.ndarray, bool]:
        """Next ``K^f`` from the current one and its plain M-step ``gK``: ``(K_next, accelerated)``."""
        x, gx = _sym_logm(K), _sym_logm(gK)
        if x is None or gx is None:
            self.reset()
            return gK, False
        f = (gx - x).ravel()
        rn = float(np.linalg.norm(f))
        if self._active and rn > self.restart_factor * self._best:
            self.reset()
        self._g.append(gx.ravel())
        self._f.append(f)
        self._r.append(rn)
        keep = self.depth + 1
        self._g, self._f, self._r = self._g[-keep:], self._f[-keep:], self._r[-(self.warmup + 1) :]
        if not self._active:
            r = self._r
            if len(r) <= self.warmup or any(b >= a for a, b in zip(r[:-1], r[1:], strict=False)):
                return gK, False
            self._active = True
        self._best = min(self._best, rn)
        dF = np.diff(np.array(self._f), axis=0).T  # columns f_{j+1} - f_j
        dG = np.diff(np.array(self._g), axis=0).T
        gamma = np.linalg.lstsq(dF, f, rcond=1e-10)[0]
        step = (dG @ gamma).reshape(K.shape)
        step = (step + step.T) / 2
        size = float(np.linalg.norm(step, 2)) if np.all(np.isfinite(step)) else np.inf
        if not np.isfinite(size):
            self.reset()
            return gK, False
        if size > self.max_step:
            step *= self.max_step / size
        return _sym_expm(gx - step), True


# ----------------------------------------------------------------------------------------------
# standard multi-instance assumption: selection of instances
# ----------------------------------------------------------------------------------------------
def _bag_ids(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(offsets.size - 1), np.diff(offsets))


def _select(F: np.ndarray, offsets: np.ndarray, mode: str, v: float):
    """Bag statistic ``g_is`` and selection weights for the standard assumption.

    ``mode="hard"``: ``g = max_j f_ijs`` and one-hot weights at the first argmax (paper Eq. (41)).
    ``mode="softmax"``: ``g = (1/v) log sum_j exp(v f_ijs)`` (paper Eqs. (38)-(40)) and the soft-max
    weights, which are the exact gradient of ``g``.
    Returns ``g`` (n, Q) and ``Pi`` (N_I, Q) with the weight of each instance for each label.
    """
    ids = _bag_ids(offsets)
    starts = offsets[:-1]
    gmax = np.maximum.reduceat(F, starts, axis=0)
    if mode == "hard":
        N = F.shape[0]
        cand = np.where(F == gmax[ids], np.arange(N)[:, None], N)
        first = np.minimum.reduceat(cand, starts, axis=0)
        Pi = np.zeros_like(F)
        Pi[first, np.arange(F.shape[1])[None, :]] = 1.0
        return gmax, Pi
    ex = np.exp(v * (F - gmax[ids]))
    tot = np.add.reduceat(ex, starts, axis=0)
    g = gmax + np.log(tot) / v
    return g, ex / tot[ids]


def _selection_matrix(Pi: np.ndarray, offsets: np.ndarray):
    """Rows, columns and values of ``[E_1, ..., E_Q]`` (N_I x Qn) with the weights ``Pi``."""
    n = offsets.size - 1
    ids = _bag_ids(offsets)
    rows, labs = np.nonzero(Pi)
    return rows, labs * n + ids[rows], Pi[rows, labs]


def _kernel_times_selection(Xa, X, Pi, offsets, kernel, delta):
    """``K(Xa, X) [E_1, ..., E_Q]`` (N_a x Qn) without holding the instance kernel whole."""
    n, Q = offsets.size - 1, Pi.shape[1]
    rows, cols, vals = _selection_matrix(Pi, offsets)
    support, inv = np.unique(rows, return_inverse=True)
    Esup = np.zeros((support.size, Q * n))
    np.add.at(Esup, (inv, cols), vals)
    out = np.empty((Xa.shape[0], Q * n))
    step = max(1, 4_000_000 // max(support.size, 1))
    for r0 in range(0, Xa.shape[0], step):
        out[r0 : r0 + step] = kernel_matrix(Xa[r0 : r0 + step], X[support], kernel, delta) @ Esup
    return out, (rows, cols, vals)


# ----------------------------------------------------------------------------------------------
# the estimator
# ----------------------------------------------------------------------------------------------
class MIMLGPClassifier(BagClassifierMixin, BaseEstimator):
    """Bayesian MIML classifier with a Gaussian-process prior and label covariance (MIML-GP).

    Input and targets follow scikit-learn's classifier contract
    (:class:`~multiview_lab.miml._bags.BagClassifierMixin`): ``bags`` is a list of
    ``(n_i, d)`` arrays (indexed as rows by ``cross_val_score`` / ``GridSearchCV``) or a plain
    2-D ``X``, read as bags of one instance each; ``Y`` is an ``(n, Q)`` label matrix
    (multi-label, ``predict`` gives a 0/1 matrix) or a 1-D ``y`` of class labels (binary: the
    model of the one column ``y == classes_[1]``, ``predict_proba`` of shape ``(n, 2)``;
    multiclass: one column per class, ``predict`` the most probable class and
    ``predict_proba`` the per-class probabilities normalised to sum to 1).

    Parameters
    ----------
    likelihood : {"collective", "standard"}, default="collective"
        Bag likelihood: logistic of the bag mean of instance latents (paper Eqs. (8)-(9)) or of
        their maximum (paper Eqs. (36)-(41)).
    standard_max : {"hard", "softmax"}, default="hard"
        Standard assumption only: the argmax selection matrix of paper Eq. (41), or the smooth
        maximum ``(1/v) log sum exp(v f)`` of paper Eqs. (38)-(40) with its exact gradient (the
        Hessian keeps the selection form of Eq. (41) with soft-max weights).
    v : float, default=10.0
        Sharpness of the soft maximum (paper Eq. (38)).
    kernel : {"rbf", "linear"}, default="rbf"
        Instance kernel, paper Eq. (2) ``exp(-||x - x'||^2 / delta^2)`` or Eq. (3).
    delta : float, "median" or "cv", default="cv"
        Gaussian kernel width. ``"median"``: the median pairwise training-instance distance;
        ``"cv"``: 2-fold cross-validation over ``delta_grid`` times that median, scored by
        1 - average precision (paper Sect. 4: parameters by 2-fold CV on the training part):
        the paper's example-based AP with several labels, the label's AP over the test bags
        with one (the example-based AP is undefined for a single label; see ``cv_results_``).
    delta_grid : sequence of float, default=(0.25, 0.5, 1, 2, 4)
        Multiples of the median distance tried when ``delta="cv"`` (MIML-GP spec Sect. 6.2).
    m_step_norm : {"bags", "instances", "rank"}, default="bags"
        ``nu`` of spec (32): the number of bags, of instances (the literal instance-level bound),
        or the rank ``m``. Same fixed points, different step sizes.
    fix_Kf : bool or "identity", default=False
        ``False`` learns ``K^f`` (spec (32)); ``True`` is the paper's "special" model with
        ``K^f = s I`` and the scalar ``s`` learned; ``"identity"`` keeps ``K^f = I`` literally.
    Kf_init : array of shape (Q, Q) or None, default=None
        Initial label covariance; ``None`` is the identity (paper Algorithm 1).
    Fsum_init : {"ones", "zeros"}, default="ones"
        Initial bag sums ``F_sum`` (paper Algorithm 1 step 1).
    low_rank : {"eig", "nystrom", "none"}, default="eig"
        ``K_sum ≈ P P^T`` by the leading eigenpairs holding ``trace_frac`` of the trace, by a
        seeded Nyström approximation with ``n_nystrom`` columns, or the exact full-rank path
        (spec (M2)). Collective likelihood only; the standard likelihood is always full rank.
    trace_frac : float, default=0.995
        Eigenvalue rule of spec (M2) (paper Sect. 4.1).
    full_rank_above : float or None, default=0.5
        With ``low_rank="eig"``, use the full-rank path when ``m > full_rank_above * n`` (the
        low-rank path is then slower); ``None`` never switches.
    n_nystrom : int or None, default=None
        Nyström columns; ``None`` is ``ceil(0.1 n)``.
    eps0 : float, default=0.01
        E-step stop: change of the objective (spec (M4)) between consecutive Newton steps.
    eps : float, default=2e-6
        EM stop: relative Frobenius change of ``K^f`` (paper Algorithm 1).
    max_newton : int, default=100
        Newton steps per E-step.
    max_em : int, default=500
        EM loops; a ``UserWarning`` is raised (and ``em_history_`` shows it) if reached.
    em_stop : {"auto", "kf", "evidence"}, default="auto"
        EM stopping rule. ``"kf"``: paper Algorithm 1 only, relative ``K^f`` change below
        ``eps``. ``"evidence"``: that rule, or the Laplace evidence (M5) has not risen by more
        than ``evidence_tol * max(1, |evidence|)`` above its best value for 5 loops in a row;
        the ``K^f`` of the best evidence is then kept (``em_stopped_on_`` says which rule
        stopped). ``"auto"``: ``"evidence"`` for ``likelihood="standard"``, ``"kf"`` for the
        collective likelihood (whose EM meets ``eps``). See the notes (standard likelihood).
    evidence_tol : float, default=1e-4
        Relative evidence gain that counts as progress for ``em_stop="evidence"``.
    em_accel : {"anderson", "none"}, default="anderson"
        ``"none"``: the plain EM loop of paper Algorithm 1, ``K^f <- g(K^f)`` with ``g`` = E-step
        + M-step (32). ``"anderson"``: the same map, its iterates extrapolated by safeguarded
        Anderson acceleration on ``log K^f`` (:class:`_AndersonEM`). Same fixed points and same
        stopping rule (relative change of the plain step ``g(K^f)`` below ``eps``), and the
        returned ``K^f`` is always a plain M-step output; the plain loop converges linearly and
        slowly. Measured on scene (1000 training bags, ``delta`` = median, ``nu = n``): plain
        EM needs 739 loops to ``eps = 2e-6`` (and stops unconverged at ``max_em = 500``,
        ``K^f`` 2.1e-3 away from the converged one in relative Frobenius norm), accelerated 31
        loops (``nu = m``: 194 vs 26); the accelerated and the converged plain ``K^f`` agree to
        1.9e-4 (the accelerated one is 2.1e-5, the plain one 2.0e-4 from the fixed point
        computed with ``eps = 1e-10``) and all five metrics on 500 held-out bags are
        identical. On toy problems whose ``K^f`` tends to a singular limit (which the plain
        loop approaches sublinearly) it reaches the same limit much earlier.
    em_accel_depth : int, default=10
        Anderson memory (number of residual differences).
    n_mc : int, default=1000
        Monte-Carlo draws for the predictive probabilities (paper Eq. (25)).
    predict_method : {"mc", "quadrature", "probit"}, default="mc"
        Monte Carlo, 64-point Gauss-Hermite quadrature of the same integral, or the probit
        approximation ``sigma(mu / sqrt(1 + pi v / 8))``. Collective likelihood only for the
        last two.
    threshold : float, "train" or "auto", default="auto"
        Label ``s`` is predicted iff ``p_s > threshold`` (strict); a bag may get no label. A
        float is used as it is (the paper: 0.5). ``"train"``: one threshold per label fitted on
        the training bags, the one maximising the training accuracy of ``p_s > t`` (the
        middle one of the maximisers; :func:`fit_label_thresholds`). ``"auto"``: ``"train"``
        for the standard likelihood with one label (a single-label multi-instance problem: a
        1-D binary ``y`` or a one-column ``Y``), 0.5 otherwise (the collective likelihood, and
        several labels: the paper's MIML setting).
        Multiclass ``y`` predicts the most probable class whatever the threshold. The
        threshold used is ``threshold_``. See the notes.
    rank_scores : {"proba", "mean_latent"}, default="proba"
        What :meth:`decision_function` returns for ranking metrics: the predictive
        probabilities, or the latent bag means ``mu_s`` of spec (M1) (deterministic).
    jitter : float, default=1e-8
        Relative diagonal jitter (times the mean diagonal) for the Nyström ``K_mm`` and the
        test-bag Cholesky of the standard predictive.
    random_state : int, RandomState or None, default=None
        Seeds the Nyström columns, the CV folds and the Monte-Carlo generator.
    max_memory_gb : float or None, default=4.0
        ``fit`` raises a ``ValueError`` before any large allocation when the arrays of its path
        would need more than this many GB (:func:`estimate_fit_memory`: O((n Q)^2) on the
        full-rank and standard paths, O((m Q)^2 + Q^3) on the low-rank one), naming the
        estimate and the ways out (the low-rank path, fewer labels or bags). ``None`` disables
        the check. The low-rank path is checked once the rank ``m`` is known (after the
        eigendecomposition of the ``n x n`` ``K_sum``); with ``delta="cv"`` each CV fit is
        checked too.

    Attributes
    ----------
    Kf_ : ndarray of shape (Q, Q)
        Learned label covariance ``K^f`` (also ``label_covariance_``).
    Fsum_ : ndarray of shape (n, Q)
        Laplace mode of the bag sums (collective) or of the bag maxima (standard).
    d_, W0_ : ndarray of shape (n, Q)
        ``d`` and ``W0`` of paper Eq. (16) at the mode.
    P_ : ndarray of shape (n, m) or None
        Low-rank factor of ``K_sum`` (``None`` on the full-rank path).
    m_ : int
        Rank used (``n`` on the full-rank path).
    delta_ : float
        Kernel width used.
    em_history_ : list of dict
        Per EM loop: ``obj`` (spec (M4)), ``evidence`` (spec (M5)), ``kf_change``,
        ``newton_objs`` (objective after every Newton step), ``accelerated`` (the loop's
        ``K^f`` was an Anderson proposal) and ``rejected`` (that proposal was rejected by the
        evidence safeguard; the next loop restarts from the plain step).
    n_em_iter_ : int
        EM loops run.
    em_stopped_on_ : {"kf", "evidence", "max_em", "diverged"}
        What ended EM: the relative ``K^f`` change below ``eps``, the evidence rule of
        ``em_stop="evidence"``, the cap ``max_em``, or a non-finite ``K^f``.
    threshold_ : ndarray of shape (Q,)
        Decision threshold of every label (see ``threshold``).
    cv_results_ : dict
        Only with ``delta="cv"`` and the RBF kernel: ``delta_multiple`` (the grid),
        ``one_minus_ap`` (its mean 2-fold CV score; inf when no fold could be scored) and
        ``ap_over`` (``"labels"``: each bag's labels ranked, the paper's measure; ``"bags"``:
        with one label, the test bags ranked).
    log_marginal_likelihood_ : float
        Laplace evidence (spec (M5)) at the final ``K^f``.
    classes_ : ndarray
        ``arange(Q)`` for a label matrix ``Y``, the class labels for a 1-D ``y``.
    n_features_in_ : int
        Features per instance.

    Notes
    -----
    **Single-label multi-instance problems (issue 18).** Measured by seeded stratified 10-fold
    CV (one repetition, ``delta="median"``, 1 BLAS thread) on ``Newsgroups2`` (100 bags, raw
    features) and on 100-bag COREL tasks (50 positive + 50 seeded negative bags of
    ``CorelDinosaurs`` / ``CorelAfrican``, standardised), before -> after (accuracy, AUC, EM
    loops; the script is in ``docs/methods/miml.md``):

    * ``threshold`` default 0.5 -> ``"auto"``. The zero-mean prior has no offset term, so a
      bag whose instances are far from every training instance (RBF) or near the origin (the
      sparse ``Newsgroups2`` posts, linear kernel) has latent mean ~0, and the standard
      predictive ``E[sigma(max_j f_j)]`` adds the maximum of the bag's posterior noise: on
      ``Newsgroups2`` every negative test bag had a max (collective: mean) latent mean >= 0,
      so every test bag got ``p > 0.5`` (standard, linear: accuracy .500, AUC .884, all
      predicted positive; collective, linear: .48, AUC .668). The ranking is right, the
      scale is not: with the threshold fitted on the training bags, standard .85 (AUC .884),
      collective .67. ``"auto"`` fits it for the standard likelihood only: for the collective
      one ``threshold="train"`` lowered the COREL smoke accuracy (Dinosaurs .946 -> .917,
      the always-negative rate; balanced accuracy .50 -> .61), so it keeps 0.5; with several
      labels (scene, Reuters) 0.5 too. ``threshold=0.5`` is the literal reading.
    * ``em_stop`` (new) default ``"auto"`` = the evidence rule for the standard likelihood.
      Its E-step never converges to a mode: the hard-max selection (paper Eq. (41)) switches
      between Newton steps (with ``eps0=1e-8`` every E-step ran all 100 Newton steps), so the
      relative ``K^f`` change stays at 1e-3..1e-1 and never meets ``eps = 2e-6``; on small
      separable data the scalar ``K^f`` then grows without bound while the evidence falls
      ("K^f diverged"). Before (``em_stop="kf"``, ``max_em=500``): ``Newsgroups2`` RBF, one
      fold, 109 loops, 91 s, diverged (``K^f`` 4.7e6), accuracy .40; COREL Dinosaurs .49
      (AUC .49; every fold diverged, 41 loops), African .55 (AUC .56; 206 loops, up to 500).
      After: ``Newsgroups2`` linear 8 loops (at most 13), 2.8 s per fit, .85; Dinosaurs .65
      (AUC .66, 31 loops), African .68 (AUC .69, 37 loops), no warning. The collective
      likelihood keeps ``"kf"`` (its Newton E-step is exact; scene and Reuters unchanged).
      ``em_stop="kf"`` is the literal rule.

    References
    ----------
    J. He, H. Gu, Z. Wang. Bayesian multi-instance multi-label learning using Gaussian process
    prior. Machine Learning 88(1-2):273-295, 2012. Equations cited as in the MIML-GP spec.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> bags = [rng.normal(size=(3, 2)) + (i % 2) for i in range(20)]
    >>> Y = np.array([[i % 2, 1 - i % 2] for i in range(20)])
    >>> clf = MIMLGPClassifier(delta=1.0, eps=1e-4, random_state=0).fit(bags, Y)
    >>> clf.predict(bags[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        *,
        likelihood="collective",
        standard_max="hard",
        v=10.0,
        kernel="rbf",
        delta="cv",
        delta_grid=(0.25, 0.5, 1.0, 2.0, 4.0),
        m_step_norm="bags",
        fix_Kf=False,
        Kf_init=None,
        Fsum_init="ones",
        low_rank="eig",
        trace_frac=0.995,
        full_rank_above=0.5,
        n_nystrom=None,
        eps0=0.01,
        eps=2e-6,
        max_newton=100,
        max_em=500,
        em_stop="auto",
        evidence_tol=1e-4,
        em_accel="anderson",
        em_accel_depth=10,
        n_mc=1000,
        predict_method="mc",
        threshold="auto",
        rank_scores="proba",
        jitter=1e-8,
        random_state=None,
        max_memory_gb=4.0,
    ):
        self.likelihood = likelihood
        self.standard_max = standard_max
        self.v = v
        self.kernel = kernel
        self.delta = delta
        self.delta_grid = delta_grid
        self.m_step_norm = m_step_norm
        self.fix_Kf = fix_Kf
        self.Kf_init = Kf_init
        self.Fsum_init = Fsum_init
        self.low_rank = low_rank
        self.trace_frac = trace_frac
        self.full_rank_above = full_rank_above
        self.n_nystrom = n_nystrom
        self.eps0 = eps0
        self.eps = eps
        self.max_newton = max_newton
        self.max_em = max_em
        self.em_stop = em_stop
        self.evidence_tol = evidence_tol
        self.em_accel = em_accel
        self.em_accel_depth = em_accel_depth
        self.n_mc = n_mc
        self.predict_method = predict_method
        self.threshold = threshold
        self.rank_scores = rank_scores
        self.jitter = jitter
        self.random_state = random_state
        self.max_memory_gb = max_memory_gb

    # Options whose hand-written checks below give tested messages (``likelihood``,
    # ``low_rank``, ``fix_Kf``, ``delta``, ``max_em``, ``em_accel``, ``em_accel_depth``,
    # ``Kf_init``) are only type-checked here; the others are validated here only.
    _parameter_constraints: dict = {
        "likelihood": [str],
        "standard_max": [StrOptions({"hard", "softmax"})],
        "v": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"rbf", "linear"})],
        "delta": [numbers.Real, str],
        "delta_grid": ["array-like"],
        "m_step_norm": [StrOptions({"bags", "instances", "rank"})],
        "fix_Kf": ["boolean", str],
        "Kf_init": ["array-like", None],
        "Fsum_init": [StrOptions({"ones", "zeros"})],
        "low_rank": [str],
        "trace_frac": [Interval(numbers.Real, 0, None, closed="neither")],
        "full_rank_above": [Interval(numbers.Real, 0, None, closed="left"), None],
        "n_nystrom": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eps0": [Interval(numbers.Real, 0, None, closed="neither")],
        "eps": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_newton": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_em": [numbers.Integral],
        "em_stop": [StrOptions({"auto", "kf", "evidence"})],
        "evidence_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "em_accel": [str],
        "em_accel_depth": [numbers.Integral],
        "n_mc": [Interval(numbers.Integral, 1, None, closed="left")],
        "predict_method": [StrOptions({"mc", "quadrature", "probit"})],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both"), StrOptions({"train", "auto"})],
        "rank_scores": [StrOptions({"proba", "mean_latent"})],
        "jitter": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "max_memory_gb": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    # ------------------------------------------------------------------ validation
    def _check_params(self, Q: int):
        choices = {
            "likelihood": ("collective", "standard"),
            "standard_max": ("hard", "softmax"),
            "kernel": ("rbf", "linear"),
            "m_step_norm": ("bags", "instances", "rank"),
            "Fsum_init": ("ones", "zeros"),
            "low_rank": ("eig", "nystrom", "none"),
            "predict_method": ("mc", "quadrature", "probit"),
            "rank_scores": ("proba", "mean_latent"),
            "em_accel": ("anderson", "none"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{name}={getattr(self, name)!r} is not supported; use one of {allowed}."
                )
        if self.fix_Kf not in (False, True, "identity"):
            raise ValueError(f"fix_Kf={self.fix_Kf!r}; use False, True or 'identity'.")
        if self.likelihood == "standard" and self.predict_method != "mc":
            raise ValueError(
                f"predict_method={self.predict_method!r} needs likelihood='collective'; the "
                "standard predictive (paper Eq. (45)) is integrated by Monte Carlo."
            )
        positive = {"v": self.v, "eps0": self.eps0, "eps": self.eps, "trace_frac": self.trace_frac}
        for name, val in positive.items():
            if not isinstance(val, numbers.Real) or not val > 0:
                raise ValueError(f"{name} must be a positive number; got {val!r}.")
        for name in ("max_newton", "max_em", "em_accel_depth", "n_mc"):
            val = getattr(self, name)
            if not isinstance(val, numbers.Integral) or val < 1:
                raise ValueError(f"{name} must be a positive integer; got {val!r}.")
        if self.jitter < 0:
            raise ValueError(f"jitter must be non-negative; got {self.jitter!r}.")
        if isinstance(self.delta, str):
            if self.delta not in ("median", "cv"):
                raise ValueError(f"delta={self.delta!r}; use a positive float, 'median' or 'cv'.")
        elif not isinstance(self.delta, numbers.Real) or not self.delta > 0:
            raise ValueError(f"delta must be positive, 'median' or 'cv'; got {self.delta!r}.")
        if self.n_nystrom is not None and (
            not isinstance(self.n_nystrom, numbers.Integral) or self.n_nystrom < 1
        ):
            raise ValueError(f"n_nystrom must be a positive integer or None; got {self.n_nystrom}.")
        if self.Kf_init is None:
            return np.eye(Q)
        Kf = np.asarray(self.Kf_init, dtype=float)
        if Kf.shape != (Q, Q) or not np.all(np.isfinite(Kf)):
            raise ValueError(f"Kf_init must be a finite ({Q}, {Q}) matrix; got shape {Kf.shape}.")
        if not np.allclose(Kf, Kf.T) or np.linalg.eigvalsh((Kf + Kf.T) / 2).min() <= 0:
            raise ValueError("Kf_init must be symmetric positive definite.")
        return (Kf + Kf.T) / 2

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, bags, Y):
        """Fit the model by EM (paper Algorithm 1).

        Parameters
        ----------
        bags : list of array-like of shape (n_i, d), array-like of shape (n, n_i, d), or
                array-like of shape (n, d)
            Training bags (a 2-D array: bags of one instance each).
        Y : array-like of shape (n, Q) or (n,)
            Label sets in {0, 1} or {-1, +1} (every label needs a positive and a negative
            bag), or class labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Also when the fit would need more than ``max_memory_gb`` (see there).
        """
        X, offsets = self._validate_bags(bags, reset=True)
        Ypm = self._validate_targets(Y, offsets.size - 1)
        Kf0 = self._check_params(Ypm.shape[1])
        self._check_memory_before_setup(Ypm.shape[0], Ypm.shape[1], X.shape[0])
        rng = check_random_state(self.random_state)
        self._mc_seed = int(rng.randint(np.iinfo(np.int32).max))
        self.n_labels_ = Ypm.shape[1]
        if self.kernel == "linear":
            self.delta_ = 1.0
        elif self.delta == "median" or self.delta == "cv":
            med = median_instance_distance(X, random_state=rng)
            if self.delta == "median":
                self.delta_ = med
            else:
                self.delta_ = self._select_delta(X, offsets, Ypm, med, rng)
        else:
            self.delta_ = float(self.delta)
        self._fit_em(X, offsets, Ypm, Kf0, rng)
        Q = Ypm.shape[1]
        rule = self.threshold
        if rule == "auto":
            rule = "train" if Q == 1 and self.likelihood == "standard" else 0.5
        if rule == "train":
            self.threshold_ = fit_label_thresholds(self._proba_from(X, offsets)[0], Ypm > 0)
        else:
            self.threshold_ = np.full(Q, float(rule))
        return self

    def _memory_error(self, need: float, what: str, n: int, Q: int, low_rank_alt: str) -> None:
        if self.max_memory_gb is None or need <= self.max_memory_gb * 2**30:
            return
        raise ValueError(
            f"MIMLGPClassifier.fit would need about {need / 2**30:.3g} GB for {what} on "
            f"{n} bags x {Q} labels, over max_memory_gb={self.max_memory_gb}. {low_rank_alt}"
            "Otherwise fit fewer labels (e.g. the most frequent ones, or one model per group "
            "of labels) or fewer bags, or raise max_memory_gb (None disables this check)."
        )

    def _check_memory_before_setup(self, n: int, Q: int, n_instances: int) -> None:
        """The memory check of every path whose size is known before ``K_sum`` is built."""
        if self.max_memory_gb is None:
            return
        low_rank = (
            "low-rank path (low_rank='eig' with full_rank_above=None, or low_rank='nystrom') "
            "needs O((m Q)^2) memory, with m the rank kept of K_sum, instead of O((n Q)^2). "
        )
        if self.likelihood == "standard":
            need = estimate_fit_memory(n, Q, n_instances, likelihood="standard")
            what = f"the standard likelihood's dense {Q * n} x {Q * n} matrices"
            alt = "The collective likelihood (likelihood='collective') with its " + low_rank
            self._memory_error(need, what, n, Q, alt)
        elif self.low_rank == "none":
            need = estimate_fit_memory(n, Q, n_instances)
            what = f"the full-rank path's dense {Q * n} x {Q * n} matrices"
            self._memory_error(need, what, n, Q, "The " + low_rank)
        elif self.low_rank == "nystrom":
            m = self.n_nystrom if self.n_nystrom is not None else int(np.ceil(0.1 * n))
            m = min(m, n)
            need = estimate_fit_memory(n, Q, n_instances, rank=m)
            what = f"the low-rank path's {Q * m} x {Q * m} matrices (m = {m})"
            self._memory_error(need, what, n, Q, "Use a smaller n_nystrom. ")
        else:  # "eig": the rank is known after K_sum; here the cheapest outcome, m = 1
            need = estimate_fit_memory(n, Q, n_instances, rank=1)
            what = "K_sum and the low-rank path at rank 1"
            self._memory_error(need, what, n, Q, "")

    def _check_memory_after_setup(self, n: int, Q: int, n_instances: int) -> None:
        """The memory check of ``low_rank="eig"`` once the rank ``m`` of ``K_sum`` is known."""
        if self.max_memory_gb is None or self.likelihood != "collective":
            return
        if self.low_rank != "eig":
            return
        m = self._rank_selected
        low = estimate_fit_memory(n, Q, n_instances, rank=m)
        if self.P_ is not None:
            what = f"the low-rank path's {Q * m} x {Q * m} matrices (m = {m})"
            alt = "Use a smaller trace_frac (a smaller rank m). "
            self._memory_error(low, what, n, Q, alt)
            return
        need = estimate_fit_memory(n, Q, n_instances)
        what = (
            f"the full-rank path's dense {Q * n} x {Q * n} matrices (chosen because the rank "
            f"m = {m} of K_sum exceeds full_rank_above={self.full_rank_above} x n)"
        )
        alt = (
            f"full_rank_above=None keeps the low-rank path at m = {m}, about "
            f"{low / 2**30:.2g} GB; a smaller trace_frac lowers m further. "
        )
        self._memory_error(need, what, n, Q, alt)

    def _select_delta(self, X, offsets, Ypm, med, rng) -> float:
        """2-fold CV over ``delta_grid x median`` by 1 - average precision (paper Sect. 4).

        With several labels the AP is the paper's example-based one (each bag's labels ranked,
        :func:`~multiview_lab.miml.metrics.one_minus_average_precision`). With one label (a
        multi-instance task) that AP is undefined for every bag (a bag has the label or not),
        so every ``delta`` would score 0 and the first of the grid would win; the AP of the
        label over the test bags ranked by their score is used instead."""
        from sklearn.metrics import average_precision_score

        from multiview_lab.miml.metrics import one_minus_average_precision

        n, Q = Ypm.shape
        bags = [X[offsets[i] : offsets[i + 1]] for i in range(n)]
        folds = list(KFold(2, shuffle=True, random_state=rng.randint(2**31)).split(np.arange(n)))
        results = []
        for mult in self.delta_grid:
            scores = []
            for tr, te in folds:
                if not np.all(np.any(Ypm[tr] > 0, axis=0) & np.any(Ypm[tr] < 0, axis=0)):
                    continue  # a label without a positive (or a negative) training bag
                if Q == 1 and np.unique(Ypm[te]).size < 2:
                    continue  # the test bags' ranking needs a positive and a negative bag
                est = clone(self).set_params(delta=float(mult) * med, n_mc=min(self.n_mc, 500))
                est.fit([bags[i] for i in tr], Ypm[tr])
                score = est.decision_function([bags[i] for i in te])
                if Q == 1:
                    ap = average_precision_score(Ypm[te, 0] > 0, np.ravel(score))
                    scores.append(1.0 - ap)
                else:
                    scores.append(one_minus_average_precision(Ypm[te] > 0, score))
            results.append(float(np.mean(scores)) if scores else np.inf)
            logger.info("delta = %.3g x median: 1 - AP = %.4f", mult, results[-1])
        self.cv_results_ = {
            "delta_multiple": list(self.delta_grid),
            "one_minus_ap": results,
            "ap_over": "bags" if Q == 1 else "labels",
        }
        return float(self.delta_grid[int(np.argmin(results))]) * med

    def _fit_em(self, X, offsets, Ypm, Kf, rng):
        n, Q = Ypm.shape
        sizes = np.diff(offsets).astype(float)
        self._X, self._offsets = X, offsets
        self._Y = Ypm
        self._c = 1.0 / sizes if self.likelihood == "collective" else np.ones(n)
        init = np.ones((n, Q)) if self.Fsum_init == "ones" else np.zeros((n, Q))

        self.P_ = None
        self.m_ = n
        self._Ksum = None
        if self.likelihood == "collective":
            self._setup_collective(X, offsets, rng)
            self._check_memory_after_setup(n, Q, X.shape[0])
            state = {"Fsum": init, "U": None}
        else:
            state = {"F": np.repeat(init / sizes[:, None], np.diff(offsets), axis=0)}

        nu = {"bags": n, "instances": X.shape[0], "rank": self.m_}[self.m_step_norm]
        self.em_history_ = []
        change = np.inf
        accel = None
        if self.em_accel == "anderson" and self.fix_Kf != "identity":
            accel = _AndersonEM(self.em_accel_depth)
        # K^f is a plain M-step output unless `accelerated`; `origin` = evidence of the point
        # it is the plain M-step of; `ascending`: the last plain step raised the evidence;
        # `last` = (g(K^f), evidence) of the last accepted point; `best` = best evidence since
        # the last plain step
        accelerated, origin, ascending, last, best = False, None, True, None, -np.inf
        em_stop = self.em_stop
        if em_stop == "auto":
            em_stop = "evidence" if self.likelihood == "standard" else "kf"
        # evidence rule: best evidence so far, the K^f it was reached at, loops without progress
        top_ev, top_Kf, stale = -np.inf, None, 0
        self.em_stopped_on_ = "max_em"
        for it in range(self.max_em):
            stats = None  # the previous loop's (Qn x Qn on the dense paths) before the next
            stats = self._e_step(Kf, state)
            ev = stats["evidence"]
            Kf_new = _m_step(Kf, stats["H"], nu, self.fix_Kf)
            finite = bool(np.all(np.isfinite(Kf_new)) and np.abs(Kf_new).max() <= 1e12)
            change = np.inf
            if finite:
                change = np.linalg.norm(Kf_new - Kf) / max(np.linalg.norm(Kf_new), 1e-300)
            if not accelerated and origin is not None:
                ascending = ev >= origin
            rtol = _ACCEL_EVIDENCE_RTOL if ascending else 10 * _ACCEL_EVIDENCE_RTOL
            rejected = accelerated and (not finite or ev < best - rtol * abs(best))
            self.em_history_.append(
                {
                    "obj": stats["obj"],
                    "evidence": ev,
                    "kf_change": float(change),
                    "newton_objs": stats["newton_objs"],
                    "accelerated": accelerated,
                    "rejected": rejected,
                }
            )
            logger.debug(
                "EM %d: obj %.6g, evidence %.6g, dKf %.3g%s",
                it,
                stats["obj"],
                stats["evidence"],
                change,
                " (accelerated, rejected)" if rejected else " (accelerated)" if accelerated else "",
            )
            if rejected:  # back to the plain M-step from the last accepted point
                accel.reset()
                Kf, accelerated, origin = last[0], False, last[1]
                continue
            if top_Kf is None or ev > top_ev + self.evidence_tol * max(1.0, abs(top_ev)):
                top_ev, top_Kf, stale = ev, Kf, 0
            else:
                stale += 1
            if not finite:
                warnings.warn(
                    "K^f diverged (the Laplace evidence keeps growing with the latent amplitude, "
                    "as on separable data); stopping EM at the last finite K^f.",
                    UserWarning,
                    stacklevel=4,
                )
                self.em_history_.pop()
                change = 0.0
                self.em_stopped_on_ = "diverged"
                if em_stop == "evidence" and top_Kf is not None and top_Kf is not Kf:
                    Kf, change = top_Kf, 1.0  # the best-evidence K^f (re-run its E-step)
                break
            if em_stop == "evidence" and stale >= _EM_PATIENCE:
                # the evidence stopped rising: keep the K^f of its best value (its E-step is
                # re-run below, warm-started); the plain rule would wait for a K^f change below
                # eps that the standard likelihood's E-step noise (hard-max selection) or an
                # evidence rising without bound (separable data) never gives
                Kf, change = top_Kf, 1.0
                self.em_stopped_on_ = "evidence"
                break
            last = (Kf_new, ev)
            best = ev if not accelerated else max(best, ev)
            if change < self.eps or accel is None or it == self.max_em - 1:
                Kf, accelerated = Kf_new, False  # the final K^f is always a plain M-step (32)
            else:
                Kf, accelerated = accel.propose(Kf, Kf_new)
            origin = None if accelerated else ev
            if change < self.eps:
                self.em_stopped_on_ = "kf"
                break
        else:
            warnings.warn(
                f"MIMLGPClassifier reached max_em={self.max_em} EM loops before the relative "
                f"K^f change fell below eps={self.eps} (last change {change:.3g}).",
                UserWarning,
                stacklevel=4,
            )
        self.n_em_iter_ = len(self.em_history_)
        if change > 0:  # the predictive uses the Laplace approximation at the final K^f
            stats = None
            stats = self._e_step(Kf, state)
        self.Kf_ = Kf
        self.log_marginal_likelihood_ = stats["evidence"]
        self._store_predictive(stats)
        return self

    @property
    def label_covariance_(self) -> np.ndarray:
        """The learned label covariance ``K^f`` (paper Eq. (1))."""
        check_is_fitted(self)
        return self.Kf_

    # ------------------------------------------------------------------ collective: setup
    def _setup_collective(self, X, offsets, rng):
        n = offsets.size - 1
        kern = (self.kernel, self.delta_)
        if self.low_rank == "nystrom":
            m = self.n_nystrom if self.n_nystrom is not None else int(np.ceil(0.1 * n))
            m = min(m, n)
            cols = np.sort(rng.choice(n, m, replace=False))
            Xc = np.vstack([X[offsets[i] : offsets[i + 1]] for i in cols])
            offc = np.concatenate([[0], np.cumsum(np.diff(offsets)[cols])])
            Knm = bag_sum_kernel(X, offsets, Xc, offc, *kern)
            Kmm = Knm[cols]
            Kmm = (Kmm + Kmm.T) / 2
            Kmm[np.diag_indices_from(Kmm)] += self.jitter * np.mean(np.diag(Kmm))
            lam, U = np.linalg.eigh(Kmm)
            lam = np.clip(lam, self.jitter * lam.max(), None)
            self.P_ = Knm @ (U / np.sqrt(lam)) @ U.T
            self.m_ = m
            return
        Ksum = bag_sum_kernel(X, offsets, X, offsets, *kern)
        Ksum = (Ksum + Ksum.T) / 2
        if self.low_rank == "eig":
            lam, U = np.linalg.eigh(Ksum)
            lam, U = lam[::-1], U[:, ::-1]
            m = select_rank(lam, self.trace_frac)
            self._rank_selected = m
            if self.full_rank_above is None or m <= self.full_rank_above * n:
                self.P_ = U[:, :m] * np.sqrt(np.clip(lam[:m], 0.0, None))
                self.m_ = m
                logger.info("low-rank K_sum: m = %d of n = %d", m, n)
                return
            logger.info("rank m = %d > %.2g n: using the full-rank path", m, self.full_rank_above)
        self._Ksum = Ksum

    # ------------------------------------------------------------------ E-step
    def _e_step(self, Kf, state):
        if self.likelihood == "standard":
            return self._e_step_standard(Kf, state)
        if self.P_ is not None:
            return self._e_step_lowrank(Kf, state)
        return self._e_step_full(Kf, state)

    def _newton_loop(self, step, objective, start):
        """Shared E-step loop: Newton steps with step halving, stop on ``|d obj| < eps0``.

        ``step(x)`` returns the next iterate, ``objective(x)`` its spec (M4) value; iterates are
        tuples of arrays mixed linearly when halving (paper Algorithm 1 step 3).
        """
        x, obj_old, objs = start, -np.inf, []
        for it in range(self.max_newton):
            x_new = step(x)
            obj_new = objective(x_new)
            if np.isfinite(obj_old) and x[-1] is not None:
                # halve only on a decrease beyond round-off (near the mode obj is flat)
                tol = _HALVING_RTOL * (1.0 + abs(obj_old))
                for _ in range(_MAX_HALVINGS):
                    if obj_new >= obj_old - tol:
                        break
                    x_new = tuple(0.5 * (a + b) for a, b in zip(x_new, x, strict=True))
                    obj_new = objective(x_new)
            objs.append(obj_new)
            x = x_new
            if it >= 1 and abs(obj_new - obj_old) < self.eps0:
                break
            obj_old = obj_new
        return x, objs

    def _e_step_full(self, Kf, state):
        Y, c, Ksum = self._Y, self._c, self._Ksum
        n, Q = Y.shape
        Cbig = np.kron(Kf, Ksum)

        def step(x):
            d, w = _grad_weights(x[0], Y, c)
            a, _ = _dense_newton_step(Cbig, _vec(w * x[0] + d), _vec(w))
            A = _unvec(a, n, Q)
            return Ksum @ A @ Kf, A

        def objective(x):
            return -0.5 * float(np.sum(x[1] * x[0])) + _log_lik(x[0], Y, c)

        (Fsum, A), objs = self._newton_loop(step, objective, (state["Fsum"], None))
        state["Fsum"] = Fsum
        d, w = _grad_weights(Fsum, Y, c)
        G, logdet_B = _g_hat(Cbig, _vec(np.sqrt(w)))  # Cbig is overwritten
        Gb = G.reshape(Q, n, Q, n)
        T = np.array([[np.vdot(Gb[p, :, q, :], Ksum) for q in range(Q)] for p in range(Q)])
        obj = objs[-1]
        return {
            "Fsum": Fsum,
            "d": d,
            "w": w,
            "G": G,
            "H": T - d.T @ Ksum @ d,
            "obj": obj,
            "evidence": obj - 0.5 * logdet_B,
            "newton_objs": objs,
        }

    def _e_step_lowrank(self, Kf, state):
        Y, c, P = self._Y, self._c, self.P_
        L, is_chol = _label_factor(Kf)
        U0, precond = state["U"], state.get("LB1")
        if U0 is not None and is_chol:
            # warm start in the new weight basis: P U0 L^T = P U_old L_old^T (= F_sum,old)
            U0 = linalg.solve_triangular(L, (U0 @ state["L"].T).T, lower=True).T

        def step(x):
            d, w = _grad_weights(x[0], Y, c)
            return _lowrank_newton_step(P, L, w, d, x[0], x[1], precond)

        def objective(x):
            return -0.5 * float(np.sum(x[1] ** 2)) + _log_lik(x[0], Y, c)

        (Fsum, U), objs = self._newton_loop(step, objective, (state["Fsum"], U0))
        state["Fsum"], state["U"], state["L"] = Fsum, U, L
        d, w = _grad_weights(Fsum, Y, c)
        Gs = _weighted_grams(P, w)
        LB1 = linalg.cholesky(
            _b1_dense(P, L, w, Gs), lower=True, overwrite_a=True, check_finite=False
        )
        # M-step statistics with K_sum -> P P^T (spec Sect. 5, `low_rank` note):
        # T_pq = tr(G_pq P P^T) = delta_pq sum_i w_ip |P_i|^2 - tr(R_p B1^{-1} R_q^T),
        # R_p = P^T (W0 V)_p = [L_pa P^T diag(w_p) P]_a  (spec (33)).
        m, Q = P.shape[1], L.shape[0]
        R = np.einsum("pa,pjk->pjak", L, Gs).reshape(Q, m, Q * m)
        S = linalg.solve_triangular(
            LB1, R.transpose(2, 0, 1).reshape(Q * m, Q * m), lower=True, check_finite=False
        ).reshape(Q * m, Q, m)
        S = S.transpose(1, 0, 2).reshape(Q, -1)
        T = np.diag(w.T @ np.sum(P**2, axis=1)) - S @ S.T
        PtD = P.T @ d
        state["LB1"] = LB1  # preconditioner of the next E-step's CG solves
        obj = objs[-1]
        return {
            "Fsum": Fsum,
            "d": d,
            "w": w,
            "L": L,
            "LB1": LB1,
            "H": T - PtD.T @ PtD,
            "obj": obj,
            "evidence": obj - float(np.sum(np.log(np.diag(LB1)))),
            "newton_objs": objs,
        }

    def _standard_blocks(self, F, Kf):
        """Selection, ``[E_1..E_Q]``, ``K E`` and the ``Qn x Qn`` matrix of paper Eq. (42)."""
        X, offsets = self._X, self._offsets
        n, Q = self._Y.shape
        g, Pi = _select(F, offsets, self.standard_max, self.v)
        KE, (rows, cols, vals) = _kernel_times_selection(
            X, X, Pi, offsets, self.kernel, self.delta_
        )
        Kblk = np.zeros((Q * n, Q * n))
        np.add.at(Kblk, cols, vals[:, None] * KE[rows])  # E^T (K E)
        Kblk = (Kblk + Kblk.T) / 2
        EtF = np.zeros((Q * n,))
        np.add.at(EtF, cols, vals * F[rows, cols // n])
        return g, Pi, KE, Kblk, _unvec(EtF, n, Q)

    def _e_step_standard(self, Kf, state):
        Y, c = self._Y, self._c
        n, Q = Y.shape
        Kf_big = np.kron(Kf, np.ones((n, n)))

        ids = _bag_ids(self._offsets)

        def step(x):
            g, Pi, KE, Kblk, EtF = self._standard_blocks(x[0], Kf)
            d, w = _grad_weights(g, Y, c)
            a, _ = _dense_newton_step(Kblk * Kf_big, _vec(w * EtF + d), _vec(w))
            A = _unvec(a, n, Q)
            KEa = np.einsum("iqj,jq->iq", KE.reshape(-1, Q, n), A)  # column s: K E_s a_s
            # F = K alpha K^f with alpha (N_I x Q), column s = E_s a_s (paper Eq. (42))
            return KEa @ Kf, Pi * A[ids]

        def objective(x):
            g, _ = _select(x[0], self._offsets, self.standard_max, self.v)
            return -0.5 * float(np.sum(x[1] * x[0])) + _log_lik(g, Y, c)

        (F, alpha), objs = self._newton_loop(step, objective, (state["F"], None))
        state["F"] = F
        g, Pi, KE, Kblk, _ = self._standard_blocks(F, Kf)
        d, w = _grad_weights(g, Y, c)
        G, logdet_B = _g_hat(Kblk * Kf_big, _vec(np.sqrt(w)))
        T = np.einsum("piqj,piqj->pq", G.reshape(Q, n, Q, n), Kblk.reshape(Q, n, Q, n))
        Dm = np.einsum("pi,piqj,qj->pq", d.T, Kblk.reshape(Q, n, Q, n), d.T)
        obj = objs[-1]
        return {
            "Fsum": g,
            "F": F,
            "Pi": Pi,
            "d": d,
            "w": w,
            "G": G,
            "H": T - Dm,
            "obj": obj,
            "evidence": obj - 0.5 * logdet_B,
            "newton_objs": objs,
        }

    def _store_predictive(self, stats):
        self.Fsum_ = stats["Fsum"]
        self.d_ = stats["d"]
        self.W0_ = stats["w"]
        self._G = stats.get("G")
        self._L = stats.get("L")
        self._LB1 = stats.get("LB1")
        self._Pi = stats.get("Pi")
        self.F_ = stats.get("F")

    # ------------------------------------------------------------------ prediction
    def _check_predict_bags(self, bags):
        check_is_fitted(self)
        return self._validate_bags(bags, reset=False)

    def _latent_collective(self, Xt, offt):
        """Mean and variance of the bag-mean latent ``f̄*_s``, spec (M1)."""
        n, Q = self.d_.shape
        Kf, kern = self.Kf_, (self.kernel, self.delta_)
        nt = np.diff(offt).astype(float)
        Gbar = bag_sum_kernel(Xt, offt, self._X, self._offsets, *kern) / nt[:, None]
        kappa = bag_self_sums(Xt, offt, *kern) / nt**2
        mu = Gbar @ self.d_ @ Kf
        M = np.empty((Gbar.shape[0], Q, Q))  # M[t, p, q] = g_t^T G_pq g_t
        if self.P_ is None:
            Gb = self._G.reshape(Q, n, Q, n)
            for p in range(Q):
                for q in range(p, Q):
                    M[:, p, q] = M[:, q, p] = np.sum((Gbar @ Gb[p, :, q, :]) * Gbar, axis=1)
        else:
            P, L, w = self.P_, self._L, self.W0_
            m = P.shape[1]
            S = []
            for p in range(Q):
                Z = (Gbar * w[:, p]) @ P  # g^T diag(w_p) P
                R = (L[p][None, :, None] * Z[:, None, :]).reshape(-1, Q * m)
                S.append(linalg.solve_triangular(self._LB1, R.T, lower=True, check_finite=False))
            Gw = (Gbar**2) @ w  # delta_pq g^T diag(w_p) g
            for p in range(Q):
                for q in range(p, Q):
                    M[:, p, q] = M[:, q, p] = (p == q) * Gw[:, p] - np.sum(S[p] * S[q], axis=0)
        var = kappa[:, None] * np.diag(Kf)[None, :] - np.einsum("sp,tpq,sq->ts", Kf, M, Kf)
        return mu, np.clip(var, 0.0, None)

    def latent_mean_and_variance(self, bags):
        """Gaussian of the bag-mean latent per label (collective, spec (M1)).

        Returns
        -------
        mu, var : ndarray of shape (n_bags, Q)
        """
        Xt, offt = self._check_predict_bags(bags)
        if self.likelihood != "collective":
            raise ValueError("latent_mean_and_variance is defined for likelihood='collective'.")
        return self._latent_collective(Xt, offt)

    def _proba_standard(self, Xt, offt):
        """Paper Eqs. (44)-(45): MC over each test bag's joint Gaussian of instance latents."""
        n, Q = self.d_.shape
        Kf, kern = self.Kf_, (self.kernel, self.delta_)
        U, _ = _kernel_times_selection(Xt, self._X, self._Pi, self._offsets, *kern)  # K* E
        mean = (U.reshape(-1, Q, n) * self.d_.T[None]).sum(axis=2) @ Kf  # (N*, Q)
        rng = np.random.default_rng(self._mc_seed)
        sizes = np.diff(offt)
        eps = rng.standard_normal((self.n_mc, int(sizes.max())))
        proba = np.empty((sizes.size, Q))
        latent = np.empty((sizes.size, Q))
        for s in range(Q):
            Us = (U.reshape(-1, Q, n) * Kf[s][None, :, None]).reshape(-1, Q * n)
            Z = self._G @ Us.T  # (Qn, N*)
            for t in range(sizes.size):
                sl = slice(offt[t], offt[t + 1])
                Kss = kernel_matrix(Xt[sl], Xt[sl], *kern)
                cov = Kf[s, s] * Kss - Us[sl] @ Z[:, sl]
                cov = (cov + cov.T) / 2
                cov[np.diag_indices_from(cov)] += self.jitter * max(np.mean(np.diag(cov)), 1e-300)
                lam, V = np.linalg.eigh(cov)
                root = V * np.sqrt(np.clip(lam, 0.0, None))
                f = mean[sl, s][None, :] + eps[:, : sizes[t]] @ root.T
                g = f.max(axis=1)
                if self.standard_max == "softmax":
                    g = g + np.log(np.sum(np.exp(self.v * (f - g[:, None])), axis=1)) / self.v
                proba[t, s] = np.mean(expit(g))
                latent[t, s] = mean[sl, s].max()
        return proba, latent

    def _proba_and_latent(self, bags):
        return self._proba_from(*self._check_predict_bags(bags))

    def _proba_from(self, Xt, offt):
        """Predictive probabilities and latent scores of validated stacked bags."""
        if self.likelihood == "standard":
            return self._proba_standard(Xt, offt)
        mu, var = self._latent_collective(Xt, offt)
        sd = np.sqrt(var)
        if self.predict_method == "probit":
            return expit(mu / np.sqrt(1.0 + np.pi * var / 8.0)), mu
        if self.predict_method == "quadrature":
            x, wq = np.polynomial.hermite.hermgauss(64)
            p = expit(mu[..., None] + np.sqrt(2.0) * sd[..., None] * x) @ wq / np.sqrt(np.pi)
            return p, mu
        rng = np.random.default_rng(self._mc_seed)
        eps = rng.standard_normal(self.n_mc)
        proba = np.empty_like(mu)
        step = max(1, 2_000_000 // (self.n_mc * mu.shape[1]))
        for t0 in range(0, mu.shape[0], step):
            sl = slice(t0, t0 + step)
            proba[sl] = expit(mu[sl, :, None] + sd[sl, :, None] * eps).mean(axis=2)
        return proba, mu

    def predict_proba(self, bags):
        """Predictive probability of each label, paper Eq. (25) (Eq. (45) for standard).

        Returns
        -------
        proba : ndarray of shape (n_bags, Q)
            For a 1-D ``y``: shape (n_bags, n_classes), ``[1 - p, p]`` for binary, the
            per-class probabilities normalised to sum to 1 for multiclass.
        """
        check_is_fitted(self)
        proba = self._proba_and_latent(bags)[0]
        if self._label_mode == "binary":
            return np.column_stack([1.0 - proba[:, 0], proba[:, 0]])
        if self._label_mode == "multiclass":
            return proba / proba.sum(axis=1, keepdims=True)
        return proba

    def decision_function(self, bags):
        """Scores for ranking metrics: ``predict_proba`` or the latent means (``rank_scores``).

        For a 1-D ``y`` the scores are centred on the decision rule, ``p - threshold`` (or the
        latent means): shape (n_bags,) for binary (positive: ``classes_[1]``), (n_bags,
        n_classes) for multiclass.
        """
        check_is_fitted(self)
        proba, mu = self._proba_and_latent(bags)
        if self._label_mode == "multilabel":
            return proba if self.rank_scores == "proba" else mu
        return self._single_label_decision(
            proba - self._threshold() if self.rank_scores == "proba" else mu
        )

    def _threshold(self):
        """The threshold in force: a float ``threshold`` (also one set after ``fit``), else
        the fitted ``threshold_``."""
        if isinstance(self.threshold, numbers.Real):
            return float(self.threshold)
        return self.threshold_

    def predict(self, bags):
        """Label sets as an (n_bags, Q) 0/1 matrix: ``p_s > threshold`` (strict).

        For a 1-D ``y``: class labels, ``classes_[1]`` iff ``p > threshold`` (binary) or the
        most probable class (multiclass).
        """
        check_is_fitted(self)
        proba = self._proba_and_latent(bags)[0]
        if self._label_mode == "multilabel":
            return (proba > self._threshold()).astype(int)
        return self._single_label_predict(proba - self._threshold())
