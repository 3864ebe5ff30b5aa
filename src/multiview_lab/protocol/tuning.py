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

from collections.abc import Mapping, Sequence
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
    {"cv_<metric>": its mean inner-CV score}}`` (no side effects)."""
    with threadpool_limits(limits=blas_threads):
        params, scores = _tune(task, method, data, split, int(unit["seed"]))
    return {"params": params, "scores": scores}


def apply_protocol_sharing(entry: Any, protocol: Mapping[str, Any] | None) -> Any:
    """A registry entry with ``protocol.tune_once_per`` as its ``tune.once_per`` when it is
    tuned and sets none itself (entries without ``tune``, or a protocol without the key, are
    returned as they are)."""
    shared = (protocol or {}).get("tune_once_per")
    tune = entry.get("tune") if isinstance(entry, Mapping) else None
    if shared is None or not tune or "once_per" in tune:
        return entry
    return {**entry, "tune": {**tune, "once_per": shared}}


def shared_groups(
    units: Sequence[tuple[dict, Method, dict]], keys: Sequence[str]
) -> dict[str, dict[tuple, list[int]]]:
    """Method name -> group (values of its ``tune.once_per`` keys) -> unit indices, in unit
    order, for every method whose ``tune`` has ``once_per``; the first index of a group is its
    reference unit. Raises if ``once_per`` names a key the units do not have."""
    out: dict[str, dict[tuple, list[int]]] = {}
    for i, (unit, method, _) in enumerate(units):
        once = (method.tune or {}).get("once_per")
        if once is None:
            continue
        once = [once] if isinstance(once, str) else list(once)
        unknown = sorted(set(once) - set(keys) - {"method"})
        if unknown:
            raise ValueError(
                f"method {method.name!r}: tune.once_per names {unknown}, which are not keys of "
                f"the split table {list(keys)}."
            )
        out.setdefault(method.name, {}).setdefault(tuple(unit[k] for k in once), []).append(i)
    return out


def tuned_on(reference: Mapping[str, Any], once_per: Sequence[str] | str) -> str:
    """The reference unit's keys outside the group, e.g. ``"split=0"`` (the ``tuned_on``
    column of the group's result rows)."""
    once = {once_per} if isinstance(once_per, str) else set(once_per)
    skip = once | {"method", "seed"}
    return ", ".join(f"{k}={v}" for k, v in reference.items() if k not in skip)
