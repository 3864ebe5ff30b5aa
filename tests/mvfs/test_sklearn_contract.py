"""The multiview selectors under scikit-learn: the check suite, model selection on a real mfeat
slice (stacked views + ``views_ind``), list form == stacked form, and sparse views."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from multiview_lab.data.mfeat import load_mfeat
from multiview_lab.mvfs import (
    ADMMMultiviewFeatureSelector,
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    LamSearchCV,
    ReliefFSelector,
    RFSSelector,
    backends,
)
from multiview_lab.mvfs._sklearn_checks import instances
from multiview_lab.testing import expected_failed_checks
from multiview_lab.utils.multiview import stack_views

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw" / "mfeat"


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check_suite(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def mfeat():
    """Digits 0-3 of mfeat, 30 rows each; views fou (76), zer (47), pix (240 pixel counts)."""
    if not RAW.exists():
        pytest.skip(f"{RAW} not found")
    views, y = load_mfeat(RAW, views=("fou", "zer", "pix"))
    rows = np.concatenate([200 * k + np.arange(0, 200, 200 // 30)[:30] for k in range(4)])
    return [views[name][rows] for name in ("fou", "zer", "pix")], y[rows]


@pytest.fixture(scope="module")
def stacked(mfeat):
    Xs, y = mfeat
    X, views_ind = stack_views(Xs[:2])  # fou + zer: 123 columns
    return X, views_ind, y


CV = StratifiedKFold(3, shuffle=True, random_state=0)


def selectors(views_ind):
    return [
        ADMMMultiviewFeatureSelector(lam_frac=0.2, n_features=10, max_iter=30, views_ind=views_ind),
        RFSSelector(lam_frac=0.2, n_features=10, max_iter=30, views_ind=views_ind),
        FisherScoreSelector(n_features=10, views_ind=views_ind),
        ANOVAFSelector(n_features=10, views_ind=views_ind),
        ReliefFSelector(n_features=10, views_ind=views_ind),
        AllFeaturesSelector(views_ind=views_ind),
    ]


@pytest.mark.parametrize("index", range(6), ids=lambda i: type(selectors(None)[i]).__name__)
def test_cross_val_score_of_a_scaler_selector_classifier_pipeline(stacked, index):
    X, views_ind, y = stacked
    selector = selectors(views_ind)[index]
    pipe = make_pipeline(StandardScaler(), selector, LinearSVC(max_iter=5000))
    scores = cross_val_score(pipe, X, y, cv=CV)
    assert scores.shape == (3,)
    assert scores.mean() > 0.6  # four digits: chance is 0.25


def test_grid_search_over_lam_of_the_admm_in_a_pipeline(stacked):
    """The ADMM docstring's advice: λ by GridSearchCV over a Pipeline (selector, LinearSVC)."""
    X, views_ind, y = stacked
    pipe = Pipeline(
        [
            (
                "select",
                ADMMMultiviewFeatureSelector(n_features=5, max_iter=60, views_ind=views_ind),
            ),
            ("svm", LinearSVC(max_iter=5000)),
        ]
    )
    lams = [0.1, 10.0, 1e4]
    search = GridSearchCV(pipe, {"select__lam": lams}, cv=CV).fit(X, y)
    assert search.best_params_["select__lam"] in lams
    means = search.cv_results_["mean_test_score"]
    assert means.shape == (3,) and np.all(np.isfinite(means))
    best = search.best_estimator_.named_steps["select"]
    assert best.lam_ == search.best_params_["select__lam"]
    assert best.n_features_in_ == X.shape[1] and best.n_views_ == 2
    np.testing.assert_array_equal(best.views_ind_, views_ind)
    assert search.predict(X).shape == y.shape


def test_grid_search_over_n_features_of_a_filter(stacked):
    X, views_ind, y = stacked
    pipe = make_pipeline(FisherScoreSelector(views_ind=views_ind), LinearSVC(max_iter=5000))
    search = GridSearchCV(pipe, {"fisherscoreselector__n_features": [1, 20]}, cv=CV).fit(X, y)
    assert search.best_params_ == {"fisherscoreselector__n_features": 20}


@pytest.mark.parametrize("index", range(6), ids=lambda i: type(selectors(None)[i]).__name__)
def test_list_form_equals_stacked_form(mfeat, index):
    Xs, y = mfeat
    X, views_ind = stack_views(Xs[:2])
    listed = clone(selectors(None)[index]).fit(Xs[:2], y)
    stacked_fit = selectors(views_ind)[index].fit(X, y)
    np.testing.assert_array_equal(listed.scores_, stacked_fit.scores_)
    np.testing.assert_array_equal(listed.ranking_, stacked_fit.ranking_)
    np.testing.assert_array_equal(listed.transform(Xs[:2]), stacked_fit.transform(X))
    np.testing.assert_array_equal(listed.transform(Xs[:2]), X[:, listed.get_support(indices=True)])
    assert listed.n_features_in_ == stacked_fit.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(listed.views_ind_, stacked_fit.views_ind_)


def test_transform_inverse_transform_and_feature_names(stacked):
    X, views_ind, y = stacked
    sel = FisherScoreSelector(n_features=4, views_ind=views_ind).fit(X, y)
    Xt = sel.transform(X)
    back = sel.inverse_transform(Xt)
    mask = sel.get_support()
    np.testing.assert_array_equal(back[:, mask], X[:, mask])
    assert np.all(back[:, ~mask] == 0)
    assert list(sel.get_feature_names_out()) == [f"x{j}" for j in sel.get_support(indices=True)]
    sparse_back = sel.inverse_transform(sp.csr_matrix(Xt))
    np.testing.assert_array_equal(sparse_back.toarray(), back)


def test_lam_search_cv_on_stacked_views_equals_the_list_form(mfeat):
    Xs, y = mfeat
    X, views_ind = stack_views(Xs[:2])
    kw = {"lams": [0.1, 10.0], "k": 5, "n_folds": 2, "random_state": 0}
    listed = LamSearchCV(RFSSelector(max_iter=20), **kw).fit(Xs[:2], y)
    stacked_fit = LamSearchCV(RFSSelector(max_iter=20), views_ind=views_ind, **kw).fit(X, y)
    np.testing.assert_array_equal(listed.cv_result_.scores, stacked_fit.cv_result_.scores)
    assert listed.best_lam_ == stacked_fit.best_lam_


# -- sparse views (mfeat pix: pixel counts, 40 % zeros) -------------------------------------------
@pytest.fixture(scope="module")
def pix(mfeat):
    Xs, y = mfeat
    X = Xs[2]
    assert np.mean(X == 0) > 0.3
    return [X[:, :120], X[:, 120:]], y


def max_w_gap(a, b):
    return max(np.abs(wa - wb).max() for wa, wb in zip(a.W_, b.W_, strict=True))


@pytest.mark.parametrize(
    "params",
    [
        {"wsolver": "irls"},  # d_v = n = 120: primal IRLS with the Gram matrix
        {"wsolver": "fista"},  # FISTA with the Gram matrix
        {"loss": "fro", "zstep": "prox"},
        {"standardize": "minmax"},
        {"standardize": "none"},
    ],
)
def test_admm_on_sparse_views_matches_dense(pix, params):
    Xs, y = pix
    kw = {"lam_frac": 0.2, "max_iter": 40, "random_state": 0, **params}
    dense = ADMMMultiviewFeatureSelector(**kw).fit(Xs, y)
    sparse = ADMMMultiviewFeatureSelector(**kw).fit([sp.csr_matrix(X) for X in Xs], y)
    assert max_w_gap(dense, sparse) < 1e-9
    np.testing.assert_array_equal(dense.ranking_[:10], sparse.ranking_[:10])


def test_admm_sparse_push_through_and_gram_free_fista(pix, monkeypatch):
    """d_v > n (IRLS push-through, ridge start in the n×n form) and FISTA without a Gram matrix
    (forced by lowering the Gram threshold) on CSC views."""
    Xs, y = pix
    rows = np.r_[0:20, 30:50, 60:80, 90:110]  # n = 80 < d_v = 120
    Xs, y = [X[rows] for X in Xs], y[rows]
    kw = {"lam_frac": 0.2, "max_iter": 30, "random_state": 0}
    for wsolver in ("irls", "fista"):
        if wsolver == "fista":
            monkeypatch.setattr(backends, "GRAM_MAX", 50)
        dense = ADMMMultiviewFeatureSelector(wsolver=wsolver, **kw).fit(Xs, y)
        sparse = ADMMMultiviewFeatureSelector(wsolver=wsolver, **kw).fit(
            [sp.csc_matrix(X) for X in Xs], y
        )
        assert max_w_gap(dense, sparse) < 1e-9
        assert sparse.wsolvers_ == [wsolver, wsolver]


def test_sparse_selectors_match_dense_and_keep_sparse_output(pix):
    Xs, y = pix
    X, views_ind = stack_views(Xs)
    Xsp = sp.csr_matrix(X)
    for sel in selectors(views_ind)[1:4] + selectors(views_ind)[5:]:
        dense, sparse = clone(sel).fit(X, y), clone(sel).fit(Xsp, y)
        np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-9, atol=1e-12)
        out = sparse.transform(Xsp)
        assert sp.issparse(out)
        np.testing.assert_array_equal(out.toarray(), sparse.transform(X))


def test_sparse_pipeline_with_maxabs_scaler(pix):
    Xs, y = pix
    X, views_ind = stack_views([sp.csr_matrix(V) for V in Xs])
    assert sp.issparse(X)
    pipe = make_pipeline(
        MaxAbsScaler(),
        ADMMMultiviewFeatureSelector(lam_frac=0.2, n_features=20, max_iter=30, views_ind=views_ind),
        LinearSVC(max_iter=5000),
    )
    assert cross_val_score(pipe, X, y, cv=CV).mean() > 0.6


def test_relieff_and_lam_search_refuse_sparse_input_clearly(pix):
    Xs, y = pix
    X, views_ind = stack_views([sp.csr_matrix(V) for V in Xs])
    with pytest.raises(TypeError, match="dense data is required"):
        ReliefFSelector(views_ind=views_ind).fit(X, y)
    with pytest.raises(TypeError, match="dense data is required"):
        LamSearchCV(lams=[1.0], k=2, n_folds=2, views_ind=views_ind).fit(X, y)
