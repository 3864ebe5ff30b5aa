"""The GBC estimators in scikit-learn's tools: the estimator check suite, model selection on a
slice of mfeat, and the equality of the list, stacked and source forms."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from multiview_lab.data.mfeat import load_mfeat
from multiview_lab.estimators import GBCClassifier, GBCRegressor, JoinedFeaturesClassifier
from multiview_lab.gbc._sklearn_checks import instances
from multiview_lab.gbc.graphs import knn_similarity_graph
from multiview_lab.testing import expected_failed_checks
from multiview_lab.utils.multiview import stack_views

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"
FAST = {"n_iter": 15, "max_depth": 2, "random_state": 0}


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check_suite(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def digits():
    """Digits 0, 1 and 7 of mfeat, 40 of each (rows interleaved by class), with the Fourier
    (76) and Zernike (47) views, and the morphological view's first feature."""
    views, y = load_mfeat(RAW / "mfeat", views=("fou", "zer", "mor"))
    rows = np.concatenate([np.arange(200 * k, 200 * k + 40) for k in (0, 1, 7)])
    rows = rows.reshape(3, 40).T.ravel()
    return [views["fou"][rows], views["zer"][rows]], y[rows], views["mor"][rows, 0]


def test_cross_val_score_on_stacked_views(digits):
    Xs, y, _ = digits
    X, views_ind = stack_views(Xs)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(GBCClassifier(views_ind=views_ind, **FAST), X, y, cv=folds)
    assert scores.shape == (3,) and scores.mean() > 0.8  # chance: 1/3


def test_grid_search_over_lambda0(digits):
    Xs, y, _ = digits
    X, views_ind = stack_views(Xs)
    search = GridSearchCV(
        GBCClassifier(views_ind=views_ind, **FAST),
        {"lambda0": [0.0, 0.1]},
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
    ).fit(X, y)
    assert search.best_params_["lambda0"] in (0.0, 0.1)
    assert len(search.cv_results_["params"]) == 2 and search.best_score_ > 0.8
    assert search.best_estimator_.n_features_in_ == X.shape[1] == 123
    assert search.predict(X).shape == y.shape


def test_pipeline_with_a_scaler(digits):
    Xs, y, target = digits
    X, views_ind = stack_views(Xs)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    clf = make_pipeline(StandardScaler(), GBCClassifier(views_ind=views_ind, **FAST))
    assert cross_val_score(clf, X, y, cv=folds).mean() > 0.8
    joined = JoinedFeaturesClassifier(
        "svm", param_grid={"svc__C": [10.0], "svc__gamma": ["scale"]}, views_ind=views_ind
    )
    assert cross_val_score(make_pipeline(StandardScaler(), joined), X, y, cv=folds).mean() > 0.8
    reg = make_pipeline(StandardScaler(), GBCRegressor(views_ind=views_ind, **FAST))
    r2 = cross_val_score(reg, X, target, cv=KFold(3, shuffle=True, random_state=0))
    assert r2.mean() > 0.3  # the morphological feature from the Fourier and Zernike views


def test_list_stacked_and_source_forms_agree(digits):
    Xs, y, target = digits
    X, views_ind = stack_views(Xs)
    y_obs = np.where(np.arange(y.size) % 4 == 0, y, -1)  # a quarter labelled, -1 elsewhere
    labeled = y_obs != -1
    as_list = GBCClassifier(**FAST).fit(Xs, y_obs)
    stacked = GBCClassifier(views_ind=views_ind, **FAST).fit(X, y_obs)
    sources = GBCClassifier(**FAST).fit(Xs, None, y, labeled)
    masked = GBCClassifier(**FAST).fit(Xs, y, labeled_mask=labeled)
    expected = sources.decision_function(Xs)
    for model in (as_list, stacked, masked):
        np.testing.assert_array_equal(model.decision_function(Xs), expected)
        np.testing.assert_array_equal(model.decision_function(X), expected)
        np.testing.assert_array_equal(model.predict_transductive(), sources.predict_transductive())
    np.testing.assert_array_equal(as_list.classes_, [0, 1, 7])  # -1 is no class
    # The regressor: NaN marks the unlabelled rows.
    t_obs = np.where(labeled, target, np.nan)
    reg = GBCRegressor(views_ind=views_ind, **FAST).fit(X, t_obs)
    ref = GBCRegressor(**FAST).fit(Xs, None, target, labeled)
    np.testing.assert_array_equal(reg.predict(X), ref.predict(Xs))
    np.testing.assert_array_equal(reg.predict_transductive(), ref.predict_transductive())
    # The joined-feature baseline.
    params = {"kind": "svm", "param_grid": {"svc__C": [10.0], "svc__gamma": ["scale"]}}
    joined = JoinedFeaturesClassifier(views_ind=views_ind, **params).fit(X, y_obs)
    joined_ref = JoinedFeaturesClassifier(**params).fit(Xs, None, y, labeled)
    np.testing.assert_array_equal(joined.predict(X), joined_ref.predict(Xs))
    np.testing.assert_array_equal(joined.predict_transductive(), joined_ref.predict_transductive())


def test_partial_sources_as_nan_rows_and_graphs_as_a_parameter(digits):
    Xs, y, _ = digits
    X, views_ind = stack_views(Xs)
    n = y.size
    present = np.flatnonzero(np.arange(n) % 3 != 0)  # a third of the rows miss the Zernike view
    X_nan = X.copy()
    X_nan[np.setdiff1d(np.arange(n), present), 76:] = np.nan
    G = knn_similarity_graph(Xs[1], k=5)
    y_obs = np.where(np.arange(n) % 2 == 0, y, -1)
    labeled = y_obs != -1
    params = {**FAST, "lambda1": 0.1}
    stacked = GBCClassifier(views_ind=views_ind, partial_sources=True, graphs=[G], **params)
    stacked.fit(X_nan, y_obs)
    pairs = [Xs[0], (Xs[1][present], present)]
    ref = GBCClassifier(**params).fit(pairs, [G], y, labeled)
    np.testing.assert_array_equal(stacked.predict_transductive(), ref.predict_transductive())
    np.testing.assert_array_equal(stacked.decision_function(X_nan), ref.decision_function(pairs))
    assert stacked.n_graphs_ == 1  # one graph weight per one-against-others model
    assert [h.shape[1] for h in stacked.graph_weights_history_] == [1, 1, 1]
    # Without partial_sources the NaN rows are an error, not missing instances.
    with pytest.raises(ValueError, match="NaN"):
        clone(stacked).set_params(partial_sources=False).fit(X_nan, y_obs)
    # The graphs describe the fitted rows: a cross-validation split cannot subset them.
    with pytest.raises(ValueError, match="graph 0 has shape"):
        clone(stacked).fit(X_nan[:60], y_obs[:60])
    joined = JoinedFeaturesClassifier(
        "svm",
        param_grid={"svc__C": [10.0], "svc__gamma": ["scale"]},
        views_ind=views_ind,
        partial_sources=True,
        graphs=[G],
    ).fit(X_nan, y_obs)
    joined_ref = JoinedFeaturesClassifier(
        "svm", param_grid={"svc__C": [10.0], "svc__gamma": ["scale"]}
    ).fit(pairs, [G], y, labeled)
    np.testing.assert_array_equal(joined.predict_transductive(), joined_ref.predict_transductive())
    assert sp.issparse(G)
