"""Shared plumbing of the multiview feature selectors: labels, scaling, ranking and selection.

Every selector of :mod:`multiview_lab.mvfs` scores the ``d = Σ_v d_v`` features of the
concatenated views; this mixin turns ``scores_`` into ``ranking_`` (global indices), the
global ↔ (view, local index) map ``feature_map_``, ``get_support``, ``transform``,
``inverse_transform`` and ``get_feature_names_out`` (ADMM-MVFS spec §4, "Ranking").

The selectors take the project's multiview input (:mod:`multiview_lab.utils.multiview`): a list
of views, or one stacked 2-D ``X`` cut into views by the ``views_ind`` parameter, so that
``Pipeline``, ``GridSearchCV`` and ``cross_val_score`` can slice the rows.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from multiview_lab.mvfs._linalg import StandardizedSparse, column_stats
from multiview_lab.utils.multiview import MultiviewMixin
from multiview_lab.utils.validation import check_option

STANDARDIZE = ("zscore", "minmax", "none")
RANKINGS = ("global", "per_view")
SPARSE_FORMATS = ["csr", "csc"]

#: constraints shared by every selector of the package (``views_ind``: see
#: :mod:`multiview_lab.utils.multiview`)
SELECTION_CONSTRAINTS = {
    "n_features": [Interval(Integral, 1, None, closed="left"), None],
    "ranking": [StrOptions(set(RANKINGS))],
    "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
}


def hstack_views(Xs):
    """The views side by side: CSR if any view is sparse (nothing densified), else dense."""
    if any(sp.issparse(X) for X in Xs):
        return sp.hstack([sp.csr_array(X) for X in Xs], format="csr")
    return np.hstack(Xs)


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Sorted classes and integer codes; every class needs at least two samples.

    A class with one sample has no within-class spread (the z-score, Fisher score and ReliefF
    hits are undefined) and cannot be split for the protocol's stratified evaluation.
    """
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise ValueError(
            f"y must contain at least 2 classes; got {classes.shape[0]} class "
            f"({classes.tolist()!r}): the selectors score features by how they separate classes."
        )
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
    if sp.issparse(X):
        loc, scale, constant, low = column_stats(X, method)
        loc = np.where(constant, low, loc)
        return loc, np.where(constant | (scale <= 0), 1.0, scale)
    if method == "zscore":
        loc, scale = X.mean(axis=0), X.std(axis=0)
    else:
        loc = X.min(axis=0)
        scale = X.max(axis=0) - loc
    constant = np.all(X == X[0], axis=0)
    loc = np.where(constant, X[0], loc)  # exact zeros after centring
    scale = np.where(constant | (scale <= 0), 1.0, scale)
    return loc, scale


def apply_scaler(X, loc, scale):
    """``(X − loc) / scale``; for sparse ``X`` the operator :class:`~._linalg.StandardizedSparse`
    (centring would densify it)."""
    if sp.issparse(X):
        return StandardizedSparse(X, loc, 1.0 / scale)
    return (X - loc) / scale


def per_view_counts(k: int, sizes) -> np.ndarray:
    """``k_v ∝ d_v`` with Σ k_v = k by largest-remainder rounding (ties: lower view index)."""
    sizes = np.asarray(sizes, dtype=float)
    quota = k * sizes / sizes.sum()
    counts = np.floor(quota).astype(int)
    rest = k - counts.sum()
    order = np.argsort(-(quota - counts), kind="stable")
    counts[order[:rest]] += 1
    return counts


class MultiviewSelectorMixin(MultiviewMixin, TransformerMixin):
    """Ranking, support and transform for selectors that set ``scores_`` over concatenated views.

    Subclasses call :meth:`_validate_fit_input` and :meth:`_set_ranking` in ``fit``, define the
    parameters ``n_features`` (int or None = all), ``ranking`` (``"global"`` or ``"per_view"``)
    and ``views_ind``, and the class attribute ``_sparse`` (whether their maths takes sparse
    views).
    """

    _sparse = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # supervised: the scores need class labels
        tags.input_tags.sparse = self._sparse
        return tags

    def _accept_sparse(self):
        return SPARSE_FORMATS if self._sparse else False

    def _check_params(self) -> None:
        """Option checks in the project's wording (run before the parameter constraints)."""
        check_option("ranking", self.ranking, RANKINGS)

    def _validate_params(self):
        self._check_params()
        super()._validate_params()

    def _validate_fit_input(self, X, y):
        """The views and labels of ``fit`` (a list of views or a stacked X with ``views_ind``)."""
        Xs, y = self._validate_views(X, y, reset=True, accept_sparse=self._accept_sparse())
        check_classification_targets(y)
        return Xs, y

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
        self.views_ind_ = self.view_offsets_.astype(np.intp)
        self.n_views_ = int(sizes.shape[0])
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

    def get_support(self, indices: bool = False, per_view: bool = False):
        """Selected features as a mask (or indices) over the concatenated views.

        As scikit-learn's ``SelectorMixin.get_support``, except that indices come in rank order
        (best first), the order of the columns of :meth:`transform`.

        Parameters
        ----------
        indices : bool, default=False
            Return indices (in rank order) instead of boolean masks.
        per_view : bool, default=False
            Return one mask (or local index array) per view instead of one over all features.

        Returns
        -------
        ndarray, or list of ndarray (``per_view=True``)
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

    def transform(self, X):
        """Selected columns (raw values, not standardised), in rank order.

        Parameters
        ----------
        X : list of array-like of shape (n_samples, d_v), or array-like / sparse matrix of \
shape (n_samples, n_features_in_)
            The views (with the numbers of features seen in ``fit``), or the stacked views.

        Returns
        -------
        X_selected : ndarray or sparse CSR matrix of shape (n_samples, k)
            Sparse input gives sparse output.
        """
        check_is_fitted(self, "ranking_")
        Xs = self._validate_views(X, reset=False, accept_sparse=self._accept_sparse())
        sel = self._selected()
        if any(sp.issparse(V) for V in Xs):
            return sp.hstack([sp.csr_array(V) for V in Xs], format="csr")[:, sel]
        view, local = self.feature_map_[sel, 0], self.feature_map_[sel, 1]
        return np.column_stack([Xs[v][:, j] for v, j in zip(view, local, strict=True)])

    def inverse_transform(self, X):
        """Put the selected columns back at their place in the stacked views, zeros elsewhere.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, k)
            Output of :meth:`transform`.

        Returns
        -------
        X_original : ndarray or sparse CSR matrix of shape (n_samples, n_features_in_)
        """
        from sklearn.utils import check_array

        check_is_fitted(self, "ranking_")
        sel = self._selected()
        X = check_array(X, accept_sparse=SPARSE_FORMATS, dtype=None)
        if X.shape[1] != sel.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} columns; transform gives {sel.shape[0]} (the selected "
                "features)."
            )
        if sp.issparse(X):
            coo = sp.coo_array(X)
            return sp.csr_array(
                (coo.data, (coo.row, sel[coo.col])), shape=(X.shape[0], self.n_features_in_)
            )
        out = np.zeros((X.shape[0], self.n_features_in_), dtype=X.dtype)
        out[:, sel] = X
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the selected features, in the order of :meth:`transform`'s columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input names; default ``feature_names_in_`` (a DataFrame seen in ``fit``) or
            ``x0, x1, ...`` over the stacked views.

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self, "ranking_")
        names = _check_feature_names_in(self, input_features)
        return names[self._selected()]
