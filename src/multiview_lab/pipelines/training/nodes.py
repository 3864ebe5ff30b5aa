"""Nodes of the shared training stage: one method's units, then all methods collected.

Both are thin: the work is :func:`multiview_lab.protocol.run_experiment`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from multiview_lab.protocol import run_experiment
from multiview_lab.protocol.registry import is_enabled
from multiview_lab.protocol.sharing import apply_protocol_sharing
from multiview_lab.protocol.splits import key_columns
from multiview_lab.protocol.timing import TIMING_STUDY_COLUMNS, time_methods

logger = logging.getLogger(__name__)


def train_method(
    datasets: Mapping[str, Any],
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    protocol: Mapping[str, Any],
    execution: Mapping[str, Any],
    *,
    method: str,
    pipeline: str,
    make_task: Callable[[Mapping[str, Any]], Any],
) -> dict[str, Any]:
    """Every unit of one registered method: ``{"method", "results", "extras", "models"}``.

    A method registered in another environment's conf only (the stage has a node for every
    method of every environment) gives an empty result and a log line. ``protocol.tune_once_per``
    (keys of the split table; default null) gives every tuned method without its own
    ``tune.once_per`` that one (:mod:`multiview_lab.protocol.tuning`).
    """
    if method not in (methods or {}) or not is_enabled(methods[method]):
        logger.info("%s: method %r is not enabled in this environment; skipped.", pipeline, method)
        return {"method": method, "results": pd.DataFrame(), "extras": {}, "models": {}}
    entry = apply_protocol_sharing(methods[method], protocol)
    result = run_experiment(
        make_task(protocol),
        datasets,
        splits,
        {method: entry},
        execution=execution,
        keep_models=protocol.get("keep_models"),
        label=f"{pipeline} {method}",
    )
    return {
        "method": method,
        "results": result.results,
        "extras": result.extras,
        "models": result.models,
    }


def collect_units(
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    *units: dict[str, Any],
    extras: Sequence[str] = (),
) -> tuple:
    """The results of every method in one table, ordered as the units are (split by split, the
    methods in registry order within a split), the extra tables by name, and every kept model.

    Returns ``(results, models, *extras)``.
    """
    by_method = {u["method"]: u for u in units}
    order = [m for m in methods if m in by_method]
    frames = [by_method[m]["results"] for m in order if len(by_method[m]["results"])]
    if not frames:
        raise ValueError("no method produced results: check the registry and the splits.")
    results = pd.concat(frames, ignore_index=True)
    position = splits[key_columns(splits)].drop_duplicates().reset_index(drop=True)
    position["_position"] = range(len(position))
    models = {name: m for key in order for name, m in by_method[key]["models"].items()}
    tables = []
    for name in extras:
        parts = [by_method[m]["extras"][name] for m in order if name in by_method[m]["extras"]]
        tables.append(
            _in_unit_order(pd.concat(parts, ignore_index=True), position)
            if parts
            else pd.DataFrame()
        )
    return (_in_unit_order(results, position), models, *tables)


def _in_unit_order(frame: pd.DataFrame, position: pd.DataFrame) -> pd.DataFrame:
    """Rows of several methods' tables in the order of the units: split by split (the order of
    the split table), methods in registry order within a split (a stable sort of tables
    concatenated method by method). Tables without the split's keys keep their order."""
    keys = [k for k in position.columns if k != "_position"]
    if frame.empty or not set(keys) <= set(frame.columns):
        return frame
    return (
        frame.merge(position, on=keys, how="left", sort=False)
        .sort_values("_position", kind="stable")
        .drop(columns="_position")
        .reset_index(drop=True)
    )


def time_stage(
    datasets: Mapping[str, Any],
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    protocol: Mapping[str, Any],
    timing: Mapping[str, Any] | None,
    execution: Mapping[str, Any],
    results: pd.DataFrame,
    *,
    pipeline: str,
    make_task: Callable[[Mapping[str, Any]], Any],
) -> pd.DataFrame:
    """The stage's timing study (:func:`multiview_lab.protocol.timing.time_methods`).

    ``timing`` holds ``n_splits`` (default 1) and ``methods`` (default: every enabled one);
    BLAS threads follow ``execution.blas_threads``. ``results`` (the stage's collected results)
    is read only so that the study runs after the stage's training: its fits then do not share
    the cores with the stage's own workers. ``n_splits: 0`` skips the study: a table with the
    columns and no row.
    """
    timing = dict(timing or {})
    n_splits = int(timing.get("n_splits", 1))
    if n_splits == 0:
        logger.info("%s: timing study skipped (n_splits: 0).", pipeline)
        return pd.DataFrame(columns=["dataset", "method", *TIMING_STUDY_COLUMNS])
    unknown = sorted(set(timing) - {"n_splits", "methods"})
    if unknown:
        raise ValueError(
            f"{pipeline}: unknown timing key(s) {unknown}; allowed: ['methods', 'n_splits']."
        )
    logger.debug("%s: timing after %d result rows.", pipeline, len(results))
    return time_methods(
        make_task(protocol),
        datasets,
        splits,
        methods,
        n_splits=n_splits,
        only=timing.get("methods"),
        blas_threads=(execution or {}).get("blas_threads", 1),
        label=f"{pipeline} timing",
    )
