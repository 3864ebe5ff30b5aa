"""What the units left of a run will cost, from what its finished units cost.

A unit's *cost group* is the values of its keys that change its work (method, data set,
training size, ...; :func:`multiview_lab.protocol.engine.cost_group`): units of one group cost
about the same, units of different groups can differ by orders of magnitude. A unit left is
costed at its group's mean measured CPU time. A group with nothing measured yet is costed from
the groups that differ from it in one numeric key only (a training size, a number of sources):
through a power law ``cost = a * size ** b`` fitted by least squares on the logarithms of
their means when they have two sizes or more, and in proportion to the size when they have
one. Only a group with no such neighbour gets the mean of every measured unit.

Measured on gbc's paper run, projecting its 50 and 90 % units from its 10 % units alone: the
GBDT baseline, fitted on the labelled share, 0.34 CPU-h (measured 0.33; the mean of the 10 %
units, the rule before this one, gave 0.03); GBC, whose transductive fit costs about the same
at every labelled share, 1.64 (measured 0.48; the mean gave 0.24). With one size measured the
proportional rule errs on the side of too much; a second measured size replaces it by the fit.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping

import numpy as np

__all__ = ["CostModel"]

Group = tuple[tuple[str, Hashable], ...]


def _size(value) -> float | None:
    """``value`` as a positive finite number (a size), or None (a label, a missing value)."""
    if isinstance(value, bool):
        return None
    try:
        size = float(value)
    except (TypeError, ValueError):
        return None
    return size if math.isfinite(size) and size > 0 else None


def _same(a, b) -> bool:
    """Equal values, missing values (NaN, None, "nan") equal to one another."""
    if a == b:
        return True
    missing = {"nan", "none", ""}
    return str(a).lower() in missing and str(b).lower() in missing


class CostModel:
    """Mean measured CPU seconds per cost group, and the projection of units not yet run.

    Parameters
    ----------
    measured : iterable of (group, cpu_seconds)
        The measured units (or shared CVs): a group is a tuple of ``(key, value)`` pairs.
    """

    def __init__(self, measured: Iterable[tuple[Group, float]] = ()) -> None:
        self._sums: dict[Group, list[float]] = {}  # group -> [CPU seconds, count]
        for group, cpu in measured:
            self.add(group, cpu)

    def add(self, group: Group, cpu: float) -> None:
        """Record one more measured unit of ``group``."""
        entry = self._sums.setdefault(tuple(group), [0.0, 0])
        entry[0] += float(cpu)
        entry[1] += 1

    def __bool__(self) -> bool:
        return bool(self._sums)

    def mean(self) -> float:
        """Mean CPU seconds of every measured unit (NaN when nothing is measured)."""
        total = sum(s for s, _ in self._sums.values())
        count = sum(c for _, c in self._sums.values())
        return total / count if count else float("nan")

    def unit_cost(self, group: Group) -> float:
        """The projected CPU seconds of one unit of ``group`` (see the module docstring)."""
        group = tuple(group)
        if group in self._sums:
            total, count = self._sums[group]
            return total / count
        scaled = self._scaled(group)
        return self.mean() if scaled is None else scaled

    def projected(self, left: Mapping[Group, int]) -> float:
        """CPU seconds of the units left: ``{group: number of units}``."""
        return float(sum(n * self.unit_cost(group) for group, n in left.items() if n))

    def _scaled(self, group: Group) -> float | None:
        """The cost of ``group`` from the measured groups that differ from it in the value of
        one numeric key only, or None when there are none."""
        keys = [k for k, _ in group]
        for i, (_, value) in enumerate(group):
            size = _size(value)
            if size is None:
                continue
            points = []
            for other, (total, count) in self._sums.items():
                if [k for k, _ in other] != keys:
                    continue
                if all(_same(other[j][1], v) for j, (_, v) in enumerate(group) if j != i):
                    other_size = _size(other[i][1])
                    if other_size is not None:
                        points.append((other_size, total / count))
            if not points:
                continue
            sizes, costs = np.array(points).T
            if np.ptp(sizes) > 0:  # two sizes or more: cost = a * size ** b
                slope, intercept = np.polyfit(np.log(sizes), np.log(np.maximum(costs, 1e-9)), 1)
                return float(np.exp(intercept + slope * math.log(size)))
            return float(costs.mean() * size / sizes[0])  # one size: in proportion
        return None
