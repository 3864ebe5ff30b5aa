"""Node functions of the ``mvfs`` pipeline on small synthetic views."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.pipelines.mvfs.nodes import (
    build_views,
    evaluate_selections,
    fit_selectors,
    make_splits,
    objective_gap,
    plot_convergence,
    plot_lam_sensitivity,
    select_lam,
    standardise_split,
)

SELECTORS = {
    "ADMM": {
        "estimator": "ADMMMultiviewFeatureSelector",
        "params": {"lam_frac": 0.2, "max_iter": 30},
        "distributed": True,
        "lam_cv": True,
    },
    "RFS": {
        "estimator": "RFSSelector",
        "params": {"lam_frac": 0.2, "max_iter": 30},
        "lam_cv": True,
    },
    "Fisher": {"estimator": "FisherScoreSelector"},
}
PROTOCOL = {
    "n_splits": 2,
    "test_size": 0.5,
    "seed": 0,
    "k_grid": [2, 4],
    "classifiers": {"linear_svm": {}, "1nn": {}},
    "all_features": "All",
    "n_jobs": 1,
    "blas_threads": 1,
}
LAM_CV = {
    "enabled": True,
    "fit_with": "RFS",
    "params": {"max_iter": 20},
    "grid": [0.01, 1.0, 1000.0],  # 1000 > λ_max: W = 0
    "folds": 2,
    "k": None,
    "classifiers": None,
}


@pytest.fixture(scope="module")
def views():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    Xs = [rng.standard_normal((60, 6)) * 5 + 10, rng.standard_normal((60, 5))]
    Xs[0][:, 1] += 20.0 * y  # informative feature: global index 1
    Xs[1][:, 3] += 4.0 * y  # informative feature: global index 9
    raw = ({"a": Xs[0], "b": Xs[1], "c": rng.standard_normal((60, 2))}, y)
    return build_views(raw, {"views": ["a", "b"]})


@pytest.fixture(scope="module")
def fitted(views):
    splits = make_splits(views, PROTOCOL)
    rankings, histories = fit_selectors(views, splits, SELECTORS, {"backend": "local"}, PROTOCOL)
    return splits, rankings, histories


def test_build_views_keeps_order_and_rejects_unknown_views(views):
    assert list(views["names"]) == ["a", "b"] and [X.shape[1] for X in views["X"]] == [6, 5]
    with pytest.raises(ValueError, match="Unknown mfeat view"):
        build_views(({"a": views["X"][0]}, views["y"]), {"views": ["a", "zzz"]})


def test_splits_are_stratified_disjoint_and_seeded(views):
    splits = make_splits(views, PROTOCOL)
    assert list(splits["split"]) == [0, 1] and list(splits["seed"]) == [0, 1]
    for _, s in splits.iterrows():
        assert np.intersect1d(s["train_idx"], s["test_idx"]).size == 0
        assert s["train_idx"].size + s["test_idx"].size == 60
        assert np.bincount(views["y"][s["train_idx"]]).tolist() == [10, 10, 10]
    again = make_splits(views, PROTOCOL)
    assert all(
        np.array_equal(a, b) for a, b in zip(splits["train_idx"], again["train_idx"], strict=True)
    )
    assert not np.array_equal(splits["train_idx"][0], splits["train_idx"][1])
    with pytest.raises(ValueError, match="test_size"):
        make_splits(views, {**PROTOCOL, "test_size": 1.5})


def test_scaler_sees_training_rows_only(views):
    train_idx, test_idx = np.arange(0, 60, 2), np.arange(1, 60, 2)
    train, test = standardise_split(views["X"], train_idx, test_idx)
    assert np.allclose(train[0].mean(axis=0), 0) and np.allclose(train[0].std(axis=0), 1)
    # changing the test rows changes neither the training features nor the test scaling
    poisoned = [X.copy() for X in views["X"]]
    poisoned[0][test_idx] += 1e6
    train2, test2 = standardise_split(poisoned, train_idx, test_idx)
    assert np.array_equal(train[0], train2[0])
    X_train = views["X"][0][train_idx]
    expected = (poisoned[0][test_idx] - X_train.mean(0)) / X_train.std(0)
    assert np.allclose(test2[0], expected)


def test_constant_training_column_is_not_divided_by_zero():
    X = np.ones((6, 2))
    X[:, 1] = np.arange(6)
    train, test = standardise_split([X], np.arange(3), np.arange(3, 6))
    assert np.isfinite(train[0]).all() and np.isfinite(test[0]).all()
    assert (train[0][:, 0] == 0).all()


def test_fit_selectors_rankings_histories(fitted):
    _, rankings, histories = fitted
    assert len(rankings) == 2 * 3
    for _, r in rankings.iterrows():
        assert sorted(r["ranking"]) == list(range(11))
        assert r["ranking"][0] in (1, 9)  # an informative feature leads
        if r["method"] == "Fisher":  # a univariate filter ranks both redundant ones first
            assert set(r["ranking"][:2]) == {1, 9}
    admm = rankings[rankings["method"] == "ADMM"]
    assert (admm["n_iter"] > 0).all() and admm["objective"].notna().all()
    assert rankings.loc[rankings["method"] == "Fisher", "objective"].isna().all()
    h = histories[(histories["method"] == "ADMM") & (histories["split"] == 0)]
    assert list(h["iteration"]) == list(range(1, int(admm["n_iter"].iloc[0]) + 1))
    assert {"objective", "primal_residual", "dual_residual", "time"} <= set(h.columns)


def test_fit_selectors_do_not_depend_on_n_jobs(views, fitted):
    splits, rankings, _ = fitted
    parallel, _ = fit_selectors(
        views, splits, SELECTORS, {"backend": "local"}, {**PROTOCOL, "n_jobs": 2}
    )
    for a, b in zip(rankings["ranking"], parallel["ranking"], strict=True):
        assert np.array_equal(a, b)
    assert np.allclose(rankings["objective"], parallel["objective"], equal_nan=True)


def test_fit_selectors_bad_input(views, fitted):
    splits = fitted[0]
    with pytest.raises(ValueError, match="backend"):
        fit_selectors(views, splits, SELECTORS, {"backend": "ray"}, PROTOCOL)
    with pytest.raises(ValueError, match="No selector"):
        fit_selectors(views, splits, {}, {"backend": "local"}, PROTOCOL)
    with pytest.raises(ValueError, match="Unknown parameter"):
        fit_selectors(
            views,
            splits,
            {"F": {"estimator": "FisherScoreSelector", "params": {"x": 1}}},
            {"backend": "local"},
            PROTOCOL,
        )


def test_evaluate_selections_table(views, fitted):
    splits, rankings, _ = fitted
    results = evaluate_selections(views, splits, rankings, PROTOCOL)
    assert list(results.columns) == [
        "dataset",
        "split",
        "method",
        "k",
        "classifier",
        "accuracy",
        "fit_time_s",
    ]
    # 2 splits x (3 selectors + all features) x 2 k x 2 classifiers
    assert len(results) == 2 * 4 * 2 * 2
    assert results["accuracy"].between(0, 1).all()
    full = results[results["method"] == "All"]
    assert full.groupby(["split", "classifier"])["accuracy"].nunique().eq(1).all()
    # the two informative features separate the classes well with 1-NN
    top = results[(results["method"] == "Fisher") & (results["k"] == 2)]
    assert top["accuracy"].min() > 0.8
    assert evaluate_selections(views, splits, rankings, {**PROTOCOL, "n_jobs": 2}).equals(results)


def test_evaluate_selections_bad_input(views, fitted):
    splits, rankings, _ = fitted
    with pytest.raises(ValueError, match="k_grid"):
        evaluate_selections(views, splits, rankings, {**PROTOCOL, "k_grid": [5, 12]})
    with pytest.raises(ValueError, match="classifiers"):
        evaluate_selections(views, splits, rankings, {**PROTOCOL, "classifiers": {"rf": {}}})


def test_objective_gap_and_convergence(fitted):
    _, rankings, histories = fitted
    table, metrics = objective_gap(rankings, {"method": "ADMM", "reference": "RFS", "top_k": 2})
    assert list(table["split"]) == [0, 1]
    assert np.allclose(
        table["rel_gap"], (table["J_method"] - table["J_reference"]) / table["J_reference"]
    )
    assert (table["top_k_overlap"] <= 2).all()
    assert set(metrics) == {
        "objective_gap/rel_gap_mean",
        "objective_gap/rel_gap_max",
        "objective_gap/top2_overlap_mean",
    }
    fig = plot_convergence(histories, {"method": "ADMM"})
    assert len(fig.axes) == 3
    with pytest.raises(ValueError, match="No history"):
        plot_convergence(histories, {"method": "Fisher"})


def test_objective_gap_bad_input(fitted):
    rankings = fitted[1]
    with pytest.raises(ValueError, match="needs selectors"):
        objective_gap(rankings, {"method": "ADMM", "reference": "missing"})
    other = rankings.copy()
    other.loc[other["method"] == "RFS", "lam"] *= 2
    with pytest.raises(ValueError, match="same lam"):
        objective_gap(other, {"method": "ADMM", "reference": "RFS"})
    assert isinstance(rankings, pd.DataFrame)


# -- λ by inner CV --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lam_selected(views, fitted):
    splits = fitted[0]
    return select_lam(views, splits, SELECTORS, LAM_CV, PROTOCOL)


def test_select_lam_tables_and_metrics(views, fitted, lam_selected):
    table, chosen, metrics = lam_selected
    # 2 splits x 3 λ x 2 folds, the criterion and one column per protocol classifier
    assert len(table) == 2 * 3 * 2
    assert {"score", "score_linear_svm", "score_1nn", "lam_max", "null_model"} <= set(table)
    null = table[table["lam"] == 1000.0]
    assert null["null_model"].all() and np.allclose(null["score"], 1 / 3)  # chance level
    assert list(chosen.columns) == [
        "split",
        "lam",
        "lam_max",
        "lam_frac",
        "score_mean",
        "score_std",
    ]
    assert list(chosen["split"]) == [0, 1]
    assert set(chosen["lam"]) <= {0.01, 1.0} and (chosen["score_mean"] > 0.6).all()  # chance: 1/3
    assert np.allclose(chosen["lam_frac"], chosen["lam"] / chosen["lam_max"])
    for _, row in chosen.iterrows():  # the chosen rows are flagged in the table
        flagged = table[(table["split"] == row["split"]) & table["chosen"]]
        assert (flagged["lam"] == row["lam"]).all() and len(flagged) == 2
    assert set(metrics) == {
        f"lam_cv/split{s}/{key}" for s in (0, 1) for key in ("lam", "lam_frac", "score")
    }
    again = select_lam(views, fitted[0], SELECTORS, LAM_CV, {**PROTOCOL, "n_jobs": 2})
    assert again[0].drop(columns="fit_time_s").equals(table.drop(columns="fit_time_s"))


def test_chosen_lam_reaches_admm_and_rfs_only(views, fitted, lam_selected):
    splits, rankings, _ = fitted
    chosen = lam_selected[1]
    cv_rankings, _ = fit_selectors(views, splits, SELECTORS, {"backend": "local"}, PROTOCOL, chosen)
    lams = dict(zip(chosen["split"], chosen["lam"], strict=True))
    for method in ("ADMM", "RFS"):
        block = cv_rankings[cv_rankings["method"] == method]
        assert np.allclose(block["lam"], block["split"].map(lams))
    assert cv_rankings.loc[cv_rankings["method"] == "Fisher", "lam"].isna().all()
    table, _ = objective_gap(cv_rankings, {"method": "ADMM", "reference": "RFS"})
    assert np.allclose(table["lam"], table["split"].map(lams))
    assert set(table["stop_reason_method"]) <= {"max_iter", "objective", "residuals"}
    # without a chosen λ (CV disabled) the params' lam_frac is used, as in the fixture
    fixed = rankings[rankings["method"] == "RFS"]
    assert not np.allclose(fixed["lam"], fixed["split"].map(lams))
    with pytest.raises(ValueError, match=r"split\(s\) \[1\]"):
        fit_selectors(views, splits, SELECTORS, {"backend": "local"}, PROTOCOL, chosen.iloc[:1])


def test_select_lam_disabled_and_bad_config(views, fitted):
    splits = fitted[0]
    for off in (None, {**LAM_CV, "enabled": False}):
        table, chosen, metrics = select_lam(views, splits, SELECTORS, off, PROTOCOL)
        assert table.empty and chosen.empty and metrics == {}
        rankings, _ = fit_selectors(
            views, splits, SELECTORS, {"backend": "local"}, PROTOCOL, chosen
        )
        assert np.allclose(
            rankings.loc[rankings["method"] == "RFS", "lam"],
            fitted[1].loc[fitted[1]["method"] == "RFS", "lam"],
        )
        assert len(plot_lam_sensitivity(table, chosen).axes) == 1
    with pytest.raises(ValueError, match="fit_with"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "fit_with": "nope"}, PROTOCOL)
    with pytest.raises(ValueError, match="lam_cv.classifiers"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "classifiers": {"rf": {}}}, PROTOCOL)
    with pytest.raises(ValueError, match="grid is empty"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "grid": []}, PROTOCOL)
    with pytest.raises(ValueError, match="smallest class"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "folds": 11}, PROTOCOL)


def test_lam_sensitivity_figure(lam_selected):
    table, chosen, _ = lam_selected
    fig = plot_lam_sensitivity(table, chosen)
    assert len(fig.axes) == 3  # criterion, linear_svm, 1nn
    assert all(ax.get_xscale() == "log" for ax in fig.axes)
