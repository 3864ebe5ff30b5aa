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
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.multiview import MultiviewMixin
from multiview_lab.utils.validation import check_binary_labels, check_n_classes

logger = logging.getLogger(__name__)

_MAX_SEED = np.iinfo(np.int32).max

#: The formats of a sparse view: CSC is what a tree fits on, CSR what it predicts on.
SPARSE_FORMATS = ["csr", "csc"]

#: Constraints of the parameters shared by the multiview boosting classifiers.
COMMON_CONSTRAINTS = {
    "n_estimators": [Interval(Integral, 1, None, closed="left")],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "tie_label": [Options(Integral, {-1, 1})],
    "random_state": ["random_state"],
    "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
}


def check_classifier_targets(y) -> np.ndarray:
    """Check that ``y`` holds class labels (not a continuous target) of at least 2 classes.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)

    Returns
    -------
    classes : ndarray
        The sorted classes of ``y`` (:func:`~multiview_lab.utils.validation.check_n_classes`).
    """
    check_classification_targets(y)
    return check_n_classes(y, 2)


def tree_leaf_signs(tree):
    """Per-node label in {-1, +1} of a tree fitted on {-1, +1} labels (ties -> -1, as ``predict``)."""
    value = tree.tree_.value[:, 0, :]
    return np.where(value[:, 1] > value[:, 0], 1, -1).astype(np.int8)


def tree_predict_pm(tree, X32):
    """``tree.predict`` in {-1, +1} (int8) on a float32 C-contiguous array, without validation."""
    return tree_leaf_signs(tree)[tree.tree_.apply(X32)]


def check_binary_target(estimator, y) -> np.ndarray:
    """Check that ``y`` holds exactly two classes, for a binary-only classifier.

    Continuous targets and a single class are refused first (:func:`check_classifier_targets`);
    more than two classes raise scikit-learn's "Only binary classification is supported" error.

    Returns
    -------
    classes : ndarray of shape (2,)
    """
    classes = check_classifier_targets(y)
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type!r}: "
            f"{type(estimator).__name__} needs exactly 2 distinct labels; got "
            f"{classes.shape[0]}."
        )
    return classes


def as_float32_views(Xs, order="C", sparse_format="csr"):
    """The views as float32 arrays (the dtype scikit-learn trees work on), C- or F-contiguous.

    The layout does not change any tree or prediction. Fitting reads a feature's values through
    the node's sample indices either way; ``tree_.apply`` on many rows is about twice as fast on
    column-major (``order="F"``) input, where the rows at a node read one contiguous column.

    A sparse view stays sparse: a float32 copy in ``sparse_format`` (``"csc"`` to fit a tree,
    ``"csr"`` to apply one), with sorted 32-bit indices as the trees' unchecked paths require.
    """
    views = []
    for v, X in enumerate(Xs):
        if sp.issparse(X):
            X32 = as_float32_sparse(X, sparse_format)
            values, source = X32.data, X.data
        else:
            X32 = np.asarray(X, dtype=np.float32, order=order)
            values, source = X32, X
        # the views were checked finite; a float64 beyond the float32 range becomes infinite
        if source.dtype.kind == "f" and source.dtype.itemsize > 4 and not np.isfinite(values).all():
            raise ValueError(f"View {v} has values too large for float32 (the trees' dtype).")
        views.append(X32)
    return views


def as_float32_sparse(X, sparse_format):
    """A float32 copy of a sparse matrix in ``sparse_format``, indices sorted and 32-bit."""
    X32 = X.asformat(sparse_format).astype(np.float32)  # astype copies: the caller's X is kept
    if X32.indices.dtype != np.intc or X32.indptr.dtype != np.intc:
        if X32.nnz > np.iinfo(np.intc).max:
            raise ValueError(
                "Sparse views with more than 2**31 - 1 stored values are not supported by "
                "scikit-learn's trees (64-bit indices)."
            )
        X32.indices = X32.indices.astype(np.intc)
        X32.indptr = X32.indptr.astype(np.intc)
    X32.sort_indices()
    return X32


class MultiviewClassifierBase(MultiviewMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Input handling, binary mapping and one-vs-all for the multiview classifiers.

    Subclasses declare ``_parameter_constraints`` and implement ``_validate_params_values``
    (checks the constraints cannot express), ``_fit_binary(Xs, y_pm, random_state)`` and
    ``_decision_binary(Xs)``; they may implement ``_staged_decision_binary(Xs)``. Input is a
    list of views or a stacked 2-D array split by ``views_ind``
    (:class:`~multiview_lab.utils.multiview.MultiviewMixin`); sparse views (CSR / CSC) stay
    sparse, as the trees take them. Binary labels are mapped ``classes_[0] -> -1`` and
    ``classes_[1] -> +1``. With more than two classes one binary model per class is fitted
    (one-vs-all, stored in ``ovr_estimators_``) and ``predict`` returns the class of the largest
    decision function.
    """

    _min_views = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # every path only feeds trees, which take CSR / CSC
        tags.classifier_tags.multi_class = True  # one-vs-all
        return tags

    # -- input -------------------------------------------------------------------------------
    def _check_fit_input(self, X, y):
        Xs, y = self._validate_views(
            X, y, reset=True, accept_sparse=SPARSE_FORMATS, min_views=self._min_views
        )
        check_classifier_targets(y)
        return Xs, y

    def _check_predict_input(self, X):
        check_is_fitted(self)
        Xs = self._validate_views(X, reset=False, accept_sparse=SPARSE_FORMATS)
        return as_float32_views(Xs, order="F")  # every predict path applies many trees to them

    # -- fit ---------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the classifier.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side, split at ``views_ind``.
        y : array-like of shape (n_samples,)
            Labels: two classes (binary core) or more (one-vs-all).

        Returns
        -------
        self
        """
        self._validate_params_values()
        Xs, y = self._check_fit_input(X, y)
        classes = np.unique(y)
        random_state = check_random_state(self.random_state)
        if classes.shape[0] > 2:
            self._fit_one_vs_all(Xs, y, classes, random_state)
            self.classes_ = classes
            return self
        y_pm, self.classes_ = check_binary_labels(y)
        self.ovr_estimators_ = None
        self._fit_binary(as_float32_views(Xs, sparse_format="csc"), y_pm, random_state)
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
        """Raise ``ValueError`` for option values that ``_parameter_constraints`` let through."""

    @abstractmethod
    def _fit_binary(self, Xs, y, random_state):
        """Fit the binary model on float32 views and labels in {-1, +1}."""

    @abstractmethod
    def _decision_binary(self, Xs):
        """Binary score (positive = ``classes_[1]``) on validated float32 views."""

    def _staged_decision_binary(self, Xs):
        raise NotImplementedError(f"{type(self).__name__} has no staged decision function.")

    # -- predict -----------------------------------------------------------------------------
    def decision_function(self, X):
        """Decision function.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, in the form given to ``fit`` or the other one.

        Returns
        -------
        score : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive means ``classes_[1]``. Multiclass: one column per class (one-vs-all).
        """
        Xs = self._check_predict_input(X)
        if self.ovr_estimators_ is not None:
            return np.column_stack([e._decision_binary(Xs) for e in self.ovr_estimators_])
        return self._decision_binary(Xs)

    def staged_decision_function(self, X):
        """Decision function after each boosting iteration (generator).

        Parameters
        ----------
        X : list of array-like or sparse matrix, or array-like or sparse matrix
            The views (see :meth:`decision_function`).

        Yields
        ------
        score : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        Xs = self._check_predict_input(X)
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

    def predict(self, X):
        """Predict labels: the sign of the score (``tie_label`` on an exact 0); argmax for one-vs-all.

        Parameters
        ----------
        X : list of array-like or sparse matrix, or array-like or sparse matrix
            The views (see :meth:`decision_function`).

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self._labels_from_scores(self.decision_function(X))

    def staged_predict(self, X):
        """Predicted labels after each boosting iteration (generator)."""
        for score in self.staged_decision_function(X):
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
        # a sparse training view is CSC (what a tree fits on); applying a tree needs CSR
        return tree, tree_predict_pm(tree, X.tocsr() if sp.issparse(X) else X)

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
