"""The one method-registry format of every pipeline.

A method is registered in a pipeline's parameters as::

    methods:
      PB-MVBoost:                       # the method's name in every table and figure
        estimator: PBMVBoostClassifier  # a public name of multiview_lab.estimators, or a
                                        # dotted path (sklearn.svm.LinearSVC)
        params: {n_estimators: 100}     # constructor parameters
        tune:                           # optional: parameters chosen by inner CV (the paper's)
          grid: {lambda0: [0.1, 1.0], lambda1: [0.0, 1.0]}
          folds: 3
          metric: error                 # a column of the task's scores
          greater_is_better: false
          once_per: [dataset, train_pct]  # optional: one inner CV per group of units with
                                        # these keys, on its first split, its choice used by
                                        # all (multiview_lab.protocol.tuning)
        distributed: false              # true: the estimator parallelises itself and takes the
                                        # run's backend (and Dask client) as parameters
        enabled: true                   # false: not run (an environment can switch a method
                                        # off, since conf environments add keys, never remove)

plus the few keys a pipeline's task declares (:attr:`Task.method_options`, e.g. PB-MVBoost's
``trajectory``). Anything else is an error naming the key.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from multiview_lab.specs import build_estimator, resolve_estimator_class

#: keys every method entry may have
ENGINE_KEYS = ("estimator", "params", "tune", "distributed", "enabled")
TUNE_KEYS = ("grid", "folds", "metric", "greater_is_better", "once_per")


@dataclass(frozen=True)
class Method:
    """One registered method: its estimator, parameters, tuning grid and task options."""

    name: str
    estimator: str
    params: dict[str, Any] = field(default_factory=dict)
    tune: dict[str, Any] | None = None
    distributed: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> dict[str, Any]:
        """The entry as it was registered (what a unit's cache key covers)."""
        out: dict[str, Any] = {"estimator": self.estimator, "params": self.params}
        if self.tune:
            out["tune"] = self.tune
        if self.distributed:
            out["distributed"] = True
        return {**out, **self.options}

    def build(self, random_state: int | None = None, **params):
        """A new estimator with the registered parameters, ``params`` on top, seeded with
        ``random_state`` when it takes one and the registry does not fix it."""
        spec = {"estimator": self.estimator, "params": {**self.params, **params}}
        return build_estimator(spec, random_state=random_state)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    def grid(self) -> list[dict[str, Any]]:
        """The points of ``tune.grid`` (sorted keys, every combination, in grid order)."""
        grid = (self.tune or {}).get("grid") or {}
        keys = sorted(grid)
        return [dict(zip(keys, v, strict=True)) for v in itertools.product(*map(grid.get, keys))]


def parse_method(name: str, entry: Mapping[str, Any], options: Iterable[str] = ()) -> Method:
    """Validate one registry entry (see the module docstring) and return its :class:`Method`."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"method {name!r}: expected a mapping with 'estimator'; got {entry!r}.")
    if not name or "/" in name:
        raise ValueError(f"method name {name!r} must be non-empty and contain no '/'.")
    options = tuple(options)
    unknown = sorted(set(entry) - set(ENGINE_KEYS) - set(options))
    if unknown:
        allowed = [*ENGINE_KEYS, *options]
        raise ValueError(f"method {name!r}: unknown key(s) {unknown}; allowed: {allowed}.")
    if "estimator" not in entry:
        raise ValueError(f"method {name!r} needs an 'estimator' entry; got keys {sorted(entry)}.")
    resolve_estimator_class(str(entry["estimator"]))  # fails early, naming the estimator
    params = dict(entry.get("params") or {})
    tune = entry.get("tune")
    if tune is not None:
        tune = dict(tune)
        bad = sorted(set(tune) - set(TUNE_KEYS))
        if bad:
            raise ValueError(f"method {name!r}: unknown tune key(s) {bad}; allowed: {TUNE_KEYS}.")
        grid = tune.get("grid")
        if not isinstance(grid, Mapping) or not grid or not all(map(list, grid.values())):
            raise ValueError(f"method {name!r}: tune.grid must map parameters to value lists.")
        if int(tune.get("folds", 3)) < 2:
            raise ValueError(f"method {name!r}: tune.folds must be >= 2.")
        once = tune.get("once_per")
        if once is not None and not (
            isinstance(once, str)
            or (isinstance(once, list | tuple) and all(isinstance(k, str) for k in once))
        ):
            raise ValueError(
                f"method {name!r}: tune.once_per must be a split-table key or a list of them; "
                f"got {once!r}."
            )
    method = Method(
        name=name,
        estimator=str(entry["estimator"]),
        params=params,
        tune=tune,
        distributed=bool(entry.get("distributed", False)),
        options={k: entry[k] for k in options if k in entry},
    )
    method.build()  # unknown parameters fail here, naming them
    return method


def is_enabled(entry: Any) -> bool:
    """Whether a registry entry runs (``enabled`` absent or true)."""
    return not (isinstance(entry, Mapping) and entry.get("enabled", True) is False)


def parse_methods(
    methods: Mapping[str, Mapping[str, Any]] | None, options: Iterable[str] = ()
) -> dict[str, Method]:
    """Every enabled entry of a registry, in registry order (see :func:`parse_method`)."""
    if not methods:
        raise ValueError("no method registered: the pipeline's 'methods' entry is empty.")
    options = tuple(options)
    return {
        str(name): parse_method(str(name), entry, options)
        for name, entry in methods.items()
        if is_enabled(entry)
    }
