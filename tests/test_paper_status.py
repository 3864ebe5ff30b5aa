"""benchmarks/paper_status.py: the per-method summary of a run's cache status."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def paper_status():
    spec = importlib.util.spec_from_file_location(
        "paper_status", ROOT / "benchmarks/paper_status.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_counts_and_projects_per_cost_group(paper_status):
    """Units left are costed at their own group's measured mean (train_pct 10: 10 s, 90: 30 s),
    a group with nothing measured from the other sizes, shared CVs apart."""
    rows = []
    for pct, cpu, n_done, n_left in ((10, 10.0, 2, 2), (90, 30.0, 1, 3), (50, None, 0, 1)):
        for i in range(n_done + n_left):
            done = i < n_done
            rows.append(
                {"stage_name": "g/p", "method": "A", "dataset": "d", "train_pct": pct,
                 "split": i, "seed": 0, "stage": "unit", "status": "cached" if done else "to run",
                 "cpu_time_s": cpu if done else np.nan}
            )  # fmt: skip
    rows.append(
        {"stage_name": "g/p", "method": "A", "dataset": "d", "train_pct": 10, "split": 0,
         "seed": 0, "stage": "shared CV", "status": "cached", "cpu_time_s": 100.0}
    )  # fmt: skip
    rows.append(
        {"stage_name": "g/p", "method": "B", "dataset": "d", "train_pct": 10, "split": 0,
         "seed": 0, "stage": "unit", "status": "waiting", "cpu_time_s": np.nan}
    )  # fmt: skip
    # C: a shared CV half run (3 of its 25 grid points cached): the grid columns that only CV
    # rows have are not cost groups (the units' projection still works)
    for i, done in enumerate((True, True, False)):
        rows.append(
            {"stage_name": "g/p", "method": "C", "dataset": "d", "train_pct": 10, "split": i,
             "seed": 0, "stage": "unit", "status": "cached" if done else "to run",
             "cpu_time_s": 5.0 if done else np.nan}
        )  # fmt: skip
    rows.append(
        {"stage_name": "g/p", "method": "C", "dataset": "d", "train_pct": 50, "split": 0,
         "seed": 0, "stage": "shared CV", "status": "to run", "cpu_time_s": 12.0,
         "grid_points": 25, "grid_points_cached": 3}
    )  # fmt: skip
    table = paper_status.summarise(pd.DataFrame(rows)).set_index("method")
    c = table.loc["C"]
    assert (c["cv_points"], c["shared_cvs"], table.loc["A", "cv_points"]) == ("3/25", "0/1", "")
    # one unit at its group's 5 s, the CV's 22 points left at its 3 cached points' 4 s each
    assert c["left_cpu_h"] == pytest.approx((5.0 + 22 * 4.0) / 3600)
    assert c["done_cpu_h"] == pytest.approx((2 * 5.0 + 12.0) / 3600)  # the 3 points' 12 s too
    a = table.loc["A"]
    assert (a["units"], a["cached"], a["to_run"], a["shared_cvs"]) == (9, 3, 6, "1/1")
    assert a["done_cpu_h"] == pytest.approx((2 * 10 + 30 + 100) / 3600)
    # train_pct 50, nothing measured: on the power law through 10 % (10 s) and 90 % (30 s)
    at_50 = 10 * (50 / 10) ** (math.log(3) / math.log(9))
    assert a["left_cpu_h"] == pytest.approx((2 * 10 + 3 * 30 + 1 * at_50) / 3600)
    b = table.loc["B"]
    assert b["waiting"] == 1 and np.isnan(b["left_cpu_h"])  # nothing measured: no projection
