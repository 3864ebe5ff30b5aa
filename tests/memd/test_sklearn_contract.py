"""MeMd and its baselines under scikit-learn: the check suite, and model selection on real
slices (colon genes, dense; comp vs rec newsgroups, sparse)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from multiview_lab.data.genes import load_gene_dataset
from multiview_lab.data.newsgroups import read_corpus, task_documents, vectorise
from multiview_lab.memd import (
    DMEBaseline,
    LinearSVMBaseline,
    MeMdClassifier,
    MeMdSelector,
    SelectKNaiveBayes,
)
from multiview_lab.memd._sklearn_checks import instances
from multiview_lab.memd.baselines import MEMD_SETTINGS
from multiview_lab.testing import expected_failed_checks
from multiview_lab.utils.multiview import stack_views

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"
CV = StratifiedKFold(3, shuffle=True, random_state=0)


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check_suite(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def colon():
    """Colon cancer (62 × 2000): every row, the first 200 genes."""
    if not (RAW / "genes").exists():
        pytest.skip("data/01_raw/genes not found")
    data = load_gene_dataset("colon", RAW / "genes")
    return data["X"][:, :200], data["y"]


@pytest.fixture(scope="module")
def text():
    """200 documents of comp.* vs rec.* (seeded draw), as the sparse W of the text protocol."""
    path = RAW / "20newsgroups" / "20news-bydate.tar.gz"
    if not path.exists():
        pytest.skip(f"{path} not found")
    texts, y, _ = task_documents(read_corpus(path), "comp_vs_rec")
    idx = np.sort(np.random.default_rng(0).choice(len(texts), 200, replace=False))
    W, _ = vectorise([texts[i] for i in idx])
    return W, np.asarray(y)[idx]


def gene_estimators():
    return [
        MeMdClassifier(k_selection="inner_cv", k_grid=[5, 20, 50]),
        make_pipeline(MeMdSelector(k=20), DMEBaseline()),
        LinearSVMBaseline(),
        DMEBaseline(),
        SelectKNaiveBayes("f_classif", model="gaussian", k=20),
    ]


@pytest.mark.parametrize("index", range(5))
def test_cross_val_score_on_colon_genes(colon, index):
    X, y = colon
    scores = cross_val_score(gene_estimators()[index], X, y, cv=CV)
    assert scores.shape == (3,) and scores.mean() > 0.6  # majority class: 0.65


def test_grid_search_and_scaled_pipeline_on_colon_genes(colon):
    X, y = colon
    search = GridSearchCV(
        MeMdClassifier(k_selection="inner_cv", k_grid=[5, 20]),
        {"criterion": ["J", "JS"]},
        cv=CV,
    ).fit(X, y)
    assert search.best_params_["criterion"] in ("J", "JS")
    assert search.predict(X).shape == y.shape
    pipe = make_pipeline(StandardScaler(), MeMdClassifier(k=20))
    assert cross_val_score(pipe, X, y, cv=CV).mean() > 0.6
    k_search = GridSearchCV(
        make_pipeline(StandardScaler(), MeMdSelector(), LinearSVMBaseline()),
        {"memdselector__k": [1, 50]},
        cv=CV,
    ).fit(X, y)
    assert k_search.best_params_["memdselector__k"] in (1, 50)


def test_stacked_views_are_one_x_for_a_single_view_estimator(colon):
    """A stacked pair of views (``stack_views``) is an ordinary 2-D X; a list is refused."""
    X, y = colon
    stacked, views_ind = stack_views([X[:, :120], X[:, 120:]])
    assert views_ind.tolist() == [0, 120, 200]
    a = MeMdClassifier(k=10).fit(stacked, y)
    np.testing.assert_array_equal(a.predict(stacked), MeMdClassifier(k=10).fit(X, y).predict(X))
    with pytest.raises(ValueError, match="single-view estimator.*list of 2 views"):
        MeMdClassifier(k=10).fit([X[:, :120], X[:, 120:]], y)


def test_sparse_text_model_selection_and_dense_equality(text):
    W, y = text
    assert sp.issparse(W)
    settings = {**MEMD_SETTINGS["text"], "k_grid": [10, 100, 1000]}
    clf = MeMdClassifier(**settings)
    scores = cross_val_score(clf, W, y, cv=CV)
    assert scores.mean() > 0.7  # two balanced classes
    pipe = make_pipeline(MaxAbsScaler(), MeMdClassifier(**settings))
    assert cross_val_score(pipe, W, y, cv=CV).mean() > 0.7
    search = GridSearchCV(
        SelectKNaiveBayes("chi2", alpha_grid=[0.01]), {"k": [10, 100]}, cv=CV
    ).fit(W, y)
    assert search.best_params_["k"] in (10, 100)
    for est in (MeMdClassifier(**settings), LinearSVMBaseline(data="text")):
        sparse = est.fit(W, y).predict(W)
        np.testing.assert_array_equal(sparse, est.fit(W.toarray(), y).predict(W.toarray()))
    selector = MeMdSelector(**settings).fit(W, y)
    assert sp.issparse(selector.transform(W))
