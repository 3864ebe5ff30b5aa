"""Shared plumbing of the multiview feature selectors: labels, scaling, ranking and selection.

Every selector of :mod:`multiview_lab.mvfs` scores the ``d = Σ_v d_v`` features of the
concatenated views; this mixin turns ``scores_`` into ``ranking_`` (global indices), the
global ↔ (view, local index) map ``feature_map_``, ``get_support`` and ``transform``
(ADMM-MVFS spec §4, "Ranking").
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.validation import check_n_classes, check_option, check_Xs

STANDARDIZE = ("zscore", "minmax", "none")
RANKINGS = ("global", "per_view")


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Sorted classes and integer codes; every class needs at least two samples.

    A class with one sample has no within-class spread (the z-score, Fisher score and ReliefF
    hits are undefined) and cannot be split for the protocol's stratified evaluation.
    """
    classes = check_n_classes(y, 2)
    codes = np.searchsorted(classes, y)
    counts = np.bincount(codes, minlength=classes.shape[0])
    if np.any(counts < 2):
        bad = [f"{classes[i].item()!r} ({counts[i]} sample)" for i in np.flatnonzero(counts < 2)]
        raise ValueError(
            "Every class needs at least 2 samples; class " + ", ".join(bad) + " has fewer."
        )
    return classes, codes


def fit_scaler(X: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of every column (z-score or min-max), fitted on the rows given.

    Constant columns get scale 1, so they become zero columns: their rows of ``W`` stay zero and
    their score is 0 (ADMM-MVFS spec §3.5, "constant columns ... given zero score").
    """
    if method == "none":
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    if method == "zscore":
        loc, scale = X.mean(axis=0), X.std(axis=0)
    else:
        loc = X.min(axis=0)
        scale = X.max(axis=0) - loc
    constant = np.all(X == X[0], axis=0)
    loc = np.where(constant, X[0], loc)  # exact zeros after centring
    scale = np.where(constant | (scale <= 0), 1.0, scale)
    return loc, scale


def per_view_counts(k: int, sizes) -> np.ndarray:
    """``k_v ∝ d_v`` with Σ k_v = k by largest-remainder rounding (ties: lower view index)."""
    sizes = np.asarray(sizes, dtype=float)
    quota = k * sizes / sizes.sum()
    counts = np.floor(quota).astype(int)
    rest = k - counts.sum()
    order = np.argsort(-(quota - counts), kind="stable")
    counts[order[:rest]] += 1
    return counts


class MultiviewSelectorMixin(TransformerMixin):
    """Ranking, support and transform for selectors that set ``scores_`` over concatenated views.

    Subclasses call :meth:`_set_ranking` at the end of ``fit`` and define the parameters
    ``n_features`` (int or None = all) and ``ranking`` (``"global"`` or ``"per_view"``).
    """

    def _check_selection_params(self, sizes) -> None:
        check_option("ranking", self.ranking, RANKINGS)
        d = int(np.sum(sizes))
        k = self.n_features
        if k is not None and (not isinstance(k, int | np.integer) or k < 1):
            raise ValueError(f"n_features must be a positive int or None; got {k!r}.")
        if k is not None and k > d:
            raise ValueError(
                f"n_features={k} is larger than the number of features ({d} over "
                f"{len(sizes)} views: {list(map(int, sizes))})."
            )

    def _set_ranking(self, scores: np.ndarray, sizes) -> None:
        """Set ``scores_``, ``ranking_``, ``feature_map_`` and ``n_features_per_view_``."""
        sizes = np.asarray(sizes, dtype=int)
        self.n_features_per_view_ = sizes
        self.view_offsets_ = np.concatenate([[0], np.cumsum(sizes)])
        self.n_features_in_ = int(sizes.sum())
        self.scores_ = np.asarray(scores, dtype=float)
        # descending score, ties by a stable sort on the global index (spec §4, "Ranking")
        self.ranking_ = np.argsort(-self.scores_, kind="stable")
        view = np.repeat(np.arange(sizes.shape[0]), sizes)
        self.feature_map_ = np.column_stack(
            [view, np.arange(view.shape[0]) - self.view_offsets_[view]]
        )

    def global_index(self, view: int, local) -> np.ndarray:
        """Global (concatenated) index of local feature(s) ``local`` of view ``view``."""
        check_is_fitted(self, "feature_map_")
        return self.view_offsets_[view] + np.asarray(local)

    def _selected(self) -> np.ndarray:
        """Global indices of the selected features, in rank order."""
        check_is_fitted(self, "ranking_")
        k = self.n_features_in_ if self.n_features is None else self.n_features
        if self.ranking == "global":
            return self.ranking_[:k]
        counts = per_view_counts(k, self.n_features_per_view_)
        view = self.feature_map_[self.ranking_, 0]
        rank_in_view = np.empty_like(view)
        for v in range(counts.shape[0]):
            rank_in_view[view == v] = np.arange(np.count_nonzero(view == v))
        return self.ranking_[rank_in_view < counts[view]]

    def get_support(self, per_view: bool = False, indices: bool = False):
        """Selected features as a mask (or indices) over the concatenated views.

        Parameters
        ----------
        per_view : bool, default=False
            Return one mask (or local index array) per view instead of one over all features.
        indices : bool, default=False
            Return indices (in rank order) instead of boolean masks.
        """
        sel = self._selected()
        if not per_view:
            if indices:
                return sel
            mask = np.zeros(self.n_features_in_, dtype=bool)
            mask[sel] = True
            return mask
        out = []
        for v in range(self.n_features_per_view_.shape[0]):
            local = self.feature_map_[sel[self.feature_map_[sel, 0] == v], 1]
            if indices:
                out.append(local)
            else:
                mask = np.zeros(self.n_features_per_view_[v], dtype=bool)
                mask[local] = True
                out.append(mask)
        return out

    def transform(self, Xs) -> np.ndarray:
        """Selected columns (raw values, not standardised) concatenated in rank order.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, d_v)
            The views, with the numbers of features seen in ``fit``.

        Returns
        -------
        X_selected : ndarray of shape (n_samples, k)
        """
        check_is_fitted(self, "ranking_")
        Xs = check_Xs(
            Xs, n_views=len(self.n_features_per_view_), n_features=self.n_features_per_view_
        )
        sel = self._selected()
        view, local = self.feature_map_[sel, 0], self.feature_map_[sel, 1]
        return np.column_stack([Xs[v][:, j] for v, j in zip(view, local, strict=True)])
