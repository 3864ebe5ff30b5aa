"""One unit of an experiment: fit one method on one split and score it.

This module is what a unit's result depends on (besides the task and the estimator): the unit
cache keys every result by the code of this module, of the task's and of the estimator's (their
import closures, :func:`multiview_lab.protocol.cache.code_fingerprint`). The scheduling, caching and
progress code of :mod:`multiview_lab.protocol.engine` is not part of that key, so editing it
keeps a multi-session paper run's cache valid.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from multiview_lab.protocol.registry import Method
from multiview_lab.protocol.tasks import Task


@dataclass
class UnitResult:
    """What one unit returns: result rows, extra tables, the fitted model if kept."""

    rows: list[dict[str, Any]]
    extras: dict[str, pd.DataFrame] = field(default_factory=dict)
    model: Any = None


def _tune(task: Task, method: Method, data, split, seed: int) -> tuple[dict, dict]:
    """The grid point of ``method.tune`` with the best mean inner-CV score on the training part.

    The training rows are split by a stratified K-fold shuffled with the unit's seed; each grid
    point is fitted on K−1 folds and scored by the task on the held-out fold (for a transductive
    task the held-out rows stay in the fit, unlabelled). Ties keep the first grid point.
    """
    tune = method.tune or {}
    metric = tune.get("metric", "accuracy")
    higher = bool(tune.get("greater_is_better", True))
    train = np.asarray(split["train"], dtype=np.int64)
    y = task.labels(data)[train]
    folds = StratifiedKFold(int(tune.get("folds", 3)), shuffle=True, random_state=seed)
    inner = [(train[a], train[b]) for a, b in folds.split(train, y)]
    best, best_score = None, None
    for point in method.grid():
        scores = []
        for tr, te in inner:
            model = method.build(seed, **point)
            fold = {**split, "train": tr, "test": te}
            task.fit(model, data, fold, method)
            out = task.score(model, data, fold, method)
            out = out if isinstance(out, Mapping) else out[0]
            if metric not in out:
                raise ValueError(
                    f"method {method.name!r}: tune.metric {metric!r} is not a score of the task "
                    f"({sorted(out)})."
                )
            scores.append(float(out[metric]))
        score = float(np.mean(scores))
        if best_score is None or (
            score > best_score + 1e-12 if higher else score < best_score - 1e-12
        ):
            best, best_score = point, score
    return dict(best), {f"cv_{metric}": best_score}


TIMING_COLUMNS = ("fit_time_s", "score_time_s", "cpu_time_s")
"""The timing columns of every result row (they vary from run to run; the rest does not)."""


def run_unit(
    task: Task,
    method: Method,
    data: Mapping[str, Any],
    split: dict[str, Any],
    unit: dict[str, Any],
    blas_threads: int | None = 1,
    keep_model: bool = False,
    inject: Mapping[str, Any] | None = None,
) -> UnitResult:
    """Fit ``method`` on one split of ``data`` and score it (no side effects).

    Each row gets the unit's timings: ``fit_time_s`` and ``score_time_s`` (wall seconds of the
    final fit and of the scoring) and ``cpu_time_s``, the CPU seconds of this process for the
    whole unit (inner CV, fit, scoring and extras). With one BLAS thread per unit that is the
    unit's cost whatever else shares the cores; a unit with several score rows repeats it on
    each.
    """
    seed = int(unit["seed"])
    cpu_start = time.process_time()
    with threadpool_limits(limits=blas_threads):
        params, tuned = ({}, {})
        if method.tune:
            params, tuned = _tune(task, method, data, split, seed)
        model = method.build(seed, **params, **(inject or {}))
        start = time.perf_counter()
        task.fit(model, data, split, method)
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        scores = task.score(model, data, split, method)
        score_time = time.perf_counter() - start
        extras = task.extras(model, data, split, method, unit)
    if inject and "client" in inject:  # a live client does not pickle: the model keeps none
        model.set_params(client=None)
    info = task.info(model)
    timing = {
        "fit_time_s": fit_time,
        "score_time_s": score_time,
        "cpu_time_s": time.process_time() - cpu_start,
    }
    scores = [scores] if isinstance(scores, Mapping) else list(scores)
    rows = [{**unit, **tuned, **info, **s, **timing} for s in scores]
    return UnitResult(rows=rows, extras=extras, model=model if keep_model else None)
