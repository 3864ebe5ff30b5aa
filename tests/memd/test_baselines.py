"""The baseline factories build the models the MeMd spec (Sect. 5.2) names, and they fit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.naive_bayes import MultinomialNB
from sklearn.svm import SVC, LinearSVC

from multiview_lab.memd import MeMdClassifier
from multiview_lab.memd.baselines import (
    C_GRID,
    ESTIMATORS,
    dme,
    linear_svm,
    make_estimator,
    memd,
    naive_bayes_select_k,
)
from multiview_lab.memd.evaluation import repeated_cv, summarise


def test_faithful_and_strong_columns():
    svm = linear_svm("faithful", data="gene")
    assert [name for name, _ in svm.steps] == ["scale", "svm"]
    assert isinstance(svm[-1], SVC) and svm[-1].kernel == "linear" and svm[-1].C == 1.0
    assert [name for name, _ in linear_svm("faithful", data="text").steps] == ["svm"]
    strong = linear_svm("strong", data="text")
    assert isinstance(strong, GridSearchCV) and strong.param_grid["svm__C"] == list(C_GRID)
    assert [n for n, _ in strong.estimator.steps] == ["tfidf", "svm"]
    assert isinstance(strong.estimator[-1], LinearSVC)
    assert C_GRID == (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4)
    lr = dme("faithful", data="text")[-1]
    assert isinstance(lr, LogisticRegression) and (lr.C, lr.solver, lr.max_iter) == (
        1.0,
        "lbfgs",
        100,
    )
    with pytest.raises(ValueError, match="protocol must be one of"):
        dme("tuned")
    with pytest.raises(ValueError, match="unknown estimator"):
        make_estimator("rbf_svm")


def test_memd_settings_per_data_type():
    gene, text = memd("gene", "J"), memd("text")
    assert (gene.family, gene.k_selection, gene.criterion) == ("gaussian", "inner_cv", "J")
    assert (text.family, text.k_selection, text.mean_smoothing) == ("exponential", "val", 1e-2)
    assert memd("text", family="truncexp01").family == "truncexp01"


@pytest.mark.filterwarnings("ignore:k=.* is greater than n_features")
def test_every_registered_estimator_fits():
    y = np.repeat([0, 1, 2], 20)
    X_text = sp.random(60, 30, density=0.3, format="lil", random_state=0)
    X_text[:, :3] = X_text[:, :3].toarray() + np.eye(3)[y]  # one informative word per class
    X_text = X_text.tocsr()
    X_gene = np.random.default_rng(0).normal(size=(60, 30))
    X_gene[:, :3] += 3 * np.eye(3)[y]
    dense_only = {"gaussian_nb", "gnb_f_classif", "gnb_mutual_info"}
    slow = {"dme_strong", "gnb_mutual_info"}  # 40 inner fits each: built, not fitted here
    for name in ESTIMATORS:
        data, X = ("gene", X_gene) if name in dense_only else ("text", X_text)
        model = make_estimator(name, data, 0)
        if name in slow:
            assert isinstance(model, GridSearchCV), name
            continue
        assert model.fit(X, y).score(X, y) > 0.6, name


def test_naive_bayes_select_k_and_repeated_cv():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 30)) + 1.5 * y[:, None] * (np.arange(30) < 3)
    tuned = naive_bayes_select_k("f_classif", model="gaussian", k_grid=[1, 3, 30])
    fixed = naive_bayes_select_k("chi2", model="multinomial", k=5)
    assert isinstance(fixed[-1], MultinomialNB) and fixed[0].k == 5
    results = repeated_cv(
        X,
        y,
        {
            "memd": lambda seed: MeMdClassifier("J", k_selection="inner_cv", random_state=seed),
            "gnb": lambda seed: tuned,
        },
        n_splits=3,
        seeds=[0, 1],
    )
    assert len(results) == 2 * 3 * 2
    table = summarise(results)
    assert table.loc["memd", "accuracy_mean"] > 0.8
    assert results.loc[results.method == "gnb", "k"].isin([1, 3, 30]).all()
    assert (results.loc[results.method == "memd", "epsilon"] > 0).all()
