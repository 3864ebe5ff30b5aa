"""Choice of λ by inner cross-validation (ADMM-MVFS spec §6.2, "λ: inner 5-fold CV").

The selectors of :mod:`multiview_lab.mvfs` take multiview input (a list of per-view arrays) and
score *rankings*, not predictions, so scikit-learn's ``GridSearchCV`` can neither slice their
input nor score them. :func:`cross_validate_lam` is the small loop the protocol needs:

* seeded stratified folds (:class:`~sklearn.model_selection.StratifiedKFold` with shuffling) of
  the training rows, every view sliced with the same row indices;
* for every fold and every λ of the grid, the selector is fitted on the training part of the fold
  and each classifier is trained on its top-k features and scored (accuracy) on the held-out part,
  for each k of a given list; the features are z-scored with statistics of the fold's training
  part only;
* the criterion of a λ is the accuracy averaged over the classifiers and the k list, then over the
  folds (with the protocol's classifiers and k grid: the mean height of the reported accuracy-vs-k
  curves); the best mean wins, ties going to the **largest** λ (the sparser model).

A λ at or above λ_max of the fold (spec (A6), :func:`lam_max`) has ``W = 0`` as its exact optimum:
the model selects no feature, so nothing is fitted and the fold scores the classifier that has no
features, i.e. the majority class of the fold's training part (chance level for balanced classes).
This keeps the arbitrary order of an all-zero ranking (the global index) from being scored as if
it were a selection.

The λ are fitted independently (no warm-started path): both solvers reweight the rows of ``W`` by
``1 / (2 ||w^r||)`` (IRLS, spec (A5a) and §5), so a path run from large to small λ would start the
next fit with the rows that were zero at the larger λ pinned near zero, and independent fits
parallelise over (fold, λ). :class:`LamSearchCV` is the same search as an estimator (as
``GridSearchCV`` is of a grid search), for a registry. This module imports nothing from Kedro or
MLflow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.multiclass import check_classification_targets

from multiview_lab.mvfs._base import STANDARDIZE, encode_labels, fit_scaler
from multiview_lab.mvfs.solvers import one_hot, row_norms
from multiview_lab.utils.multiview import MultiviewMixin
from multiview_lab.utils.validation import check_option, check_Xs_y

logger = logging.getLogger(__name__)


def lam_max(Xs, y, standardize: str = "zscore") -> float:
    """λ_max of ADMM-MVFS spec (A6): ``max_r ||X[:, r]ᵀ Y||₂`` over every feature of every view.

    ``X`` is the concatenation of the views scaled as the selectors scale them (``standardize``,
    fitted on the rows given) and ``Y`` the one-hot labels (classes sorted). ``W = 0`` is the
    optimum of the ADMM-MVFS / RFS objective iff ``λ ≥ λ_max``.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, d_v)
    y : array-like of shape (n_samples,)
    standardize : {"zscore", "minmax", "none"}, default="zscore"

    Returns
    -------
    float
    """
    check_option("standardize", standardize, STANDARDIZE)
    Xs, y = check_Xs_y(Xs, y)
    classes, codes = encode_labels(y)
    X = np.hstack([np.asarray(X, dtype=float) for X in Xs])
    loc, scale = fit_scaler(X, standardize)
    Y = one_hot(codes, classes.shape[0])
    return float(row_norms(((X - loc) / scale).T @ Y).max())


@dataclass(frozen=True)
class LamCVResult:
    """Outcome of :func:`cross_validate_lam`.

    Attributes
    ----------
    lams : ndarray of shape (L,)
        The grid, ascending.
    scores : ndarray of shape (L, n_folds)
        Criterion of every λ on every fold (accuracy averaged over the classifiers and ``ks``).
    accuracies : ndarray of shape (L, n_folds, n_classifiers, K)
        Held-out accuracy for every λ, fold, classifier and k.
    ks : ndarray of shape (K,)
    lam_max : ndarray of shape (n_folds,)
        λ_max (spec (A6)) of every fold's training part.
    null_model : ndarray of bool, shape (L, n_folds)
        ``λ ≥ λ_max`` of the fold: no fit, the majority-class score.
    fit_time : ndarray of shape (L, n_folds)
        Selector training time in seconds (0 for null models).
    best_index : int
        Index in ``lams`` of the chosen λ.
    """

    lams: np.ndarray
    scores: np.ndarray
    accuracies: np.ndarray
    ks: np.ndarray
    lam_max: np.ndarray
    null_model: np.ndarray
    fit_time: np.ndarray
    best_index: int

    @property
    def mean_scores(self) -> np.ndarray:
        """Mean criterion over the folds, per λ."""
        return self.scores.mean(axis=1)

    @property
    def std_scores(self) -> np.ndarray:
        """Sample standard deviation (``ddof=1``) of the criterion over the folds, per λ."""
        return self.scores.std(axis=1, ddof=1)

    @property
    def best_lam(self) -> float:
        """The chosen λ."""
        return float(self.lams[self.best_index])

    def to_frame(self, classifier_names: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per (λ, fold).

        Columns ``lam, fold, score`` (the criterion), one ``score_<name>`` per classifier (its
        accuracy averaged over ``ks``; names default to ``0, 1, …``), ``lam_max, null_model,
        fit_time_s, chosen``.
        """
        L, F, C, _ = self.accuracies.shape
        names = list(classifier_names) if classifier_names is not None else list(map(str, range(C)))
        if len(names) != C:
            raise ValueError(f"{C} classifier name(s) expected; got {names}.")
        frame = pd.DataFrame(
            {
                "lam": np.repeat(self.lams, F),
                "fold": np.tile(np.arange(F), L),
                "score": self.scores.ravel(),
            }
        )
        per_classifier = self.accuracies.mean(axis=3)  # (L, F, C)
        for c, name in enumerate(names):
            frame[f"score_{name}"] = per_classifier[:, :, c].ravel()
        frame["lam_max"] = np.tile(self.lam_max, L)
        frame["null_model"] = self.null_model.ravel()
        frame["fit_time_s"] = self.fit_time.ravel()
        frame["chosen"] = np.repeat(np.arange(L) == self.best_index, F)
        return frame


def _check_grid(lams) -> np.ndarray:
    lams = np.asarray(lams if lams is not None else [], dtype=float).ravel()
    if lams.size == 0:
        raise ValueError("The λ grid is empty: give at least one positive λ.")
    if not np.all(np.isfinite(lams)) or np.any(lams <= 0):
        raise ValueError(f"Every λ of the grid must be a positive finite float; got {list(lams)}.")
    if np.unique(lams).size != lams.size:
        raise ValueError(f"The λ grid has duplicate values: {list(lams)}.")
    return np.sort(lams)


def _check_ks(k, d: int) -> np.ndarray:
    ks = np.atleast_1d(np.asarray(k if k is not None else [], dtype=float))
    if ks.size == 0 or np.any(ks != np.round(ks)) or np.any(ks < 1) or np.any(ks > d):
        raise ValueError(f"k must be an int or a non-empty list of ints in [1, {d}]; got {k!r}.")
    return np.unique(ks.astype(int))


def _zscore(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    loc, scale = fit_scaler(X_train, "zscore")
    return (X_train - loc) / scale, (X_test - loc) / scale


def _cv_unit(selector, classifiers, Xs, y, train, test, lam, lam_max_fold, ks):
    """Held-out accuracies of one (fold, λ), shape (classifiers, k); ``(acc, fit_time, null)``."""
    y_train, y_test = y[train], y[test]
    if lam >= lam_max_fold:  # W = 0 is optimal (spec (A6)): no feature is selected
        classes, counts = np.unique(y_train, return_counts=True)
        majority = classes[np.argmax(counts)]
        accuracy = float(np.mean(y_test == majority))
        return np.full((len(classifiers), ks.shape[0]), accuracy), 0.0, True
    sel = clone(selector).set_params(lam=float(lam), lam_frac=None)
    if "n_features" in sel.get_params():  # only ranking_ is used: keep every feature
        sel.set_params(n_features=None)
    start = time.perf_counter()
    sel.fit([X[train] for X in Xs], y_train)
    fit_time = time.perf_counter() - start
    X_train, X_test = _zscore(np.hstack([X[train] for X in Xs]), np.hstack([X[test] for X in Xs]))
    ranking = np.asarray(sel.ranking_)
    accuracies = np.empty((len(classifiers), ks.shape[0]))
    for j, k in enumerate(ks):
        cols = ranking[:k]
        for c, classifier in enumerate(classifiers):
            model = clone(classifier).fit(X_train[:, cols], y_train)
            accuracies[c, j] = float(np.mean(model.predict(X_test[:, cols]) == y_test))
    return accuracies, fit_time, False


def cross_validate_lam(
    selector,
    Xs,
    y,
    lams: Sequence[float],
    *,
    classifier,
    k,
    n_folds: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
) -> LamCVResult:
    """Choose λ of an L2,1 multiview selector by seeded, stratified inner cross-validation.

    For every fold of ``StratifiedKFold(n_folds, shuffle=True, random_state)`` and every λ of
    ``lams``, a clone of ``selector`` with ``lam=λ, lam_frac=None`` is fitted on the fold's
    training rows; a clone of every classifier is trained on the top-k features of its ranking
    (z-scored with the fold's training statistics) and scored by accuracy on the held-out rows,
    for every k of ``k``. The criterion of λ is the accuracy averaged over the classifiers and
    ``k``, then over the folds; the best mean is chosen, ties going to the largest λ. λ ≥ λ_max of a fold (spec (A6))
    is not fitted: ``W = 0`` selects nothing and the fold scores the majority class of its
    training rows. See the module docstring.

    Parameters
    ----------
    selector : estimator
        Unfitted selector with parameters ``lam`` and ``lam_frac`` and a fitted ``ranking_``
        (:class:`~multiview_lab.mvfs.RFSSelector`,
        :class:`~multiview_lab.mvfs.ADMMMultiviewFeatureSelector`). Its ``standardize``
        parameter (default ``"zscore"``) is used for λ_max.
    Xs : list of array-like of shape (n_samples, d_v)
        The views (the training rows of the outer split).
    y : array-like of shape (n_samples,)
        Class labels.
    lams : sequence of float
        The λ grid (positive, distinct; e.g. ``10^{-3..3}``).
    classifier : classifier or list of classifiers
        Scikit-learn classifier(s) scored on the selected features (cloned for every fit); the
        criterion averages over them.
    k : int or sequence of int
        Numbers of top-ranked features scored; the criterion averages over them.
    n_folds : int, default=5
        Number of stratified folds, at least 2 and at most the size of the smallest class.
    random_state : int, default=0
        Seed of the fold shuffling (the selector and classifier keep their own seeds).
    n_jobs : int, default=1
        Joblib workers over the (fold, λ) units; the result does not depend on it.

    Returns
    -------
    LamCVResult

    Raises
    ------
    ValueError
        Empty or non-positive grid, ``n_folds`` < 2 or larger than the smallest class, ``k``
        outside ``[1, d]``, malformed views.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from multiview_lab.mvfs import RFSSelector, cross_validate_lam
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> Xs = [rng.standard_normal((60, 6)), rng.standard_normal((60, 4))]
    >>> Xs[0][:, 2] += 3.0 * y
    >>> cv = cross_validate_lam(
    ...     RFSSelector(max_iter=50), Xs, y, [0.1, 1.0, 100.0],
    ...     classifier=KNeighborsClassifier(1), k=1, n_folds=3,
    ... )
    >>> cv.best_lam < 100.0  # λ = 100 ≥ λ_max selects nothing (chance level)
    True
    """
    lams = _check_grid(lams)
    classifiers = list(classifier) if isinstance(classifier, list | tuple) else [classifier]
    if not classifiers:
        raise ValueError("classifier must be a classifier or a non-empty list of classifiers.")
    Xs, y = check_Xs_y(Xs, y)
    Xs = [np.asarray(X, dtype=float) for X in Xs]
    classes, codes = encode_labels(y)
    if not isinstance(n_folds, int | np.integer) or n_folds < 2:
        raise ValueError(f"n_folds must be an int >= 2; got {n_folds!r}.")
    smallest = int(np.bincount(codes).min())
    if n_folds > smallest:
        raise ValueError(
            f"n_folds={n_folds} is larger than the smallest class ({smallest} samples of "
            f"{classes[np.argmin(np.bincount(codes))].item()!r}): stratified folds need every "
            "class in every fold."
        )
    ks = _check_ks(k, sum(X.shape[1] for X in Xs))
    standardize = selector.get_params().get("standardize", "zscore")
    folds = list(
        StratifiedKFold(n_splits=int(n_folds), shuffle=True, random_state=random_state).split(
            Xs[0], codes
        )
    )
    lam_maxes = np.array([lam_max([X[tr] for X in Xs], y[tr], standardize) for tr, _ in folds])
    jobs = [
        delayed(_cv_unit)(selector, classifiers, Xs, y, tr, te, lam, lam_maxes[f], ks)
        for lam in lams
        for f, (tr, te) in enumerate(folds)
    ]
    outputs = Parallel(n_jobs=n_jobs)(jobs)
    L, F = lams.shape[0], len(folds)
    accuracies = np.array([o[0] for o in outputs]).reshape(L, F, len(classifiers), ks.shape[0])
    fit_time = np.array([o[1] for o in outputs]).reshape(L, F)
    null_model = np.array([o[2] for o in outputs]).reshape(L, F)
    scores = accuracies.mean(axis=(2, 3))
    mean = scores.mean(axis=1)
    best = int(np.flatnonzero(mean >= mean.max() - 1e-12)[-1])  # ties: the largest λ
    logger.info(
        "λ by %d-fold CV over %s: scores %s -> λ = %.4g (λ_max ≈ %.4g).",
        F,
        [f"{lam:.3g}" for lam in lams],
        np.round(mean, 4).tolist(),
        lams[best],
        lam_maxes.mean(),
    )
    return LamCVResult(
        lams=lams,
        scores=scores,
        accuracies=accuracies,
        ks=ks,
        lam_max=lam_maxes,
        null_model=null_model,
        fit_time=fit_time,
        best_index=best,
    )


DEFAULT_LAMS = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)


def _with_seed(estimator, seed):
    """A clone of ``estimator`` whose unset ``random_state`` (nested ones too, e.g.
    ``estimator__random_state`` of a ``GridSearchCV``) is ``seed``; unchanged when seed is None."""
    estimator = clone(estimator)
    if seed is None:
        return estimator
    unset = {
        key: seed
        for key, value in estimator.get_params(deep=True).items()
        if (key == "random_state" or key.endswith("__random_state")) and value is None
    }
    return estimator.set_params(**unset) if unset else estimator


class LamSearchCV(MultiviewMixin, BaseEstimator):
    """λ of an L2,1 multiview selector chosen by inner stratified cross-validation.

    The estimator form of :func:`cross_validate_lam` (ADMM-MVFS spec §6.2): ``fit`` scores every
    λ of ``lams`` on ``n_folds`` seeded stratified folds of the rows it is given (the selector
    fitted on each fold's training part, each classifier trained on its top-k features and
    scored on the held-out part) and keeps the best mean, ties going to the largest λ. The
    chosen λ is then given to the selectors that share it (the ADMM and RFS minimise the same
    objective); the search itself refits nothing.

    Parameters
    ----------
    selector : estimator or None, default=None
        Unfitted selector with parameters ``lam`` and ``lam_frac`` and a fitted ``ranking_``
        (None: :class:`~multiview_lab.mvfs.RFSSelector` with its defaults).
    lams : sequence of float, default=(1e-3, 1e-2, ..., 1e3)
        The λ grid (positive, distinct).
    classifiers : list of (str, classifier) or None, default=None
        Named scikit-learn classifiers scored on the selected features; the criterion averages
        over them (None: ``[("1nn", KNeighborsClassifier(n_neighbors=1))]``).
    k : int or sequence of int, default=10
        Numbers of top-ranked features scored; the criterion averages over them.
    n_folds : int, default=5
        Stratified folds, shuffled with ``random_state``.
    random_state : int or None, default=None
        Seeds the fold shuffling and every ``random_state`` (nested ones too) that the selector
        and the classifiers leave unset.
    n_jobs : int, default=1
        Joblib workers over the (fold, λ) fits; the result does not depend on it.
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`). The selector is fitted on the views.

    Notes
    -----
    Dense input only (the inner folds z-score the held-out features, which would densify sparse
    views): sparse input raises a ``TypeError``.

    Attributes
    ----------
    cv_result_ : LamCVResult
        Every score of the search.
    best_lam_ : float
        The chosen λ.
    best_score_, best_score_std_ : float
        Mean and sample standard deviation over the folds of the chosen λ's criterion.
    lam_max_ : float
        λ_max (spec (A6)) of the rows given to ``fit``, scaled as the selector scales them.
    classifier_names_ : list of str

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.mvfs import LamSearchCV, RFSSelector
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> Xs = [rng.standard_normal((60, 6)), rng.standard_normal((60, 4))]
    >>> Xs[0][:, 2] += 3.0 * y
    >>> search = LamSearchCV(RFSSelector(max_iter=50), lams=[0.1, 1.0, 100.0], k=1, n_folds=3)
    >>> search.fit(Xs, y).best_lam_ < search.lam_max_  # λ = 100 ≥ λ_max selects nothing
    True
    """

    def __init__(
        self,
        selector=None,
        *,
        lams=DEFAULT_LAMS,
        classifiers=None,
        k=10,
        n_folds=5,
        random_state=None,
        n_jobs=1,
        views_ind=None,
    ):
        self.selector = selector
        self.lams = lams
        self.classifiers = classifiers
        self.k = k
        self.n_folds = n_folds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.views_ind = views_ind

    _parameter_constraints: dict = {
        "selector": [HasMethods(["fit", "set_params"]), None],
        "lams": ["array-like", None],
        "classifiers": [list, tuple, None],
        "k": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _named_classifiers(self) -> list[tuple[str, object]]:
        named = self.classifiers
        if named is None:
            return [("1nn", KNeighborsClassifier(n_neighbors=1))]
        named = list(named)
        if not named or not all(isinstance(p, tuple | list) and len(p) == 2 for p in named):
            raise ValueError(
                "classifiers must be a non-empty list of (name, classifier) pairs; "
                f"got {self.classifiers!r}."
            )
        names = [str(name) for name, _ in named]
        if len(set(names)) != len(names):
            raise ValueError(f"classifier names must be distinct; got {names}.")
        return [(str(name), clf) for name, clf in named]

    @_fit_context(prefer_skip_nested_validation=False)  # the selector's own params are checked
    def fit(self, X, y):
        """Choose λ on the views and labels ``y``.

        Parameters
        ----------
        X : list of array-like of shape (n_samples, d_v), or array-like of shape \
(n_samples, n_features)
            The views, or the stacked views cut by ``views_ind``.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        from multiview_lab.mvfs.rfs import RFSSelector

        Xs, y = self._validate_views(X, y, reset=True)
        check_classification_targets(y)
        encode_labels(y)  # at least 2 classes of 2 samples, in the selectors' wording
        named = self._named_classifiers()
        selector = _with_seed(
            RFSSelector() if self.selector is None else self.selector, self.random_state
        )
        classifiers = [_with_seed(clf, self.random_state) for _, clf in named]
        result = cross_validate_lam(
            selector,
            Xs,
            y,
            self.lams,
            classifier=classifiers,
            k=self.k,
            n_folds=self.n_folds,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        self.cv_result_ = result
        self.classifier_names_ = [name for name, _ in named]
        self.best_lam_ = result.best_lam
        self.best_score_ = float(result.mean_scores[result.best_index])
        self.best_score_std_ = float(result.std_scores[result.best_index])
        self.lam_max_ = lam_max(Xs, y, selector.get_params().get("standardize", "zscore"))
        return self
