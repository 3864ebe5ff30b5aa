"""Cost of each paper protocol: one timed unit per method and cost group, projected (not a test).

For every pipeline named, the data preparation of ``--env`` (default ``paper``) runs once through
a real KedroSession; then, for every training stage and every registered method, one unit per
*cost group* is run in this process exactly as the engine runs it
(:func:`multiview_lab.protocol.unit.run_unit`: the inner-CV tuning, the fit, the scoring and
the task's extra outputs, with the execution block's BLAS limit) and timed.

A cost group is a value of the split table's keys that change the work (data set, training
size, ...); the repetition keys (``draw``, ``fold``, ``repeat``, ``run``, ``split``, ``task``,
``choice``, ``sources``: the same work on other rows) are left out, and ``--per-group`` units
of each group are timed (the first ones of the table); ``--sample`` times only some values of
one key and interpolates the others linearly. A method tuned by inner CV over a grid larger
than ``--tune-points`` is timed in parts (the inner CV of a few grid points on every inner
fold, and the final fit) and its unit projected to the whole grid: the inner fits of one grid
point cost the same whatever the other points are. The projection multiplies each group's mean unit time by its number of
units: the protocol's CPU-hours, and its wall time on 2 (and N) cores as a longest-first list
schedule of the units; methods marked ``distributed`` parallelise themselves and run one after
another on the driver, so they add their own time.

Units are timed in CPU seconds of this process (``time.process_time``: one BLAS thread per
unit, so on an idle core this is the wall time, and other jobs sharing the cores do not inflate
it); a ``distributed`` method, whose work runs in other processes, in wall seconds.

Baseline measured in the same run: the unit time of each stage's cheapest method, printed as
ratios (``x cheapest``), so a slower machine moves every figure but not the ratios.

Usage::

    python benchmarks/bench_paper_cost.py [--pipelines gbc miml ...] [--env paper]
        [--per-group 1] [--sample train_pct=10,50,90] [--out table.csv]

on an otherwise idle machine (it prints one line per timed unit; at the paper settings a gbc
unit with its 25-point inner CV takes minutes).
"""

from __future__ import annotations

import argparse
import heapq
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")

from _stages import REPETITION_KEYS, prepare_stages, stage_units  # noqa: E402

from multiview_lab.protocol.execution import check_execution  # noqa: E402
from multiview_lab.protocol.sharing import shared_groups  # noqa: E402
from multiview_lab.protocol.splits import key_columns  # noqa: E402
from multiview_lab.protocol.unit import _tune, run_unit  # noqa: E402

PIPELINES = ["pbmvboost", "gbc", "miml", "memd", "mvfs"]
CORES = (2, 8, 32, 128)


def makespan(durations, n_workers: int) -> float:
    """Longest-processing-time-first list schedule of independent units on ``n_workers``."""
    loads = [0.0] * n_workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def _clock(distributed: bool):
    """CPU seconds of this process (all its threads: unaffected by other jobs sharing the
    cores), or wall seconds for a method that sends its work to other processes."""
    return time.perf_counter if distributed else time.process_time


def time_unit(task, method, data, split, unit, blas, tune_points: int) -> tuple[float, float]:
    """Seconds of one unit as the engine runs it (CPU seconds, see :func:`_clock`), as
    ``(inner CV, final fit and scoring)``. A method whose ``tune`` grid has more than
    ``tune_points`` points has its inner CV timed on ``tune_points`` grid points (spread over
    the grid, each fitted on every inner fold) and scaled to the whole grid; the final fit is at
    the first point."""
    inject = {"backend": "local"} if method.distributed else None
    clock = _clock(method.distributed)
    grid = method.grid()
    with threadpool_limits(limits=blas):
        if not method.tune:
            start = clock()
            run_unit(task, method, data, split, unit, blas, False, inject)
            return 0.0, clock() - start
        picks = grid
        if len(grid) > tune_points:
            picks = [grid[i] for i in np.linspace(0, len(grid) - 1, tune_points).astype(int)]
        inner = 0.0
        for point in picks:
            one = replace(method, tune={**method.tune, "grid": {k: [v] for k, v in point.items()}})
            start = clock()
            _tune(task, one, data, split, int(unit["seed"]))
            inner += clock() - start
        final = replace(method, tune=None, params={**method.params, **grid[0]})
        start = clock()
        run_unit(task, final, data, split, unit, blas, False, inject)
        return inner * len(grid) / len(picks), clock() - start


def _n_inner_cvs(members, keys) -> int:
    """How many inner CVs the engine runs for these units: one per unit, or one per group of
    ``tune.once_per`` (grouped as the engine groups them, :func:`shared_groups`), none
    without ``tune``."""
    method = members[0][1]
    if not method.tune:
        return 0
    groups = shared_groups(members, keys)
    return len(groups[method.name]) if groups else len(members)


def time_stage(
    stage: dict,
    execution: dict,
    per_group: int,
    group_by=None,
    sample=None,
    tune_points=2,
    only=None,
) -> pd.DataFrame:
    """One row per (method, cost group): units, timed units, mean seconds per unit.

    ``sample = (key, values)``: only the groups whose ``key`` is in ``values`` are timed; the
    others get the time interpolated linearly in ``key`` between the timed groups of the same
    method and other keys (``timed = 0`` in the table).
    """
    units, task = stage_units(stage)
    keys = key_columns(stage["splits"])
    group_keys = group_by or [k for k in keys if k not in REPETITION_KEYS]
    blas = check_execution(execution)["blas_threads"]
    groups: dict[tuple, list] = {}
    for unit, method, split in units:
        g = (method.name, *(unit.get(k) for k in group_keys))
        groups.setdefault(g, []).append((unit, method, split))
    rows = []
    skey, svalues = sample if sample else (None, None)
    for g, members in groups.items():
        if only and g[0] not in only:
            continue
        seconds = []
        if skey is not None and skey in group_keys:
            if float(members[0][0][skey]) not in svalues:
                rows.append(
                    {"stage": stage["label"], "method": g[0],
                     **dict(zip(group_keys, g[1:], strict=True)), "units": len(members),
                     "timed": 0, "unit_s": float("nan"), "cv_s": float("nan"),
                     "fit_s": float("nan"), "inner_cvs": _n_inner_cvs(members, keys),
                     "distributed": members[0][1].distributed}
                )  # fmt: skip
                continue
        for unit, method, split in members[:per_group]:
            data = stage["datasets"][unit["dataset"]]
            seconds.append(time_unit(task, method, data, split, unit, blas, tune_points))
        row = {"stage": stage["label"], "method": g[0], **dict(zip(group_keys, g[1:], strict=True))}
        cv_s = sum(c for c, _ in seconds) / len(seconds)
        fit_s = sum(f for _, f in seconds) / len(seconds)
        row.update(
            units=len(members),
            timed=len(seconds),
            unit_s=cv_s + fit_s,  # a unit with its own inner CV
            cv_s=cv_s,
            fit_s=fit_s,
            inner_cvs=_n_inner_cvs(members, keys),
            distributed=members[0][1].distributed,
        )
        rows.append(row)
        print(
            f"  {stage['label']} {g[0]} {dict(zip(group_keys, g[1:], strict=True))}: "
            f"{row['unit_s']:.2f} s/unit ({cv_s:.2f} s inner CV) x {row['units']} units, "
            f"{row['inner_cvs']} inner CVs",
            flush=True,
        )
    table = pd.DataFrame(rows)
    if skey is not None and skey in group_keys and table["unit_s"].isna().any():
        others = ["method", *[k for k in group_keys if k != skey]]
        parts = []
        for _, part in table.groupby(others, sort=False, dropna=False):
            timed = part[part["timed"] > 0].sort_values(skey)
            x = part[skey].astype(float).to_numpy()
            part = part.copy()
            for col in ("unit_s", "cv_s", "fit_s"):
                part[col] = np.interp(
                    x, timed[skey].astype(float).to_numpy(), timed[col].to_numpy()
                )
            parts.append(part)
        table = pd.concat(parts).sort_index()
    return table


def project(table: pd.DataFrame) -> dict:
    """CPU-hours and wall hours on N cores of the units the table stands for."""
    # the engine's tasks: every shared inner CV (tune.once_per) and every unit's fit, or, for a
    # unit with its own inner CV, both in one task
    work = table["fit_s"] * table["units"] + table["cv_s"] * table["inner_cvs"]
    local = table[~table["distributed"]]
    durations = []
    for row in local.itertuples():
        if row.inner_cvs == row.units:
            durations += [row.cv_s + row.fit_s] * int(row.units)
        else:
            durations += [row.cv_s] * int(row.inner_cvs) + [row.fit_s] * int(row.units)
    driver = float((table["distributed"] * work).sum())
    cpu = float(work.sum())
    out = {"units": int(table["units"].sum()), "cpu_h": cpu / 3600}
    for n in CORES:
        out[f"wall_h_{n}"] = (makespan(durations, n) + driver) / 3600
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", nargs="*", default=PIPELINES)
    parser.add_argument("--env", default="paper")
    parser.add_argument("--per-group", type=int, default=1)
    parser.add_argument("--group-by", nargs="*", default=None, help="override the cost keys")
    parser.add_argument(
        "--sample",
        default=None,
        help="KEY=V1,V2,...: time only these values of KEY, interpolate the others",
    )
    parser.add_argument(
        "--tune-points",
        type=int,
        default=2,
        help="time the inner CV of this many grid points and scale to the whole grid",
    )
    parser.add_argument("--methods", nargs="*", default=None, help="time only these methods")
    parser.add_argument("--out", type=Path, default=None, help="write the timing table (csv)")
    args = parser.parse_args()
    sample = None
    if args.sample:
        key, _, values = args.sample.partition("=")
        sample = (key, {float(v) for v in values.split(",")})
    logging.getLogger("multiview_lab").setLevel(logging.WARNING)
    from tests.conftest import make_project_copy

    tmp = Path(tempfile.mkdtemp(prefix="bench_paper_cost_"))
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp / 'mlflow.db'}"
    raw = [p.name for p in (ROOT / "data" / "01_raw").iterdir() if p.name != "README.md"]
    project_dir = make_project_copy(tmp / "project", raw)
    tables, summary = [], []
    try:
        for name in args.pipelines:
            start = time.perf_counter()
            stages = prepare_stages(project_dir, name, args.env)
            prep = time.perf_counter() - start
            for stage in stages:
                stage["label"] = f"{name}/{stage['label']}"
                table = time_stage(
                    stage,
                    stage["execution"],
                    args.per_group,
                    args.group_by,
                    sample,
                    args.tune_points,
                    args.methods,
                )
                if table.empty:
                    continue
                tables.append(table)
                cheapest = table.groupby("method")["unit_s"].mean().min()
                summary.append(
                    {"stage": stage["label"], "prep_s": prep, **project(table),
                     "max_x_cheapest": table["unit_s"].max() / cheapest}
                )  # fmt: skip
                prep = 0.0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    timings = pd.concat(tables, ignore_index=True)
    if args.out:
        timings.to_csv(args.out, index=False)
    per_method = (
        timings.assign(
            cpu_h=(timings["fit_s"] * timings["units"] + timings["cv_s"] * timings["inner_cvs"])
            / 3600
        )
        .groupby(["stage", "method"], sort=False)
        .agg(units=("units", "sum"), mean_unit_s=("unit_s", "mean"), cpu_h=("cpu_h", "sum"))
        .reset_index()
    )
    per_method["x_cheapest"] = per_method["mean_unit_s"] / per_method.groupby("stage")[
        "mean_unit_s"
    ].transform("min")
    fmt = {"float_format": lambda v: f"{v:.3g}", "index": False}
    print(f"\nPer method ({args.env} env; one unit timed per cost group):")
    print(per_method.to_string(**fmt))
    frame = pd.DataFrame(summary)
    print("\nPer stage: projected CPU-hours and wall hours on N cores (longest first):")
    print(frame.to_string(**fmt))
    by_pipeline = (
        frame.assign(pipeline=frame["stage"].str.split("/").str[0])
        .groupby("pipeline", sort=False)[["units", "cpu_h", *[f"wall_h_{n}" for n in CORES]]]
        .sum()
    )
    print("\nPer pipeline (stages run one after another):")
    print(by_pipeline.reset_index().to_string(**fmt))


if __name__ == "__main__":
    main()
