"""Decision-tree baselines of PB-MVBoost's Table 1: Mono, Concat, Fusion_dt and MV-MV.

All four follow PB-MVBoost spec §5.3 and share one building block, :func:`fit_tree_cv`: a
scikit-learn decision tree whose depth is chosen by stratified 5-fold cross-validation accuracy over
``{1, 2, 3, 4, 6, 8, None}`` (spec §5.2; the paper does not give the baselines' depths). Labels are
any two values, mapped to ``−1`` / ``+1`` internally (``classes_[1]`` is the positive class).

* :class:`MonoViewClassifier` — one tree per view, the view with the best CV accuracy is used.
* :class:`ConcatClassifier` — one tree on the concatenated views.
* :class:`FusionDTClassifier` — stacking: per-view trees on a stratified 60 % part, a second-level
  tree on their outputs on the other 40 %.
* :class:`MVMVClassifier` — uniform majority vote of per-view trees fitted on all the data.
"""

from __future__ import annotations

import logging
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from multiview_lab.pbmvboost._boosting import (
    SPARSE_FORMATS,
    as_float32_sparse,
    check_binary_target,
)
from multiview_lab.utils.multiview import MultiviewMixin
from multiview_lab.utils.validation import check_binary_labels, n_stratified_folds

logger = logging.getLogger(__name__)

__all__ = [
    "ConcatClassifier",
    "FusionDTClassifier",
    "MVMVClassifier",
    "MonoViewClassifier",
    "fit_tree_cv",
]

DEPTH_GRID = (1, 2, 3, 4, 6, 8, None)
_MONO_SELECT = ("cv", "test")
_LEVEL1_OUTPUTS = ("sign", "proba")
_TIE_BREAKS = ("proba", "positive", "negative")


def _check_depth(name: str, value) -> None:
    if value is None:
        return
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer or None; got {value!r}.")


def _check_tree_params(max_depth, depth_grid, cv) -> tuple:
    """Validate the shared tree options and return the depths to try."""
    if isinstance(max_depth, str):
        if max_depth != "cv":
            raise ValueError(
                f"max_depth={max_depth!r} is not supported; use 'cv' (choose by cross-validation "
                "over depth_grid), a positive integer or None."
            )
        grid = tuple(depth_grid)
        if not grid:
            raise ValueError("depth_grid must hold at least one depth.")
        for depth in grid:
            _check_depth("every entry of depth_grid", depth)
    else:
        _check_depth("max_depth", max_depth)
        grid = (max_depth,)
    if not isinstance(cv, Integral) or isinstance(cv, bool) or cv < 2:
        raise ValueError(f"cv must be an integer of at least 2; got {cv!r}.")
    return grid


def _seed(rng) -> int:
    return int(rng.randint(np.iinfo(np.int32).max))


def _as_tree_input(X):
    """``X`` as the float32 array a scikit-learn tree fits on, with the check ``fit`` does on it.

    ``DecisionTreeClassifier.fit`` casts ``X`` to float32 and rejects infinite values (a finite
    float64 can overflow); converting once lets the cross-validation fits skip that per fit.
    A sparse ``X`` becomes a float32 CSR matrix (its folds are cut by rows).
    """
    X32 = as_float32_sparse(X, "csr") if sp.issparse(X) else np.ascontiguousarray(X, np.float32)
    if not np.all(np.isfinite(X32.data if sp.issparse(X32) else X32)):
        raise ValueError("Input X contains infinity or a value too large for dtype('float32').")
    return X32


def _hstack(Xs):
    """The views side by side (CSR if any view is sparse, so that nothing is densified)."""
    if any(sp.issparse(X) for X in Xs):
        return sp.hstack(Xs, format="csr")
    return np.hstack(Xs)


def _depth_limit(depth) -> float:
    return np.inf if depth is None else depth


def _cv_depth_scores(X, y, depths, folds, tree_seed) -> np.ndarray:
    """Mean CV accuracy of a seeded tree for each candidate depth (= ``cross_val_score``).

    Same folds, trees and accuracies as ``cross_val_score(DecisionTreeClassifier(max_depth=d,
    random_state=tree_seed), X, y, cv=folds, scoring="accuracy").mean()`` for every ``d``, at a
    fraction of its cost: ``X`` is cast to float32 once and the folds are drawn once, the fold
    trees skip re-validation, and a tree is reused for every depth it provably equals. A tree
    grown with the limit ``L`` whose actual depth ``a`` is below ``L`` has no node that the
    limit made a leaf, so any limit ``d > a`` visits the same nodes in the same order with the
    same random draws and grows the same tree. The deepest limits are fitted first to reuse them.
    """
    X32 = _as_tree_input(X)
    y = np.asarray(y)
    splits = list(folds.split(X32, y))
    order = sorted(range(len(depths)), key=lambda k: -_depth_limit(depths[k]))
    acc = np.empty((len(depths), len(splits)))
    # the depths (in fit_tree_cv) and X (above) are checked once: skip sklearn's per-fit checks
    with config_context(skip_parameter_validation=True, assume_finite=True):
        for f, (train, test) in enumerate(splits):
            # a sparse fold: the unchecked tree fit needs CSC, the unchecked predict CSR
            X_train = as_float32_sparse(X32[train], "csc") if sp.issparse(X32) else X32[train]
            _cv_fold_scores(
                X_train, y[train], X32[test], y[test], depths, order, tree_seed, acc[:, f]
            )
    return np.array([row.mean() for row in acc])


def _cv_fold_scores(X_train, y_train, X_test, y_test, depths, order, tree_seed, out):
    """Accuracy on one fold of the tree of every depth (see :func:`_cv_depth_scores`)."""
    grown = []  # (limit, actual depth, accuracy) of the trees fitted on this fold
    for k in order:
        limit = _depth_limit(depths[k])
        same = [a for lim, depth, a in grown if lim == limit or depth < min(lim, limit)]
        if same:
            out[k] = same[0]
            continue
        tree = DecisionTreeClassifier(max_depth=depths[k], random_state=tree_seed)
        tree.fit(X_train, y_train, check_input=False)
        pred = tree.predict(X_test, check_input=False)
        out[k] = float(np.mean((pred == y_test).astype(np.float64)))
        grown.append((limit, tree.get_depth(), out[k]))


def fit_tree_cv(X, y, *, depths=DEPTH_GRID, cv=5, score=False, random_state=None):
    """Fit a decision tree whose depth is chosen by stratified k-fold CV accuracy.

    PB-MVBoost spec §5.2: the baselines' depth is chosen by 5-fold CV on the training sample over
    ``{1, 2, 3, 4, 6, 8, None}``. Ties go to the first depth of ``depths`` (the shallowest).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    depths : sequence of (int or None), default=(1, 2, 3, 4, 6, 8, None)
        Candidate ``max_depth`` values. With a single candidate no CV is run unless ``score``.
    cv : int, default=5
        Number of stratified folds (shuffled, seeded); fewer when a class is smaller
        (:func:`~multiview_lab.utils.validation.n_stratified_folds`).
    score : bool, default=False
        Also compute the CV accuracy when there is a single candidate depth.
    random_state : int, RandomState or None
        Seeds the folds and the trees.

    Returns
    -------
    tree : DecisionTreeClassifier
        Fitted on all of ``(X, y)`` with the chosen depth.
    cv_scores : ndarray of shape (len(depths),)
        Mean CV accuracy per candidate depth (NaN if not computed).
    """
    rng = check_random_state(random_state)
    tree_seed, fold_seed = _seed(rng), _seed(rng)
    depths = tuple(depths)
    for depth in depths:
        _check_depth("every entry of depths", depth)
    scores = np.full(len(depths), np.nan)
    if len(depths) > 1 or score:
        folds = StratifiedKFold(n_stratified_folds(y, cv), shuffle=True, random_state=fold_seed)
        scores = _cv_depth_scores(X, y, depths, folds, tree_seed)
        best = depths[int(np.argmax(scores))]
    else:
        best = depths[0]
    tree = DecisionTreeClassifier(max_depth=best, random_state=tree_seed).fit(X, y)
    return tree, scores


def _positive_proba(tree, X) -> np.ndarray:
    """Probability of the +1 class from a tree fitted on ±1 labels."""
    return tree.predict_proba(X)[:, 1]


def _to_labels(classes, score) -> np.ndarray:
    """``classes[1]`` where the score is positive, ``classes[0]`` otherwise."""
    return classes[(np.asarray(score) > 0).astype(int)]


_TREE_CONSTRAINTS = {
    "max_depth": [StrOptions({"cv"}), Interval(Integral, 1, None, closed="left"), None],
    "depth_grid": ["array-like"],
    "cv": [Interval(Integral, 2, None, closed="left")],
    "random_state": ["random_state"],
    "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
}


class _TreeBaseline(MultiviewMixin, ClassifierMixin, BaseEstimator):
    """Shared validation for the tree baselines (not public).

    Binary-only; the views (a list, or a stacked ``X`` split by ``views_ind``) may be sparse
    (CSR / CSC): every step only feeds trees, which take sparse input.
    """

    _parameter_constraints: dict = _TREE_CONSTRAINTS

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    def _validate(self, X, y):
        depths = _check_tree_params(self.max_depth, self.depth_grid, self.cv)
        Xs, y = self._validate_views(X, y, reset=True, accept_sparse=SPARSE_FORMATS)
        check_binary_target(self, y)
        y_pm, self.classes_ = check_binary_labels(y)
        return Xs, y_pm, depths, check_random_state(self.random_state)

    def _check_predict(self, X):
        check_is_fitted(self)
        return self._validate_views(X, reset=False, accept_sparse=SPARSE_FORMATS)

    def predict(self, X):
        """Predicted labels (``classes_[1]`` where ``decision_function > 0``).

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        score = self.decision_function(X)  # checks the fit first
        return _to_labels(self.classes_, score)


class MonoViewClassifier(_TreeBaseline):
    """Mono: a decision tree per view; the best view's tree predicts (PB-MVBoost spec §5.3).

    Parameters
    ----------
    mono_select : {"cv", "test"}, default="cv"
        ``"cv"``: use the view with the best ``cv``-fold CV accuracy on the training sample (ties to
        the lowest view index). ``"test"``: the paper's "best performing view" read as selection
        on held-out labelled data — an oracle; call :meth:`select_view` with that data before
        predicting.
    max_depth : "cv", int or None, default="cv"
        Tree depth; ``"cv"`` chooses it by stratified ``cv``-fold CV accuracy over ``depth_grid``
        (PB-MVBoost spec §5.2).
    depth_grid : sequence of (int or None), default=(1, 2, 3, 4, 6, 8, None)
        Candidate depths for ``max_depth="cv"``.
    cv : int, default=5
        Number of folds of the depth selection.
    random_state : int, RandomState or None, default=None
        Seeds the folds and the trees.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        Number of columns of all the views together.
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    estimators_ : list of DecisionTreeClassifier
        One tree per view, fitted on all the training data (labels ±1).
    depths_ : list of (int or None)
        Chosen depth per view.
    view_cv_scores_ : ndarray of shape (n_views,)
        Best CV accuracy of each view.
    selected_view_ : int or None
        View used by ``predict`` (``None`` until :meth:`select_view` with ``mono_select="test"``).

    References
    ----------
    Goyal et al., Neurocomputing 358 (2019), Sect. 5.2 ("Mono"); PB-MVBoost spec §5.2–5.3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> Xs = [rng.normal(size=(100, 3)), rng.normal(size=(100, 3)) + 2 * y[:, None]]
    >>> MonoViewClassifier(random_state=0).fit(Xs, y).selected_view_
    1
    """

    _parameter_constraints: dict = {
        **_TREE_CONSTRAINTS,
        "mono_select": [StrOptions(set(_MONO_SELECT))],
    }

    def __init__(
        self,
        *,
        mono_select="cv",
        max_depth="cv",
        depth_grid=DEPTH_GRID,
        cv=5,
        random_state=None,
        views_ind=None,
    ):
        self.mono_select = mono_select
        self.max_depth = max_depth
        self.depth_grid = depth_grid
        self.cv = cv
        self.random_state = random_state
        self.views_ind = views_ind

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one tree per view and select the view by CV accuracy (``mono_select="cv"``).

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        Xs, y_pm, depths, rng = self._validate(X, y)
        self.estimators_, self.depths_, scores = [], [], []
        for X in Xs:
            tree, cv_scores = fit_tree_cv(
                X,
                y_pm,
                depths=depths,
                cv=self.cv,
                score=self.mono_select == "cv",
                random_state=_seed(rng),
            )
            self.estimators_.append(tree)
            self.depths_.append(tree.max_depth)
            scores.append(np.nanmax(cv_scores) if self.mono_select == "cv" else np.nan)
        self.view_cv_scores_ = np.asarray(scores)
        self.selected_view_ = int(np.argmax(scores)) if self.mono_select == "cv" else None
        return self

    def select_view(self, X, y):
        """Select the view whose tree has the best accuracy on ``(X, y)`` (the oracle rule).

        With ``mono_select="test"`` call it with the labelled test set before predicting.
        """
        Xs = self._check_predict(X)
        y = np.asarray(y)
        if y.shape != (Xs[0].shape[0],):
            raise ValueError(f"y must have shape ({Xs[0].shape[0]},); got {y.shape}.")
        acc = [
            np.mean(_to_labels(self.classes_, t.predict(X)) == y)
            for t, X in zip(self.estimators_, Xs, strict=True)
        ]
        self.view_test_scores_ = np.asarray(acc)
        self.selected_view_ = int(np.argmax(acc))
        return self

    def decision_function(self, X):
        """Positive-class probability of the selected view's tree minus ½."""
        Xs = self._check_predict(X)
        if self.selected_view_ is None:
            raise ValueError(
                "No view is selected: with mono_select='test' call select_view(Xs_test, y_test) first."
            )
        v = self.selected_view_
        return _positive_proba(self.estimators_[v], Xs[v]) - 0.5


class ConcatClassifier(_TreeBaseline):
    """Concat: one decision tree on the concatenation of all views (PB-MVBoost spec §5.3).

    Parameters
    ----------
    max_depth : "cv", int or None, default="cv"
        Tree depth; ``"cv"`` chooses it by stratified ``cv``-fold CV accuracy over ``depth_grid``
        (PB-MVBoost spec §5.2).
    depth_grid : sequence of (int or None), default=(1, 2, 3, 4, 6, 8, None)
        Candidate depths for ``max_depth="cv"``.
    cv : int, default=5
        Number of folds of the depth selection.
    random_state : int, RandomState or None, default=None
        Seeds the folds and the trees.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        Number of columns of all the views together.
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    estimator_ : DecisionTreeClassifier
        Tree on ``np.hstack(Xs)`` (labels ±1).
    depth_cv_scores_ : ndarray
        CV accuracy per candidate depth (NaN if the depth was fixed).

    References
    ----------
    Goyal et al., Neurocomputing 358 (2019), Sect. 5.2 ("Concat"); PB-MVBoost spec §5.3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> Xs = [rng.normal(size=(100, 3)) + y[:, None], rng.normal(size=(100, 2))]
    >>> ConcatClassifier(random_state=0).fit(Xs, y).estimator_.n_features_in_
    5
    """

    def __init__(
        self, *, max_depth="cv", depth_grid=DEPTH_GRID, cv=5, random_state=None, views_ind=None
    ):
        self.max_depth = max_depth
        self.depth_grid = depth_grid
        self.cv = cv
        self.random_state = random_state
        self.views_ind = views_ind

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one tree on the views side by side (``np.hstack``; CSR if a view is sparse).

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        Xs, y_pm, depths, rng = self._validate(X, y)
        self.estimator_, self.depth_cv_scores_ = fit_tree_cv(
            _hstack(Xs), y_pm, depths=depths, cv=self.cv, random_state=_seed(rng)
        )
        return self

    def decision_function(self, X):
        """Positive-class probability of the tree minus ½."""
        Xs = self._check_predict(X)
        return _positive_proba(self.estimator_, _hstack(Xs)) - 0.5


class FusionDTClassifier(_TreeBaseline):
    """Fusion_dt: stacking of per-view trees with a second-level tree (PB-MVBoost spec §5.3).

    The training sample is split, stratified, into a level-1 part (``level1_size``, 60 % [paper])
    and a level-2 part (the other 40 %). Per-view trees are fitted on the level-1 part; their
    outputs on the level-2 part form an ``n × V`` matrix on which a second-level tree is fitted.
    The second level never sees a level-1 training row.

    Parameters
    ----------
    level1_output : {"sign", "proba"}, default="sign"
        Level-1 outputs fed to level 2: tree predictions (±1), or positive-class probabilities.
    level1_size : float, default=0.6
        Fraction of the training sample used for level 1.
    max_depth : "cv", int or None, default="cv"
        Tree depth; ``"cv"`` chooses it by stratified ``cv``-fold CV accuracy over ``depth_grid``
        (PB-MVBoost spec §5.2).
    depth_grid : sequence of (int or None), default=(1, 2, 3, 4, 6, 8, None)
        Candidate depths for ``max_depth="cv"``.
    cv : int, default=5
        Number of folds of the depth selection.
    random_state : int, RandomState or None, default=None
        Seeds the folds and the trees.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        Number of columns of all the views together.
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    level1_indices_, level2_indices_ : ndarray of int
        Training rows of each level (disjoint, together all rows).
    estimators_ : list of DecisionTreeClassifier
        Level-1 trees, one per view.
    final_estimator_ : DecisionTreeClassifier
        Level-2 tree on the level-1 outputs.

    References
    ----------
    Goyal et al., Neurocomputing 358 (2019), Sect. 5.2 ("Fusion_dt"); PB-MVBoost spec §5.3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> Xs = [rng.normal(size=(100, 3)) + y[:, None] for _ in range(3)]
    >>> clf = FusionDTClassifier(random_state=0).fit(Xs, y)
    >>> len(clf.level1_indices_), len(clf.level2_indices_)
    (60, 40)
    """

    def __init__(
        self,
        *,
        level1_output="sign",
        level1_size=0.6,
        max_depth="cv",
        depth_grid=DEPTH_GRID,
        cv=5,
        random_state=None,
        views_ind=None,
    ):
        self.level1_output = level1_output
        self.level1_size = level1_size
        self.max_depth = max_depth
        self.depth_grid = depth_grid
        self.cv = cv
        self.random_state = random_state
        self.views_ind = views_ind

    _parameter_constraints: dict = {
        **_TREE_CONSTRAINTS,
        "level1_output": [StrOptions(set(_LEVEL1_OUTPUTS))],
        "level1_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def _level1_outputs(self, Xs):
        if self.level1_output == "proba":
            return np.column_stack(
                [_positive_proba(t, X) for t, X in zip(self.estimators_, Xs, strict=True)]
            )
        return np.column_stack([t.predict(X) for t, X in zip(self.estimators_, Xs, strict=True)])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Split the sample, fit the per-view trees on 60 % and the level-2 tree on 40 %.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        Xs, y_pm, depths, rng = self._validate(X, y)
        self.level1_indices_, self.level2_indices_ = train_test_split(
            np.arange(y_pm.shape[0]),
            train_size=self.level1_size,
            stratify=y_pm,
            random_state=_seed(rng),
        )
        i1, i2 = self.level1_indices_, self.level2_indices_
        self.estimators_ = [
            fit_tree_cv(X[i1], y_pm[i1], depths=depths, cv=self.cv, random_state=_seed(rng))[0]
            for X in Xs
        ]
        Z2 = self._level1_outputs([X[i2] for X in Xs])
        self.final_estimator_, self.depth_cv_scores_ = fit_tree_cv(
            Z2, y_pm[i2], depths=depths, cv=self.cv, random_state=_seed(rng)
        )
        return self

    def decision_function(self, X):
        """Positive-class probability of the level-2 tree minus ½."""
        Xs = self._check_predict(X)
        return _positive_proba(self.final_estimator_, self._level1_outputs(Xs)) - 0.5


class MVMVClassifier(_TreeBaseline):
    """MV-MV: uniform majority vote of per-view decision trees (PB-MVBoost spec §5.3).

    One tree per view is fitted on all training data; the prediction is the majority of the V
    tree predictions. Ties (possible when V is even) are broken by the mean positive-class
    probability of the V trees (``> ½`` → +1); an exact tie gives −1 (``classes_[0]``).

    Parameters
    ----------
    tie_break : {"proba", "positive", "negative"}, default="proba"
        Rule for tied votes: ``"proba"`` is the spec's rule above; ``"positive"`` / ``"negative"``
        give every tie to +1 / −1 (``"positive"`` = "at least half of the views vote +1", a
        literal reading of the paper's uniform majority vote, kept for comparison).
    max_depth : "cv", int or None, default="cv"
        Tree depth; ``"cv"`` chooses it by stratified ``cv``-fold CV accuracy over ``depth_grid``
        (PB-MVBoost spec §5.2).
    depth_grid : sequence of (int or None), default=(1, 2, 3, 4, 6, 8, None)
        Candidate depths for ``max_depth="cv"``.
    cv : int, default=5
        Number of folds of the depth selection.
    random_state : int, RandomState or None, default=None
        Seeds the folds and the trees.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        Number of columns of all the views together.
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    estimators_ : list of DecisionTreeClassifier
        One tree per view (labels ±1).
    depths_ : list of (int or None)

    References
    ----------
    Goyal et al., Neurocomputing 358 (2019), Sect. 5.2 ("MV-MV"); Amini, Usunier, Goutte,
    NIPS 2009; PB-MVBoost spec §5.3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> Xs = [rng.normal(size=(100, 3)) + y[:, None] for _ in range(3)]
    >>> MVMVClassifier(random_state=0).fit(Xs, y).score(Xs, y) > 0.7
    True
    """

    _parameter_constraints: dict = {
        **_TREE_CONSTRAINTS,
        "tie_break": [StrOptions(set(_TIE_BREAKS))],
    }

    def __init__(
        self,
        *,
        tie_break="proba",
        max_depth="cv",
        depth_grid=DEPTH_GRID,
        cv=5,
        random_state=None,
        views_ind=None,
    ):
        self.tie_break = tie_break
        self.max_depth = max_depth
        self.depth_grid = depth_grid
        self.cv = cv
        self.random_state = random_state
        self.views_ind = views_ind

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one tree per view on all the training data.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        Xs, y_pm, depths, rng = self._validate(X, y)
        self.estimators_ = [
            fit_tree_cv(X, y_pm, depths=depths, cv=self.cv, random_state=_seed(rng))[0] for X in Xs
        ]
        self.depths_ = [t.max_depth for t in self.estimators_]
        return self

    def decision_function(self, X):
        """Vote margin with the tie rule folded in.

        Returns the mean of the ±1 votes where it is non-zero. Where the votes tie it returns, for
        ``tie_break="proba"``, the mean positive-class probability minus ½ scaled by ``1 / (2V)``
        so that it never outweighs a vote (exact ties stay 0 and are predicted as −1);
        ``1 / (2V)`` for ``"positive"`` and 0 for ``"negative"``.
        """
        Xs = self._check_predict(X)
        votes = np.column_stack([t.predict(X) for t, X in zip(self.estimators_, Xs, strict=True)])
        margin = votes.mean(axis=1)
        tied = margin == 0
        if self.tie_break == "positive":
            margin[tied] = 1.0 / (2 * votes.shape[1])
        elif self.tie_break == "proba" and np.any(tied):
            proba = np.column_stack(
                [
                    _positive_proba(t, V[np.flatnonzero(tied)])
                    for t, V in zip(self.estimators_, Xs, strict=True)
                ]
            ).mean(axis=1)
            margin[tied] = (proba - 0.5) / (2 * votes.shape[1])
        return margin
