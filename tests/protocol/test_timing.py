"""The timing study: every method fitted and scored on the same splits in one process."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.protocol import ViewsTask, run_unit
from multiview_lab.protocol.registry import parse_method
from multiview_lab.protocol.timing import TIMING_STUDY_COLUMNS, time_methods, timing_splits
from tests.protocol.conftest import METHODS
from tests.protocol.slow_task import BusyViewsTask, SlowViewsTask


def test_first_splits_of_each_dataset_times_every_method_in_registry_order(data, split_table):
    two = pd.concat(
        [split_table, split_table.assign(dataset="TWO")], ignore_index=True
    )  # a second data set, the same rows
    out = time_methods(ViewsTask(), {**data, "TWO": data["SYN"]}, two, METHODS, n_splits=2)
    assert list(out.columns) == [
        "dataset", "repeat", "fold", "method", "n_train", "n_test", *TIMING_STUDY_COLUMNS
    ]  # fmt: skip
    # the first two splits (repeat 0, folds 0 and 1) of each data set, methods in registry order
    assert out[["dataset", "repeat", "fold", "method"]].values.tolist() == [
        [d, 0, f, m] for d in ("SYN", "TWO") for f in (0, 1) for m in ("tree", "logreg")
    ]
    first = split_table.iloc[0]
    assert out["n_train"].iloc[0] == len(first["train"])
    assert out["n_test"].iloc[0] == len(first["test"])
    assert (out[list(TIMING_STUDY_COLUMNS[:4])] > 0).all().all()


def test_cpu_seconds_count_the_work_and_not_the_waiting(data, split_table):
    """A fit that sleeps takes wall time and almost no CPU; one that computes takes both."""
    only = {"tree": METHODS["tree"]}
    slept = time_methods(SlowViewsTask(seconds=0.3), data, split_table, only)
    busy = time_methods(BusyViewsTask(cpu_seconds=0.3), data, split_table, only)
    assert slept["fit_time_s"].iloc[0] >= 0.3
    assert slept["fit_cpu_s"].iloc[0] < 0.15
    assert busy["fit_cpu_s"].iloc[0] >= 0.3
    # scoring is timed apart from fitting
    assert slept["score_time_s"].iloc[0] < 0.3
    assert busy["score_cpu_s"].iloc[0] < 0.3


def test_timed_model_is_the_unit_model(data, split_table):
    """The study builds each method with the split's seed, as the engine's unit does: the model
    it times is the one whose scores the results report."""
    method = {
        "forest": {
            "estimator": "ConcatViews",
            "params": {
                "estimator": "sklearn.ensemble.RandomForestClassifier",
                "params": {"n_estimators": 5},
            },
        }
    }
    fitted = []

    class Recording(ViewsTask):
        def score(self, model, data, split, method):
            fitted.append(model)
            return super().score(model, data, split, method)

    time_methods(Recording(), data, split_table, method)
    split = split_table.iloc[0].to_dict()
    unit = {"dataset": "SYN", "method": "forest", "repeat": 0, "fold": 0, "seed": split["seed"]}
    parsed = parse_method("forest", method["forest"])
    ref = run_unit(ViewsTask(), parsed, data["SYN"], split, unit, keep_model=True).model
    X = data["SYN"]["X"]
    np.testing.assert_array_equal(fitted[0].predict_proba(X), ref.predict_proba(X))


def test_disabled_methods_are_skipped_and_only_selects(data, split_table):
    methods = {**METHODS, "off": {**METHODS["tree"], "enabled": False}}
    out = time_methods(ViewsTask(), data, split_table, methods)
    assert out["method"].tolist() == ["tree", "logreg"]
    out = time_methods(ViewsTask(), data, split_table, methods, only=["logreg"])
    assert out["method"].tolist() == ["logreg"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"only": ["off"]}, r"method\(s\) \['off'\] to time are not enabled"),
        ({"n_splits": 0}, "n_splits must be >= 1"),
    ],
)
def test_bad_settings_are_named(data, split_table, kwargs, message):
    with pytest.raises(ValueError, match=message):
        time_methods(ViewsTask(), data, split_table, METHODS, **kwargs)


def test_a_method_the_engine_tunes_is_refused(data, split_table):
    tuned = {"tree": {**METHODS["tree"], "tune": {"grid": {"estimator__max_depth": [1, 2]}}}}
    with pytest.raises(ValueError, match=r"\['tree'\] are tuned by the engine"):
        time_methods(ViewsTask(), data, split_table, tuned)


def test_splits_naming_an_unprepared_dataset_are_refused(data, split_table):
    with pytest.raises(ValueError, match=r"data set\(s\) \['SYN'\] that were not prepared"):
        time_methods(ViewsTask(), {"OTHER": data["SYN"]}, split_table, METHODS)


def test_timing_splits_keeps_table_order_per_dataset(split_table):
    two = pd.concat([split_table.assign(dataset="B"), split_table], ignore_index=True)
    chosen = timing_splits(two, 1)
    assert chosen["dataset"].tolist() == ["B", "SYN"]
    assert chosen[["repeat", "fold"]].values.tolist() == [[0, 0], [0, 0]]


# ------------------------------------------------------------- the shared pipeline node
def _stage(data, split_table, timing):
    from multiview_lab.pipelines.training.nodes import time_stage

    return time_stage(
        data,
        split_table,
        METHODS,
        {},
        timing,
        {"blas_threads": 1},
        pd.DataFrame(),
        pipeline="syn",
        make_task=lambda protocol: ViewsTask(),
    )


def test_stage_node_reads_n_splits_and_methods(data, split_table):
    out = _stage(data, split_table, {"n_splits": 2, "methods": ["logreg"]})
    assert out["method"].tolist() == ["logreg", "logreg"] and out["fold"].tolist() == [0, 1]
    assert _stage(data, split_table, None)["method"].tolist() == ["tree", "logreg"]  # default 1


def test_stage_node_skips_with_zero_splits_and_names_unknown_keys(data, split_table):
    skipped = _stage(data, split_table, {"n_splits": 0})
    assert skipped.empty and {"dataset", "method", *TIMING_STUDY_COLUMNS} <= set(skipped.columns)
    with pytest.raises(ValueError, match=r"unknown timing key\(s\) \['repeats'\]"):
        _stage(data, split_table, {"repeats": 3})


def test_time_left_costs_each_remaining_fit_at_its_methods_mean():
    from multiview_lab.protocol.registry import Method
    from multiview_lab.protocol.timing import _left

    slow, fast, new = (Method(n, "ConcatViews") for n in ("slow", "fast", "new"))
    todo = [({}, slow), ({}, fast), ({}, new)]
    assert _left(todo, {"slow": [10.0, 30.0], "fast": [1.0]}, per_item=5.0) == 20 + 1 + 5


def test_fit_warnings_are_logged_once_per_site_not_raised(data, split_table, caplog, recwarn):
    """As the engine does for its units: the first fit's warning is logged, the others counted."""
    from tests.protocol.slow_task import WarningViewsTask

    with caplog.at_level("WARNING", logger="multiview_lab.protocol.unit_warnings"):
        out = time_methods(WarningViewsTask(), data, split_table, METHODS, n_splits=2)
    assert len(out) == 4 and not [w for w in recwarn if "stopped early" in str(w.message)]
    lines = [r.getMessage() for r in caplog.records]
    first = [m for m in lines if "stopped early" in m and "in unit" in m]
    counted = [m for m in lines if "2 of 2 units computed raised UserWarning" in m]
    assert len(first) == 2 and len(counted) == 2  # one site per method, then its count
