"""Filter baselines of ADMM-MVFS (spec §6.3): Fisher score, ANOVA F and ReliefF.

Each scores the features of the concatenated views and ranks them in descending order; the
selectors share the ranking / transform plumbing of the ADMM selector.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import f_classif

from multiview_lab.mvfs._base import MultiviewSelectorMixin, encode_labels, fit_scaler
from multiview_lab.utils.validation import check_Xs_y


def fisher_score(X, y) -> np.ndarray:
    """Fisher score ``F_r = Σ_c n_c (μ_cr − μ_r)² / Σ_c n_c σ_cr²`` (ML variances; 0 if the
    denominator is 0), spec §6.3.
    """
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


def anova_f(X, y) -> np.ndarray:
    """One-way ANOVA F statistic per feature (scikit-learn ``f_classif``; constant features 0)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.filterwarnings("ignore", message="Features .* are constant")  # scored 0 below
        F, _ = f_classif(np.asarray(X, dtype=float), y)
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

    def fit(self, Xs, y):
        """Score every feature of the concatenated views.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, d_v)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        Xs, y = check_Xs_y(Xs, y)
        sizes = [X.shape[1] for X in Xs]
        self._check_selection_params(sizes)
        self.classes_, codes = encode_labels(y)
        self._set_ranking(self._score(np.hstack(Xs), codes), sizes)
        return self


class FisherScoreSelector(_FilterSelector):
    """Fisher-score filter on the concatenated views (spec §6.3).

    Parameters
    ----------
    n_features : int or None, default=10
    ranking : {"global", "per_view"}, default="global"

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([0, 1], 10)
    >>> Xs = [np.c_[y + 0.1 * np.arange(20) % 3, np.arange(20) % 2]]
    >>> FisherScoreSelector(n_features=1).fit(Xs, y).ranking_.tolist()
    [0, 1]
    """

    def __init__(self, n_features=10, *, ranking="global"):
        self.n_features = n_features
        self.ranking = ranking

    def _score(self, X, codes):
        return fisher_score(X, codes)


class ANOVAFSelector(_FilterSelector):
    """ANOVA-F filter on the concatenated views.

    Parameters
    ----------
    n_features : int or None, default=10
    ranking : {"global", "per_view"}, default="global"
    """

    def __init__(self, n_features=10, *, ranking="global"):
        self.n_features = n_features
        self.ranking = ranking

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
    """

    def __init__(self, n_features=10, *, n_neighbors=5, ranking="global"):
        self.n_features = n_features
        self.n_neighbors = n_neighbors
        self.ranking = ranking

    def _score(self, X, codes):
        if not isinstance(self.n_neighbors, int | np.integer) or self.n_neighbors < 1:
            raise ValueError(f"n_neighbors must be a positive int; got {self.n_neighbors!r}.")
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

    Examples
    --------
    >>> import numpy as np
    >>> Xs = [np.arange(8.0).reshape(4, 2), np.ones((4, 1))]
    >>> AllFeaturesSelector().fit(Xs, [0, 0, 1, 1]).ranking_.tolist()
    [0, 1, 2]
    """

    def __init__(self, n_features=None, *, ranking="global"):
        self.n_features = n_features
        self.ranking = ranking

    def _score(self, X, codes):
        return np.zeros(X.shape[1])
