"""Node functions of the ``memd`` pipeline on small data (synthetic genes, a few documents)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from multiview_lab.data.newsgroups import Corpus
from multiview_lab.memd.memd import MeMdClassifier
from multiview_lab.pipelines.memd.nodes import (
    accuracy_curve,
    build_text_tasks,
    evaluate_methods,
    make_splits,
    method_estimator,
    prepare_gene_data,
    read_gene_sets,
    top_words,
)

PROTOCOL = {
    "seed": 0,
    "gene": {"n_folds": 3, "n_repeats": 2},
    "text": {"n_folds": 2, "n_repeats": 1},
    "n_jobs": 1,
    "curve_points": 5,
}
METHODS = {
    "MeMd-J": {"registry": "memd_j"},
    "MeMd-JS": {"registry": "memd_js"},
    "SVM-faithful": {"registry": {"gene": "svm_faithful", "text": "svm_faithful_liblinear"}},
    "GaussianNB": {"registry": "gaussian_nb", "data_types": ["gene"]},
}


def _genes(n=36, d=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(100.0, 10.0, size=(n, d))
    X[y == 1, :3] += 30.0  # three informative genes
    return {"X": X, "y": y, "feature_names": np.array([f"g{i}" for i in range(d)])}


def _text_task(seed=0):
    rng = np.random.default_rng(seed)
    n, d = 40, 30
    y = np.repeat([0, 1], n // 2)
    counts = rng.poisson(0.5, size=(n, d)).astype(float)
    counts[y == 0, 0] += 3  # word 0 marks class 0, word 1 class 1
    counts[y == 1, 1] += 3
    X = sp.csr_matrix(counts / counts.sum(axis=1, keepdims=True))
    vocab = np.array([f"w{i}" for i in range(d)])
    return {"X": X, "y": y, "vocabulary": vocab, "class_names": ["a.one", "b.two"]}


@pytest.fixture
def data():
    gene = prepare_gene_data(
        {"g": _genes()},
        {
            "genes": {
                "g": {"source": "g"},
                "g_log": {"source": "g", "transform": "log2", "clip": 1.0},
            }
        },
    )
    return gene, {"t": _text_task()}


def test_prepare_gene_data_log2_and_null_entries():
    raw = {"g": _genes()}
    out = prepare_gene_data(
        raw,
        {
            "genes": {
                "g": {"source": "g"},
                "gl": {"source": "g", "transform": "log2", "clip": 20.0},
                "off": None,
            }
        },
    )
    assert sorted(out) == ["g", "gl"]
    np.testing.assert_allclose(out["gl"]["X"], np.log2(np.maximum(raw["g"]["X"], 20.0)))
    assert out["gl"]["clip"] == 20.0 and out["gl"]["transform"] == "log2"
    with pytest.raises(ValueError, match="unknown source"):
        prepare_gene_data(raw, {"genes": {"x": {"source": "nope"}}})
    with pytest.raises(ValueError, match="transform must be one of"):
        prepare_gene_data(raw, {"genes": {"x": {"source": "g", "transform": "sqrt"}}})


def test_read_gene_sets_real_files():
    sets = read_gene_sets("data/01_raw/genes")
    assert sets["golub"]["X"].shape == (72, 7129) and sets["colon"]["X"].shape == (62, 2000)


def test_build_text_tasks_cap_and_bad_task():
    groups = np.array(["rec.sport.baseball"] * 6 + ["rec.sport.hockey"] * 6 + ["sci.med"] * 2)
    texts = [f"pitcher inning game{i % 3} game{i % 3}" for i in range(6)]
    texts += [f"puck goalie game{i % 3} game{i % 3}" for i in range(6)] + ["doctor", "doctor"]
    corpus = Corpus(texts, groups, np.array(["train"] * 14))
    out = build_text_tasks(corpus, {"text_tasks": ["baseball_vs_hockey"], "max_docs_per_group": 4})
    task = out["baseball_vs_hockey"]
    assert task["X"].shape[0] == 8 and sp.issparse(task["X"])
    np.testing.assert_allclose(np.asarray(task["X"].sum(axis=1)).ravel(), 1.0)
    assert "the" not in set(task["vocabulary"])
    assert task["class_names"] == ["rec.sport.baseball", "rec.sport.hockey"]
    with pytest.raises(ValueError, match="unknown 20NG task"):
        build_text_tasks(corpus, {"text_tasks": ["no_such_task"]})


def test_make_splits_partition_each_repetition(data):
    gene, text = data
    splits = make_splits(gene, text, PROTOCOL)
    assert len(splits) == 2 * 3 * 2 + 2  # two gene sets x 3 folds x 2 repetitions + text 2 folds
    for (name, _run), block in splits.groupby(["dataset", "run"]):
        n = gene[name]["y"].shape[0] if name in gene else text[name]["y"].shape[0]
        test = np.concatenate(block["test"].map(np.asarray).to_list())
        np.testing.assert_array_equal(np.sort(test), np.arange(n))  # each row tested once
    g = splits[splits["dataset"] == "g"]
    assert not np.array_equal(g["test"].iloc[0], g[g["run"] == 1]["test"].iloc[0])
    with pytest.raises(ValueError, match="smallest class size"):
        make_splits(gene, text, {**PROTOCOL, "gene": {"n_folds": 50, "n_repeats": 1}})
    with pytest.raises(ValueError, match="no data set"):
        make_splits({}, {}, PROTOCOL)


def test_evaluate_methods_results_and_n_jobs_invariance(data):
    gene, text = data
    splits = make_splits(gene, text, PROTOCOL)
    results, curves = evaluate_methods(gene, text, splits, METHODS, PROTOCOL)
    # GaussianNB is gene-only: 3 methods on text
    assert len(results) == 2 * 3 * 2 * 4 + 2 * 3
    assert results["accuracy"].between(0, 1).all()
    memd_rows = results[results["method"].str.startswith("MeMd")]
    assert memd_rows["k"].between(1, 40).all() and (memd_rows["epsilon"] > 0).all()
    assert results.loc[results["method"] == "SVM-faithful", "k"].isna().all()
    # informative genes are easy: MeMd close to perfect
    assert results.query("dataset == 'g' and method == 'MeMd-J'")["accuracy"].mean() > 0.9
    # binary task, shared seed per fold: MeMd-J and MeMd-JS give identical results
    j = results[results["method"] == "MeMd-J"].reset_index(drop=True)
    js = results[results["method"] == "MeMd-JS"].reset_index(drop=True)
    np.testing.assert_array_equal(j[["accuracy", "k"]], js[["accuracy", "k"]])
    assert set(curves["method"]) == {"MeMd-J", "MeMd-JS"}
    assert curves.groupby(["dataset", "method", "run", "fold"]).size().min() >= 5
    parallel, curves2 = evaluate_methods(gene, text, splits, METHODS, {**PROTOCOL, "n_jobs": 2})
    cols = ["dataset", "method", "run", "fold", "seed", "accuracy", "k", "epsilon"]
    pd.testing.assert_frame_equal(results[cols], parallel[cols])
    pd.testing.assert_frame_equal(curves, curves2)


def test_evaluate_methods_bad_configuration(data):
    gene, text = data
    splits = make_splits(gene, text, PROTOCOL)
    with pytest.raises(ValueError, match="memd.methods is empty"):
        evaluate_methods(gene, text, splits, {}, PROTOCOL)
    with pytest.raises(ValueError, match="needs 'registry' or 'estimator'"):
        evaluate_methods(gene, text, splits, {"x": {"params": {}}}, PROTOCOL)
    with pytest.raises(ValueError, match="data_types"):
        evaluate_methods(
            gene, text, splits, {"x": {"registry": "memd_j", "data_types": ["img"]}}, PROTOCOL
        )
    with pytest.raises(ValueError, match="unknown estimator"):
        evaluate_methods(gene, text, splits, {"x": {"registry": "nope"}}, PROTOCOL)
    with pytest.raises(ValueError, match="not built"):
        evaluate_methods({}, text, splits, METHODS, PROTOCOL)


def test_method_estimator_registry_params_and_dotted_estimator():
    model = method_estimator({"registry": "memd_j", "params": {"k": 3}}, "text", 7)
    assert isinstance(model, MeMdClassifier)
    assert (model.k, model.family, model.random_state, model.criterion) == (
        3,
        "exponential",
        7,
        "J",
    )
    svc = method_estimator({"estimator": "sklearn.svm.LinearSVC", "params": {"C": 0.5}}, "text", 1)
    assert svc.C == 0.5 and svc.random_state == 1
    with pytest.raises(ValueError, match="no entry for 'text'"):
        method_estimator({"registry": {"gene": "svm_faithful"}}, "text", 0)
    with pytest.raises(ValueError, match="data_type must be one of"):
        method_estimator({"registry": "memd_j"}, "image", 0)


def test_accuracy_curve_matches_refit_at_fixed_k():
    g = _genes(d=25)
    X, y = g["X"], g["y"]
    train, test = np.arange(0, 36, 2), np.arange(1, 36, 2)
    model = MeMdClassifier("J", k=25).fit(X[train], y[train])
    curve = accuracy_curve(model, X[test], y[test], n_points=6)
    assert curve["k"].iloc[-1] == 25 and curve["k"].is_monotonic_increasing
    for k, acc in zip(curve["k"], curve["accuracy"], strict=True):
        fixed = MeMdClassifier("J", k=int(k)).fit(X[train], y[train])
        assert acc == pytest.approx(np.mean(fixed.predict(X[test]) == y[test]))


def test_top_words_per_class():
    table, markdown = top_words({"t": _text_task()}, {"n_top": 3})
    assert list(table["class"].unique()) == ["a.one", "b.two"]
    first = table[table["rank"] == 1].set_index("class")["word"]
    assert first["a.one"] == "w0" and first["b.two"] == "w1"
    assert (table["class_mean"] > table["rest_mean"]).all()
    assert "| a.one | w0" in markdown
    with pytest.raises(ValueError, match="n_top"):
        top_words({"t": _text_task()}, {"n_top": 0})
