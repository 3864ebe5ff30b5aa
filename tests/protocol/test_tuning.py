"""Shared inner CVs grid point by grid point (multiview_lab.protocol.tuning): the choice of the
unshared inner CV, points shared between methods' CVs computed once, resumable per point."""

import logging

import joblib
import pandas as pd
import pytest

from multiview_lab.pipelines.gbc.task import GBCTask
from multiview_lab.protocol import ViewsTask, cache_status, parse_methods, run_experiment
from multiview_lab.protocol.tuning import choose, point_spec, run_tune_point
from multiview_lab.protocol.unit import TIMING_COLUMNS, _tune
from tests.protocol.conftest import METHODS

ONCE = ["dataset", "repeat"]
TIMING = [*TIMING_COLUMNS, "shared_cv_cpu_time_s"]


def _tree(depths, once_per=ONCE, **extra):
    return {
        "estimator": "ConcatViews",
        "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
        "tune": {
            "grid": {"params": [{"max_depth": d} for d in depths]},
            "folds": 3,
            "once_per": once_per,
            **extra,
        },
    }


def _run(data, split_table, methods, caplog=None, **execution):
    return run_experiment(
        ViewsTask(), data, split_table, methods, execution={"n_jobs": 1, **execution}
    )


def _grid_line(caplog) -> str:
    lines = [r.getMessage() for r in caplog.records if "to score." in r.getMessage()]
    assert len(lines) == 1, lines
    caplog.clear()
    return lines[0]


@pytest.mark.parametrize("metric", [("f1_macro", True), ("accuracy", False)])
def test_the_points_choose_what_the_whole_inner_cv_chooses(data, split_table, metric):
    """Scored one point at a time, the grid gives the unshared CV's point and score exactly,
    ties included (depths 8, 16 and 32 grow the same trees on 100 rows: the first wins)."""
    name, higher = metric
    entry = _tree([1, 2, 8, 16, 32], metric=name, greater_is_better=higher)
    method = parse_methods({"tree": entry})["tree"]
    split = split_table.iloc[0].to_dict()
    unit = {"dataset": "SYN", "seed": int(split["seed"])}
    points = [
        run_tune_point(ViewsTask(), method, data["SYN"], split, unit, p) for p in method.grid()
    ]
    whole = _tune(ViewsTask(), method, data["SYN"], split, unit["seed"])
    chosen = choose(method, points)
    assert (chosen["params"], chosen["scores"]) == whole
    scores = [p["score"] for p in points]
    assert scores[2] == scores[3] == scores[4]  # the tie the rule must break to the first
    assert chosen["cpu_time_s"] == pytest.approx(sum(p["cpu_time_s"] for p in points))
    # a point computed for another method's CV is not this CV's cost
    assert choose(method, [{**p, "computed_for": "other"} for p in points])["cpu_time_s"] == 0


def test_point_spec_ignores_the_name_and_options_that_do_not_change_a_fit():
    gbc = parse_methods(
        {
            "GBC": {
                "estimator": "GBCClassifier",
                "params": {"lambda0": 0.01, "lambda1": 0.01, "n_iter": 300},
                "tune": {"grid": {"lambda0": [0.0, 0.1], "lambda1": [0.0, 0.1]}},
                "trajectory": True,
            },
            "GBC-no-consensus": {
                "estimator": "GBCClassifier",
                "params": {"lambda0": 0.0, "lambda1": 0.01, "n_iter": 300},
                "tune": {"grid": {"lambda1": [0.0, 0.1]}},
            },
            "GBC-no-graphs": {
                "estimator": "GBCClassifier",
                "params": {"lambda0": 0.0, "lambda1": 0.01, "n_iter": 300},
                "tune": {"grid": {"lambda1": [0.0, 0.1]}},
                "graphs": False,
            },
        },
        GBCTask.method_options,
    )
    task = GBCTask()
    full, row, nographs = (gbc[n] for n in ("GBC", "GBC-no-consensus", "GBC-no-graphs"))
    # GBC's lambda0 = 0 row is GBC-no-consensus's grid (trajectory only adds a table)
    assert point_spec(task, full, {"lambda0": 0.0, "lambda1": 0.1}) == point_spec(
        task, row, {"lambda1": 0.1}
    )
    assert point_spec(task, full, {"lambda0": 0.1, "lambda1": 0.1}) != point_spec(
        task, row, {"lambda1": 0.1}
    )
    # a method fitted without the graphs is another computation
    assert point_spec(task, row, {"lambda1": 0.1}) != point_spec(task, nographs, {"lambda1": 0.1})
    # a task that does not name its fit options keeps them all in the spec
    assert point_spec(ViewsTask(), full, {"lambda0": 0.0, "lambda1": 0.1}) != point_spec(
        ViewsTask(), row, {"lambda1": 0.1}
    )


def test_methods_with_overlapping_grids_compute_the_shared_points_once(
    data, split_table, tmp_path, caplog
):
    """Two methods' CVs whose grids overlap (depths 1, 2, 4, 8 and 2, 4, 16) run the common
    points once, in one run and across runs (one pipeline node per method), with the results
    of CVs computed apart, and each point's CPU counted in one CV."""
    caplog.set_level(logging.INFO, logger="multiview_lab.protocol.engine")
    methods = {"deep": _tree([1, 2, 4, 8]), "shallow": _tree([2, 4, 16])}
    alone = {
        name: _run(data, split_table, {name: entry}).results for name, entry in methods.items()
    }
    caplog.clear()
    together = _run(data, split_table, methods, cache_dir=str(tmp_path / "one")).results
    # 2 groups x (4 + 3) points, 2 x 2 of them common
    assert _grid_line(caplog).endswith(
        "have 14 grid points: 0 in the cache, 4 scored for another CV of this run, 10 to score."
    )
    for name in methods:
        expected = alone[name].drop(columns=TIMING).reset_index(drop=True)
        got = together[together["method"] == name].drop(columns=TIMING).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected)
    # one node per method, as a pipeline runs them: the second finds the common points
    cache = str(tmp_path / "two")
    first = _run(data, split_table, {"deep": methods["deep"]}, cache_dir=cache).results
    _grid_line(caplog)
    second = _run(data, split_table, {"shallow": methods["shallow"]}, cache_dir=cache).results
    assert _grid_line(caplog).endswith(
        "have 6 grid points: 4 in the cache, 0 scored for another CV of this run, 2 to score."
    )
    pd.testing.assert_frame_equal(
        second.drop(columns=TIMING), alone["shallow"].drop(columns=TIMING)
    )
    # the measured cost: each point once (the common ones in deep's CV, where they ran)
    cost = {n: r["shared_cv_cpu_time_s"].sum() for n, r in (("deep", first), ("shallow", second))}
    alone_cost = {n: r["shared_cv_cpu_time_s"].sum() for n, r in alone.items()}
    assert cost["deep"] > 0 and 0 < cost["shallow"] < alone_cost["shallow"]


def test_an_interrupted_cv_resumes_from_its_cached_points(data, split_table, tmp_path, caplog):
    """A CV whose own entry is missing (the run stopped before its last point) reruns none of
    the points in the cache; the status says how many of its points are done."""
    caplog.set_level(logging.INFO, logger="multiview_lab.protocol.engine")
    cache = tmp_path / "cache"
    methods = {"tree": _tree([1, 2, 4, 8]), "logreg": METHODS["logreg"]}
    first = _run(data, split_table, methods, cache_dir=str(cache)).results
    _grid_line(caplog)
    entries = {p: joblib.load(p) for p in cache.glob("*.joblib")}
    cvs = [p for p, e in entries.items() if isinstance(e, dict) and "params" in e]
    points = [p for p, e in entries.items() if isinstance(e, dict) and "point" in e]
    assert len(cvs) == 2 and len(points) == 8
    for path in [*cvs, points[0]]:  # both CVs unfinished, one of their points too
        path.unlink()
    status = cache_status(
        ViewsTask(), data, split_table, methods, execution={"cache_dir": str(cache)}
    )
    shared = status[status["stage"] == "shared CV"]
    assert (shared["status"] == "to run").all()
    assert shared["grid_points"].tolist() == [4, 4]
    assert sorted(shared["grid_points_cached"].tolist()) == [3, 4]
    assert (shared["cpu_time_s"] > 0).all()
    again = _run(data, split_table, methods, cache_dir=str(cache)).results
    assert _grid_line(caplog).endswith(
        "have 8 grid points: 7 in the cache, 0 scored for another CV of this run, 1 to score."
    )
    pd.testing.assert_frame_equal(again.drop(columns=TIMING), first.drop(columns=TIMING))
