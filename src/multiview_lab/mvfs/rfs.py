"""Centralised RFS (Nie et al., NIPS 2010): the reference solver of ADMM-MVFS (spec §5).

RFS solves ``min_W ||XW − Y||_{2,1} + λ||W||_{2,1}`` on the concatenated views ``X = [X_1, …, X_V]``,
which is exactly the ADMM-MVFS model (spec (A2)); it is the oracle the ADMM must reach and the
first baseline of the protocol (spec §6.3).
"""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from multiview_lab.mvfs._base import (
    SELECTION_CONSTRAINTS,
    STANDARDIZE,
    MultiviewSelectorMixin,
    apply_scaler,
    encode_labels,
    fit_scaler,
    hstack_views,
)
from multiview_lab.mvfs.solvers import EPS, l21_norm, one_hot, reweight, row_norms
from multiview_lab.utils.validation import check_option

logger = logging.getLogger(__name__)


def rfs_objective(X, Y, W, lam, loss="l21") -> float:
    """``||XW − Y||_{2,1} + λ||W||_{2,1}`` (``||XW − Y||_F²`` for ``loss="fro"``), spec (A2)."""
    R = X @ W - Y
    data = float(np.sum(R * R)) if loss == "fro" else float(row_norms(R).sum())
    return data + lam * l21_norm(W)


def rfs_solve(X, Y, lam, *, loss="l21", max_iter=2000, tol=1e-8, t0=None):
    """Iteratively reweighted RFS solver (ADMM-MVFS spec §5).

    * ``d ≤ n`` (joint reweighting): ``F = diag(1/(2 sqrt(||r_j||² + ε)))`` on the residual rows,
      ``D = diag(1/(2 sqrt(||w^r||² + ε)))``, ``W ← (XᵀFX + λD)^{-1} XᵀFY``, computed as
      ``S (S XᵀFX S + λI)^{-1} S XᵀFY`` with ``S = D^{-1/2}`` (well conditioned as rows vanish).
    * ``d > n`` (augmented form): ``A = [X, λI_n]``, ``min ||U||_{2,1}`` s.t. ``AU = Y``,
      ``U ← D^{-1}Aᵀ(AD^{-1}Aᵀ)^{-1}Y``, ``W = U[:d]``.

    ``loss="fro"`` fixes ``F = I`` (push-through form when ``d > n``). The objective is monotonically
    non-increasing; stop when its relative change is below ``tol`` or after ``max_iter`` iterations.
    ``X`` may be a :class:`~multiview_lab.mvfs._linalg.StandardizedSparse` operator (sparse views):
    only its products are used.

    Returns
    -------
    W : ndarray of shape (d, C)
    history : dict with ``objective`` and ``time`` (s since ``t0``) per iteration
    """
    t0 = time.perf_counter() if t0 is None else t0
    n, d = X.shape
    primal = d <= n
    if primal:
        gram = X.T @ X
        K = gram + lam * np.eye(d)
        W = linalg.solve(K, X.T @ Y, assume_a="pos")
    else:
        K = X @ X.T
        K.flat[:: n + 1] += lam if loss == "fro" else lam**2
        W = X.T @ linalg.solve(K, Y, assume_a="pos")
        E = (Y - X @ W) / lam  # the slack block of U (augmented form)
    J_prev = rfs_objective(X, Y, W, lam, loss)
    objective, times = [], []
    for _ in range(max_iter):
        g = 2.0 * np.sqrt(np.einsum("ij,ij->i", W, W) + EPS)  # diag of D^{-1}
        if primal:
            f = reweight(X @ W - Y) if loss == "l21" else None
            XtF = X.T if f is None else X.T * f[None, :]
            A = gram if f is None else XtF @ X
            s = np.sqrt(g)
            K = A * s[:, None] * s[None, :]
            K.flat[:: d + 1] += lam
            W = s[:, None] * linalg.solve(
                K, s[:, None] * (XtF @ Y), assume_a="pos", check_finite=False
            )
        elif loss == "fro":
            K = (X * g[None, :]) @ X.T
            K.flat[:: n + 1] += lam
            W = g[:, None] * (X.T @ linalg.solve(K, Y, assume_a="pos", check_finite=False))
        else:
            g_e = 2.0 * np.sqrt(np.einsum("ij,ij->i", E, E) + EPS)
            K = (X * g[None, :]) @ X.T
            K.flat[:: n + 1] += lam**2 * g_e
            theta = linalg.solve(K, Y, assume_a="pos", check_finite=False)
            W = g[:, None] * (X.T @ theta)
            E = lam * g_e[:, None] * theta
        J = rfs_objective(X, Y, W, lam, loss)
        objective.append(J)
        times.append(time.perf_counter() - t0)
        if abs(J_prev - J) < tol * max(abs(J_prev), np.finfo(float).tiny):
            break
        J_prev = J
    return W, {"objective": np.array(objective), "time": np.array(times)}


class RFSSelector(MultiviewSelectorMixin, BaseEstimator):
    """Centralised RFS on the concatenated views (ADMM-MVFS spec §5; Nie et al., NIPS 2010).

    Same model, ranking and attributes as
    :class:`~multiview_lab.mvfs.admm.ADMMMultiviewFeatureSelector`.

    Parameters
    ----------
    lam : float, default=1.0
        λ on standardised features.
    lam_frac : float or None, default=None
        If set, λ = ``lam_frac`` · λ_max (spec (A6)).
    loss : {"l21", "fro"}, default="l21"
        L2,1 loss (RFS) or squared loss.
    ranking : {"global", "per_view"}, default="global"
    n_features : int or None, default=10
    max_iter : int, default=2000
    tol : float, default=1e-8
        Relative objective change to stop (spec §5, "reference precision").
    standardize : {"zscore", "minmax", "none"}, default="zscore"
        Per-feature scaling fitted on the training rows. Sparse views are scaled implicitly
        (the centred matrix is never formed).
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).

    Attributes
    ----------
    W_ : list of ndarray of shape (d_v, C)
    scores_, ranking_, feature_map_, n_features_per_view_, classes_
        As in :class:`~multiview_lab.mvfs.admm.ADMMMultiviewFeatureSelector`.
    lam_, lam_max_ : float
    history_ : dict of ndarray
        ``objective`` and ``time`` per iteration.
    n_iter_ : int

    References
    ----------
    F. Nie, H. Huang, X. Cai, C. Ding, Efficient and robust feature selection via joint ℓ2,1-norms
    minimization, NIPS 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.mvfs import RFSSelector
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> Xs = [rng.standard_normal((60, 8)) for _ in range(2)]
    >>> Xs[1][:, 3] += 3.0 * y
    >>> int(RFSSelector(lam_frac=0.3, n_features=1).fit(Xs, y).ranking_[0])
    11
    """

    _parameter_constraints: dict = {
        **SELECTION_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam_frac": [Interval(Real, 0, None, closed="neither"), None],
        "loss": [StrOptions({"l21", "fro"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "standardize": [StrOptions(set(STANDARDIZE))],
    }

    def __init__(
        self,
        lam=1.0,
        *,
        lam_frac=None,
        loss="l21",
        ranking="global",
        n_features=10,
        max_iter=2000,
        tol=1e-8,
        standardize="zscore",
        views_ind=None,
    ):
        self.lam = lam
        self.lam_frac = lam_frac
        self.loss = loss
        self.ranking = ranking
        self.n_features = n_features
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.views_ind = views_ind

    def _check_params(self) -> None:
        super()._check_params()
        check_option("loss", self.loss, ("l21", "fro"))
        check_option("standardize", self.standardize, STANDARDIZE)
        if self.lam_frac is None and not (np.isscalar(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be positive; got {self.lam!r}.")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit RFS on the concatenated, standardised views.

        Parameters
        ----------
        X : list of array-like of shape (n_samples, d_v), or array-like / sparse matrix of \
shape (n_samples, n_features)
            The views, or the stacked views cut by ``views_ind``; CSR / CSC views stay sparse.
        y : array-like of shape (n_samples,)
            Class labels (every class at least 2 samples).

        Returns
        -------
        self
        """
        t0 = time.perf_counter()
        Xs, y = self._validate_fit_input(X, y)
        sizes = [X.shape[1] for X in Xs]
        self._check_selection_params(sizes)
        self.classes_, codes = encode_labels(y)
        if any(sp.issparse(X) for X in Xs):
            X = hstack_views(Xs).astype(float)
        else:
            X = np.hstack([np.asarray(X, dtype=float) for X in Xs])
        loc, scale = fit_scaler(X, self.standardize)
        X = apply_scaler(X, loc, scale)
        Y = one_hot(codes, self.classes_.shape[0])
        self.lam_max_ = float(row_norms(X.T @ Y).max())
        self.lam_ = float(self.lam) if self.lam_frac is None else self.lam_frac * self.lam_max_
        W, self.history_ = rfs_solve(
            X, Y, self.lam_, loss=self.loss, max_iter=self.max_iter, tol=self.tol, t0=t0
        )
        self.n_iter_ = len(self.history_["objective"])
        bounds = np.cumsum(sizes)[:-1]
        self.W_ = np.split(W, bounds)
        self._set_ranking(row_norms(W), sizes)
        logger.info("RFS: %d iterations, J=%.10g", self.n_iter_, self.history_["objective"][-1])
        return self
