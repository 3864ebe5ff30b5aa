"""The ``mvfs`` pipeline on small synthetic views: data nodes, the selection task run by the
engine, λ by inner CV, the objective gap and the figures."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import LinearSVC

from multiview_lab.mvfs import RFSSelector, cross_validate_lam
from multiview_lab.pipelines.mvfs.lam_cv import attach_lam, select_lam
from multiview_lab.pipelines.mvfs.nodes import (
    build_views,
    make_splits,
    objective_gap,
    plot_convergence,
    plot_lam_sensitivity,
)
from multiview_lab.pipelines.mvfs.task import build_classifier, make_task, standardise_split
from multiview_lab.protocol import run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS

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
    "All": {"estimator": "AllFeaturesSelector", "all_features": True},
}
CLASSIFIERS = {
    "linear_svm": {"estimator": "sklearn.svm.LinearSVC", "params": {"max_iter": 5000}},
    "1nn": {"estimator": "sklearn.neighbors.KNeighborsClassifier", "params": {"n_neighbors": 1}},
}
PROTOCOL = {
    "n_splits": 2,
    "test_size": 0.5,
    "seed": 0,
    "k_grid": [2, 4],
    "classifiers": CLASSIFIERS,
}
LOCAL = {"backend": "local", "n_jobs": 1}
LAM_CV = {
    "enabled": True,
    "fit_with": "RFS",
    "params": {"max_iter": 20},
    "grid": [0.01, 1.0, 1000.0],  # 1000 > λ_max: W = 0
    "folds": 2,
    "k": None,
    "classifiers": None,
}
TIMING = list(TIMING_COLUMNS)


def run(views, splits, selectors=SELECTORS, protocol=PROTOCOL, execution=LOCAL):
    return run_experiment(make_task(protocol), views, splits, selectors, execution=execution)


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
def splits(views):
    return make_splits(views, PROTOCOL)


@pytest.fixture(scope="module")
def fitted(views, splits):
    return run(views, splits)


def test_build_views_keeps_order_and_rejects_unknown_views(views):
    data = views["mfeat"]
    assert list(data["names"]) == ["a", "b"] and [X.shape[1] for X in data["X"]] == [6, 5]
    with pytest.raises(ValueError, match="Unknown mfeat view"):
        build_views(({"a": data["X"][0]}, data["y"]), {"views": ["a", "zzz"]})


def test_splits_are_the_seeded_stratified_halves(views, splits):
    y = views["mfeat"]["y"]
    assert list(splits.columns) == ["dataset", "split", "seed", "train", "test"]
    assert list(splits["split"]) == [0, 1] and list(splits["seed"]) == [0, 1]
    for s in splits.itertuples():
        assert np.intersect1d(s.train, s.test).size == 0 and s.train.size + s.test.size == 60
        assert np.bincount(y[s.train]).tolist() == [10, 10, 10]
        # the split of the old pipeline: train_test_split seeded with protocol.seed + s, sorted
        train, test = train_test_split(
            np.arange(60), test_size=0.5, stratify=y, random_state=s.seed
        )
        assert np.array_equal(s.train, np.sort(train)) and np.array_equal(s.test, np.sort(test))
    assert not np.array_equal(splits["train"][0], splits["train"][1])
    with pytest.raises(ValueError, match="test_size"):
        make_splits(views, {**PROTOCOL, "test_size": 1.5})


def test_scaler_sees_training_rows_only(views):
    Xs = views["mfeat"]["X"]
    train_idx, test_idx = np.arange(0, 60, 2), np.arange(1, 60, 2)
    train, test = standardise_split(Xs, train_idx, test_idx)
    assert np.allclose(train[0].mean(axis=0), 0) and np.allclose(train[0].std(axis=0), 1)
    # changing the test rows changes neither the training features nor the test scaling
    poisoned = [X.copy() for X in Xs]
    poisoned[0][test_idx] += 1e6
    train2, test2 = standardise_split(poisoned, train_idx, test_idx)
    assert np.array_equal(train[0], train2[0])
    X_train = Xs[0][train_idx]
    assert np.allclose(test2[0], (poisoned[0][test_idx] - X_train.mean(0)) / X_train.std(0))


def test_constant_training_column_is_not_divided_by_zero():
    X = np.ones((6, 2))
    X[:, 1] = np.arange(6)
    train, test = standardise_split([X], np.arange(3), np.arange(3, 6))
    assert np.isfinite(train[0]).all() and np.isfinite(test[0]).all()
    assert (train[0][:, 0] == 0).all()


def test_results_one_row_per_k_and_classifier(views, splits, fitted):
    results = fitted.results
    assert {"dataset", "split", "method", "seed", "k", "classifier", "accuracy"} <= set(results)
    assert set(TIMING) <= set(results)
    # 2 splits x 4 methods (3 selectors + all features) x 2 k x 2 classifiers
    assert len(results) == 2 * 4 * 2 * 2
    assert results["accuracy"].between(0, 1).all()
    assert (results["seed"] == results["split"]).all()  # every method gets the split's seed
    full = results[results["method"] == "All"]
    assert set(full["k"]) == {2, 4}  # scored once at d = 11, repeated at every k
    assert full.groupby(["split", "classifier"])["accuracy"].nunique().eq(1).all()
    # the top-k accuracy is the classifier's on the ranking's first k z-scored columns
    (train, test), y = (splits["train"][0], splits["test"][0]), views["mfeat"]["y"]
    Xs_train, Xs_test = standardise_split(views["mfeat"]["X"], train, test)
    ranking = (
        fitted.extras["rankings"].query("method == 'Fisher' and split == 0")["ranking"].iloc[0]
    )
    cols = ranking[:2]
    svm = LinearSVC(max_iter=5000, random_state=0).fit(np.hstack(Xs_train)[:, cols], y[train])
    expected = np.mean(svm.predict(np.hstack(Xs_test)[:, cols]) == y[test])
    row = results.query(
        "method == 'Fisher' and split == 0 and k == 2 and classifier == 'linear_svm'"
    )
    assert row["accuracy"].item() == pytest.approx(expected)
    top = results[(results["method"] == "Fisher") & (results["k"] == 2)]
    assert top["accuracy"].min() > 0.8  # the two informative features separate the classes


def test_rankings_and_histories(fitted):
    rankings, histories = fitted.extras["rankings"], fitted.extras["histories"]
    assert len(rankings) == 2 * 4
    for r in rankings.itertuples():
        assert sorted(r.ranking) == list(range(11))
        if r.method == "All":
            assert list(r.ranking) == list(range(11))
        else:
            assert r.ranking[0] in (1, 9)  # an informative feature leads
        if r.method == "Fisher":  # a univariate filter ranks both redundant ones first
            assert set(r.ranking[:2]) == {1, 9}
    admm = rankings[rankings["method"] == "ADMM"]
    assert (admm["n_iter"] > 0).all() and admm["objective"].notna().all()
    assert rankings.loc[rankings["method"] == "Fisher", "objective"].isna().all()
    assert set(histories["method"]) == {"ADMM", "RFS"}
    h = histories[(histories["method"] == "ADMM") & (histories["split"] == 0)]
    assert list(h["iteration"]) == list(range(1, int(admm["n_iter"].iloc[0]) + 1))
    assert list(h.columns[:3]) == ["split", "method", "iteration"]
    assert {"objective", "primal_residual", "dual_residual", "rho", "time"} <= set(h.columns)
    assert set(fitted.models) == {f"{m}_mfeat_split0" for m in SELECTORS}
    assert fitted.models["ADMM_mfeat_split0"].client is None


def test_results_do_not_depend_on_n_jobs(views, splits, fitted):
    parallel = run(views, splits, execution={"backend": "local", "n_jobs": 2})
    pd.testing.assert_frame_equal(
        fitted.results.drop(columns=TIMING), parallel.results.drop(columns=TIMING)
    )
    a_rankings, b_rankings = fitted.extras["rankings"], parallel.extras["rankings"]
    for a, b in zip(a_rankings["ranking"], b_rankings["ranking"], strict=True):
        assert np.array_equal(a, b)


def test_classifiers_are_registry_entries():
    svm = build_classifier("svm", CLASSIFIERS["linear_svm"], 7)
    assert isinstance(svm, LinearSVC) and svm.random_state == 7 and svm.max_iter == 5000
    tuned = {**CLASSIFIERS["linear_svm"], "tune": {"grid": {"C": [0.1, 1.0]}, "folds": 4}}
    search = build_classifier("svm", tuned, 7)
    assert isinstance(search, GridSearchCV) and search.param_grid == {"C": [0.1, 1.0]}
    assert search.cv == 4 and search.estimator.random_state == 7
    with pytest.raises(ValueError, match="unknown key"):
        make_task({**PROTOCOL, "classifiers": {"rf": {"estimator": "X", "Cs": [1]}}})
    with pytest.raises(ValueError, match="classifiers is empty"):
        make_task({**PROTOCOL, "classifiers": {}})


def test_score_with_and_bad_k(views, splits):
    only = {"Fisher": {"estimator": "FisherScoreSelector", "score_with": ["1nn"]}}
    results = run(views, splits, only).results
    assert set(results["classifier"]) == {"1nn"} and len(results) == 2 * 2
    with pytest.raises(RuntimeError, match="score_with names"):
        run(views, splits, {"F": {**only["Fisher"], "score_with": ["rf"]}})
    with pytest.raises(RuntimeError, match=r"k_grid must lie in \[1, 11\]"):
        run(views, splits, only, {**PROTOCOL, "k_grid": [5, 12]})
    with pytest.raises(ValueError, match="Unknown parameter"):
        run(views, splits, {"F": {"estimator": "FisherScoreSelector", "params": {"x": 1}}})


def test_objective_gap_and_convergence(fitted):
    rankings, histories = fitted.extras["rankings"], fitted.extras["histories"]
    table, metrics = objective_gap(rankings, {"method": "ADMM", "reference": "RFS", "top_k": 2})
    assert list(table["split"]) == [0, 1] and set(table["method"]) == {"ADMM"}
    assert np.allclose(
        table["rel_gap"], (table["J_method"] - table["J_reference"]) / table["J_reference"]
    )
    assert (table["top_k_overlap"] <= 2).all()
    assert metrics == {
        "objective_gap/ADMM/rel_gap_mean": pytest.approx(table["rel_gap"].mean()),
        "objective_gap/ADMM/rel_gap_max": pytest.approx(table["rel_gap"].max()),
        "objective_gap/ADMM/top2_overlap_mean": pytest.approx(table["top_k_overlap"].mean()),
    }
    # several selectors against one reference: one block of rows and metrics each; the
    # reference against itself has no gap and the same top-k
    both, metrics = objective_gap(
        rankings, {"method": ["ADMM", "RFS"], "reference": "RFS", "top_k": 2}
    )
    assert list(both["method"]) == ["ADMM", "ADMM", "RFS", "RFS"]
    assert both.iloc[:2].reset_index(drop=True).equals(table)
    assert (both.iloc[2:]["rel_gap"] == 0).all() and (both.iloc[2:]["top_k_overlap"] == 2).all()
    assert metrics["objective_gap/RFS/rel_gap_max"] == 0
    fig = plot_convergence(histories, {"method": "ADMM"})
    assert len(fig.axes) == 3
    with pytest.raises(ValueError, match="No history"):
        plot_convergence(histories, {"method": "Fisher"})


def test_objective_gap_bad_input(fitted):
    rankings = fitted.extras["rankings"]
    with pytest.raises(ValueError, match=r"needs selectors.*\['missing'\] not fitted"):
        objective_gap(rankings, {"method": "ADMM", "reference": "missing"})
    with pytest.raises(ValueError, match=r"\['ADMM-tight'\] not fitted"):
        objective_gap(rankings, {"method": ["ADMM", "ADMM-tight"], "reference": "RFS"})
    other = rankings.copy()
    other.loc[other["method"] == "RFS", "lam"] *= 2
    with pytest.raises(ValueError, match="same lam"):
        objective_gap(other, {"method": "ADMM", "reference": "RFS"})


# -- λ by inner CV --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lam_selected(views, splits):
    return select_lam(views, splits, SELECTORS, LAM_CV, PROTOCOL, LOCAL)


def test_select_lam_tables_and_metrics(views, splits, lam_selected):
    table, chosen, metrics = lam_selected
    # 2 splits x 3 λ x 2 folds, the criterion and one column per protocol classifier
    assert len(table) == 2 * 3 * 2
    assert list(table.columns) == [
        "split", "lam", "fold", "score", "score_linear_svm", "score_1nn", "lam_max",
        "null_model", "fit_time_s", "chosen",
    ]  # fmt: skip
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
    for row in chosen.itertuples():  # the chosen rows are flagged in the table
        flagged = table[(table["split"] == row.split) & table["chosen"]]
        assert (flagged["lam"] == row.lam).all() and len(flagged) == 2
    assert set(metrics) == {
        f"lam_cv/split{s}/{key}" for s in (0, 1) for key in ("lam", "lam_frac", "score")
    }
    again = select_lam(
        views, splits, SELECTORS, LAM_CV, PROTOCOL, {"backend": "local", "n_jobs": 2}
    )
    pd.testing.assert_frame_equal(
        again[0].drop(columns="fit_time_s"), table.drop(columns="fit_time_s")
    )


def test_select_lam_is_the_inner_cv_of_each_split(views, splits, lam_selected):
    """Each unit is :func:`cross_validate_lam` on the split's z-scored training rows, with the
    fold shuffling seeded by the split's seed (the old pipeline's per-split call)."""
    table, chosen, _ = lam_selected
    data = views["mfeat"]
    for s in splits.itertuples():
        Xs_train, _ = standardise_split(data["X"], s.train, s.test)
        classifiers = [build_classifier(n, e, s.seed) for n, e in CLASSIFIERS.items()]
        ref = cross_validate_lam(
            RFSSelector(lam_frac=0.2, max_iter=20), Xs_train, data["y"][s.train], LAM_CV["grid"],
            classifier=classifiers, k=PROTOCOL["k_grid"], n_folds=2, random_state=s.seed,
        )  # fmt: skip
        got = table[table["split"] == s.split].reset_index(drop=True)
        assert np.allclose(got["score"], ref.scores.ravel())
        assert chosen.loc[chosen["split"] == s.split, "lam"].item() == ref.best_lam


def test_chosen_lam_reaches_the_lam_cv_selectors_only(views, splits, fitted, lam_selected):
    chosen = lam_selected[1]
    training = attach_lam(splits, chosen)
    assert "lam" not in splits and [a.tolist() for a in training["lam"]] == [
        [lam] for lam in chosen["lam"]
    ]
    rankings = run(views, training).extras["rankings"]
    lams = dict(zip(chosen["split"], chosen["lam"], strict=True))
    for method in ("ADMM", "RFS"):
        block = rankings[rankings["method"] == method]
        assert np.allclose(block["lam"], block["split"].map(lams))
    assert rankings.loc[rankings["method"] == "Fisher", "lam"].isna().all()
    table, _ = objective_gap(rankings, {"method": "ADMM", "reference": "RFS"})
    assert np.allclose(table["lam"], table["split"].map(lams))
    assert set(table["stop_reason_method"]) <= {"max_iter", "objective", "residuals"}
    # without a chosen λ (CV disabled) the params' lam_frac is used, as in the fixture
    fixed = fitted.extras["rankings"].query("method == 'RFS'")
    assert not np.allclose(fixed["lam"], fixed["split"].map(lams))
    with pytest.raises(ValueError, match=r"split\(s\) \[1\]"):
        attach_lam(splits, chosen.iloc[:1])


def test_select_lam_disabled_and_bad_config(views, splits):
    for off in (None, {**LAM_CV, "enabled": False}):
        table, chosen, metrics = select_lam(views, splits, SELECTORS, off, PROTOCOL, LOCAL)
        assert table.empty and chosen.empty and metrics == {}
        assert attach_lam(splits, chosen) is splits
        assert len(plot_lam_sensitivity(table, chosen).axes) == 1
    with pytest.raises(ValueError, match="fit_with"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "fit_with": "nope"}, PROTOCOL, LOCAL)
    with pytest.raises(ValueError, match="needs an 'estimator'"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "classifiers": {"rf": {}}}, PROTOCOL, LOCAL)
    with pytest.raises(RuntimeError, match="grid is empty"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "grid": []}, PROTOCOL, LOCAL)
    with pytest.raises(RuntimeError, match="smallest class"):
        select_lam(views, splits, SELECTORS, {**LAM_CV, "folds": 11}, PROTOCOL, LOCAL)


def test_lam_sensitivity_figure(lam_selected):
    table, chosen, _ = lam_selected
    fig = plot_lam_sensitivity(table, chosen)
    assert len(fig.axes) == 3  # criterion, linear_svm, 1nn
    assert all(ax.get_xscale() == "log" for ax in fig.axes)
