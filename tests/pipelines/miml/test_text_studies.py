"""The MIML-GP paper's two text studies (Table 3: Reuters MIML text; Table 5: the 20 Newsgroups
MI task): the raw loaders on the shipped files, data preparation, the split tables, the tasks'
scores and the two tables."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold

from multiview_lab.evaluation import stable_seed
from multiview_lab.miml import MIMLkNN, standardize_bags
from multiview_lab.pipelines.miml import create_pipeline
from multiview_lab.pipelines.miml.loaders import (
    NEWSGROUPS_TASKS,
    load_mil_newsgroups,
    load_reuters_text,
)
from multiview_lab.pipelines.miml.nodes import (
    make_newsgroups_splits,
    make_reuters_splits,
    prepare_newsgroups,
    prepare_reuters,
)
from multiview_lab.pipelines.miml.report import newsgroups_report, summarise_newsgroups
from multiview_lab.pipelines.miml.task import NewsgroupsTask, ReutersTask
from multiview_lab.pipelines.reporting.nodes import (
    summarise_results,
    summary_to_markdown,
    summary_to_metrics,
)
from tests.pipelines.miml.conftest import make_bags

RAW = Path(__file__).resolve().parents[3] / "data" / "01_raw"


# ----------------------------------------------------------------------------------------------
# loaders, on the shipped files (numbers of data/01_raw/*/README.md)
# ----------------------------------------------------------------------------------------------
def test_reuters_loader_matches_the_data_readme():
    bags, Y, names = load_reuters_text(RAW / "miml_reuters_text" / "miml_reuters_text.npz")
    sizes = np.array([b.shape[0] for b in bags])
    assert len(bags) == 2000 and sizes.sum() == 7119
    assert {b.shape[1] for b in bags} == {243} and bags[0].dtype == np.float64
    assert sizes.min() == 2 and sizes.max() == 26 and sizes.mean() == pytest.approx(3.5595)
    assert Y.shape == (2000, 7) and Y.dtype == np.int8 and set(np.unique(Y)) == {0, 1}
    assert Y.sum(axis=0).tolist() == [831, 482, 299, 153, 128, 154, 261]
    assert Y.sum(axis=1).min() == 1 and Y.sum(axis=1).mean() == pytest.approx(1.154)
    assert np.mean(Y.sum(axis=1) > 1) == pytest.approx(0.1495)
    assert names == [f"label{k}" for k in range(1, 8)]
    X = np.vstack(bags)
    assert X.min() == 0 and X.max() == 92 and np.array_equal(X, np.round(X))  # term counts


def test_newsgroups_loader_matches_the_data_readme():
    assert NEWSGROUPS_TASKS == ("Newsgroups2",)
    bags, y = load_mil_newsgroups(RAW / "mil_newsgroups")
    sizes = np.array([b.shape[0] for b in bags])
    assert len(bags) == 100 and sizes.sum() == 3094 and {b.shape[1] for b in bags} == {200}
    assert sizes.min() == 12 and sizes.max() == 58
    assert y.dtype == np.int8 and y[:50].tolist() == [1] * 50 and y[50:].tolist() == [0] * 50
    X = np.vstack(bags)
    assert X.min() == 0 and X.max() == 8 and np.mean(X > 0) == pytest.approx(0.0095, abs=1e-4)
    with pytest.raises(ValueError, match="not stored"):
        load_mil_newsgroups(RAW / "mil_newsgroups", task="Newsgroups1")


def test_loaders_refuse_offsets_that_do_not_index_the_instances(tmp_path):
    X = np.zeros((5, 3), dtype=np.float32)
    np.savez(
        tmp_path / "Newsgroups2.npz",
        instances=X,
        bag_offsets=np.array([0, 2, 4]),
        bag_labels=np.array([1, 0], dtype=np.int8),
    )
    with pytest.raises(ValueError, match="do not index"):
        load_mil_newsgroups(tmp_path)
    np.savez(
        tmp_path / "reuters.npz",
        instances=X,
        bag_offsets=np.array([0, 2, 2, 5]),
        targets=np.ones((3, 2), dtype=np.int8),
        label_names=np.array(["a", "b"]),
    )
    with pytest.raises(ValueError, match="empty bags"):
        load_reuters_text(tmp_path / "reuters.npz")


# ----------------------------------------------------------------------------------------------
# preparation and splits
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reuters():
    rng = np.random.default_rng(2)
    Y = (rng.random((50, 3)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 1] = 1
    return prepare_reuters((make_bags(rng, Y), Y, ["x", "y", "z"]), {"max_bags": None})


@pytest.fixture(scope="module")
def newsgroups():
    rng = np.random.default_rng(3)
    y = (np.arange(30) < 15).astype(np.int8)
    return prepare_newsgroups({"tasks": ["Newsgroups2"]}, (make_bags(rng, y[:, None]), y))


def test_prepare_reuters_and_its_seeded_slice(reuters):
    data = reuters["reuters"]
    assert len(data["bags"]) == 50 and data["Y"].shape == (50, 3)
    raw = (data["bags"], data["Y"], data["label_names"])
    a, b = (prepare_reuters(raw, {"max_bags": 20, "seed": 1})["reuters"] for _ in range(2))
    assert len(a["bags"]) == 20
    np.testing.assert_array_equal(a["Y"], b["Y"])
    with pytest.raises(ValueError, match="disagree"):
        prepare_reuters((data["bags"][:3], data["Y"], ["x", "y", "z"]), {})
    Y = data["Y"].copy()
    Y[:, 2] = 0
    with pytest.raises(ValueError, match=r"no bag with label\(s\) \['z'\]"):
        prepare_reuters((data["bags"], Y, ["x", "y", "z"]), {})


def test_prepare_newsgroups_bad_input(newsgroups):
    raw = (newsgroups["Newsgroups2"]["bags"], newsgroups["Newsgroups2"]["y"])
    with pytest.raises(ValueError, match="non-empty subset"):
        prepare_newsgroups({"tasks": ["Newsgroups7"]}, raw)
    with pytest.raises(ValueError, match="one raw task per task"):
        prepare_newsgroups({"tasks": ["Newsgroups2"]}, raw, raw)
    with pytest.raises(ValueError, match="one class only"):
        prepare_newsgroups({"tasks": ["Newsgroups2"], "max_bags": 2}, (raw[0], raw[1] * 0))


def test_reuters_splits_are_the_seeded_kfold(reuters):
    table = make_reuters_splits(reuters, {"n_folds": 5, "folds_run": [1, 3]})
    assert list(table.columns) == ["dataset", "fold", "seed", "train", "test"]
    assert table["fold"].tolist() == [1, 3] and set(table["dataset"]) == {"reuters"}
    folds = list(
        KFold(5, shuffle=True, random_state=stable_seed("reuters", "kfold")).split(range(50))
    )
    for row in table.itertuples():
        np.testing.assert_array_equal(row.test, folds[row.fold][1])
        assert row.seed == stable_seed("reuters", row.fold)
    assert len(make_reuters_splits(reuters, {"n_folds": 10, "folds_run": None})) == 10
    with pytest.raises(ValueError, match="folds_run"):
        make_reuters_splits(reuters, {"n_folds": 5, "folds_run": [5]})
    with pytest.raises(ValueError, match="n_folds"):
        make_reuters_splits(reuters, {"n_folds": 1})


def test_newsgroups_splits_are_repeated_stratified_folds(newsgroups):
    table = make_newsgroups_splits(newsgroups, {"n_repeats": 3, "n_folds": 5, "folds_run": None})
    assert list(table.columns) == ["dataset", "repeat", "fold", "seed", "train", "test"]
    assert table["repeat"].tolist() == [r for r in range(3) for _ in range(5)]
    assert table["fold"].tolist() == list(range(5)) * 3 and table["seed"].nunique() == 15
    y = newsgroups["Newsgroups2"]["y"]
    for r, block in table.groupby("repeat"):
        np.testing.assert_array_equal(np.sort(np.concatenate(block["test"].tolist())), range(30))
        cv = StratifiedKFold(
            5, shuffle=True, random_state=stable_seed("newsgroups", "Newsgroups2", r)
        )
        for row, (_, test) in zip(block.itertuples(), cv.split(np.zeros(30), y), strict=True):
            np.testing.assert_array_equal(row.test, test)
            assert y[row.test].sum() == 3  # 3 positive and 3 negative test bags per fold
            assert row.seed == stable_seed("newsgroups", "Newsgroups2", r, row.fold)
    first = table.query("repeat == 0")["test"].iloc[0]
    assert not np.array_equal(first, table.query("repeat == 1")["test"].iloc[0])
    some = make_newsgroups_splits(newsgroups, {"n_repeats": 2, "n_folds": 5, "folds_run": [4]})
    assert some["fold"].tolist() == [4, 4]
    np.testing.assert_array_equal(some["test"].iloc[0], table["test"].iloc[4])
    with pytest.raises(ValueError, match="n_repeats"):
        make_newsgroups_splits(newsgroups, {"n_repeats": 0})


# ----------------------------------------------------------------------------------------------
# tasks
# ----------------------------------------------------------------------------------------------
def test_reuters_task_standardises_only_when_asked(reuters):
    data = reuters["reuters"]
    split = make_reuters_splits(reuters, {"n_folds": 5}).iloc[0].to_dict()
    raw_train, Y = ReutersTask().train_part(data, split, None)
    raw_test, _ = ReutersTask().test_part(data, split, None)
    assert raw_train[0] is data["bags"][split["train"][0]]  # the bags as they are
    np.testing.assert_array_equal(Y, data["Y"][split["train"]])
    std_train, _ = ReutersTask(standardize=True).train_part(data, split, None)
    std_test, _ = ReutersTask(standardize=True).test_part(data, split, None)
    expect_train, expect_test = standardize_bags(raw_train, raw_test)
    np.testing.assert_allclose(np.vstack(std_train), np.vstack(expect_train))
    np.testing.assert_allclose(np.vstack(std_test), np.vstack(expect_test))
    assert ReutersTask().settings()["standardize"] is False
    model = MIMLkNN(n_references=3, n_citers=5).fit(raw_train, Y)
    scores = ReutersTask().score(model, data, split, None)
    assert 0 <= scores["hamming_loss"] <= 1 and 0 <= scores["one_minus_average_precision"] <= 1
    assert ReutersTask().extras(model, data, split, None, {}) == {}


class _FixedScores:
    """A stand-in model: fixed scores for the test bags, positive iff score > 0.5."""

    def __init__(self, scores):
        self.scores = np.asarray(scores, dtype=float)

    def decision_function(self, bags):
        return self.scores[: len(bags), None]

    def predict(self, bags):
        return (self.decision_function(bags) > 0.5).astype(int)


def test_newsgroups_task_reports_auc_beside_accuracy(newsgroups):
    data = newsgroups["Newsgroups2"]
    split = make_newsgroups_splits(newsgroups, {"n_repeats": 1, "n_folds": 5}).iloc[0].to_dict()
    y = data["y"][split["test"]]
    # every bag predicted negative, but the scores rank every positive first: AUC 1, acc .5
    model = _FixedScores(np.where(y == 1, 0.4, 0.1))
    out = NewsgroupsTask().score(model, data, split, None)
    assert out["accuracy"] == 0.5 and out["balanced_accuracy"] == 0.5
    assert out["auc"] == 1.0 and out["positive_rate"] == 0.0 and out["n_test"] == 6
    noisy = np.random.default_rng(0).random(y.size)
    out = NewsgroupsTask().score(_FixedScores(noisy), data, split, None)
    assert out["auc"] == pytest.approx(roc_auc_score(y, noisy))
    assert out["accuracy"] == pytest.approx(np.mean((noisy > 0.5) == y))
    assert out["positive_rate"] == pytest.approx(np.mean(noisy > 0.5))


# ----------------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------------
def test_newsgroups_table_averages_folds_then_takes_std_over_repetitions():
    rows = []
    for method, base in (("collective", 0.5), ("standard", 0.8)):
        for r in range(2):
            for k in range(2):
                acc = base + 0.1 * r + 0.02 * k  # repetition means: base + .01, base + .11
                rows.append(
                    {"dataset": "Newsgroups2", "method": method, "repeat": r, "fold": k,
                     "accuracy": acc, "auc": 0.9, "balanced_accuracy": acc,
                     "positive_rate": 0.0 if method == "collective" else 0.5}
                )  # fmt: skip
    results = pd.DataFrame(rows)
    summary = summarise_newsgroups(results).set_index("method")
    assert summary.loc["standard", "accuracy_mean"] == pytest.approx(0.86)
    assert summary.loc["standard", "accuracy_std"] == pytest.approx(np.std([0.81, 0.91], ddof=1))
    assert summary.loc["collective", "n_repeats"] == 2 and summary.loc["collective", "n_folds"] == 2
    summary, md, metrics = newsgroups_report(results, {})
    assert md.startswith("| task | method | accuracy | AUC |")
    assert (
        "| Newsgroups2 | standard | .8600 ± .0707 | .9000 ± .0000 | .8600 ± .0707 | .5000 |" in md
    )
    assert metrics["newsgroups/Newsgroups2/collective/accuracy_mean"] == pytest.approx(0.56)
    assert metrics["newsgroups/Newsgroups2/standard/auc_mean"] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="auc"):
        summarise_newsgroups(results.drop(columns="auc"))


def test_reuters_table_is_the_shared_reporting_as_for_scene():
    """The Reuters table is written by the shared reporting's nodes with
    ``miml.reuters.reporting``, as the scene table with ``miml.reporting``."""
    nodes = {n.name: n for n in create_pipeline().nodes}
    shared = {
        "miml.summarise_reuters_results": (
            summarise_results, ["miml.reuters_results"], "miml.reuters_summary"),
        "miml.write_reuters_summary_markdown": (
            summary_to_markdown, ["miml.reuters_summary"], "miml.reuters_summary_md"),
        "miml.reuters_summary_to_mlflow_metrics": (
            summary_to_metrics, ["miml.reuters_summary"], "miml.reuters_metrics"),
    }  # fmt: skip
    for name, (func, inputs, output) in shared.items():
        node = nodes[name]
        assert node.func is func
        assert node.inputs == [*inputs, "params:miml.reuters.reporting"]
        assert node.outputs == [output]
    scene = nodes["miml.summarise_results"]
    assert scene.func is summarise_results and scene.inputs[1] == "params:miml.reporting"
