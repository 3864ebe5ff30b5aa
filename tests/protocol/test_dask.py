"""The Dask backend on a real 2-worker LocalCluster: same tables as joblib, data sent once,
and a worker killed mid-run loses only its units."""

import os
import signal
import threading
import time

import pandas as pd
import pytest

from multiview_lab.protocol import DaskBackend, ViewsTask, run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.protocol.conftest import METHODS
from tests.protocol.slow_task import SlowViewsTask

pytestmark = pytest.mark.slow
TIMING = list(TIMING_COLUMNS)


@pytest.fixture(scope="module")
def backend():
    backend = DaskBackend(n_workers=2)
    yield backend
    backend.close()


def test_dask_gives_the_local_tables_and_sends_the_data_once(data, split_table, backend):
    local = run_experiment(ViewsTask(), data, split_table, METHODS, execution={"n_jobs": 2})
    dask = run_experiment(ViewsTask(), data, split_table, METHODS, backend=backend)
    pd.testing.assert_frame_equal(
        local.results.drop(columns=TIMING), dask.results.drop(columns=TIMING)
    )
    assert sorted(local.models) == sorted(dask.models)
    scattered, per_unit = backend.scattered_bytes, list(backend.payload_bytes)
    # the same data set again (a second training node): not scattered again
    run_experiment(ViewsTask(), data, split_table.iloc[:2], METHODS, backend=backend)
    assert backend.scattered_bytes == scattered
    # what travels per unit is the split and the method, far smaller than the data
    assert max(per_unit) < scattered / 5
    first, second = per_unit, backend.payload_bytes[len(per_unit) :]
    assert max(second) <= max(first)  # does not grow with the number of units


def test_a_killed_worker_loses_only_its_units(data, split_table, backend):
    task = SlowViewsTask(seconds=0.4)
    pids = backend.client.run(os.getpid)
    victim = sorted(pids.values())[0]

    def kill_soon():
        time.sleep(1.0)  # a few units are running or done
        os.kill(victim, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    out = run_experiment(task, data, split_table, METHODS, backend=backend, label="kill test")
    killer.join()
    assert victim not in backend.client.run(os.getpid).values()  # the worker did die
    local = run_experiment(ViewsTask(), data, split_table, METHODS, execution={"n_jobs": 1})
    pd.testing.assert_frame_equal(
        local.results.drop(columns=TIMING), out.results.drop(columns=TIMING)
    )


def test_a_data_set_of_the_same_name_but_other_data_is_sent_again(data, split_table, backend):
    """Two experiments on one cluster (two pipelines of a run) whose data sets share a name:
    each unit sees its own data, not the copy scattered first."""
    other = {"SYN": {**data["SYN"], "y": (data["SYN"]["y"] + 1) % 3}}
    first = run_experiment(ViewsTask(), data, split_table, METHODS, backend=backend)
    second = run_experiment(ViewsTask(), other, split_table, METHODS, backend=backend)
    local = run_experiment(ViewsTask(), other, split_table, METHODS, execution={"n_jobs": 1})
    pd.testing.assert_frame_equal(
        local.results.drop(columns=TIMING), second.results.drop(columns=TIMING)
    )
    assert not first.results["accuracy"].equals(second.results["accuracy"])


def test_shared_inner_cvs_run_on_dask_as_locally(data, split_table, backend):
    """``tune.once_per``: the shared CVs are sent to the cluster like units and give the
    local tables (chosen points, CV scores, ``tuned_on``, scores)."""
    methods = {
        "tree": {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
            "tune": {
                "grid": {"params": [{"max_depth": d} for d in (1, 2, 4)]},
                "folds": 3,
                "once_per": ["dataset", "repeat"],
            },
        }
    }
    local = run_experiment(ViewsTask(), data, split_table, methods, execution={"n_jobs": 1})
    dask = run_experiment(ViewsTask(), data, split_table, methods, backend=backend)
    timing = [*TIMING, "shared_cv_cpu_time_s"]
    pd.testing.assert_frame_equal(
        local.results.drop(columns=timing), dask.results.drop(columns=timing)
    )
    assert (dask.results["tuned_on"] == "fold=0").all()
    # the CV's cost is on its reference unit's rows only (first fold of each repeat)
    assert (dask.results["shared_cv_cpu_time_s"].notna() == (dask.results["fold"] == 0)).all()
