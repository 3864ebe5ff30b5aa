"""A timing study: every method fitted and scored on the same splits, one after another.

The units of an experiment record ``fit_time_s`` and ``score_time_s``, but they run in parallel
workers, resumed over several sessions, under whatever else shares the cores: their wall times
compare methods under different loads. A paper's timing table (MIML-GP's Table 4: "training and
testing time ... on a 2.7 GHz PC") compares methods under the same conditions. This module
gives that: on the first ``n_splits`` splits of each data set, every method is built as
registered, fitted and scored in this one process, one method after the other, with a fixed
number of BLAS threads, and both the wall and the CPU seconds (``time.process_time``: this
process, every thread) of ``fit`` and of scoring are recorded. The CPU seconds are the
comparable figure: they do not grow with the load of other processes, the wall seconds do (the
rows record the 1-minute load average when each fit started).

A method is timed as its ``fit`` runs, its own parameter selection included (MIML-GP's δ by
inner CV, MIMLSVM's C and γ). A method the engine tunes (``tune:``) is refused: its chosen
parameters differ by split, so register the chosen ones as a method of their own to time it.

Nothing here is cached and nothing is part of a unit's key: the timings are the measurement.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from multiview_lab.protocol.registry import Method, is_enabled, parse_methods
from multiview_lab.protocol.splits import key_columns
from multiview_lab.protocol.unit_warnings import WarningTally, call_recording

logger = logging.getLogger(__name__)

#: the measured columns of a timing row
TIMING_STUDY_COLUMNS = ("fit_time_s", "fit_cpu_s", "score_time_s", "score_cpu_s", "load_1min")


def _timed(call, *args) -> tuple[float, float, list]:
    """The wall seconds and the CPU seconds (this process, every thread) of ``call(*args)``,
    and the warnings it raised (:func:`~multiview_lab.protocol.unit_warnings.call_recording`)."""
    wall, cpu = time.perf_counter(), time.process_time()
    _, caught = call_recording(call, *args)
    return time.perf_counter() - wall, time.process_time() - cpu, caught


def timing_splits(splits: pd.DataFrame, n_splits: int) -> pd.DataFrame:
    """The first ``n_splits`` rows of each data set of a split table, in table order."""
    if int(n_splits) < 1:
        raise ValueError(f"timing: n_splits must be >= 1; got {n_splits!r}.")
    return splits.groupby("dataset", sort=False).head(int(n_splits)).reset_index(drop=True)


def time_methods(
    task,
    datasets: Mapping[str, Any],
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    *,
    n_splits: int = 1,
    only: Sequence[str] | None = None,
    blas_threads: int | None = 1,
    label: str = "timing",
) -> pd.DataFrame:
    """Time every method's ``fit`` and scoring on the first ``n_splits`` splits of each data set.

    Parameters
    ----------
    task : multiview_lab.protocol.Task
        How a split meets an estimator (as for :func:`multiview_lab.protocol.run_experiment`).
    datasets : mapping
        Data set name -> prepared data set.
    splits : DataFrame
        The split table (:func:`multiview_lab.protocol.split_table`).
    methods : mapping
        The method registry (entries or :class:`~multiview_lab.protocol.Method`); disabled
        entries are skipped.
    n_splits : int, default=1
        How many splits of each data set (the first ones of the table).
    only : list of str, optional
        Time these methods only (default: every enabled one), in registry order.
    blas_threads : int or None, default=1
        BLAS threads during each fit and scoring (None: the library's default).
    label : str
        The log's prefix.

    Returns
    -------
    DataFrame
        One row per (split, method): the split's key columns, ``method``, ``n_train``,
        ``n_test`` and :data:`TIMING_STUDY_COLUMNS`. Rows follow the splits, methods in
        registry order within a split.
    """
    entries = {str(k): v for k, v in dict(methods or {}).items() if is_enabled(v)}
    if only is not None:
        unknown = sorted(set(only) - set(entries))
        if unknown:
            raise ValueError(
                f"{label}: method(s) {unknown} to time are not enabled in the registry "
                f"({sorted(entries)})."
            )
        entries = {k: v for k, v in entries.items() if k in set(only)}
    if not entries:
        raise ValueError(f"{label}: no method to time: the registry is empty.")
    raw = {k: v for k, v in entries.items() if not isinstance(v, Method)}
    parsed = parse_methods(raw, task.method_options) if raw else {}
    parsed = {k: v if isinstance(v, Method) else parsed[k] for k, v in entries.items()}
    tuned = [name for name, m in parsed.items() if m.tune]
    if tuned:
        raise ValueError(
            f"{label}: method(s) {tuned} are tuned by the engine (tune:), so their parameters "
            "differ by split; register the chosen parameters as a method of their own to time it."
        )
    unknown = sorted(set(splits["dataset"]) - set(datasets))
    if unknown:
        raise ValueError(f"{label}: the splits name data set(s) {unknown} that were not prepared.")
    chosen = timing_splits(splits, n_splits)
    keys = key_columns(chosen)
    plan = [
        (split, method)
        for split in chosen.to_dict("records")
        for method in parsed.values()
        if task.applies(method, split)
    ]
    if not plan:
        raise ValueError(f"{label}: no method applies to the chosen splits.")
    logger.info(
        "%s: %d fit(s) of %d method(s) on %d split(s), one after another in this process "
        "(%s BLAS thread(s)).",
        label,
        len(plan),
        len(parsed),
        len(chosen),
        blas_threads or "default",
    )
    rows: list[dict[str, Any]] = []
    spent: dict[str, list[float]] = {}  # method -> wall seconds of its fits and scorings so far
    # the fits' warnings, logged as the engine logs its units' (once per site, then counted)
    tallies = {name: WarningTally(f"{label} {name}") for name in parsed}
    start = time.perf_counter()
    for i, (split, method) in enumerate(plan):
        data = datasets[split["dataset"]]
        load = os.getloadavg()[0]
        with threadpool_limits(limits=blas_threads):
            model = method.build(int(split["seed"]))
            fit_wall, fit_cpu, fit_warned = _timed(task.fit, model, data, split, method)
            score_wall, score_cpu, score_warned = _timed(task.score, model, data, split, method)
        tallies[method.name].add(
            {k: split[k] for k in keys}, list(dict.fromkeys(fit_warned + score_warned))
        )
        test = split.get("test")
        rows.append(
            {
                **{k: split[k].item() if hasattr(split[k], "item") else split[k] for k in keys},
                "method": method.name,
                "n_train": len(split["train"]),
                "n_test": 0 if test is None else len(test),
                "fit_time_s": fit_wall,
                "fit_cpu_s": fit_cpu,
                "score_time_s": score_wall,
                "score_cpu_s": score_cpu,
                "load_1min": load,
            }
        )
        spent.setdefault(method.name, []).append(fit_wall + score_wall)
        elapsed = time.perf_counter() - start
        logger.info(
            "%s: %s on %s: fit %.1f CPU s, scoring %.2f CPU s (%d/%d, %.1f min, ~%.1f min left).",
            label,
            method.name,
            ", ".join(f"{k}={split[k]}" for k in keys if k != "method"),
            fit_cpu,
            score_cpu,
            i + 1,
            len(plan),
            elapsed / 60,
            _left(plan[i + 1 :], spent, elapsed / (i + 1)) / 60,
        )
    for tally in tallies.values():
        tally.summarise()
    return pd.DataFrame(rows)


def _left(todo, spent: Mapping[str, list[float]], per_item: float) -> float:
    """Seconds left: each remaining (split, method) at its method's mean so far (the methods'
    costs differ by orders of magnitude), a method not timed yet at the mean of every item."""
    return sum(
        sum(spent[m.name]) / len(spent[m.name]) if m.name in spent else per_item for _, m in todo
    )
