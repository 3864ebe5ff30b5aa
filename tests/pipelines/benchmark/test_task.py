"""The benchmark's task and nodes: one-vs-rest and pipelines on stacked multiview input, views_ind
set on nested estimators, sparse data kept sparse unless a method says densify, splits."""

import numpy as np
import pytest
import scipy.sparse as sp

from multiview_lab.pipelines.benchmark.nodes import describe_datasets, make_splits
from multiview_lab.pipelines.benchmark.task import BenchmarkTask, set_views_ind
from multiview_lab.protocol import parse_method, run_experiment
from multiview_lab.utils import stack_views


def _dataset(sparse: bool, n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    views = [np.eye(3)[y] @ rng.normal(size=(3, 4)) * 3 + rng.normal(size=(n, 4)) for _ in range(2)]
    if sparse:
        views = [sp.csr_matrix(np.where(np.abs(V) > 1, V, 0.0)) for V in views]
    X, views_ind = stack_views(views)
    return {"X": X, "y": y, "views_ind": views_ind, "view_names": ["a", "b"], "source": "mem"}


def _splits(datasets, n_folds=3):
    return make_splits(datasets, {"n_folds": n_folds, "seed": 1}, {})


def test_one_vs_rest_of_a_binary_multiview_estimator_on_multiclass_data():
    data = {"toy": _dataset(sparse=True)}
    entry = {
        "estimator": "sklearn.multiclass.OneVsRestClassifier",
        "params": {"estimator": {"estimator": "MVMVClassifier", "params": {"cv": 2}}},
    }
    result = run_experiment(BenchmarkTask(), data, _splits(data), {"MV-MV": entry})
    assert len(result.results) == 3 and result.results["accuracy"].mean() > 0.6
    model = next(iter(result.models.values()))
    assert len(model.estimators_) == 3  # one binary MV-MV per class
    assert model.estimators_[0].n_views_ == 2  # each saw the two views, not one block
    assert not result.results["densified"].any()


def test_views_ind_reaches_nested_steps():
    method = parse_method(
        "sel",
        {
            "estimator": "sklearn.pipeline.Pipeline",
            "params": {"steps": [
                ["select", {"estimator": "ADMMMultiviewFeatureSelector"}],
                ["svm", {"estimator": "sklearn.svm.LinearSVC"}],
            ]},
        },
    )  # fmt: skip
    model = method.build(0)
    assert set_views_ind(model, [0, 4, 8]) == ["select__views_ind"]
    assert model.named_steps["select"].views_ind.tolist() == [0, 4, 8]


def test_sparse_refused_without_densify_then_densified_when_asked():
    data = {"toy": _dataset(sparse=True)}
    splits = _splits(data)
    gbc = {"estimator": "GBCClassifier", "params": {"n_iter": 3, "max_bins": 8}}
    with pytest.raises(RuntimeError, match="set 'densify: true' on it"):
        run_experiment(BenchmarkTask(), data, splits, {"GBC": gbc})
    result = run_experiment(BenchmarkTask(), data, splits, {"GBC": {**gbc, "densify": True}})
    assert result.results["densified"].all()


def test_datasets_and_data_params_options():
    data = {"a": _dataset(sparse=False), "b": _dataset(sparse=False, seed=1)}
    entry = {
        "estimator": "ConcatViews",
        "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
        "datasets": ["b"],
        "data_params": {"b": {"params": {"max_depth": 1}}},
    }
    result = run_experiment(BenchmarkTask(), data, _splits(data), {"tree": entry})
    assert set(result.results["dataset"]) == {"b"}
    model = next(iter(result.models.values()))
    assert model.estimator_.max_depth == 1
    with pytest.raises(ValueError, match="Unknown parameter|Invalid parameter"):
        bad = {**entry, "data_params": {"b": {"depth": 1}}}
        run_experiment(BenchmarkTask(), data, _splits(data), {"tree": bad})


def test_splits_are_seeded_stratified_and_repeated():
    data = {"toy": _dataset(sparse=False)}
    table = make_splits(data, {"n_folds": 3, "n_repeats": 2, "seed": 0}, {})
    assert table["split"].tolist() == list(range(6)) and table["seed"].nunique() == 6
    for _, rows in table.groupby("repeat"):
        tests = np.concatenate(rows["test"].tolist())
        assert np.sort(tests).tolist() == list(range(60))  # each row tested once per repeat
        for test in rows["test"]:
            assert np.ptp(np.bincount(data["toy"]["y"][test])) <= 1  # stratified
    first, second = table[table["repeat"] == 0], table[table["repeat"] == 1]
    assert any(not np.array_equal(a, b) for a, b in zip(first["test"], second["test"], strict=True))
    assert make_splits(data, {"n_folds": 3, "n_repeats": 2, "seed": 0}, {}).equals(table)
    with pytest.raises(ValueError, match="'toy'.*smallest class has 20"):
        make_splits(data, {"n_folds": 30}, {})


def test_describe_datasets():
    table = describe_datasets({"toy": _dataset(sparse=True)})
    row = table.iloc[0]
    assert row["n_samples"] == 60 and row["n_views"] == 2 and row["views"] == "a(4) b(4)"
    assert row["sparse"] and 0 < row["density"] < 1 and row["class_counts"] == "0:20 1:20 2:20"
