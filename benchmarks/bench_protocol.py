"""The experiment engine on its two backends, for every pipeline (ratios measured in one run).

For each pipeline at smoke scale (and ``pbmvboost`` at base scale with ``--base``), the data
preparation nodes run once through a real KedroSession; then every training stage of the
pipeline (all registered methods) runs through :func:`multiview_lab.protocol.run_experiment`

* on local joblib with 2 workers (the baseline),
* on Dask: a 2-worker LocalCluster with processes (started once, outside the timing; its
  start-up is printed apart),
* in-process (``n_jobs=1``), to measure the engine's own overhead per unit: wall time minus the
  units' own fit + score time.

Printed per pipeline: the Dask/joblib wall-time ratio (goal <= 1.15), the bytes scattered once
and the bytes sent per unit for the whole experiment and for its first split alone (must not
grow with the number of units),
the driver's peak Python memory on each backend (tracemalloc), the overhead per unit against
the mean fit time, and the projected wall time on N cores (the units are independent: a
longest-first list schedule of the measured unit times).

Usage: ``python benchmarks/bench_protocol.py [--base] [--pipelines pbmvboost gbc ...]``.
"""

from __future__ import annotations

import argparse
import heapq
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")

sys.path.insert(0, str(ROOT / "benchmarks"))
from _stages import prepare_stages  # noqa: E402

from multiview_lab.protocol import DaskBackend, run_experiment  # noqa: E402
from multiview_lab.protocol.unit import TIMING_COLUMNS  # noqa: E402

PIPELINES = ["pbmvboost", "gbc", "miml", "memd", "mvfs"]
TIMING = list(TIMING_COLUMNS)


def _timed(fn):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, wall, peak


def _makespan(durations, n_workers: int) -> float:
    """Longest-processing-time-first list schedule of independent units on n workers."""
    loads = [0.0] * n_workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def _stage_figures(stage, backend, results, serial: bool = True) -> dict:
    task = stage["make_task"](stage["protocol"])
    kw = dict(keep_models=stage["protocol"].get("keep_models"), label=stage["label"])
    args = (task, stage["datasets"], stage["splits"], stage["methods"])
    local, t_local, m_local = _timed(lambda: run_experiment(*args, execution={"n_jobs": 2}, **kw))
    n0 = len(backend.payload_bytes)
    scattered0 = backend.scattered_bytes
    dask, t_dask, m_dask = _timed(lambda: run_experiment(*args, backend=backend, **kw))
    per_unit = backend.payload_bytes[n0:]
    scattered = backend.scattered_bytes - scattered0
    a, b = local.results.drop(columns=TIMING), dask.results.drop(columns=TIMING)
    same = a.equals(b)
    if not same:  # say what differs: columns one side lacks, or values
        cols = sorted(set(a.columns) ^ set(b.columns)) or [
            c for c in a.columns if not a[c].equals(b[c])
        ]
        print(f"  {stage['label']}: joblib and Dask tables differ in {cols}", flush=True)
    # the same experiment on its first split only: what travels per unit must not grow
    few = stage["splits"].iloc[:1]
    n1 = len(backend.payload_bytes)
    run_experiment(task, stage["datasets"], few, stage["methods"], backend=backend, **kw)
    per_unit_half = backend.payload_bytes[n1:]
    if serial:  # in-process: wall time minus the units' own time is the engine's overhead
        out, t_serial, _ = _timed(lambda: run_experiment(*args, execution={"n_jobs": 1}, **kw))
    else:
        out, t_serial = local, float("nan")
    # one row per unit: readings (extra rows of the same fitted model) are not units
    units = out.results[out.results["method"].isin(list(stage["methods"]))]
    busy = units[TIMING].to_numpy().sum()
    n_units = len(units)
    results.append(
        {
            "stage": stage["label"],
            "units": n_units,
            "local_s": t_local,
            "dask_s": t_dask,
            "ratio": t_dask / t_local,
            "identical": same,
            "scattered_MB": scattered / 1e6,
            "bytes_per_unit": float(np.mean(per_unit)) if per_unit else 0.0,
            "bytes_per_unit_1split": float(np.mean(per_unit_half)) if per_unit_half else 0.0,
            "peak_MB_local": m_local / 1e6,
            "peak_MB_dask": m_dask / 1e6,
            "overhead_ms_per_unit": 1e3 * max(t_serial - busy, 0.0) / n_units,
            "fit_ms_per_unit": 1e3 * units["fit_time_s"].mean(),
            "unit_seconds": units[TIMING].sum(axis=1).tolist(),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", nargs="*", default=PIPELINES)
    parser.add_argument("--base", action="store_true", help="pbmvboost at base scale too")
    args = parser.parse_args()
    from tests.conftest import make_project_copy

    tmp = Path(tempfile.mkdtemp(prefix="bench_protocol_"))
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp / 'mlflow.db'}"
    raw = [p.name for p in (ROOT / "data" / "01_raw").iterdir() if p.name != "README.md"]
    project = make_project_copy(tmp / "project", raw)
    start = time.perf_counter()
    backend = DaskBackend(n_workers=2)
    startup = time.perf_counter() - start
    rows = []
    runs = [(name, "smoke") for name in args.pipelines]
    if args.base:
        runs.append(("pbmvboost", "base"))
    try:
        for name, env in runs:
            for stage in prepare_stages(project, name, env):
                stage["label"] = f"{name}/{env}/{stage['label']}"
                _stage_figures(stage, backend, rows, serial=env == "smoke")
                print(f"done {stage['label']}", flush=True)
    finally:
        backend.close()
        shutil.rmtree(tmp, ignore_errors=True)
    table = pd.DataFrame(rows)
    cols = [
        "stage", "units", "local_s", "dask_s", "ratio", "identical", "scattered_MB",
        "bytes_per_unit", "bytes_per_unit_1split", "peak_MB_local", "peak_MB_dask",
        "overhead_ms_per_unit", "fit_ms_per_unit",
    ]  # fmt: skip
    print(f"\nDask LocalCluster start-up (2 worker processes, once per run): {startup:.1f} s\n")
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print("\nProjected wall time of each stage on N cores (independent units, longest first):")
    for row in rows:
        d = row["unit_seconds"]
        total = sum(d)
        spans = {n: _makespan(d, n) for n in (2, 8, 32, 128)}
        text = ", ".join(f"N={n}: {s:.1f} s ({total / s:.1f}x)" for n, s in spans.items())
        print(f"  {row['stage']}: {total:.1f} s of unit time; {text}")
    bad = table[(table["ratio"] > 1.15) | ~table["identical"]]
    print(
        "\nGoal dask/local <= 1.15 and identical tables: "
        + ("met by every stage" if bad.empty else f"missed by {list(bad['stage'])}")
    )


if __name__ == "__main__":
    main()
