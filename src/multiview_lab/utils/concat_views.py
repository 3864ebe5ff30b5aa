"""Any single-view scikit-learn estimator as a multiview one, on the concatenated views.

``ConcatViews(LogisticRegression())`` takes a list of views, like every multiview estimator of
the project, and fits the wrapped estimator on their column-wise concatenation (sparse views
stay sparse). It is how a plain scikit-learn classifier is registered as a method of a pipeline
whose task passes lists of views (see CONTRIBUTING.md).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.validation import check_Xs


class ConcatViews(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
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

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone.
    classes_ : ndarray
        The class labels.
    n_views_ : int
        Number of views seen in ``fit``.
    view_widths_ : list of int
        Number of features of each view.

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

    def __init__(self, estimator=None, *, params=None, random_state=None):
        self.estimator = estimator
        self.params = params
        self.random_state = random_state

    def _make(self):
        est = self.estimator
        if est is None:
            raise ValueError("ConcatViews needs an estimator.")
        if isinstance(est, str):
            from multiview_lab.evaluation import resolve_estimator_class

            est = resolve_estimator_class(est)()
        est = clone(est)
        if self.params:
            est.set_params(**self.params)
        if self.random_state is not None and "random_state" in est.get_params(deep=False):
            est.set_params(random_state=self.random_state)
        return est

    def _stack(self, Xs, fitting: bool = False):
        Xs = check_Xs(Xs, accept_sparse=["csr", "csc"])
        if fitting:
            self.n_views_ = len(Xs)
            self.view_widths_ = [X.shape[1] for X in Xs]
        elif [X.shape[1] for X in Xs] != self.view_widths_:
            raise ValueError(
                f"views of widths {[X.shape[1] for X in Xs]} given; fitted on {self.view_widths_}."
            )
        if any(sp.issparse(X) for X in Xs):
            return sp.hstack(Xs, format="csr")
        return np.hstack(Xs)

    def fit(self, Xs, y, **fit_params):
        """Fit the wrapped estimator on the concatenated views."""
        X = self._stack(Xs, fitting=True)
        self.estimator_ = self._make().fit(X, y, **fit_params)
        self.classes_ = getattr(self.estimator_, "classes_", None)
        return self

    def predict(self, Xs):
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(self._stack(Xs))

    def decision_function(self, Xs):
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(self._stack(Xs))

    def predict_proba(self, Xs):
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(self._stack(Xs))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is not None and not isinstance(self.estimator, str):
            inner = self.estimator.__sklearn_tags__()
            tags.input_tags.sparse = inner.input_tags.sparse
        return tags
