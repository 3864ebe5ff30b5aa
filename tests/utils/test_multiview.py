"""The multiview input convention (multiview_lab.utils.multiview) on a minimal estimator."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from multiview_lab.utils.multiview import MultiviewMixin, split_views, stack_views


class ViewMeans(MultiviewMixin, ClassifierMixin, BaseEstimator):
    """Nearest class mean on the concatenation of per-view means (a test double of a method)."""

    def __init__(self, views_ind=None, shrink=0.0):
        self.views_ind = views_ind
        self.shrink = shrink

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.poor_score = True  # one mean per view: a test double, not a method
        return tags

    def _features(self, Xs):
        return np.column_stack([np.asarray(V.mean(axis=1)).ravel() for V in Xs])

    def fit(self, X, y):
        Xs, y = self._validate_views(X, y, reset=True, accept_sparse=["csr", "csc"])
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        F = self._features(Xs)
        self.means_ = np.array([F[y_idx == k].mean(axis=0) for k in range(len(self.classes_))])
        return self

    def predict(self, X):
        check_is_fitted(self)
        F = self._features(self._validate_views(X, reset=False, accept_sparse=["csr", "csc"]))
        d = ((F[:, None, :] - self.means_[None]) ** 2).sum(axis=2)
        return self.classes_[d.argmin(axis=1)]


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    return [rng.normal(y[:, None], 1.0, (n, 3)), rng.normal(2 * y[:, None], 1.0, (n, 5))], y


def test_stack_and_split_are_inverse_and_keep_sparse():
    Xs, _ = _data()
    X, views_ind = stack_views(Xs)
    assert views_ind.tolist() == [0, 3, 8]
    for a, b in zip(split_views(X, views_ind), Xs, strict=True):
        np.testing.assert_array_equal(a, b)
    Xsp, ind = stack_views([sp.csr_matrix(Xs[0]), Xs[1]])
    assert sp.issparse(Xsp) and Xsp.format == "csr" and ind.tolist() == [0, 3, 8]
    assert all(sp.issparse(V) for V in split_views(Xsp, ind))
    assert [V.shape[1] for V in split_views(X, 3)] == [3, 3, 2]  # an int: V near-equal blocks


def test_the_two_forms_fit_the_same_model_and_record_the_views():
    Xs, y = _data()
    X, views_ind = stack_views(Xs)
    a = ViewMeans().fit(Xs, y)
    b = ViewMeans(views_ind=views_ind).fit(X, y)
    np.testing.assert_array_equal(a.means_, b.means_)
    for est in (a, b):
        assert est.n_features_in_ == 8
        assert est.n_features_per_view_ == [3, 5]
        assert est.views_ind_.tolist() == [0, 3, 8]
    np.testing.assert_array_equal(a.predict(Xs), b.predict(X))


def test_model_selection_and_pipeline_work_on_stacked_views():
    Xs, y = _data(120)
    X, views_ind = stack_views(Xs)
    scores = cross_val_score(ViewMeans(views_ind=views_ind), X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.8
    search = GridSearchCV(ViewMeans(views_ind=views_ind), {"shrink": [0.0, 1.0]}, cv=3)
    assert search.fit(X, y).best_estimator_.n_features_per_view_ == [3, 5]
    pipe = make_pipeline(StandardScaler(), ViewMeans(views_ind=views_ind))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.8


@pytest.mark.parametrize(
    ("views_ind", "message"),
    [
        ([0, 3], "increasing view boundaries"),
        ([0, 5, 3, 8], "increasing view boundaries"),
        (9, "too few to cut"),
        (0, ">= 1"),
        (True, "a bool"),
    ],
)
def test_bad_views_ind_names_the_problem(views_ind, message):
    X, _ = stack_views(_data()[0])
    with pytest.raises(ValueError, match=message):
        ViewMeans(views_ind=views_ind).fit(X, _data()[1])


def test_predict_checks_views_against_fit():
    Xs, y = _data()
    est = ViewMeans().fit(Xs, y)
    with pytest.raises(ValueError, match="3 views but 2"):
        est.predict([*Xs, Xs[0]])
    with pytest.raises(ValueError, match="View 1 has 4 features but 5"):
        est.predict([Xs[0], Xs[1][:, :4]])
    X, views_ind = stack_views(Xs)
    est = ViewMeans(views_ind=views_ind).fit(X, y)
    with pytest.raises(ValueError, match="X has 7 features, but ViewMeans is expecting 8"):
        est.predict(X[:, :7])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ViewMeans().fit(Xs, y[:-1])
    with pytest.raises(ValueError, match="Unknown label type"):
        ViewMeans().fit(Xs, np.linspace(0, 1, len(y)))


@parametrize_with_checks([ViewMeans(), ViewMeans(views_ind=2)])
def test_the_convention_passes_the_check_suite(estimator, check):
    check(estimator)
