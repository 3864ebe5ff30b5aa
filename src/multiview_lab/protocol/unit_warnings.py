"""Warnings raised inside units: recorded where the unit runs, logged once per method.

A unit runs in a joblib worker or on a Dask worker, where a warning is printed to that process's
stderr: a method whose every fit warns the same thing (MIML-GP stopping at the base env's
``max_em``, a solver at its iteration limit) fills the console with one identical line per unit
and interleaves it with the progress lines, or, on a cluster, hides it in worker logs.
:func:`call_recording` runs a unit under :func:`warnings.catch_warnings` (the active filters
apply: an ``ignore`` filter still ignores, ``-W error`` still raises) and returns what it
caught; :class:`WarningTally`, in the driver, logs each warning site (category, file, line)
the first time a unit of the method raises it and, when the method's units are done, how many
of them raised it.

This module is run by the engine, not by a unit, so it is in no unit's code closure: editing it
re-keys no cached unit.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaughtWarning:
    """One warning a unit raised (plain strings, so it travels back from any worker)."""

    category: str
    message: str
    filename: str
    lineno: int

    @property
    def site(self) -> tuple[str, str, int]:
        return self.category, self.filename, self.lineno

    def where(self) -> str:
        path = Path(self.filename)
        return f"{path.parent.name}/{path.name}:{self.lineno}"


def call_recording(fn: Callable, *args: Any) -> tuple[Any, list[CaughtWarning]]:
    """``fn(*args)`` and the warnings it raised (each distinct one once, in order)."""
    with warnings.catch_warnings(record=True) as caught:
        out = fn(*args)
    seen: dict[CaughtWarning, None] = {}
    for w in caught:
        seen.setdefault(
            CaughtWarning(
                category=w.category.__name__,
                message=str(w.message),
                filename=str(w.filename),
                lineno=int(w.lineno or 0),
            )
        )
    return out, list(seen)


def _describe(unit: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in unit.items() if k not in ("method", "seed"))


class WarningTally:
    """Count, per warning site, the units of one method (or stage) that raised it.

    Parameters
    ----------
    label : str
        The prefix of the log lines (the engine's label, e.g. ``"miml MIML-GP"``).
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.units = 0
        self._sites: dict[tuple[str, str, int], list] = {}

    def add(self, unit: Mapping[str, Any], caught: list[CaughtWarning]) -> None:
        """Record one finished unit's warnings; log a site the first time it appears."""
        self.units += 1
        for site in dict.fromkeys(w.site for w in caught):
            first = next(w for w in caught if w.site == site)
            entry = self._sites.get(site)
            if entry is None:
                self._sites[site] = [1, first]
                logger.warning(
                    "%s: %s (%s) in unit %s: %s [further units' warnings from this line are "
                    "counted and summarised when the method's units are done]",
                    self.label, first.category, first.where(), _describe(unit), first.message,
                )  # fmt: skip
            else:
                entry[0] += 1

    def summarise(self) -> None:
        """One line per site that more than one unit raised."""
        for count, first in self._sites.values():
            if count > 1:
                logger.warning(
                    "%s: %d of %d units computed raised %s (%s), e.g. %s",
                    self.label, count, self.units, first.category, first.where(), first.message,
                )  # fmt: skip
