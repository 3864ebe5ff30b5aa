"""Node functions of the ``gbc`` pipeline on small synthetic data: data and graph builders,
splits and settings, evaluation (n_jobs invariance, CV selection), weights and Table 4."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from multiview_lab.gbc.graphs import edges_to_adjacency, same_label_edge_fraction
from multiview_lab.pipelines.gbc.nodes import (
    build_mfeat_graphs,
    collect_datasets,
    evaluate_methods,
    evaluate_source_counts,
    graph_statistics,
    load_terrorist_graph_edges,
    make_splits,
    plot_weight_trajectories,
    prepare_mfeat,
    prepare_terrorist,
    stratified_train_indices,
    summarise_final_weights,
)


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
    "SVM": {"baseline": "svm", "param_grid": {"svc__C": [1.0, 10.0]}, "cv": 2},
}


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


# ------------------------------------------------------------------------------ splits, settings
def test_stratified_train_indices_keep_every_class():
    y = np.repeat([0, 1, 2], [50, 8, 2])
    idx = stratified_train_indices(y, 0.1, seed=0)
    assert np.bincount(y[idx]).tolist() == [5, 1, 1]
    idx = stratified_train_indices(y, 0.9, seed=0)
    assert np.bincount(y[idx]).tolist() == [45, 7, 1]  # every class keeps a test instance
    with pytest.raises(ValueError, match="training fraction"):
        stratified_train_indices(y, 1.0, seed=0)


def test_make_splits_settings_share_training_parts(datasets):
    splits = make_splits(datasets, PROTOCOL)
    assert len(splits) == 2 * 2 * 2 * 2
    key = ["dataset", "train_pct", "split"]
    for _, block in splits.groupby(key):
        uni, non = (block[block["setting"] == s].iloc[0] for s in ("uniform", "non_overlapping"))
        np.testing.assert_array_equal(uni["train_indices"], non["train_indices"])
        assert len(uni["absent"]) == 0
        n, p = datasets[uni["dataset"]]["y"].size, len(datasets[uni["dataset"]]["sources"])
        rows = np.asarray(non["absent"]) // p
        assert np.unique(rows).size == round(0.3 * n)  # 30 % of the instances
        assert np.bincount(rows).max() == p // 2  # each loses floor(p/2) sources
    again = make_splits(datasets, PROTOCOL)
    pd.testing.assert_frame_equal(
        splits.drop(columns=["train_indices", "absent"]),
        again.drop(columns=["train_indices", "absent"]),
    )


@pytest.mark.parametrize(
    "change, match",
    [
        ({"settings": ["sparse"]}, "settings"),
        ({"train_pcts": [0]}, "train_pcts"),
        ({"n_splits": 0}, "n_splits"),
        ({"datasets": ["imdb"]}, "Unknown dataset"),
    ],
)
def test_make_splits_bad_protocol(datasets, change, match):
    with pytest.raises(ValueError, match=match):
        make_splits(datasets, {**PROTOCOL, **change})


# ------------------------------------------------------------------------------ evaluation
@pytest.fixture(scope="module")
def evaluated(datasets):
    splits = make_splits(datasets, {**PROTOCOL, "n_splits": 1})
    out = {
        n_jobs: evaluate_methods(datasets, splits, METHODS, {"n_jobs": n_jobs}) for n_jobs in (1, 2)
    }
    return splits, out


def test_results_do_not_depend_on_n_jobs(evaluated):
    splits, out = evaluated
    (r1, w1), (r2, w2) = out[1], out[2]
    assert len(r1) == len(splits) * len(METHODS)
    pd.testing.assert_frame_equal(r1.drop(columns="fit_time_s"), r2.drop(columns="fit_time_s"))
    pd.testing.assert_frame_equal(w1, w2)
    assert r1["error"].between(0, 1).all()
    gbc = r1[r1["method"] == "GBC"]
    assert (gbc["lambda0"] == 0.01).all() and (gbc["n_iter"] <= 4).all()
    assert r1.loc[r1["method"] == "SVM", "lambda0"].isna().all()


def test_weight_trajectories_sum_to_one_and_are_summarised(evaluated, datasets):
    _, out = evaluated
    _, weights = out[1]
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
        "fou",
        "fac",
        "mor",
        "mor_noisy",
        "features",
        "features_noisy",
        "loc",
        "loc_org",
    }
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


def test_cv_selects_graph_weight_that_helps(datasets):
    """Spec test 10 through the pipeline: a clean same-label graph (terrorist synthetic graphs)
    and CV over lambda1 in {0, 1}: CV picks lambda1 = 1 where the graph lowers the error."""
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
    splits = make_splits(
        {"terrorist": weak},
        {
            **PROTOCOL,
            "datasets": ["terrorist"],
            "settings": ["uniform"],
            "train_pcts": [40],
            "n_splits": 1,
        },
    )
    spec = {
        "estimator": "GBCClassifier",
        "params": {
            "n_iter": 40,
            "shrinkage": 0.3,
            "max_depth": 2,
            "lambda0": 0.0,
            "early_stopping": False,
        },
        "tune": {"folds": 3, "grid": {"lambda1": [0.0, 1.0]}},
    }
    fixed = {**spec, "tune": None, "params": {**spec["params"], "lambda1": 0.0}}
    results, _ = evaluate_methods(
        {"terrorist": weak}, splits, {"cv": spec, "fixed": fixed}, {"n_jobs": 1}
    )
    cv = results.set_index("method")
    assert cv.loc["cv", "lambda1"] == 1.0 and np.isfinite(cv.loc["cv", "cv_error"])
    assert cv.loc["cv", "error"] < cv.loc["fixed", "error"] - 0.05


@pytest.mark.parametrize(
    "spec, match",
    [
        ({"estimator": "GBCClassifier", "baseline": "svm"}, "exactly one"),
        ({"params": {}}, "exactly one"),
        ({"baseline": "lasso"}, "not in"),
    ],
)
def test_bad_method_spec(datasets, spec, match):
    splits = make_splits(datasets, {**PROTOCOL, "n_splits": 1})
    with pytest.raises(ValueError, match=match):
        evaluate_methods(datasets, splits, {"bad": spec}, {"n_jobs": 1})
    with pytest.raises(ValueError, match="No method"):
        evaluate_methods(datasets, splits, {}, {"n_jobs": 1})


# ------------------------------------------------------------------------------ Table 4
def test_source_count_study(datasets):
    study = {
        "dataset": "mfeat",
        "train_pct": 30,
        "n_sources": [1, 2],
        "n_choices": 2,
        "method": "GBC",
        "seed": 1,
    }
    table = evaluate_source_counts(datasets, METHODS, study)
    assert len(table) == 4
    assert table["sources"].str.count(r"\+").add(1).tolist() == table["num_sources"].tolist()
    assert table["error"].between(0, 1).all()
    again = evaluate_source_counts(datasets, METHODS, {**study, "n_jobs": 2})
    pd.testing.assert_frame_equal(
        table.drop(columns="fit_time_s"), again.drop(columns="fit_time_s")
    )
    with pytest.raises(ValueError, match="n_sources"):
        evaluate_source_counts(datasets, METHODS, {**study, "n_sources": [3]})
    with pytest.raises(ValueError, match="not registered"):
        evaluate_source_counts(datasets, METHODS, {**study, "method": "GBDT"})


def test_self_training_svm_with_a_single_labelled_example_of_a_class(datasets):
    """terrorist at 10 %: a rare class keeps one labelled example; the self-training SVM's
    probability calibration must still fit (fewer calibration folds / libsvm Platt scaling)."""
    protocol = {**PROTOCOL, "datasets": ["terrorist"], "settings": ["uniform"], "n_splits": 1}
    splits = make_splits(datasets, {**protocol, "train_pcts": [10]})
    y = datasets["terrorist"]["y"]
    assert np.bincount(y[splits.iloc[0]["train_indices"]]).min() == 1
    spec = {"baseline": "self_training_svm", "param_grid": {"svc__C": [1.0]}, "cv": 2}
    results, _ = evaluate_methods(datasets, splits, {"Self-SVM": spec}, {"n_jobs": 1})
    assert results["error"].between(0, 1).all()
