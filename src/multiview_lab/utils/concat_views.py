"""Any single-view scikit-learn estimator as a multiview one, on the concatenated views.

``ConcatViews(LogisticRegression())`` takes a list of views, or the views stacked in one 2-D
array split by ``views_ind``, like every multiview estimator of the project, and fits the
wrapped estimator on their column-wise concatenation (sparse views stay sparse). It is how a plain scikit-learn classifier is registered as a method of a pipeline
whose task passes lists of views (see CONTRIBUTING.md).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.multiview import MultiviewMixin


def _wrapped_has(method: str):
    """``available_if`` condition: the wrapped estimator (fitted, else given) has ``method``."""

    def check(self) -> bool:
        est = getattr(self, "estimator_", self.estimator)
        return est is None or isinstance(est, str) or hasattr(est, method)

    return check


class ConcatViews(MultiviewMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Fit a single-view estimator on the column-wise concatenation of the views.

    Parameters
    ----------
    estimator : estimator object
        A scikit-learn classifier (cloned in ``fit``). A string names one by dotted path
        (``"sklearn.linear_model.LogisticRegression"``), so it can be given in conf.
    params : dict, optional
        Parameters set on the wrapped estimator (useful from conf with a dotted-path string).
    random_state : int or None, default=None
        When given, set as the wrapped estimator's ``random_state`` (if it has one).
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view. The wrapped estimator sees all the
        columns either way; the views are checked (number, widths) at predict time.

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of columns of all the views together.
    n_views_ : int
        Number of views seen in ``fit``.
    n_features_per_view_ : list of int
        Number of features of each view.
    view_widths_ : list of int
        Same as ``n_features_per_view_`` (kept for existing callers).
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from multiview_lab.estimators import ConcatViews
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(40, 3)), rng.normal(size=(40, 2))]
    >>> y = (Xs[0][:, 0] + Xs[1][:, 1] > 0).astype(int)
    >>> ConcatViews(LogisticRegression()).fit(Xs, y).score(Xs, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), str, None],
        "params": [dict, None],
        "random_state": [Interval(Integral, 0, 2**32 - 1, closed="both"), None],
        "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, estimator=None, *, params=None, random_state=None, views_ind=None):
        self.estimator = estimator
        self.params = params
        self.random_state = random_state
        self.views_ind = views_ind

    def _make(self):
        est = self.estimator
        if est is None:
            raise ValueError("ConcatViews needs an estimator.")
        if isinstance(est, str):
            from multiview_lab.specs import resolve_estimator_class

            est = resolve_estimator_class(est)()
        est = clone(est)
        if self.params:
            est.set_params(**self.params)
        if self.random_state is not None and "random_state" in est.get_params(deep=False):
            est.set_params(random_state=self.random_state)
        return est

    def _stack(self, X, y="no_validation", *, reset: bool):
        """The views side by side (CSR if any view is sparse), validated as fit saw them."""
        out = self._validate_views(X, y, reset=reset, accept_sparse=["csr", "csc"])
        Xs = out if isinstance(y, str) and y == "no_validation" else out[0]
        if reset:
            self.view_widths_ = list(self.n_features_per_view_)
        stacked = sp.hstack(Xs, format="csr") if any(sp.issparse(V) for V in Xs) else np.hstack(Xs)
        return stacked if Xs is out else (stacked, out[1])

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the wrapped estimator on the concatenated views.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Class labels.
        **fit_params : dict
            Passed to the wrapped estimator's ``fit``.

        Returns
        -------
        self
        """
        est = self._make()
        X, y = self._stack(X, y, reset=True)
        check_classification_targets(y)
        self.estimator_ = est.fit(X, y, **fit_params)
        self.classes_ = getattr(self.estimator_, "classes_", None)
        return self

    def predict(self, X):
        """The wrapped estimator's ``predict`` on the concatenated views."""
        check_is_fitted(self)
        return self.estimator_.predict(self._stack(X, reset=False))

    @available_if(_wrapped_has("decision_function"))
    def decision_function(self, X):
        """The wrapped estimator's ``decision_function`` on the concatenated views."""
        check_is_fitted(self)
        return self.estimator_.decision_function(self._stack(X, reset=False))

    @available_if(_wrapped_has("predict_proba"))
    def predict_proba(self, X):
        """The wrapped estimator's ``predict_proba`` on the concatenated views."""
        check_is_fitted(self)
        return self.estimator_.predict_proba(self._stack(X, reset=False))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        if self.estimator is not None and not isinstance(self.estimator, str):
            inner = self.estimator.__sklearn_tags__()
            tags.input_tags.sparse = inner.input_tags.sparse
            if inner.classifier_tags is not None:
                tags.classifier_tags.multi_class = inner.classifier_tags.multi_class
        return tags
