"""Which units share an inner CV (``tune.once_per``), and the columns that say so.

The grouping and bookkeeping side of :mod:`multiview_lab.protocol.tuning` (which holds only the
computation, :func:`~multiview_lab.protocol.tuning.run_tune_point`, so that editing this module
re-keys no cached CV). Used by the engine, the shared training node and the cost benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from multiview_lab.protocol.registry import Method


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
