"""One inner cross-validation shared by a group of units (``tune.once_per``).

A paper's protocol may choose a method's parameters by inner CV on every training set (GBC:
λ0 × λ1 over 5 × 5 values, 3 folds, on each of 10 splits × 9 sizes). ``tune: {once_per: [keys]}``
runs that CV once per group of units sharing the values of ``keys`` (e.g. ``[dataset, setting,
train_pct]``), on the group's first split in split-table order (its *reference* unit), and fits
every unit of the group with the chosen point. The cost of the CV is divided by the group's size
(10 splits: 10×); the cut is that the other splits use a point chosen on another training set
of the same size, which each result row states (``tuned_on``).

:func:`run_tune` is what the engine runs for a reference unit (on the backend, cached like a
unit); it calls the inner CV of :mod:`multiview_lab.protocol.unit`, so both give the same point
for the same split and seed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from threadpoolctl import threadpool_limits

from multiview_lab.protocol.registry import Method
from multiview_lab.protocol.tasks import Task
from multiview_lab.protocol.unit import _tune


def run_tune(
    task: Task,
    method: Method,
    data: Mapping[str, Any],
    split: dict[str, Any],
    unit: dict[str, Any],
    blas_threads: int | None = 1,
) -> dict[str, Any]:
    """The inner CV of ``method.tune`` on one split: ``{"params": best point, "scores":
    {"cv_<metric>": its mean inner-CV score}, "cpu_time_s": its CPU seconds in this process}``
    (no side effects)."""
    start = time.process_time()
    with threadpool_limits(limits=blas_threads):
        params, scores = _tune(task, method, data, split, int(unit["seed"]))
    return {"params": params, "scores": scores, "cpu_time_s": time.process_time() - start}
