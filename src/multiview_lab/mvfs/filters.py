"""Filter baselines of ADMM-MVFS (spec §6.3): Fisher score, ANOVA F and ReliefF.

Each scores the features of the concatenated views and ranks them in descending order; the
selectors share the ranking / transform plumbing of the ADMM selector.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import f_classif
from sklearn.utils._param_validation import Interval

from multiview_lab.mvfs._base import (
    SELECTION_CONSTRAINTS,
    MultiviewSelectorMixin,
    encode_labels,
    fit_scaler,
    hstack_views,
)


def fisher_score(X, y) -> np.ndarray:
    """Fisher score ``F_r = Σ_c n_c (μ_cr − μ_r)² / Σ_c n_c σ_cr²`` (ML variances; 0 if the
    denominator is 0), spec §6.3. Sparse ``X`` is scored from its per-class sums (not densified).
    """
    if sp.issparse(X):
        return _fisher_score_sparse(sp.csr_array(X, dtype=float), y)
    X = np.asarray(X, dtype=float)
    classes, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes).astype(float)
    onehot = np.zeros((X.shape[0], classes.shape[0]))
    onehot[np.arange(X.shape[0]), codes] = 1.0
    means = (onehot.T @ X) / counts[:, None]  # (C, d)
    between = counts @ (means - X.mean(axis=0)) ** 2
    within = np.sum((X - means[codes]) ** 2, axis=0)  # = Σ_c n_c σ_cr²
    out = np.zeros(X.shape[1])
    ok = within > 0
    out[ok] = between[ok] / within[ok]
    return out


def _fisher_score_sparse(X, y) -> np.ndarray:
    """:func:`fisher_score` of a sparse ``X``: ``within = Σ_i x_ir² − Σ_c n_c μ_cr²``."""
    _, codes = np.unique(y, return_inverse=True)
    n_classes = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=n_classes).astype(float)
    onehot = sp.csr_array((np.ones(X.shape[0]), (codes, np.arange(X.shape[0]))))
    sums = np.asarray((onehot @ X).toarray())  # (C, d)
    means = sums / counts[:, None]
    between = counts @ (means - sums.sum(axis=0) / X.shape[0]) ** 2
    squares = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    within = squares - counts @ means**2
    out = np.zeros(X.shape[1])
    ok = within > 1e-12 * squares  # constant columns: 0 up to rounding
    out[ok] = between[ok] / within[ok]
    return out


def anova_f(X, y) -> np.ndarray:
    """One-way ANOVA F statistic per feature (scikit-learn ``f_classif``; constant features 0).

    Sparse ``X`` is passed to ``f_classif`` as it is (it takes CSR/CSC).
    """
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.filterwarnings("ignore", message="Features .* are constant")  # scored 0 below
        F, _ = f_classif(X if sp.issparse(X) else np.asarray(X, dtype=float), y)
    return np.nan_to_num(F, nan=0.0, posinf=0.0)


def relieff(X, y, n_neighbors: int = 5, chunk_size: int = 256) -> np.ndarray:
    """ReliefF weights (Kononenko 1994; spec §6.3), vectorised over blocks of samples.

    Features are min-max scaled; for every sample its ``k`` nearest hits and ``k`` nearest misses in
    every other class (Euclidean) contribute ``−mean_hits |x_r − h_r| + Σ_{c≠y} P(c)/(1 − P(y))
    mean_misses_c |x_r − m_r|``; the sum is divided by n. A class with ``n_c ≤ k`` samples contributes
    its ``n_c − 1`` nearest.
    """
    X = np.asarray(X, dtype=float)
    loc, scale = fit_scaler(X, "minmax")
    X = (X - loc) / scale
    n, d = X.shape
    _, codes = np.unique(y, return_inverse=True)
    prior = np.bincount(codes) / n
    members = [np.flatnonzero(codes == c) for c in range(prior.shape[0])]
    sq = np.einsum("ij,ij->i", X, X)
    weights = np.zeros(d)
    for start in range(0, n, chunk_size):
        rows = np.arange(start, min(start + chunk_size, n))
        dist = sq[rows, None] + sq[None, :] - 2.0 * X[rows] @ X.T
        dist[np.arange(rows.shape[0]), rows] = np.inf  # a sample is not its own hit
        for c, idx in enumerate(members):
            k = min(n_neighbors, idx.shape[0] - 1)
            if k <= 0:
                continue
            sub = dist[:, idx]
            near = idx[np.argpartition(sub, k - 1, axis=1)[:, :k]]  # (b, k)
            diff = np.abs(X[rows, None, :] - X[near]).mean(axis=1)  # (b, d)
            own = codes[rows] == c
            coef = np.where(own, -1.0, prior[c] / (1.0 - prior[codes[rows]]))
            weights += coef @ diff
    return weights / n


class _FilterSelector(MultiviewSelectorMixin, BaseEstimator):
    """Score the concatenated views with ``self._score`` and rank descending."""

    _parameter_constraints: dict = dict(SELECTION_CONSTRAINTS)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Score every feature of the concatenated views.

        Parameters
        ----------
        X : list of array-like of shape (n_samples, d_v), or array-like / sparse matrix of \
shape (n_samples, n_features)
            The views, or the stacked views cut by ``views_ind``.
        y : array-like of shape (n_samples,)
            Class labels (every class at least 2 samples).

        Returns
        -------
        self
        """
        Xs, y = self._validate_fit_input(X, y)
        sizes = [X.shape[1] for X in Xs]
        self._check_selection_params(sizes)
        self.classes_, codes = encode_labels(y)
        self._set_ranking(self._score(hstack_views(Xs), codes), sizes)
        return self


class FisherScoreSelector(_FilterSelector):
    """Fisher-score filter on the concatenated views (spec §6.3).

    Parameters
    ----------
    n_features : int or None, default=10
    ranking : {"global", "per_view"}, default="global"
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([0, 1], 10)
    >>> Xs = [np.c_[y + 0.1 * np.arange(20) % 3, np.arange(20) % 2]]
    >>> FisherScoreSelector(n_features=1).fit(Xs, y).ranking_.tolist()
    [0, 1]
    """

    def __init__(self, n_features=10, *, ranking="global", views_ind=None):
        self.n_features = n_features
        self.ranking = ranking
        self.views_ind = views_ind

    def _score(self, X, codes):
        return fisher_score(X, codes)


class ANOVAFSelector(_FilterSelector):
    """ANOVA-F filter on the concatenated views.

    Parameters
    ----------
    n_features : int or None, default=10
    ranking : {"global", "per_view"}, default="global"
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).
    """

    def __init__(self, n_features=10, *, ranking="global", views_ind=None):
        self.n_features = n_features
        self.ranking = ranking
        self.views_ind = views_ind

    def _score(self, X, codes):
        return anova_f(X, codes)


class ReliefFSelector(_FilterSelector):
    """ReliefF filter on the concatenated views (spec §6.3).

    Parameters
    ----------
    n_features : int or None, default=10
    n_neighbors : int, default=5
        Nearest hits / misses per class.
    ranking : {"global", "per_view"}, default="global"
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).

    Notes
    -----
    Dense input only: the feature differences to every neighbour (spec §6.3) would densify
    sparse views, so sparse input raises a ``TypeError``.
    """

    _sparse = False
    _parameter_constraints: dict = {
        **SELECTION_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_features=10, *, n_neighbors=5, ranking="global", views_ind=None):
        self.n_features = n_features
        self.n_neighbors = n_neighbors
        self.ranking = ranking
        self.views_ind = views_ind

    def _check_params(self) -> None:
        super()._check_params()
        if not isinstance(self.n_neighbors, int | np.integer) or self.n_neighbors < 1:
            raise ValueError(f"n_neighbors must be a positive int; got {self.n_neighbors!r}.")

    def _score(self, X, codes):
        return relieff(X, codes, self.n_neighbors)


class AllFeaturesSelector(_FilterSelector):
    """The all-features baseline: every feature of the concatenated views, in index order.

    Every feature scores 0, so ``ranking_`` is the global index order and ``transform`` (with
    ``n_features=None``) returns the concatenated views unchanged: the reference a selection
    is compared with (spec §6.2, "all features").

    Parameters
    ----------
    n_features : int or None, default=None
        Features kept by ``transform`` (None: all).
    ranking : {"global", "per_view"}, default="global"
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).

    Examples
    --------
    >>> import numpy as np
    >>> Xs = [np.arange(8.0).reshape(4, 2), np.ones((4, 1))]
    >>> AllFeaturesSelector().fit(Xs, [0, 0, 1, 1]).ranking_.tolist()
    [0, 1, 2]
    """

    def __init__(self, n_features=None, *, ranking="global", views_ind=None):
        self.n_features = n_features
        self.ranking = ranking
        self.views_ind = views_ind

    def _score(self, X, codes):
        return np.zeros(X.shape[1])
