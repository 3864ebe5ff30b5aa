"""The PB-MVBoost family under scikit-learn's contract: the check suite and model selection.

The check suite runs on :func:`multiview_lab.pbmvboost._sklearn_checks.instances` (multiview
estimators with ``views_ind=2``: the suite's 2-D X is cut into two views). Model selection runs
on a real slice of MNIST1 (digits 3 against 8, the four 14x14 quarters of each image as four
views, stacked with :func:`~multiview_lab.utils.stack_views`).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_predict, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from multiview_lab.estimators import ConcatViews
from multiview_lab.pbmvboost import (
    ConcatClassifier,
    CqBoostClassifier,
    FusionCqAllClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVAdaBoostClassifier,
    MVBoostClassifier,
    MVMVClassifier,
    PBMVBoostClassifier,
    RBoostSHClassifier,
)
from multiview_lab.pbmvboost._sklearn_checks import instances
from multiview_lab.testing import expected_failed_checks
from multiview_lab.utils import stack_views

from .conftest import MNIST_PATH, mnist1_views


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check_suite(estimator, check):
    check(estimator)


# --- model selection on a real slice ------------------------------------------------------


@pytest.fixture(scope="module")
def mnist_3_vs_8():
    """150 training and 150 test images of digits 3 and 8 (MNIST1 views, pixels / 255)."""
    if not MNIST_PATH.exists():
        pytest.skip(f"{MNIST_PATH} not found")
    with np.load(MNIST_PATH) as z:
        x, y = z["x_train"][:3000], z["y_train"][:3000]
    keep = np.flatnonzero(np.isin(y, (3, 8)))[:300]
    views = [V / 255.0 for V in mnist1_views(x[keep])]
    labels = np.where(y[keep] == 3, "three", "eight")  # string labels on purpose
    return [V[:150] for V in views], labels[:150], [V[150:] for V in views], labels[150:]


TREES = {"max_depth": 2, "cv": 3, "random_state": 0}
FUSION = {"Cs": (0.01, 1.0), "gammas": (0.1,), "mus": (0.01,), "cv_level1": 3, "random_state": 0}

# (multiview estimator, one real parameter and two values for GridSearchCV)
MULTIVIEW = [
    (PBMVBoostClassifier(8, random_state=0), "n_estimators", [2, 8]),
    (MVBoostClassifier(8, random_state=0), "max_depth", [1, 2]),
    (MVAdaBoostClassifier(5, random_state=0), "n_estimators", [1, 5]),
    (RBoostSHClassifier(10, random_state=0), "gamma", [0.3, 0.9]),
    (MonoViewClassifier(**TREES), "max_depth", [1, 3]),
    (ConcatClassifier(**TREES), "max_depth", [1, 3]),
    (FusionDTClassifier(**TREES), "level1_output", ["sign", "proba"]),
    (MVMVClassifier(**TREES), "tie_break", ["proba", "negative"]),
    (FusionCqAllClassifier(**FUSION), "mus", [(0.001,), (0.01,)]),
    (ConcatViews(LogisticRegression(max_iter=1000)), "params", [{"C": 0.01}, {"C": 1.0}]),
]
IDS = [type(est).__name__ for est, _, _ in MULTIVIEW]


@pytest.mark.parametrize(("est", "param", "values"), MULTIVIEW, ids=IDS)
def test_cross_val_score_and_grid_search(est, param, values, mnist_3_vs_8):
    Xs, y, _, _ = mnist_3_vs_8
    X, views_ind = stack_views(Xs)
    est = clone(est).set_params(views_ind=views_ind)
    scores = cross_val_score(est, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.7, scores
    search = GridSearchCV(est, {param: values}, cv=3).fit(X, y)
    assert search.best_params_[param] in values
    assert search.best_estimator_.n_views_ == 4
    assert search.best_estimator_.n_features_in_ == 784
    assert set(search.predict(X)) <= {"three", "eight"}


@pytest.mark.parametrize(("est", "param", "values"), MULTIVIEW, ids=IDS)
def test_pipeline_with_scaler(est, param, values, mnist_3_vs_8):
    Xs, y, Xs_test, y_test = mnist_3_vs_8
    X, views_ind = stack_views(Xs)
    X_test, _ = stack_views(Xs_test)
    pipe = make_pipeline(StandardScaler(), clone(est).set_params(views_ind=views_ind))
    assert pipe.fit(X, y).score(X_test, y_test) > 0.75
    assert pipe[-1].n_features_per_view_ == [196] * 4


@pytest.mark.parametrize(("est", "param", "values"), MULTIVIEW, ids=IDS)
def test_sparse_pipeline_with_maxabs_scaler(est, param, values, mnist_3_vs_8):
    """MNIST pixels are mostly 0: the sparse form, scaled without centring, gives a model as
    good as the dense one. Not always the same model: scikit-learn's sparse and dense tree
    splitters can break a tie between equally good splits differently, and a boosting
    method's later rounds then differ (RBoost.SH: the same views and trees for 7 of 10
    rounds on some CPUs, 94 % of the test predictions equal); linear SVMs / logistic
    regression differ by rounding."""
    Xs, y, Xs_test, y_test = mnist_3_vs_8
    X, views_ind = stack_views([sp.csr_matrix(V) for V in Xs])
    X_test, _ = stack_views([sp.csr_matrix(V) for V in Xs_test])
    assert sp.issparse(X)
    pipe = make_pipeline(MaxAbsScaler(), clone(est).set_params(views_ind=views_ind))
    pred = pipe.fit(X, y).predict(X_test)
    dense = make_pipeline(MaxAbsScaler(), clone(est).set_params(views_ind=views_ind))
    dense_pred = dense.fit(X.toarray(), y).predict(X_test.toarray())
    assert np.mean(pred == dense_pred) > 0.9
    assert abs(np.mean(pred == y_test) - np.mean(dense_pred == y_test)) <= 0.03
    assert np.mean(pred == y_test) > 0.75


@pytest.mark.parametrize(("est", "param", "values"), MULTIVIEW, ids=IDS)
def test_list_and_stacked_forms_agree(est, param, values, mnist_3_vs_8):
    Xs, y, Xs_test, _ = mnist_3_vs_8
    X, views_ind = stack_views(Xs)
    X_test, _ = stack_views(Xs_test)
    from_list = clone(est).fit(Xs, y)
    stacked = clone(est).set_params(views_ind=views_ind).fit(X, y)
    expected = from_list.predict(Xs_test)
    np.testing.assert_array_equal(stacked.predict(X_test), expected)
    # either form may be given after fitting on the other
    np.testing.assert_array_equal(from_list.predict(X_test), expected)
    np.testing.assert_array_equal(stacked.predict(Xs_test), expected)
    np.testing.assert_array_equal(from_list.views_ind_, views_ind)


def test_int_views_ind_cuts_near_equal_blocks(mnist_3_vs_8):
    Xs, y, Xs_test, _ = mnist_3_vs_8
    X, _ = stack_views(Xs)
    clf = PBMVBoostClassifier(5, random_state=0, views_ind=4).fit(X, y)
    assert clf.n_features_per_view_ == [196] * 4
    ref = PBMVBoostClassifier(5, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(clf.predict(stack_views(Xs_test)[0]), ref.predict(Xs_test))


def test_boosting_multiclass_cross_val_predict():
    """One-vs-all through cross_val_predict on three digits of MNIST1 (stacked form)."""
    if not MNIST_PATH.exists():
        pytest.skip(f"{MNIST_PATH} not found")
    with np.load(MNIST_PATH) as z:
        x, y = z["x_train"][:2000], z["y_train"][:2000]
    keep = np.flatnonzero(np.isin(y, (0, 1, 7)))[:180]
    X, views_ind = stack_views(mnist1_views(x[keep] / 255.0))
    clf = MVBoostClassifier(5, random_state=0, views_ind=views_ind)
    pred = cross_val_predict(clf, X, y[keep], cv=3)
    assert set(pred) <= {0, 1, 7} and np.mean(pred == y[keep]) > 0.8


def test_cqboost_single_view_in_model_selection(mnist_3_vs_8):
    """CqBoost is single-view: it takes the stacked X as it is (no views_ind)."""
    Xs, y, Xs_test, y_test = mnist_3_vs_8
    X, _ = stack_views(Xs)
    est = CqBoostClassifier(0.01, gamma=0.01, n_max_iterations=30)
    assert cross_val_score(est, X, y, cv=3).min() > 0.7
    search = GridSearchCV(est, {"gamma": [0.01, 0.05]}, cv=3).fit(X, y)
    assert search.best_params_["gamma"] in (0.01, 0.05)
    pipe = make_pipeline(MaxAbsScaler(), est).fit(sp.csr_matrix(X), y)
    assert pipe.score(sp.csr_matrix(stack_views(Xs_test)[0]), y_test) > 0.75
