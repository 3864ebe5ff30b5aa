"""The baseline estimators are the models the MeMd spec (Sect. 5.2) names, and they fit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.feature_selection import SelectKBest, chi2, mutual_info_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB, MultinomialNB
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC, LinearSVC

from multiview_lab.estimators import (
    DMEBaseline,
    LinearSVMBaseline,
    MeMdClassifier,
    SelectKNaiveBayes,
)
from multiview_lab.memd.baselines import C_GRID, MutualInfoScore
from multiview_lab.memd.evaluation import selected_k


def _data(seed=0):
    y = np.repeat([0, 1, 2], 20)
    rng = np.random.default_rng(seed)
    X_gene = rng.normal(size=(60, 30))
    X_gene[:, :3] += 3 * np.eye(3)[y]
    X_text = sp.random(60, 30, density=0.3, format="lil", random_state=seed)
    X_text[:, :3] = X_text[:, :3].toarray() + np.eye(3)[y]  # one informative word per class
    return X_gene, X_text.tocsr(), y


def test_faithful_and_strong_columns():
    X_gene, X_text, y = _data()
    svm = LinearSVMBaseline("faithful", data="gene").fit(X_gene, y)
    assert [name for name, _ in svm.estimator_.steps] == ["scale", "svm"]
    assert isinstance(svm.estimator_[-1], SVC) and svm.estimator_[-1].kernel == "linear"
    assert svm.estimator_[-1].C == 1.0 and not hasattr(svm, "best_params_")
    text = LinearSVMBaseline("faithful", data="text").fit(X_text, y)
    assert [name for name, _ in text.estimator_.steps] == ["svm"]
    assert isinstance(text.estimator_[-1], SVC)
    liblinear = LinearSVMBaseline("faithful", data="text", liblinear=True).fit(X_text, y)
    assert isinstance(liblinear.estimator_[-1], LinearSVC)
    strong = LinearSVMBaseline("strong", data="text", random_state=0).fit(X_text, y)
    assert [n for n, _ in strong.estimator_.steps] == ["tfidf", "svm"]
    assert isinstance(strong.estimator_[-1], LinearSVC) and strong.best_params_["svm__C"] in C_GRID
    assert C_GRID == (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4)
    lr = DMEBaseline("faithful", data="text").fit(X_text, y).estimator_
    assert [n for n, _ in lr.steps] == ["dme"]
    assert (lr[-1].C, lr[-1].solver, lr[-1].max_iter) == (1.0, "lbfgs", 100)
    assert isinstance(lr[-1], LogisticRegression)
    with pytest.raises(ValueError, match="protocol must be one of"):
        DMEBaseline("tuned").fit(X_gene, y)
    with pytest.raises(ValueError, match="data must be one of"):
        LinearSVMBaseline(data="image").fit(X_gene, y)


def test_strong_column_predicts_as_the_spec_grid_search():
    """The strong text SVM is the spec's model: tf-idf + LinearSVC, C by seeded 5-fold CV."""
    _, X_text, y = _data(1)
    ours = LinearSVMBaseline("strong", data="text", random_state=3).fit(X_text, y)
    spec = GridSearchCV(
        Pipeline([("tfidf", TfidfTransformer()), ("svm", LinearSVC(random_state=3))]),
        {"svm__C": list(C_GRID)},
        cv=StratifiedKFold(5, shuffle=True, random_state=3),
    ).fit(X_text, y)
    np.testing.assert_array_equal(ours.predict(X_text), spec.predict(X_text))
    assert ours.best_params_ == spec.best_params_
    assert ours.score(X_text, y) == spec.score(X_text, y)


@pytest.mark.filterwarnings("ignore:k=.* is greater than n_features")
def test_every_baseline_fits_dense_and_sparse_and_clones():
    X_gene, X_text, y = _data()
    models = [
        (LinearSVMBaseline("strong", data="gene", random_state=0), X_gene),
        (DMEBaseline("strong", data="text", random_state=0), X_text),
        (DMEBaseline("faithful", data="gene"), X_gene),
        (SelectKNaiveBayes("f_classif", model="gaussian", random_state=0), X_gene),
        (SelectKNaiveBayes("chi2", k_grid=[3, 10, 30], random_state=0), X_text),
    ]
    for model, X in models:
        fitted = model.fit(X, y)
        assert fitted.score(X, y) > 0.6, model
        assert list(fitted.classes_) == [0, 1, 2] and fitted.n_features_in_ == 30
        assert clone(model).get_params() == model.get_params()


@pytest.mark.filterwarnings("ignore:k=.* is greater than n_features")
def test_select_k_naive_bayes_fixed_tuned_and_mutual_info():
    X_gene, X_text, y = _data(2)
    fixed = SelectKNaiveBayes("chi2", model="multinomial", k=5).fit(X_text, y)
    assert isinstance(fixed.estimator_[-1], MultinomialNB) and fixed.k_ == 5
    tuned = SelectKNaiveBayes("f_classif", model="gaussian", k_grid=[1, 3, 30], random_state=0)
    tuned.fit(X_gene, y)
    assert isinstance(tuned.estimator_[-1], GaussianNB)
    assert tuned.k_ == tuned.best_params_["select__k"] and tuned.k_ in (1, 3, 30)
    chi = SelectKNaiveBayes("chi2", k_grid=[2, 50], alpha_grid=[0.01], random_state=0)
    assert set(chi.fit(X_text, y).best_params_) == {"select__k", "nb__alpha"}
    mi = SelectKNaiveBayes("mutual_info", model="gaussian", k=3, random_state=4).fit(X_gene, y)
    np.testing.assert_array_equal(
        mi.estimator_[0].scores_, mutual_info_classif(X_gene, y, random_state=4)
    )
    np.testing.assert_array_equal(
        MutualInfoScore(4)(X_gene, y), mutual_info_classif(X_gene, y, random_state=4)
    )
    ref = Pipeline([("select", SelectKBest(chi2, k=5)), ("nb", MultinomialNB())]).fit(X_text, y)
    np.testing.assert_array_equal(fixed.predict(X_text), ref.predict(X_text))
    with pytest.raises(ValueError, match="score_func must be one of"):
        SelectKNaiveBayes("anova").fit(X_gene, y)


def test_a_k_grid_beyond_the_features_is_clipped_without_warnings():
    """K values above the number of features all mean every feature: one grid point, no
    scikit-learn warning per fit, and the chosen K is a real feature count."""
    import warnings

    X_gene, X_text, y = _data(2)
    d = X_text.shape[1]
    model = SelectKNaiveBayes("chi2", k_grid=[2, d + 10, 50 * d], alpha_grid=[0.01])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X_text, y)
    assert model._build().param_grid["select__k"] == [2, d]
    assert model.k_ in (2, d)


def test_selected_k():
    X_gene, _, y = _data()
    memd = MeMdClassifier("J", k_selection="inner_cv", random_state=0).fit(X_gene, y)
    assert selected_k(memd) == (float(memd.k_), float(memd.epsilon_)) and memd.epsilon_ > 0
    nb = SelectKNaiveBayes("f_classif", model="gaussian", k=4).fit(X_gene, y)
    k, eps = selected_k(nb)
    assert k == 4.0 and np.isnan(eps)
    gnb = GaussianNB().fit(X_gene, y)  # has an epsilon_ of its own, not MeMd's floor
    assert np.isnan(selected_k(gnb)).all()
    assert np.isnan(selected_k(LinearSVMBaseline().fit(X_gene, y))).all()


def test_mutual_info_is_estimated_once_per_fold_with_identical_results(monkeypatch):
    """The K grid search asks for the MI scores once per grid point on each training fold: the
    cache gives one estimate per fold (and one for the refit), the same fit and predictions."""
    from multiview_lab.memd import baselines

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 40))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    calls = []
    real = baselines.mutual_info

    def counting(X, y, **kw):
        calls.append(X.shape)
        return real(X, y, **kw)

    monkeypatch.setattr(baselines, "mutual_info", counting)

    def fit():
        baselines._MI_CACHE.clear()
        calls.clear()
        model = baselines.SelectKNaiveBayes(
            "mutual_info", model="gaussian", k_grid=(2, 5, 10, 20), random_state=0
        ).fit(X, y)
        return model, len(calls)

    cached, n_cached = fit()
    monkeypatch.setattr(baselines, "MI_CACHE_SIZE", 0)
    plain, n_plain = fit()
    assert n_plain == 4 * 5 + 1  # grid points x inner folds, and the refit
    assert n_cached == 5 + 1
    assert cached.best_params_ == plain.best_params_ and cached.k_ == plain.k_
    np.testing.assert_array_equal(
        cached.estimator_.predict_proba(X), plain.estimator_.predict_proba(X)
    )


def test_iteration_limits_are_counted_and_logged_not_warned(caplog):
    """The faithful DME stops at 100 L-BFGS iterations by design: scikit-learn's
    ConvergenceWarning is expected, so it is counted and logged instead of emitted."""
    import logging
    import warnings

    from multiview_lab.memd.baselines import DMEBaseline

    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(300, 50)))
    X[:, :5] *= 1000  # text features are not rescaled: badly scaled, slow L-BFGS
    y = (X[:, 0] + X[:, 1] > np.median(X[:, 0] + X[:, 1])).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any emitted warning fails the test
        with caplog.at_level(logging.INFO, logger="multiview_lab.memd.baselines"):
            model = DMEBaseline("faithful", data="text").fit(X, y)
    assert model.n_convergence_warnings_ >= 1
    assert "stopped at their iteration limit" in caplog.text
