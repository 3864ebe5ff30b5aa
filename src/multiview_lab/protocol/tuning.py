"""One inner cross-validation shared by a group of units (``tune.once_per``), computed grid
point by grid point.

A paper's protocol may choose a method's parameters by inner CV on every training set (GBC:
λ0 × λ1 over 5 × 5 values, 3 folds, on each of 10 splits × 9 sizes). ``tune: {once_per: [keys]}``
runs that CV once per group of units sharing the values of ``keys`` (e.g. ``[dataset, setting,
train_pct]``), on the group's first split in split-table order (its *reference* unit), and fits
every unit of the group with the chosen point. The cost of the CV is divided by the group's size
(10 splits: 10×); the cut is that the other splits use a point chosen on another training set
of the same size, which each result row states (``tuned_on``).

The engine runs such a CV as one job per grid point (:func:`run_tune_point`), each cached on
its own, and :func:`choose` picks the point. Two gains, neither changing a result:

* a point's score depends only on :func:`point_spec` (the estimator with the point's parameters,
  the task options that change a fit, the folds, the metric), the split, its seed and the data,
  not on the method's name: methods whose grids overlap share the points (GBC's 25-point
  λ0 × λ1 grid contains GBC-no-consensus's λ0 = 0 row and GBC-no-graph's λ1 = 0 column, so
  their CVs cost nothing once GBC's has run);
* an interrupted run loses at most the points in flight, not whole CVs (one of GBC's is 75
  fits).

A point is scored by the inner CV of :mod:`multiview_lab.protocol.unit` on a one-point grid,
and :func:`choose` applies its rule (the best mean score, ties to the first point in grid
order), so the choice is the one an unshared ``tune`` makes on the same split and seed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from threadpoolctl import threadpool_limits

from multiview_lab.protocol.registry import Method
from multiview_lab.protocol.tasks import Task
from multiview_lab.protocol.unit import _tune


def tune_metric(method: Method) -> tuple[str, bool]:
    """``(metric, greater_is_better)`` of ``method.tune`` (defaults: accuracy, higher)."""
    tune = method.tune or {}
    return str(tune.get("metric", "accuracy")), bool(tune.get("greater_is_better", True))


def point_spec(task: Task, method: Method, point: Mapping[str, Any]) -> dict[str, Any]:
    """What, besides the split, its seed and the data, decides the inner-CV score of one grid
    point: the estimator and its parameters with the point on top, the method options that
    change a fit (the task's ``fit_options``; every option when the task does not name them),
    the number of folds and the metric. Not the method's name."""
    fit_options = getattr(task, "fit_options", None)
    options = {k: v for k, v in method.options.items() if fit_options is None or k in fit_options}
    return {
        "estimator": method.estimator,
        "params": {**method.params, **point},
        "options": options,
        "folds": int((method.tune or {}).get("folds", 3)),
        "metric": tune_metric(method)[0],
    }


def run_tune_point(
    task: Task,
    method: Method,
    data: Mapping[str, Any],
    split: dict[str, Any],
    unit: dict[str, Any],
    point: Mapping[str, Any],
    blas_threads: int | None = 1,
) -> dict[str, Any]:
    """The mean inner-CV score of one grid point of ``method.tune`` on one split:
    ``{"point", "score", "cpu_time_s", "computed_for"}`` (``computed_for``: the method whose CV
    ran it, so that a point shared by several methods' CVs is costed once). No side effects."""
    one = replace(method, tune={**method.tune, "grid": {k: [v] for k, v in point.items()}})
    start = time.process_time()
    with threadpool_limits(limits=blas_threads):
        _, scores = _tune(task, one, data, split, int(unit["seed"]))
    return {
        "point": dict(point),
        "score": float(scores[f"cv_{tune_metric(method)[0]}"]),
        "cpu_time_s": time.process_time() - start,
        "computed_for": method.name,
    }


def choose(method: Method, points: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A shared CV's result from the results of its grid points (in ``method.grid()`` order):
    ``{"params": best point, "scores": {"cv_<metric>": its mean score}, "cpu_time_s": the CPU
    seconds of the points computed for this method}``. The rule of the unshared inner CV: the
    best mean score, a later point only when better by more than 1e-12."""
    metric, higher = tune_metric(method)
    best, best_score = None, None
    for out in points:
        score = float(out["score"])
        if best_score is None or (
            score > best_score + 1e-12 if higher else score < best_score - 1e-12
        ):
            best, best_score = out["point"], score
    cpu = sum(float(p["cpu_time_s"]) for p in points if p.get("computed_for") == method.name)
    return {"params": dict(best), "scores": {f"cv_{metric}": best_score}, "cpu_time_s": cpu}
