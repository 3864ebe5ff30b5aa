"""The PAC-Bayes bound columns of the PB-MVBoost task (Corollary 1, Theorem 2 per result row)."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from multiview_lab.pbmvboost.bounds import pac_bayes_bounds
from multiview_lab.pipelines.pbmvboost.nodes import draw_training_samples
from multiview_lab.pipelines.pbmvboost.task import OneVsAllTask, make_task
from multiview_lab.protocol import parse_methods, run_experiment
from tests.conftest import synthetic_views

CONF = Path(__file__).resolve().parents[3] / "conf" / "base" / "parameters_pbmvboost.yml"

BOUND_COLUMNS = [
    "bound_gibbs_cor1",
    "bound_mv_thm2",
    "bound_kl_views",
    "bound_kl_rho",
    "bound_catoni_c",
    "bound_delta",
    "test_gibbs_risk",
    "test_multiview_cbound",
]

METHODS = {
    "PB-MVBoost": {
        "estimator": "PBMVBoostClassifier",
        "params": {"n_estimators": 6, "max_depth": 2},
        "readings": {"PB-MVBoost-final-rho": {"vote": "final_rho"}},
    },
    "MVBoost": {"estimator": "MVBoostClassifier", "params": {"n_estimators": 6, "max_depth": 2}},
    "MV-AdaBoost": {
        "estimator": "MVAdaBoostClassifier",
        "params": {"n_estimators": 3, "max_depth": 2},
    },
}
PROTOCOL = {
    "datasets": ["SYN"],
    "tasks": [0, 1],
    "n_train": [120],
    "n_draws": 2,
    "seed": 5,
    "bounds": {"delta": 0.1},
}


@pytest.fixture(scope="module")
def views():
    return synthetic_views(n_test=300)


@pytest.fixture(scope="module")
def results(views):
    draws = draw_training_samples(views, PROTOCOL)
    return run_experiment(make_task(PROTOCOL), views, draws, METHODS, execution={"n_jobs": 1})


def test_every_pb_mvboost_and_mvboost_row_carries_the_bounds(results):
    r = results.results
    boosted = r[r["method"].isin(["PB-MVBoost", "PB-MVBoost-final-rho", "MVBoost"])]
    assert len(boosted) == 3 * 2 * 2  # readings included
    assert set(BOUND_COLUMNS) <= set(r.columns)
    values = boosted[BOUND_COLUMNS].to_numpy()
    assert np.isfinite(values).all()
    for col in ("bound_gibbs_cor1", "bound_mv_thm2", "test_gibbs_risk", "test_multiview_cbound"):
        assert boosted[col].between(0, 1).all(), col
    assert (boosted["bound_delta"] == 0.1).all()  # from the protocol's bounds.delta
    assert (boosted["bound_kl_views"] >= 0).all() and (boosted["bound_kl_rho"] >= 0).all()
    # each bound dominates the empirical quantity it starts from (on the training sample)
    assert (boosted["bound_gibbs_cor1"] > boosted["train_gibbs_risk"]).all()
    assert (boosted["bound_mv_thm2"] >= boosted["train_multiview_cbound"]).all()
    assert (boosted["bound_mv_thm2"] >= boosted["train_majority_vote_risk"]).all()
    # the other methods have no posterior over view-specific voters: no bound values
    assert r.loc[r["method"] == "MV-AdaBoost", BOUND_COLUMNS].isna().all().all()


def test_bound_columns_are_the_bounds_on_the_training_sample(views, results):
    """One unit recomputed by hand: the bounds are those of the fitted model on its own
    training draw (the S of the bounds), the held-out columns those of the test set."""
    r = results.results
    draws = draw_training_samples(views, PROTOCOL)
    d = draws.iloc[1]  # task 0, draw 1
    model = parse_methods(METHODS, OneVsAllTask.method_options)["MVBoost"].build(
        random_state=int(d["seed"])
    )
    v = views["SYN"]
    y_train = np.where(v["y_train"][d["train"]] == d["task"], 1, -1)
    Xs_train = [X[d["train"]] for X in v["X_train"]]
    model.fit(Xs_train, y_train)
    expected = pac_bayes_bounds(model, Xs_train, y_train, delta=0.1)
    held_out = model.pac_bayes_quantities(v["X_test"], np.where(v["y_test"] == d["task"], 1, -1))
    row = r[(r["method"] == "MVBoost") & (r["task"] == d["task"]) & (r["draw"] == d["draw"])]
    row = row.iloc[0]
    assert row["bound_gibbs_cor1"] == expected["bound_gibbs_cor1"]
    assert row["bound_mv_thm2"] == expected["bound_mv_thm2"]
    assert (
        row["bound_kl_rho"] == expected["kl_rho"] and row["bound_catoni_c"] == expected["catoni_C"]
    )
    assert row["train_gibbs_risk"] == expected["gibbs_risk"]
    assert row["test_gibbs_risk"] == held_out["gibbs_risk"]


def test_delta_comes_from_the_protocol():
    assert make_task({}).bounds_delta == 0.05
    assert make_task({"bounds": {"delta": 0.01}}).bounds_delta == 0.01
    assert make_task({"bounds": {"delta": None}}).bounds_delta is None
    with pytest.raises(ValueError, match=r"bounds.delta"):
        make_task({"bounds": {"delta": 1.5}})
    protocol = yaml.safe_load(CONF.read_text())["pbmvboost"]["protocol"]
    assert protocol["bounds"] == {"delta": 0.05}
    assert make_task(protocol).bounds_delta == 0.05
    # delta is a task setting, so part of every unit's cache key
    assert make_task({"bounds": {"delta": 0.01}}).settings() != make_task(protocol).settings()


def test_no_bound_columns_when_delta_is_null(views):
    protocol = {**PROTOCOL, "tasks": [1], "n_draws": 1, "bounds": {"delta": None}}
    draws = draw_training_samples(views, protocol)
    methods = {"MVBoost": METHODS["MVBoost"]}
    r = run_experiment(make_task(protocol), views, draws, methods, execution={"n_jobs": 1}).results
    assert not set(BOUND_COLUMNS) & set(r.columns)
