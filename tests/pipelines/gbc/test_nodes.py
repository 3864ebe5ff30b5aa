"""Node functions and the task of the ``gbc`` pipeline on small synthetic data: data and graph
builders, split tables, the task on the engine (paired seeds, n_jobs invariance, CV selection,
weights), the number-of-sources study and the weight summaries."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from multiview_lab.gbc.graphs import edges_to_adjacency, same_label_edge_fraction
from multiview_lab.pipelines.gbc.nodes import (
    build_mfeat_graphs,
    collect_datasets,
    graph_statistics,
    load_terrorist_graph_edges,
    plot_weight_trajectories,
    prepare_mfeat,
    prepare_terrorist,
    summarise_final_weights,
)
from multiview_lab.pipelines.gbc.splits import make_source_count_splits, make_splits
from multiview_lab.pipelines.gbc.task import (
    GBCTask,
    make_source_count_task,
    make_task,
    split_sources,
)
from multiview_lab.protocol import parse_methods, run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS


def _views(y, rng, dims=(6, 5, 4)):
    onehot = np.eye(y.max() + 1)[y]
    return [
        onehot @ rng.normal(size=(onehot.shape[1], d)) * 2 + rng.normal(size=(len(y), d))
        for d in dims
    ]


@pytest.fixture(scope="module")
def mfeat_raw():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 40)
    fou, fac, mor = _views(y, rng, dims=(6, 5, 3))
    return {"fou": fou, "fac": fac, "mor": mor}, y


@pytest.fixture(scope="module")
def terrorist_raw():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(3), [30, 20, 10])
    X = (rng.random((60, 8)) < 0.2 + 0.5 * (np.arange(8) % 3 == y[:, None])).astype(float)
    same = [
        (a, b) for a in range(60) for b in range(a + 1, 60) if y[a] == y[b] and (a + b) % 7 == 0
    ]
    edges = {"loc": np.array(same), "loc_org": np.array(same[::3])}
    return X, y, ["A", "B", "C"], edges, [f"id{i}" for i in range(60)]


@pytest.fixture(scope="module")
def datasets(mfeat_raw, terrorist_raw):
    mcfg = {"sources": ["fou", "fac"], "graph_k": 5, "graph_noise": 0.3}
    tcfg = {"noise_sigma": 1.0}
    return collect_datasets(
        prepare_mfeat(mfeat_raw, mcfg),
        build_mfeat_graphs(mfeat_raw, mcfg),
        prepare_terrorist(terrorist_raw, tcfg),
        load_terrorist_graph_edges(terrorist_raw, tcfg),
    )


PROTOCOL = {
    "datasets": ["mfeat", "terrorist"],
    "settings": ["uniform", "non_overlapping"],
    "train_pcts": [20, 60],
    "n_splits": 2,
    "seed": 5,
}

METHODS = {
    "GBC": {
        "estimator": "GBCClassifier",
        "params": {"n_iter": 4, "max_depth": 2},
        "trajectory": True,
    },
    "GBC-lambda0": {
        "estimator": "GBCClassifier",
        "params": {"n_iter": 4, "max_depth": 2, "lambda0": 0.0, "lambda1": 0.0},
    },
    "SVM": {
        "estimator": "JoinedFeaturesClassifier",
        "params": {"kind": "svm", "param_grid": {"svc__C": [1.0, 10.0]}, "cv": 2},
    },
}


def _run(datasets, splits, methods, task=None, n_jobs=1, **kw):
    return run_experiment(
        task or GBCTask(), datasets, splits, methods, execution={"n_jobs": n_jobs}, **kw
    )


# ------------------------------------------------------------------------------ data and graphs
def test_prepare_mfeat_keeps_sources_in_order_and_every_kth_row(mfeat_raw):
    data = prepare_mfeat(mfeat_raw, {"sources": ["fac", "fou"], "every": 4})
    assert list(data["source_names"]) == ["fac", "fou"]
    np.testing.assert_array_equal(data["sources"][0], mfeat_raw[0]["fac"][::4])
    np.testing.assert_array_equal(data["y"], mfeat_raw[1][::4])
    with pytest.raises(ValueError, match="mfeat sources"):
        prepare_mfeat(mfeat_raw, {"sources": ["fou", "nope"]})
    with pytest.raises(ValueError, match="every"):
        prepare_mfeat(mfeat_raw, {"sources": ["fou"], "every": 0})


def test_mfeat_graphs_clean_and_noisy(mfeat_raw):
    views, y = mfeat_raw
    out = build_mfeat_graphs(mfeat_raw, {"graph_k": 5, "graph_noise": "auto", "noise_steps": 8})
    assert list(out["names"]) == ["mor", "mor_noisy"] and out["noise"] > 0
    clean, noisy = (edges_to_adjacency(e, y.size) for e in out["edges"])
    for G, e in zip((clean, noisy), out["edges"], strict=True):
        assert (e[:, 0] < e[:, 1]).all()  # each undirected edge once, no self-loop
        assert (np.asarray(G.sum(axis=1)).ravel() >= 5).all()
    frac_clean = same_label_edge_fraction(clean, y)
    frac_noisy = same_label_edge_fraction(noisy, y)
    assert frac_clean > 0.8 and abs(frac_noisy - 0.5) < 0.1
    with pytest.raises(ValueError, match="graph_noise"):
        build_mfeat_graphs(mfeat_raw, {"graph_noise": -1})
    with pytest.raises(ValueError, match="graph_view"):
        build_mfeat_graphs(mfeat_raw, {"graph_view": "zer"})


def test_terrorist_sources_and_graph_restriction(terrorist_raw):
    X, y, _, edges, _ = terrorist_raw
    data = prepare_terrorist(terrorist_raw, {"noise_sigma": 1.0, "noise_seed": 3})
    np.testing.assert_array_equal(data["sources"][0], X)
    assert 0.8 < np.std(data["sources"][1] - X) < 1.2
    full = load_terrorist_graph_edges(terrorist_raw, {})
    assert [len(e) for e in full["edges"]] == [len(edges["loc"]), len(edges["loc_org"])]
    half = load_terrorist_graph_edges(terrorist_raw, {"every": 2})
    kept = [(a // 2, b // 2) for a, b in edges["loc"] if a % 2 == 0 and b % 2 == 0]
    assert sorted(map(tuple, half["edges"][0])) == sorted(kept)
    assert int(half["n_instances"]) == 30
    with pytest.raises(ValueError, match="terrorist graphs"):
        load_terrorist_graph_edges(terrorist_raw, {"graphs": ["org"]})


def test_collect_datasets_checks_sizes_and_reports_graphs(mfeat_raw, terrorist_raw, datasets):
    stats = graph_statistics(datasets)
    assert set(stats["graph"]) == {"mor", "mor_noisy", "loc", "loc_org"}
    assert (stats.loc[stats["dataset"] == "terrorist", "same_label_fraction"] == 1.0).all()
    cfg = {"sources": ["fou"], "graph_k": 5, "graph_noise": 0.1}
    with pytest.raises(ValueError, match="graphs are over"):
        collect_datasets(
            prepare_mfeat(mfeat_raw, {**cfg, "every": 2}),
            build_mfeat_graphs(mfeat_raw, cfg),
            prepare_terrorist(terrorist_raw, {}),
            load_terrorist_graph_edges(terrorist_raw, {}),
        )


# ------------------------------------------------------------------------------ split tables
def test_make_splits_settings_share_training_parts(datasets):
    splits = make_splits(datasets, PROTOCOL, METHODS)
    assert len(splits) == 2 * 2 * 2 * 2
    assert list(splits.columns) == [
        "dataset", "setting", "train_pct", "split", "seed", "train", "test", "absent"
    ]  # fmt: skip
    key = ["dataset", "train_pct", "split"]
    for _, block in splits.groupby(key):
        uni, non = (block[block["setting"] == s].iloc[0] for s in ("uniform", "non_overlapping"))
        np.testing.assert_array_equal(uni["train"], non["train"])
        assert uni["seed"] == non["seed"]
        assert len(uni["absent"]) == 0
        n, p = datasets[uni["dataset"]]["y"].size, len(datasets[uni["dataset"]]["sources"])
        np.testing.assert_array_equal(np.sort(np.r_[uni["train"], uni["test"]]), np.arange(n))
        rows = np.asarray(non["absent"]) // p
        assert np.unique(rows).size == round(0.3 * n)  # 30 % of the instances
        assert np.bincount(rows).max() == p // 2  # each loses floor(p/2) sources
    again = make_splits(datasets, PROTOCOL)
    for col in ("train", "test", "absent"):
        assert all(map(np.array_equal, splits[col], again[col]))
    # every class is seen in training and keeps a test instance (terrorist's rare class)
    y = datasets["terrorist"]["y"]
    for row in splits[splits["dataset"] == "terrorist"].itertuples():
        assert set(y[row.train]) == set(y[row.test]) == set(y)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"settings": ["sparse"]}, "settings"),
        ({"train_pcts": [0]}, "train_pcts"),
        ({"n_splits": 0}, "n_splits"),
        ({"datasets": ["imdb"]}, "Unknown dataset"),
        ({"methods_by_dataset": {"mfeat": ["GBC", "LapSVM"]}}, "unregistered method.*LapSVM"),
    ],
)
def test_make_splits_bad_protocol(datasets, change, match):
    with pytest.raises(ValueError, match=match):
        make_splits(datasets, {**PROTOCOL, **change}, METHODS)


def test_split_sources_delete_the_absent_records(datasets):
    splits = make_splits(datasets, PROTOCOL)
    row = splits[splits["setting"] == "non_overlapping"].iloc[0].to_dict()
    data = datasets[row["dataset"]]
    sources, names = split_sources(data, row)
    n, p = data["y"].size, len(data["sources"])
    assert names == list(data["source_names"])
    held = np.zeros((n, p), bool)
    for i, (X, ids) in enumerate(sources):
        np.testing.assert_array_equal(X, data["sources"][i][ids])
        held[ids, i] = True
    np.testing.assert_array_equal(np.flatnonzero(~held.ravel()), row["absent"])
    sub, names = split_sources(data, {**row, "absent": np.array([1]), "source_idx": [1]})
    assert names == [data["source_names"][1]] and sub[0][1].tolist() == [0, *range(2, n)]


# ------------------------------------------------------------------------------ the task
@pytest.fixture(scope="module")
def evaluated(datasets):
    splits = make_splits(datasets, {**PROTOCOL, "n_splits": 1})
    return splits, {n: _run(datasets, splits, METHODS, n_jobs=n) for n in (1, 2)}


def test_results_are_paired_and_do_not_depend_on_n_jobs(evaluated, datasets):
    splits, out = evaluated
    r1, r2 = out[1].results, out[2].results
    assert len(r1) == len(splits) * len(METHODS)
    timing = list(TIMING_COLUMNS)
    pd.testing.assert_frame_equal(r1.drop(columns=timing), r2.drop(columns=timing))
    pd.testing.assert_frame_equal(out[1].extras["weights"], out[2].extras["weights"])
    assert r1["error"].between(0, 1).all()
    # every method of a split gets the split's seed
    keys = ["dataset", "setting", "train_pct", "split"]
    merged = r1.merge(splits[[*keys, "seed"]], on=keys, suffixes=("", "_split"))
    assert (merged["seed"] == merged["seed_split"]).all()
    gbc = r1[r1["method"] == "GBC"]
    assert (gbc["lambda0"] == 0.01).all() and (gbc["n_iter"] <= 4).all()
    assert r1.loc[r1["method"] == "SVM", "lambda0"].isna().all()
    assert (r1.loc[r1["method"] == "SVM", "n_iter"] == 1).all()  # one fit, no self-training
    # the error is counted on the test rows, from the model's transductive predictions
    first = splits.iloc[0]
    model = out[1].models[next(k for k in out[1].models if k.startswith("SVM_"))]
    y = datasets[first["dataset"]]["y"]
    err = np.mean(model.predict_transductive()[first["test"]] != y[first["test"]])
    row = r1[(r1["method"] == "SVM")].iloc[0]
    assert row["error"] == pytest.approx(err)


def test_methods_by_dataset_and_graph_option(datasets):
    splits = make_splits(datasets, {**PROTOCOL, "n_splits": 1, "train_pcts": [60]})
    methods = {
        "GBC": METHODS["GBC"],
        "GBC-nograph": {**METHODS["GBC"], "graphs": False, "trajectory": True},
    }
    task = make_task({"methods_by_dataset": {"terrorist": ["GBC"]}})
    out = _run(datasets, splits, methods, task=task)
    runs = out.results.groupby("dataset")["method"].agg(set).to_dict()
    assert runs == {"mfeat": {"GBC", "GBC-nograph"}, "terrorist": {"GBC"}}
    weights = out.extras["weights"]
    kinds = weights.groupby("method")["kind"].agg(set).to_dict()
    assert kinds == {"GBC": {"source", "graph"}, "GBC-nograph": {"source"}}  # no graph given
    with pytest.raises(ValueError, match="unknown key"):
        parse_methods({"bad": {"baseline": "svm"}}, GBCTask.method_options)


def test_n_splits_option_runs_a_method_on_the_first_splits_only(datasets):
    splits = make_splits(datasets, {**PROTOCOL, "n_splits": 3, "train_pcts": [60]})
    methods = {"GBC-lambda0": METHODS["GBC-lambda0"], "SVM": {**METHODS["SVM"], "n_splits": 2}}
    out = _run(datasets, splits, methods)
    runs = out.results.groupby("method")["split"].agg(lambda s: sorted(set(s))).to_dict()
    assert runs == {"GBC-lambda0": [0, 1, 2], "SVM": [0, 1]}
    # on the splits both ran, SVM's rows are the ones it gets when it runs on every split
    alone = _run(datasets, splits, {"SVM": METHODS["SVM"]}).results
    ours = out.results[out.results["method"] == "SVM"].set_index(["dataset", "setting", "split"])
    ref = alone.set_index(["dataset", "setting", "split"]).loc[ours.index]
    np.testing.assert_array_equal(ours["error"], ref["error"])
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="'SVM': n_splits must be a positive integer"):
            _run(datasets, splits, {"SVM": {**METHODS["SVM"], "n_splits": bad}})


def test_weight_trajectories_sum_to_one_and_are_summarised(evaluated):
    _, out = evaluated
    weights = out[1].extras["weights"]
    assert list(weights.columns) == [
        "dataset", "setting", "train_pct", "split", "method", "seed", "kind", "name",
        "iteration", "weight",
    ]  # fmt: skip
    assert set(weights["method"]) == {"GBC"}
    sums = weights.groupby(["dataset", "setting", "train_pct", "split", "kind", "iteration"])[
        "weight"
    ].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-9)
    first = weights[weights["iteration"] == 0]
    mfeat_src = first[(first["dataset"] == "mfeat") & (first["kind"] == "source")]
    np.testing.assert_allclose(mfeat_src["weight"], 0.5)  # uniform at t = 0
    final = summarise_final_weights(weights)
    assert set(final["name"]) == {
        "fou", "fac", "mor", "mor_noisy", "features", "features_noisy", "loc", "loc_org",
    }  # fmt: skip
    last = weights[weights["iteration"] == weights["iteration"].max()]
    row = final[(final["dataset"] == "mfeat") & (final["name"] == "fou")].iloc[0]
    expect = last[
        (last["dataset"] == "mfeat")
        & (last["name"] == "fou")
        & (last["setting"] == row["setting"])
        & (last["train_pct"] == row["train_pct"])
    ]
    assert row["weight_mean"] == pytest.approx(expect["weight"].mean())
    fig = plot_weight_trajectories(weights, {"method": "GBC", "train_pct": 20})
    assert len(fig.axes) == 2 * 2 * 2  # (dataset, setting) rows x (source, graph)
    plt.close(fig)
    with pytest.raises(ValueError, match="No weight trajectory"):
        plot_weight_trajectories(weights, {"method": "SVM"})
    with pytest.raises(ValueError, match="No weight trajectory"):
        plot_weight_trajectories(pd.DataFrame(), {"method": "GBC"})
    assert summarise_final_weights(pd.DataFrame()).empty


def test_cv_selects_graph_weight_that_helps(datasets):
    """Spec test 10 through the engine's tune: a clean same-label graph (terrorist synthetic
    graphs) and CV over lambda1 in {0, 1}: CV picks lambda1 = 1 where the graph lowers the
    error."""
    d = datasets["terrorist"]
    y = d["y"]
    rng = np.random.default_rng(0)
    weak = {
        **d,
        "sources": [d["sources"][0] + rng.normal(0, 2.0, d["sources"][0].shape)],
        "source_names": ["weak"],
    }
    same = [
        (a, b)
        for a in range(y.size)
        for b in range(a + 1, y.size)
        if y[a] == y[b] and rng.random() < 0.15
    ]
    weak["graphs"], weak["graph_names"] = [edges_to_adjacency(np.array(same), y.size)], ["same"]
    protocol = {**PROTOCOL, "datasets": ["terrorist"], "settings": ["uniform"]}
    splits = make_splits({"terrorist": weak}, {**protocol, "train_pcts": [40], "n_splits": 1})
    params = {"n_iter": 40, "shrinkage": 0.3, "max_depth": 2, "lambda0": 0.0}
    spec = {
        "estimator": "GBCClassifier",
        "params": {**params, "early_stopping": False},
        "tune": {
            "folds": 3,
            "grid": {"lambda1": [0.0, 1.0]},
            "metric": "error",
            "greater_is_better": False,
        },
    }
    fixed = {"estimator": "GBCClassifier", "params": {**spec["params"], "lambda1": 0.0}}
    results = _run({"terrorist": weak}, splits, {"cv": spec, "fixed": fixed}).results
    cv = results.set_index("method")
    assert cv.loc["cv", "lambda1"] == 1.0 and 0 <= cv.loc["cv", "cv_error"] < 0.5
    assert np.isnan(cv.loc["fixed", "cv_error"])
    assert cv.loc["cv", "error"] < cv.loc["fixed", "error"] - 0.05


def test_self_training_svm_with_a_single_labelled_example_of_a_class(datasets):
    """terrorist at 10 %: a rare class keeps one labelled example; the self-training SVM's
    probability calibration must still fit (fewer calibration folds / libsvm Platt scaling)."""
    protocol = {**PROTOCOL, "datasets": ["terrorist"], "settings": ["uniform"], "n_splits": 1}
    splits = make_splits(datasets, {**protocol, "train_pcts": [10]})
    y = datasets["terrorist"]["y"]
    assert np.bincount(y[splits.iloc[0]["train"]]).min() == 1
    spec = {
        "estimator": "JoinedFeaturesClassifier",
        "params": {"kind": "self_training_svm", "param_grid": {"svc__C": [1.0]}, "cv": 2},
    }
    results = _run(datasets, splits, {"Self-SVM": spec}).results
    assert results["error"].between(0, 1).all()


# ------------------------------------------------------------------------------ Table 4
STUDY = {
    "dataset": "mfeat",
    "train_pct": 30,
    "n_sources": [1, 2],
    "n_choices": 2,
    "method": "GBC",
    "seed": 1,
}


def test_source_count_study(datasets):
    splits = make_source_count_splits(datasets, STUDY, METHODS)
    assert len(splits) == 4 and splits["seed"].nunique() == 4
    for row in splits.itertuples():
        assert len(row.source_idx) == row.num_sources
        names = [datasets["mfeat"]["source_names"][i] for i in row.source_idx]
        assert row.sources == "+".join(names)
        assert len(row.absent) == 0  # uniform
    task = make_source_count_task(STUDY)
    out = _run(datasets, splits, METHODS, task=task)
    table = out.results
    assert set(table["method"]) == {"GBC"} and len(table) == 4  # the study's method only
    assert "weights" not in out.extras  # no trajectory in the study
    assert table["sources"].str.count(r"\+").add(1).tolist() == table["num_sources"].tolist()
    assert table["error"].between(0, 1).all()
    assert (table["seed"].to_numpy() == splits["seed"].to_numpy()).all()
    again = _run(datasets, splits, METHODS, task=task, n_jobs=2).results
    timing = list(TIMING_COLUMNS)
    pd.testing.assert_frame_equal(table.drop(columns=timing), again.drop(columns=timing))
    # a non-overlapping study deletes records of the chosen sources only
    non = make_source_count_splits(datasets, {**STUDY, "setting": "non_overlapping"}, METHODS)
    two = non[non["num_sources"] == 2].iloc[0]
    assert len(two["absent"]) == round(0.3 * datasets["mfeat"]["y"].size)  # floor(2/2) each
    with pytest.raises(ValueError, match="n_sources"):
        make_source_count_splits(datasets, {**STUDY, "n_sources": [3]}, METHODS)
    with pytest.raises(ValueError, match="unregistered method"):
        make_source_count_splits(datasets, {**STUDY, "method": "GBDT"}, METHODS)
