"""Shared machinery of the multiview boosting estimators.

:class:`MultiviewClassifierBase` handles what every multiview classifier of this package does the
same way: multiview input (a list of views, or one 2-D array split by ``views_ind``), label
validation, the mapping of two classes to {-1, +1}, one-vs-all for more than two classes, and
``predict`` from ``decision_function`` with an explicit tie label.

:class:`BaseMultiviewBoosting` adds the one boosting loop shared by PB-MVBoost, MVBoost and
rBoost.SH (in the style of scikit-learn's ``BaseWeightBoosting``): one distribution ``D_t`` over
the training examples, kept in log space and renormalised with log-sum-exp at every iteration;
each algorithm supplies one step ``_boost(iboost, Xs, y, sample_weight, random_state)`` returning
the increment ``s_t`` of the additive score, and the loop applies the exponential update
``D_{t+1}(i) ∝ D_t(i) exp(-y_i s_t(i))`` (PB-MVBoost spec (B6)). Early stops (a step returning
``None``, non-finite weights) are handled once, here, with a warning.
"""

from __future__ import annotations

import logging
import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.validation import check_binary_labels, check_Xs, check_Xs_y

logger = logging.getLogger(__name__)

_MAX_SEED = np.iinfo(np.int32).max


def split_views(X, views_ind):
    """Split the columns of a 2-D array into views at the boundaries ``views_ind``.

    ``views_ind = [0, d_1, d_1 + d_2, ..., d]`` (increasing, first 0, last the number of columns).
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array when views_ind is given; got shape {X.shape}.")
    b = np.asarray(views_ind)
    if b.ndim != 1 or b.size < 2 or b[0] != 0 or b[-1] != X.shape[1] or np.any(np.diff(b) <= 0):
        raise ValueError(
            "views_ind must be increasing view boundaries [0, ..., n_features] with at least "
            f"one column per view; got {b.tolist()} for X with {X.shape[1]} columns."
        )
    return [X[:, b[v] : b[v + 1]] for v in range(b.size - 1)]


def tree_leaf_signs(tree):
    """Per-node label in {-1, +1} of a tree fitted on {-1, +1} labels (ties -> -1, as ``predict``)."""
    value = tree.tree_.value[:, 0, :]
    return np.where(value[:, 1] > value[:, 0], 1, -1).astype(np.int8)


def tree_predict_pm(tree, X32):
    """``tree.predict`` in {-1, +1} (int8) on a float32 C-contiguous array, without validation."""
    return tree_leaf_signs(tree)[tree.tree_.apply(X32)]


def as_float32_views(Xs, order="C"):
    """The views as float32 arrays (the dtype scikit-learn trees work on), C- or F-contiguous.

    The layout does not change any tree or prediction. Fitting reads a feature's values through
    the node's sample indices either way; ``tree_.apply`` on many rows is about twice as fast on
    column-major (``order="F"``) input, where the rows at a node read one contiguous column.
    """
    views = [np.asarray(X, dtype=np.float32, order=order) for X in Xs]
    for v, (X, X32) in enumerate(zip(Xs, views, strict=True)):
        # the views were checked finite; a float64 beyond the float32 range becomes infinite
        if X.dtype.kind == "f" and X.dtype.itemsize > 4 and not np.isfinite(X32).all():
            raise ValueError(f"View {v} has values too large for float32 (the trees' dtype).")
    return views


class MultiviewClassifierBase(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Input handling, binary mapping and one-vs-all for the multiview classifiers.

    Subclasses implement ``_validate_params_values`` (raise on unknown option values),
    ``_fit_binary(Xs, y_pm, random_state)`` and ``_decision_binary(Xs)``; they may implement
    ``_staged_decision_binary(Xs)``. Binary labels are mapped ``classes_[0] -> -1`` and
    ``classes_[1] -> +1``. With more than two classes one binary model per class is fitted
    (one-vs-all, stored in ``ovr_estimators_``) and ``predict`` returns the class of the largest
    decision function.
    """

    _min_views = 1

    # -- input -------------------------------------------------------------------------------
    def _as_views(self, Xs):
        views_ind = getattr(self, "views_ind", None)
        if views_ind is not None and not isinstance(Xs, list | tuple):
            return split_views(Xs, views_ind)
        return Xs

    def _check_fit_input(self, Xs, y):
        Xs, y = check_Xs_y(self._as_views(Xs), y, min_views=self._min_views)
        return Xs, y

    def _check_predict_input(self, Xs):
        check_is_fitted(self, "classes_")
        Xs = check_Xs(
            self._as_views(Xs),
            n_views=len(self.n_features_per_view_),
            n_features=self.n_features_per_view_,
        )
        return as_float32_views(Xs, order="F")  # every predict path applies many trees to them

    # -- fit ---------------------------------------------------------------------------------
    def fit(self, Xs, y):
        """Fit the classifier.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v), or array-like of shape (n_samples, n_features) with ``views_ind`` set
            The views.
        y : array-like of shape (n_samples,)
            Labels: two classes (binary core) or more (one-vs-all).

        Returns
        -------
        self
        """
        self._validate_params_values()
        Xs, y = self._check_fit_input(Xs, y)
        self.n_features_per_view_ = [X.shape[1] for X in Xs]
        self.n_views_ = len(Xs)
        classes = np.unique(y)
        random_state = check_random_state(self.random_state)
        if classes.shape[0] > 2:
            self._fit_one_vs_all(Xs, y, classes, random_state)
            self.classes_ = classes
            return self
        y_pm, self.classes_ = check_binary_labels(y)
        self.ovr_estimators_ = None
        self._fit_binary(as_float32_views(Xs), y_pm, random_state)
        return self

    def _fit_one_vs_all(self, Xs, y, classes, random_state):
        seeds = random_state.randint(_MAX_SEED, size=classes.shape[0])
        self.ovr_estimators_ = []
        for k, label in enumerate(classes):
            logger.info("one-vs-all: class %r (%d/%d)", label, k + 1, classes.shape[0])
            est = clone(self).set_params(random_state=int(seeds[k]))
            self.ovr_estimators_.append(est.fit(Xs, y == label))

    @abstractmethod
    def _validate_params_values(self):
        """Raise ``ValueError`` for unknown option values."""

    @abstractmethod
    def _fit_binary(self, Xs, y, random_state):
        """Fit the binary model on float32 views and labels in {-1, +1}."""

    @abstractmethod
    def _decision_binary(self, Xs):
        """Binary score (positive = ``classes_[1]``) on validated float32 views."""

    def _staged_decision_binary(self, Xs):
        raise NotImplementedError(f"{type(self).__name__} has no staged decision function.")

    # -- predict -----------------------------------------------------------------------------
    def decision_function(self, Xs):
        """Decision function.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views.

        Returns
        -------
        score : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive means ``classes_[1]``. Multiclass: one column per class (one-vs-all).
        """
        Xs = self._check_predict_input(Xs)
        if self.ovr_estimators_ is not None:
            return np.column_stack([e._decision_binary(Xs) for e in self.ovr_estimators_])
        return self._decision_binary(Xs)

    def staged_decision_function(self, Xs):
        """Decision function after each boosting iteration (generator).

        Yields
        ------
        score : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        Xs = self._check_predict_input(Xs)
        if self.ovr_estimators_ is None:
            yield from self._staged_decision_binary(Xs)
            return
        gens = [e._staged_decision_binary(Xs) for e in self.ovr_estimators_]
        yield from (np.column_stack(cols) for cols in zip(*gens, strict=False))

    def _labels_from_scores(self, score):
        if score.ndim == 2:
            return self.classes_[np.argmax(score, axis=1)]
        tie = getattr(self, "tie_label", -1)
        pos = np.where(score == 0, tie > 0, score > 0)
        return self.classes_[pos.astype(int)]

    def predict(self, Xs):
        """Predict labels: the sign of the score (``tie_label`` on an exact 0); argmax for one-vs-all.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self._labels_from_scores(self.decision_function(Xs))

    def staged_predict(self, Xs):
        """Predicted labels after each boosting iteration (generator)."""
        for score in self.staged_decision_function(Xs):
            yield self._labels_from_scores(score)


class BaseMultiviewBoosting(MultiviewClassifierBase):
    """One multiview boosting loop over a distribution ``D_t`` kept in log space.

    Subclasses implement ``_begin_boosting(Xs, y, random_state)`` (allocate per-iteration state),
    ``_boost(iboost, Xs, y, sample_weight, random_state)`` returning the score increment
    ``s_t`` of shape (n_samples,) (or ``None`` to stop) and ``_end_boosting(n_iter)``
    (truncate state to the iterations done). After ``fit``, ``n_iter_`` is the number of
    iterations done and ``distribution_history_`` (n_iter_ + 1, n_samples) holds
    ``D_1, ..., D_{T+1}``.
    """

    def _fit_tree(self, X, y, sample_weight, seed):
        """Fit one weighted depth-limited tree; return it with its training predictions (int8)."""
        tree = DecisionTreeClassifier(
            max_depth=self.max_depth, splitter=self._splitter, random_state=seed
        )
        tree.fit(X, y, sample_weight=sample_weight, check_input=False)
        return tree, tree_predict_pm(tree, X)

    def _fit_binary(self, Xs, y, random_state):
        n = y.shape[0]
        T = self.n_estimators
        self._begin_boosting(Xs, y, random_state)
        history = np.empty((T + 1, n))
        log_d = np.full(n, -np.log(n))
        n_iter = 0
        # the views and labels are validated once in fit; the V * T tree fits skip re-validation
        with config_context(skip_parameter_validation=True, assume_finite=True):
            for iboost in range(T):
                log_d = log_d - logsumexp(log_d)
                d = np.exp(log_d)
                if d.min() <= 0:
                    warnings.warn(
                        f"{type(self).__name__}: a sample weight underflowed to 0 at iteration "
                        f"{iboost + 1}; boosting stopped.",
                        stacklevel=3,
                    )
                    break
                history[iboost] = d
                increment = self._boost(iboost, Xs, y, d, random_state)
                if increment is None:
                    warnings.warn(
                        f"{type(self).__name__}: boosting stopped at iteration {iboost + 1}.",
                        stacklevel=3,
                    )
                    break
                log_d = log_d - y * increment
                n_iter = iboost + 1
                if not np.all(np.isfinite(log_d)):
                    warnings.warn(
                        f"{type(self).__name__}: non-finite sample weights at iteration "
                        f"{iboost + 1}; boosting stopped.",
                        stacklevel=3,
                    )
                    break
                if T >= 20 and (iboost + 1) % (T // 10) == 0:
                    logger.info("%s: iteration %d/%d", type(self).__name__, iboost + 1, T)
        log_d = log_d - logsumexp(log_d)
        history[n_iter] = np.exp(log_d)
        self.n_iter_ = n_iter
        self.distribution_history_ = history[: n_iter + 1]
        self._end_boosting(n_iter)

    @abstractmethod
    def _begin_boosting(self, Xs, y, random_state):
        """Allocate the per-iteration state."""

    @abstractmethod
    def _boost(self, iboost, Xs, y, sample_weight, random_state):
        """One boosting step; return the score increment (n_samples,) or None to stop."""

    @abstractmethod
    def _end_boosting(self, n_iter):
        """Truncate the per-iteration state to ``n_iter`` iterations."""
