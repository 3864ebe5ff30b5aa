"""The PB-MVBoost task through the engine: one-vs-all scores, readings, Figure 4 trajectories."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.pbmvboost.metrics import binary_scores
from multiview_lab.pipelines.pbmvboost.nodes import draw_training_samples, plot_figure4
from multiview_lab.pipelines.pbmvboost.task import OneVsAllTask
from multiview_lab.protocol import parse_methods, run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.conftest import synthetic_views


@pytest.fixture(scope="module")
def views():
    return synthetic_views(n_test=150)


METHODS = {
    "PB-MVBoost": {
        "estimator": "PBMVBoostClassifier",
        "params": {"n_estimators": 5, "max_depth": 2},
        "trajectory": True,
    },
    "MVBoost": {"estimator": "MVBoostClassifier", "params": {"n_estimators": 5, "max_depth": 2}},
}
PROTOCOL = {"datasets": ["SYN"], "tasks": [0, 1], "n_train": [60], "n_draws": 2, "seed": 3}


def _run(views, methods, n_jobs=1, **kw):
    draws = draw_training_samples(views, PROTOCOL)
    return run_experiment(OneVsAllTask(), views, draws, methods, execution={"n_jobs": n_jobs}, **kw)


def test_a_unit_is_the_one_vs_all_fit_scored_on_the_test_set(views):
    out = _run(views, METHODS, keep_models={"methods": ["PB-MVBoost"], "where": {"draw": [0]}})
    r, traj = out.results, out.extras["trajectories"]
    assert len(r) == 2 * 2 * 2 and list(r["method"][:2]) == ["PB-MVBoost", "MVBoost"]
    assert sorted(out.models) == [
        "MVBoost_SYN_task0_draw0_n_train60",
        "PB-MVBoost_SYN_task0_draw0_n_train60",
        "PB-MVBoost_SYN_task1_draw0_n_train60",
    ]
    draws = draw_training_samples(views, PROTOCOL)
    d = draws.iloc[3]  # task 1, draw 1
    model = parse_methods(METHODS, OneVsAllTask.method_options)["PB-MVBoost"].build(
        random_state=int(d["seed"])
    )
    v = views["SYN"]
    model.fit([X[d["train"]] for X in v["X_train"]], np.where(v["y_train"][d["train"]] == 1, 1, -1))
    expected = binary_scores(
        np.where(v["y_test"] == 1, 1, -1), model.decision_function(v["X_test"])
    )
    row = r[(r["method"] == "PB-MVBoost") & (r["task"] == 1) & (r["draw"] == 1)].iloc[0]
    assert row["accuracy"] == expected["accuracy"] and row["f1"] == expected["f1"]
    assert {"train_gibbs_risk", "train_multiview_cbound"} <= set(r.columns)
    assert set(traj["iteration"]) == set(range(1, 6)) and set(traj["method"]) == {"PB-MVBoost"}
    assert len(plot_figure4(traj, {"method": "PB-MVBoost"}).axes) == 3


def test_results_do_not_depend_on_n_jobs(views):
    a, b = _run(views, METHODS, 1), _run(views, METHODS, 2)
    timing = list(TIMING_COLUMNS)
    pd.testing.assert_frame_equal(a.results.drop(columns=timing), b.results.drop(columns=timing))
    pd.testing.assert_frame_equal(a.extras["trajectories"], b.extras["trajectories"])


def test_a_reading_scores_like_a_model_fitted_with_its_options(views):
    """A reading re-scores the fitted model with prediction-time options: same rows as a
    method fitted with those options (everything but the shared fit time)."""
    params = {"n_estimators": 5, "max_depth": 2}
    shared = {
        "PB": {
            "estimator": "PBMVBoostClassifier",
            "params": params,
            "readings": {"PB-final": {"vote": "final_rho"}},
        }
    }
    separate = {
        "PB": {"estimator": "PBMVBoostClassifier", "params": params},
        "PB-final": {"estimator": "PBMVBoostClassifier", "params": {**params, "vote": "final_rho"}},
    }
    a, b = _run(views, shared).results, _run(views, separate).results
    keys = ["method", "task", "draw"]
    a, b = a.sort_values(keys, ignore_index=True), b.sort_values(keys, ignore_index=True)
    cols = [c for c in b.columns if c not in TIMING_COLUMNS]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert (a[a["method"] == "PB"]["accuracy"].to_numpy() != 0).all()


def test_readings_reject_training_options(views):
    bad = {"PB": {**METHODS["PB-MVBoost"], "readings": {"PB-deep": {"max_depth": 4}}}}
    with pytest.raises(RuntimeError, match="only the prediction-time parameters"):
        _run(views, bad)


def test_input_divisor_and_tie_policy_are_method_options(views):
    methods = {
        "MVBoost/255": {**METHODS["MVBoost"], "input_divisor": 255, "tie_policy": "drop"},
    }
    with pytest.raises(ValueError, match="contain no '/'"):
        _run(views, methods)
    methods = {"MVBoost-255": {**METHODS["MVBoost"], "input_divisor": 255, "tie_policy": "drop"}}
    r = _run(views, methods).results
    assert (r["n_scored"] <= 150).all() and r["accuracy"].between(0, 1).all()
