"""Nodes and task of the ``memd`` pipeline on small data (synthetic genes, a few documents)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC, LinearSVC

from multiview_lab.data.newsgroups import Corpus
from multiview_lab.evaluation import stable_seed
from multiview_lab.memd.baselines import MEMD_SETTINGS
from multiview_lab.memd.memd import MeMdClassifier
from multiview_lab.pipelines.memd.nodes import (
    build_datasets,
    build_text_tasks,
    make_splits,
    prepare_gene_data,
    read_gene_sets,
    top_words,
)
from multiview_lab.pipelines.memd.task import MeMdTask, accuracy_curve, make_task
from multiview_lab.protocol import run_experiment

CONF = Path(__file__).resolve().parents[3] / "conf"
PROTOCOL = {
    "seed": 0,
    "gene": {"n_folds": 3, "n_repeats": 2},
    "text": {"n_folds": 2, "n_repeats": 1},
    "curve_points": 5,
}
MEMD_PARAMS = {t: dict(s) for t, s in MEMD_SETTINGS.items()}
METHODS = {
    "MeMd-J": {
        "estimator": "MeMdClassifier",
        "params": {"criterion": "J"},
        "data_params": MEMD_PARAMS,
    },
    "MeMd-JS": {
        "estimator": "MeMdClassifier",
        "params": {"criterion": "JS"},
        "data_params": MEMD_PARAMS,
    },
    "SVM-faithful": {
        "estimator": "LinearSVMBaseline",
        "params": {"protocol": "faithful"},
        "data_params": {"gene": {"data": "gene"}, "text": {"data": "text", "liblinear": True}},
    },
    "GaussianNB": {"estimator": "sklearn.naive_bayes.GaussianNB", "data_types": ["gene"]},
}
LOCAL = {"n_jobs": 1, "blas_threads": 1}


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
def datasets():
    gene = prepare_gene_data(
        {"g": _genes()},
        {
            "genes": {
                "g": {"source": "g"},
                "g_log": {"source": "g", "transform": "log2", "clip": 1.0},
            }
        },
    )
    return build_datasets(gene, {"t": _text_task()})


def _run(datasets, methods=METHODS, protocol=PROTOCOL, execution=LOCAL, **kw):
    splits = make_splits(datasets, protocol)
    return run_experiment(make_task(protocol), datasets, splits, methods, execution=execution, **kw)


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


def test_build_datasets_keeps_text_sparse_and_tags_data_types(datasets):
    assert {n: d["data_type"] for n, d in datasets.items()} == {
        "g": "gene",
        "g_log": "gene",
        "t": "text",
    }
    assert sp.isspmatrix_csr(datasets["t"]["X"]) and isinstance(datasets["g"]["X"], np.ndarray)
    with pytest.raises(ValueError, match="used by both"):
        build_datasets({"t": _genes()}, {"t": _text_task()})
    with pytest.raises(ValueError, match="no data set"):
        build_datasets({}, {})


def test_make_splits_are_the_seeded_stratified_folds(datasets):
    splits = make_splits(datasets, PROTOCOL)
    assert len(splits) == 2 * 3 * 2 + 2  # two gene sets x 3 folds x 2 repetitions + text 2 folds
    assert list(splits.columns) == ["dataset", "data_type", "run", "fold", "seed", "train", "test"]
    y = datasets["g"]["y"]
    for row in splits[splits["dataset"] == "g"].itertuples():
        folds = StratifiedKFold(3, shuffle=True, random_state=row.run)  # fold seed = seed + run
        train, test = list(folds.split(np.zeros((y.size, 1)), y))[row.fold]
        np.testing.assert_array_equal(row.train, train)
        np.testing.assert_array_equal(row.test, test)
        assert row.seed == stable_seed("g", row.run, row.fold, base=0)
    for (name, _run), block in splits.groupby(["dataset", "run"]):
        n = datasets[name]["y"].shape[0]
        test = np.concatenate(block["test"].to_list())
        np.testing.assert_array_equal(np.sort(test), np.arange(n))  # each row tested once
    with pytest.raises(ValueError, match="g: n_folds=50"):
        make_splits(datasets, {**PROTOCOL, "gene": {"n_folds": 50, "n_repeats": 1}})
    with pytest.raises(ValueError, match="no data set"):
        make_splits({}, PROTOCOL)


def test_experiment_results_curves_and_n_jobs_invariance(datasets):
    out = _run(datasets)
    results, curves = out.results, out.extras["curves"]
    # GaussianNB is gene-only: 3 methods on text
    assert len(results) == 2 * 3 * 2 * 4 + 2 * 3
    assert {"fit_time_s", "score_time_s"} <= set(results.columns)
    assert results["accuracy"].between(0, 1).all()
    memd_rows = results[results["method"].str.startswith("MeMd")]
    assert memd_rows["k"].between(1, 40).all() and (memd_rows["epsilon"] > 0).all()
    others = results[~results["method"].str.startswith("MeMd")]
    assert others[["k", "epsilon"]].isna().all().all()  # GaussianNB's epsilon_ is not MeMd's
    assert (results["n_features"] == np.where(results["data_type"] == "gene", 40, 30)).all()
    assert (results.query("dataset == 'g'")["n_train"] == 24).all()
    # informative genes are easy: MeMd close to perfect
    assert results.query("dataset == 'g' and method == 'MeMd-J'")["accuracy"].mean() > 0.9
    # binary task, shared seed per fold: MeMd-J and MeMd-JS give identical results
    j = results[results["method"] == "MeMd-J"].reset_index(drop=True)
    js = results[results["method"] == "MeMd-JS"].reset_index(drop=True)
    np.testing.assert_array_equal(j[["accuracy", "k"]], js[["accuracy", "k"]])
    assert results.groupby(["dataset", "run", "fold"])["seed"].nunique().eq(1).all()
    assert set(curves["method"]) == {"MeMd-J", "MeMd-JS"}
    assert list(curves.columns) == [
        "dataset",
        "data_type",
        "method",
        "run",
        "fold",
        "k",
        "accuracy",
    ]
    assert curves.groupby(["dataset", "method", "run", "fold"]).size().min() >= 5
    parallel = _run(datasets, execution={**LOCAL, "n_jobs": 2})
    cols = [c for c in results.columns if not c.endswith("_time_s")]
    pd.testing.assert_frame_equal(results[cols], parallel.results[cols])
    pd.testing.assert_frame_equal(curves, parallel.extras["curves"])


def test_data_params_reach_the_fitted_models(datasets):
    keep = {"first": False, "where": {"run": [0], "fold": [0]}}
    models = _run(datasets, keep_models=keep).models
    gene, text = (
        models["MeMd-J_g_gene_run0_fold0"],
        models["MeMd-J_t_text_run0_fold0"],
    )
    assert (gene.family, gene.k_selection, gene.criterion) == ("gaussian", "inner_cv", "J")
    assert (text.family, text.k_selection, text.mean_smoothing) == ("exponential", "val", 1e-2)
    assert gene.random_state == stable_seed("g", 0, 0, base=0)
    assert isinstance(models["SVM-faithful_g_gene_run0_fold0"].estimator_[-1], SVC)
    assert isinstance(models["SVM-faithful_t_text_run0_fold0"].estimator_[-1], LinearSVC)
    assert "GaussianNB_t_text_run0_fold0" not in models


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"estimator": "MeMdClassifier", "data_types": ["img"]}, "data_types"),
        ({"estimator": "MeMdClassifier", "data_params": {"img": {}}}, "data_params for"),
        ({"estimator": "MeMdClassifier", "data_params": {"gene": {"kk": 1}}}, "Unknown parameter"),
        ({"estimator": "NoSuchEstimator"}, "Unknown estimator"),
        ({"registry": "memd_j"}, "unknown key"),
    ],
)
def test_bad_method_entries_fail_naming_the_problem(datasets, entry, match):
    with pytest.raises(ValueError, match=match):
        _run(datasets, methods={"x": entry})


def test_conf_registry_uses_the_spec_settings():
    """The base registry's MeMd entries carry the spec's per-data-type settings, and every
    method of every environment runs on the data types it declares."""
    methods = yaml.safe_load((CONF / "base/parameters_memd.yml").read_text())["memd"]["methods"]
    for name in ("MeMd-J", "MeMd-JS"):
        assert methods[name]["data_params"] == MEMD_SETTINGS
    gaussian = methods["MeMd-J-gaussian"]["params"]
    assert gaussian == {**MEMD_SETTINGS["text"], "family": "gaussian", "criterion": "J"}
    assert all("registry" not in m for m in methods.values())


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


def test_no_curves_without_curve_points(datasets):
    out = _run(
        datasets, methods={"MeMd-J": METHODS["MeMd-J"]}, protocol={**PROTOCOL, "curve_points": 0}
    )
    assert "curves" not in out.extras and make_task({}) == MeMdTask(curve_points=0)


def test_top_words_per_class():
    table, markdown = top_words({"t": _text_task()}, {"n_top": 3})
    assert list(table["class"].unique()) == ["a.one", "b.two"]
    first = table[table["rank"] == 1].set_index("class")["word"]
    assert first["a.one"] == "w0" and first["b.two"] == "w1"
    assert (table["class_mean"] > table["rest_mean"]).all()
    assert "| a.one | w0" in markdown
    with pytest.raises(ValueError, match="n_top"):
        top_words({"t": _text_task()}, {"n_top": 0})
