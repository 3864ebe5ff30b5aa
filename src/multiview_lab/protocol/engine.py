"""The experiment engine: units = split × method, run once, cached, on any backend.

:func:`run_experiment` is the one loop of the project. It takes a task (how data meet an
estimator, :mod:`multiview_lab.protocol.tasks`), the data sets, a split table
(:mod:`multiview_lab.protocol.splits`) and the registered methods, and

1. forms the units: every split row × every method the task applies to, in split-table order;
2. seeds them: **every method gets the split's seed** (paired comparisons: on one split all
   methods see the same training rows and the same seed for their inner randomness);
3. looks each unit up in the resumable unit cache (``cache_dir``), then in the read-only unit
   archive (``archive_dir``, :mod:`~multiview_lab.protocol.archive`: units of earlier sessions
   kept in the repository), keyed by the unit, the method's entry, the task's settings, the
   data set's and the split's arrays, and the code the unit runs
   (:func:`multiview_lab.protocol.cache.code_fingerprint` of
   :mod:`~multiview_lab.protocol.unit`, the task's and the estimator's modules, not of this
   scheduling code): an interrupted run resumes where it stopped, a change of one method's
   code refits only that method's units;
4. runs the missing units on the backend (:mod:`multiview_lab.protocol.execution`), each with
   ``blas_threads`` BLAS threads, writing each result to the cache as it arrives (on the driver);
   methods marked ``distributed`` parallelise themselves and run on the driver with the backend;
5. logs progress with an ETA, and returns the results table (one set of column names:
   ``fit_time_s``, ``score_time_s``), the tasks' extra tables and the kept fitted models.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from multiview_lab import formatting as fmt
from multiview_lab.protocol import tuning
from multiview_lab.protocol.cache import array_fingerprint, cache_path, code_fingerprint, unit_key
from multiview_lab.protocol.costs import CostModel
from multiview_lab.protocol.execution import backend_from_config, check_execution
from multiview_lab.protocol.registry import Method, is_enabled, parse_methods
from multiview_lab.protocol.sharing import shared_groups, tuned_on
from multiview_lab.protocol.splits import REPETITION_KEYS, key_columns
from multiview_lab.protocol.tasks import Task
from multiview_lab.protocol.tuning import choose, point_spec, run_tune_point
from multiview_lab.protocol.unit import UnitResult, run_unit
from multiview_lab.protocol.unit_warnings import WarningTally, call_recording
from multiview_lab.specs import estimator_modules

logger = logging.getLogger(__name__)


@dataclass
class ExperimentResult:
    """The results table, the extra tables (name -> DataFrame) and the kept models.

    ``cpu_seconds`` is the measured cost of every unit and shared inner CV of the results,
    the cached ones included (their ``cpu_time_s`` as recorded when they ran);
    ``n_unmeasured`` counts those without a record (cached by a version before it).
    """

    results: pd.DataFrame
    extras: dict[str, pd.DataFrame]
    models: dict[str, Any]
    n_cached: int = 0
    cpu_seconds: float = 0.0
    n_unmeasured: int = 0


def _keep(keep_models: Mapping[str, Any] | None, unit: dict[str, Any], first: bool) -> bool:
    """Whether a unit's fitted model is kept: the first unit of every method (``first``,
    default true), and every unit of ``methods`` (default all) matching ``where``."""
    keep_models = dict(keep_models or {})
    if keep_models.get("first", True) and first:
        return True
    where = keep_models.get("where")
    if not where:
        return False
    methods = keep_models.get("methods")
    if methods is not None and unit["method"] not in methods:
        return False
    return all(
        unit.get(k) in list(v if isinstance(v, list | tuple) else [v]) for k, v in where.items()
    )


def model_name(unit: Mapping[str, Any]) -> str:
    """``<method>_<dataset>_<label>_<key><number>...`` (e.g. ``PB-MVBoost_MNIST1_task0_draw0``):
    the name a kept model is logged under."""
    parts = [str(unit["method"]), str(unit.get("dataset", ""))]
    for k, v in unit.items():
        if k not in ("method", "dataset", "seed"):  # a label as is, a number with its key
            parts.append(str(v) if isinstance(v, str) else f"{k}{v}")
    name = "_".join(p for p in parts if p)
    return re.sub(r"[\s/:.%\"']+", "-", name)  # characters MLflow refuses in a model name


def cost_group(unit: Mapping[str, Any]) -> tuple:
    """The values of a unit's keys that change its work (method, data set, size, ...): all but
    the seed and the :data:`~multiview_lab.protocol.splits.REPETITION_KEYS`."""
    return tuple((k, str(v)) for k, v in unit.items() if k != "seed" and k not in REPETITION_KEYS)


def _recorded_cpu(out) -> float | None:
    """The CPU seconds a finished unit (or shared CV) recorded, if any."""
    rows = getattr(out, "rows", None)
    value = (rows[0] if rows else {}).get("cpu_time_s") if rows is not None else None
    if rows is None and isinstance(out, Mapping):
        value = out.get("cpu_time_s")
    return None if value is None else float(value)


class _Progress:
    """INFO lines every ~5 % of the units (at most one per 5 s) or 60 s, and at the last one
    unless the caller sums up (``log_last=False``), with the elapsed time and an ETA.

    Units of one run can differ in cost by orders of magnitude (a gene set and a text corpus,
    n = 150 and n = 1000), so the ETA is not the mean time per unit times the units left: each
    unit left is costed at the mean recorded CPU time of the finished units of its
    :func:`cost_group` (this run's, and the cached ones', so a resumed run knows its groups from
    the start; a group with none finished yet is costed from its neighbours in size, see
    :class:`~multiview_lab.protocol.costs.CostModel`), and the sum is converted
    to wall time at the rate this run has achieved so far (wall seconds per CPU second, which
    covers the workers and whatever else shares the cores).
    """

    def __init__(
        self,
        label: str,
        groups: Sequence[tuple],
        known: Sequence[tuple[tuple, float]] = (),
        what: str = "units",
        log_last: bool = True,
    ) -> None:
        self.label, self.total, self.done, self.what = label, len(groups), 0, what
        self.log_last = log_last  # False: the caller logs its own line when all are done
        self.start = self.last = time.perf_counter()
        self.step = max(1, self.total // 20)
        self.min_interval = 5.0  # seconds: a run of quick units gets a line now and then
        self.left: dict[tuple, int] = {}
        for g in groups:
            self.left[g] = self.left.get(g, 0) + 1
        self.cost = CostModel(known)  # recorded CPU per group, and the projection
        self.run_cpu = 0.0

    def eta(self, elapsed: float) -> float:
        """Wall seconds left (see the class docstring)."""
        if not self.run_cpu:
            return elapsed / max(self.done, 1) * (self.total - self.done)
        return self.cost.projected(self.left) * elapsed / self.run_cpu

    def tick(self, group: tuple = (), cpu: float | None = None) -> None:
        self.done += 1
        if self.left.get(group):
            self.left[group] -= 1
        if cpu is not None:
            self.cost.add(group, cpu)
            self.run_cpu += cpu
        now = time.perf_counter()
        since = now - self.last
        due = since >= 60 or (self.done % self.step == 0 and since >= self.min_interval)
        last = self.done == self.total
        if not (self.log_last if last else due):
            return
        self.last = now
        elapsed = now - self.start
        logger.info(
            "%s: %d/%d %s (%s, ~%s left).",
            self.label, self.done, self.total, self.what, _duration(elapsed),
            _duration(self.eta(elapsed)),
        )  # fmt: skip


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    joblib.dump(value, tmp)
    os.replace(tmp, path)  # a run killed mid-write leaves no partial entry


def _read(path: Path):
    try:
        return joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - a damaged entry is recomputed, not fatal
        logger.warning("Cached unit %s unreadable (%s); recomputing.", path.name, exc)
        return None


def _unit_record(keys: Sequence[str], split: Mapping[str, Any], method: str) -> dict[str, Any]:
    unit: dict[str, Any] = {}
    for k in keys:
        value = split[k]
        unit[k] = value.item() if isinstance(value, np.generic) else value
        if k == "dataset":
            unit["method"] = method
    unit.setdefault("method", method)
    unit["seed"] = int(split["seed"])
    return unit


def run_experiment(
    task: Task,
    datasets: Mapping[str, Mapping[str, Any]],
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    *,
    execution: Mapping[str, Any] | None = None,
    backend=None,
    keep_models: Mapping[str, Any] | None = None,
    label: str = "experiment",
) -> ExperimentResult:
    """Run every unit (split × method) of an experiment; see the module docstring.

    Parameters
    ----------
    task : Task
        How a split of a data set meets an estimator, and how it is scored.
    datasets : mapping
        Data set name (the split table's ``dataset``) -> the data set (a mapping the task reads).
    splits : DataFrame
        The split table (:func:`multiview_lab.protocol.splits.split_table`).
    methods : mapping
        Method name -> registry entry (or :class:`~multiview_lab.protocol.Method`), in the
        order of the results.
    execution : mapping, optional
        The ``execution`` block: ``backend`` (``local`` | ``dask``), ``n_jobs``,
        ``scheduler_address``, ``n_workers``, ``threads_per_worker``, ``blas_threads`` (per
        unit; null: no limit), ``cache_dir`` (null: no unit cache), ``archive_dir`` (a unit
        archive read after the cache, :mod:`~multiview_lab.protocol.archive`; null: none),
        ``cache_only`` (true: compute nothing, raise :class:`CacheIncompleteError` unless every
        unit is in the cache or the archive) and ``refit_kept_models`` (default true: a unit
        whose model is kept runs again unless the cache holds it, since the archive keeps no
        model; false: its archived result is used and its model is not returned).
    backend : LocalBackend or DaskBackend, optional
        A backend to use instead of the one ``execution`` names.
    keep_models : mapping, optional
        Which fitted models to return: ``first`` (default true: the first unit of every
        method), plus every unit of ``methods`` (default: all) whose keys match ``where``
        (column -> allowed values).
    label : str
        Prefix of the progress lines.

    Returns
    -------
    ExperimentResult
        ``results`` (one row per unit and score row: the split's keys, ``method``, ``seed``,
        the scores, ``fit_time_s``, ``score_time_s``), ``extras`` (the tasks' extra tables,
        concatenated), ``models`` (:func:`model_name` -> fitted estimator) and ``n_cached``.
    """
    started = time.perf_counter()
    config = check_execution(execution)
    plan = _plan(task, datasets, splits, methods, config, keep_models, label)
    units, parsed, keep = plan.units, plan.parsed, plan.keep
    added: list[dict[str, Any]] = [{} for _ in units]
    if plan.groups:
        if backend is None:
            backend = backend_from_config(config)
        units = _tune_shared(task, datasets, plan, added, backend, config, label)
    cache_dir = config["cache_dir"]
    paths, outputs, n_archived = _lookup_units(task, units, plan, config)
    n_cached = sum(o is not None for o in outputs)
    todo = [i for i, o in enumerate(outputs) if o is None]
    if todo and config["cache_only"]:
        hint = (
            " Kept models are refitted unless the cache holds them: "
            "execution.refit_kept_models=false reads such units' results from the archive."
            if config["refit_kept_models"] and any(keep[i] for i in todo)
            else ""
        )
        raise CacheIncompleteError(
            f"{label}: {n_cached} of {len(units)} units in the cache or the archive; "
            f"execution.cache_only computes none of the other {len(todo)}.{hint}"
        )
    if backend is None:
        backend = backend_from_config(config)
    unfitted = sum(keep[i] and o is not None and o.model is None for i, o in enumerate(outputs))
    notes = [f"{n_archived} of them from the archive"] if n_archived else []
    if unfitted:  # their results are archived, their models are not (refit_kept_models: false)
        notes.append(
            f"{fmt.count(unfitted, 'kept model')} not refitted, execution.refit_kept_models: false"
        )
    archived = f" ({'; '.join(notes)})" if notes else ""
    logger.info(
        "%s: %s (%s), %d in the cache%s, on %s.",
        label, fmt.count(len(units), "unit"), fmt.count(len(parsed), "method"), n_cached, archived,
        backend.describe(),
    )  # fmt: skip
    progress = _Progress(
        label,
        [cost_group(units[i][0]) for i in todo],
        [(cost_group(units[i][0]), c) for i, o in enumerate(outputs) if (c := _recorded_cpu(o))],
        log_last=False,
    )
    tally = WarningTally(label)
    blas = config["blas_threads"]

    def finish(i: int, out: UnitResult, caught) -> None:
        outputs[i] = out
        if paths[i] is not None:
            _write(paths[i], out)
        tally.add(units[i][0], caught)
        progress.tick(cost_group(units[i][0]), _recorded_cpu(out))

    driver = [i for i in todo if units[i][1].distributed]
    remote = [i for i in todo if not units[i][1].distributed]
    inject = {"backend": backend.name}
    if backend.client is not None:
        inject["client"] = backend.client
    for i in driver:  # the method parallelises itself on the backend
        unit, method, split = units[i]
        given = {k: v for k, v in inject.items() if k not in method.params}
        try:
            out, caught = call_recording(
                run_unit, task, method, datasets[unit["dataset"]], split, unit, blas, keep[i], given
            )
        except Exception as exc:
            raise RuntimeError(f"{label}: unit {unit} failed: {exc}") from exc
        finish(i, out, caught)
    refs = _put_datasets(backend, {units[i][0]["dataset"] for i in remote}, datasets, plan.data_fp)
    calls = [
        (task, units[i][1], refs[units[i][0]["dataset"]], units[i][2], units[i][0], blas, keep[i])
        for i in remote
    ]
    try:
        for j, (out, caught) in backend.run(partial(call_recording, run_unit), calls):
            finish(remote[j], out, caught)
    except Exception as exc:
        tally.summarise()
        done = sum(o is not None for o in outputs)
        raise RuntimeError(
            f"{label}: a unit failed after {done} of {len(units)} units"
            f"{' (finished units are cached: rerun to resume)' if cache_dir else ''}: {exc}"
        ) from exc
    tally.summarise()
    result = _assemble(units, outputs, n_cached, added)
    logger.info(
        "%s: %s done (%d from the cache) in %s; measured cost of all of them %s%s.",
        label, fmt.count(len(units), "unit"), n_cached, _duration(time.perf_counter() - started),
        _duration(result.cpu_seconds, "CPU"),
        f" ({result.n_unmeasured} cached units without a record)" if result.n_unmeasured else "",
    )  # fmt: skip
    return result


def cache_status(
    task: Task,
    datasets: Mapping[str, Mapping[str, Any]],
    splits: pd.DataFrame,
    methods: Mapping[str, Any],
    *,
    execution: Mapping[str, Any] | None = None,
    keep_models: Mapping[str, Any] | None = None,
    label: str = "experiment",
) -> pd.DataFrame:
    """What :func:`run_experiment` with these arguments would find in its unit cache, without
    running anything: one row per unit and per shared inner CV.

    Columns: the unit's keys, ``method``, ``seed``, ``stage`` (``unit`` or ``shared CV``),
    ``status`` (``cached``, ``to run``, or ``waiting`` for a unit whose group's shared CV has
    not run, so its key is not known yet) and ``cpu_time_s`` (recorded by a cached entry;
    NaN otherwise or when it predates the record; for a shared CV still to run, the CPU of
    its grid points already cached, which ``grid_points_cached`` of ``grid_points`` counts). Same arguments as :func:`run_experiment`;
    ``execution.cache_dir`` or ``execution.archive_dir`` must be set (a unit in either is
    ``cached``).
    """
    config = check_execution(execution)
    if not (config["cache_dir"] or config["archive_dir"]):
        raise ValueError(f"{label}: cache_status needs execution.cache_dir or archive_dir.")
    plan = _plan(task, datasets, splits, methods, config, keep_models, label)
    rows = []
    refs, _, shared = _lookup_shared(task, plan, config)
    jobs, cvs = _point_jobs(
        task, plan, refs, [j for j, r in enumerate(shared) if r is None], config
    )
    unknown: set[int] = set()
    for j, ((name, group, ref), out) in enumerate(zip(refs, shared, strict=True)):
        row = {**plan.units[ref][0], "stage": "shared CV", "status": "cached"}
        if out is None:  # a CV to run: how many of its grid points are done, and their cost
            done = [jobs[k][1] for k in cvs[j] if jobs[k][1] is not None]
            row.update(status="to run", grid_points=len(cvs[j]), grid_points_cached=len(done))
            row["cpu_time_s"] = sum(p["cpu_time_s"] for p in done if p.get("computed_for") == name)
            unknown.update(plan.groups[name][group])
        else:
            row["cpu_time_s"] = out.get("cpu_time_s", np.nan)
        rows.append(row)
    units = _apply_shared(plan, refs, shared, [{} for _ in plan.units])
    _, outputs, _ = _lookup_units(task, units, plan, config)
    for i, ((unit, _, _), out) in enumerate(zip(units, outputs, strict=True)):
        status = "waiting" if i in unknown else ("to run" if out is None else "cached")
        cpu = out.rows[0].get("cpu_time_s", np.nan) if out is not None and out.rows else np.nan
        rows.append({**unit, "stage": "unit", "status": status, "cpu_time_s": cpu})
    return pd.DataFrame(rows)


def _duration(seconds: float, unit: str = "") -> str:
    """``0.4 s``, ``42 s``, ``12.5 min`` or ``3.2 h``; with ``unit="CPU"``, ``0.4 CPU s``, ...,
    ``3.20 CPU-h``."""
    cpu = f"{unit} " if unit else ""
    if seconds < 10:
        return f"{seconds:.1f} {cpu}s"
    if seconds < 120:
        return f"{seconds:.0f} {cpu}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} {cpu}min"
    return f"{seconds / 3600:.2f} {unit}-h" if unit else f"{seconds / 3600:.1f} h"


def _put_datasets(backend, names, datasets, data_fp) -> dict[str, Any]:
    """Each named data set sent to the backend once, keyed by its content (a data set of
    another experiment with the same name but other data never gets the old copy)."""
    return {
        name: backend.put(data_fp.get(name) or _data_fingerprint(datasets[name]), datasets[name])
        for name in names
    }


def _split_arrays(split: Mapping[str, Any], keys: Sequence[str]) -> str:
    """Digest of a split's index arrays (what a unit's key covers besides its keys)."""
    arrays = [
        np.asarray(v) for k, v in split.items() if k not in keys and k != "seed" and v is not None
    ]
    return array_fingerprint(*arrays)


class CacheIncompleteError(RuntimeError):
    """With ``execution.cache_only``, a unit or shared inner CV is not in the cache."""


@dataclass
class _Plan:
    """The units of an experiment and what their cache keys need (see :func:`_plan`)."""

    units: list[tuple[dict, Method, dict]]
    keys: list[str]
    parsed: dict[str, Method]
    keep: list[bool]
    groups: dict
    settings: Any
    data_fp: dict[str, str]


def _plan(task, datasets, splits, methods, config, keep_models, label) -> _Plan:
    """Check the inputs and form the units (split x method, in split-table order), which models
    are kept, the ``tune.once_per`` groups and, with a cache, the data sets' fingerprints."""
    if not methods:
        raise ValueError(f"{label}: no method registered: the pipeline's registry is empty.")
    methods = {name: m for name, m in dict(methods).items() if is_enabled(m)}
    if not methods:
        raise ValueError(f"{label}: every registered method is disabled (enabled: false).")
    parsed = {name: m if isinstance(m, Method) else None for name, m in methods.items()}
    raw = {name: m for name, m in methods.items() if parsed[name] is None}
    parsed.update(parse_methods(raw, task.method_options) if raw else {})
    unknown = sorted(set(splits["dataset"]) - set(datasets))
    if unknown:
        raise ValueError(f"the splits name data set(s) {unknown} that were not prepared.")
    keys = key_columns(splits)
    units: list[tuple[dict, Method, dict]] = []
    for split in splits.to_dict("records"):
        for method in parsed.values():
            if task.applies(method, split):
                unit = _unit_record(keys, split, method.name)
                units.append((unit, method, split))
    if not units:
        raise ValueError(f"{label}: no unit to run (no method applies to any split).")
    first = {}
    for i, (_, method, _) in enumerate(units):
        first.setdefault(method.name, i)
    keep = [_keep(keep_models, u, first[m.name] == i) for i, (u, m, _) in enumerate(units)]
    keyed = bool(config["cache_dir"] or config["archive_dir"])
    data_fp: dict[str, str] = {}
    if keyed:
        data_fp = {name: _data_fingerprint(datasets[name]) for name in set(splits["dataset"])}
    return _Plan(
        units=units,
        keys=keys,
        parsed=parsed,
        keep=keep,
        groups=shared_groups(units, keys),
        settings=task.settings() if keyed else None,
        data_fp=data_fp,
    )


class _Store:
    """Where finished units are found: the unit cache (read and written) and the unit archive
    (read only). A unit whose fitted model is kept needs the model, which only the cache
    holds (the archive keeps no models)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        # imported here, not at the top: `python -m multiview_lab.protocol.archive` must not
        # find its own module already imported by the package
        from multiview_lab.protocol.archive import Archive

        self.cache_dir = config["cache_dir"]
        self.archive = Archive(config["archive_dir"]) if config["archive_dir"] else None
        self.n_archived = 0

    def __bool__(self) -> bool:
        return bool(self.cache_dir or self.archive is not None)

    def lookup(self, key: str, needs_model: bool = False) -> tuple[Path | None, Any]:
        """The cache path to write ``key`` to (None: no cache) and its result (None: to run)."""
        path = cache_path(self.cache_dir, key) if self.cache_dir else None
        if path is not None and path.exists():
            found = _read(path)
            if found is not None:
                return path, found
        if self.archive is not None and not needs_model:
            found = self.archive.get(key)
            self.n_archived += found is not None
            return path, found
        return path, None


def _lookup_units(task, units, plan: _Plan, config):
    """Each unit's cache path and its cached or archived result (None: to run; no cache and
    no archive: all None), and how many came from the archive."""
    paths: list[Path | None] = [None] * len(units)
    outputs: list[UnitResult | None] = [None] * len(units)
    store = _Store(config)
    if not store:
        return paths, outputs, 0
    code = {
        name: code_fingerprint(
            run_unit.__module__, type(task).__module__, *estimator_modules(m.spec())
        )
        for name, m in plan.parsed.items()
    }
    for i, (unit, method, split) in enumerate(units):
        key = unit_key(
            unit, method.spec(), plan.settings, plan.keep[i], plan.data_fp[unit["dataset"]],
            _split_arrays(split, plan.keys), code[method.name],
        )  # fmt: skip
        needs_model = plan.keep[i] and config["refit_kept_models"]
        paths[i], outputs[i] = store.lookup(key, needs_model=needs_model)
    return paths, outputs, store.n_archived


def _lookup_shared(task, plan: _Plan, config):
    """The shared inner CVs (one per ``tune.once_per`` group: ``(method, group, reference unit
    index)``), their cache paths and their cached results (None: to run)."""
    refs = [
        (name, group, members[0])
        for name, by in plan.groups.items()
        for group, members in by.items()
    ]
    results: list[dict | None] = [None] * len(refs)
    paths: list[Path | None] = [None] * len(refs)
    store = _Store(config)
    if store:
        for j, (_, _, i) in enumerate(refs):
            unit, method, split = plan.units[i]
            code = code_fingerprint(
                tuning.__name__, type(task).__module__, *estimator_modules(method.spec())
            )
            key = unit_key(
                {**unit, "stage": "tune"}, method.spec(), plan.settings, False,
                plan.data_fp[unit["dataset"]], _split_arrays(split, plan.keys), code,
            )  # fmt: skip
            paths[j], results[j] = store.lookup(key)
    return refs, paths, results


def _apply_shared(plan: _Plan, refs, results, added) -> list:
    """Every unit of a group whose shared CV is known gets its method with the chosen point as
    fixed parameters (and no ``tune``), and ``added[i]`` its ``cv_<metric>`` and ``tuned_on``
    columns (the reference unit also the CV's ``shared_cv_cpu_time_s``). Units of a group
    whose CV is not known (None) are left as they are. Returns the new unit list."""
    units = list(plan.units)
    for (name, group, ref), out in zip(refs, results, strict=True):
        if out is None:
            continue
        ref_unit, method, _ = units[ref]
        fixed = replace(method, params={**method.params, **out["params"]}, tune=None)
        where = tuned_on(ref_unit, method.tune.get("once_per"))
        for i in plan.groups[name][group]:
            unit, _, split = units[i]
            units[i] = (unit, fixed, split)
            added[i] = {**out["scores"], **_scalars(out["params"]), "tuned_on": where}
        # the shared CV's cost, once, on its reference unit's rows (absent from CVs cached by
        # an earlier version)
        if "cpu_time_s" in out:
            added[ref]["shared_cv_cpu_time_s"] = out["cpu_time_s"]
    return units


def _point_jobs(task, plan: _Plan, refs, todo, config):
    """The grid points of the shared CVs ``todo`` (indices into ``refs``): ``(jobs, cvs)``.
    ``jobs`` maps a point's key to ``[cache path, result or None, (ref unit index, method,
    point)]``, one entry per distinct point (two methods' CVs on one split that share a
    :func:`~multiview_lab.protocol.tuning.point_spec` share the entry); ``cvs[j]`` lists the
    keys of CV ``j``'s points in grid order."""
    store = _Store(config)
    keyed = bool(store)
    jobs: dict[str, list] = {}
    cvs: dict[int, list[str]] = {}
    code: dict[str, str] = {}
    for j in todo:
        i = refs[j][2]
        unit, method, split = plan.units[i]
        where = {k: v for k, v in unit.items() if k != "method"}
        if keyed and method.name not in code:
            code[method.name] = code_fingerprint(
                tuning.__name__, type(task).__module__, *estimator_modules(method.spec())
            )
        cvs[j] = []
        for point in method.grid():
            key = unit_key(
                {**where, "stage": "tune point"}, point_spec(task, method, point), plan.settings,
                plan.data_fp.get(unit["dataset"]), _split_arrays(split, plan.keys),
                code.get(method.name),
            )  # fmt: skip
            if key not in jobs:
                path, found = store.lookup(key) if keyed else (None, None)
                jobs[key] = [path, found, (i, method, point)]
            cvs[j].append(key)
    return jobs, cvs


def _tune_shared(task, datasets, plan: _Plan, added, backend, config, label) -> list:
    """Run the inner CV of every ``tune.once_per`` group on its reference unit, grid point by
    grid point (:mod:`~multiview_lab.protocol.tuning`: each point cached, points shared by
    several methods' CVs run once), then fix every unit's method to its group's choice
    (:func:`_apply_shared`)."""
    refs, paths, results = _lookup_shared(task, plan, config)
    units = plan.units
    todo = [j for j, r in enumerate(results) if r is None]
    if todo and config["cache_only"]:
        raise CacheIncompleteError(
            f"{label}: {len(refs) - len(todo)} of {len(refs)} shared inner CVs in the cache or "
            f"the archive; execution.cache_only computes none of the other {len(todo)}."
        )
    jobs, cvs = _point_jobs(task, plan, refs, todo, config)
    wanted = sum(len(keys) for keys in cvs.values())
    reused = [k for k, job in jobs.items() if job[1] is not None]
    run = [k for k, job in jobs.items() if job[1] is None]
    logger.info(
        "%s: %d shared inner CVs (tune.once_per) for %d units, %d in the cache; the %d to run "
        "have %d grid points: %d in the cache, %d scored for another CV of this run, %d to score.",
        label, len(refs), sum(len(m) for by in plan.groups.values() for m in by.values()),
        len(refs) - len(todo), len(todo), wanted, len(reused), wanted - len(jobs), len(run),
    )  # fmt: skip
    progress = _Progress(
        f"{label} shared inner CVs",
        [cost_group(units[jobs[k][2][0]][0]) for k in run],
        [(cost_group(units[job[2][0]][0]), job[1]["cpu_time_s"]) for job in jobs.values()
         if job[1] is not None],
        what="grid points",
    )  # fmt: skip
    tally = WarningTally(f"{label} shared inner CV")
    puts = _put_datasets(
        backend, {units[jobs[k][2][0]][0]["dataset"] for k in run}, datasets, plan.data_fp
    )
    calls = []
    for k in run:
        i, method, point = jobs[k][2]
        unit, _, split = units[i]
        calls.append(
            (task, method, puts[unit["dataset"]], split, unit, point, config["blas_threads"])
        )
    try:
        for n, (out, caught) in backend.run(partial(call_recording, run_tune_point), calls):
            job = jobs[run[n]]
            job[1] = out
            if job[0] is not None:
                _write(job[0], out)
            unit = units[job[2][0]][0]
            tally.add(unit, caught)
            progress.tick(cost_group(unit), out["cpu_time_s"])
    except Exception as exc:
        tally.summarise()
        resume = (
            " (finished grid points are cached: rerun to resume)" if config["cache_dir"] else ""
        )
        raise RuntimeError(f"{label}: a shared inner CV failed{resume}: {exc}") from exc
    tally.summarise()
    for j in todo:
        results[j] = choose(units[refs[j][2]][1], [jobs[k][1] for k in cvs[j]])
        if paths[j] is not None:
            _write(paths[j], results[j])
    return _apply_shared(plan, refs, results, added)


def _scalars(params: Mapping[str, Any]) -> dict[str, Any]:
    """The chosen grid values that fit in a table cell (numbers, strings, booleans, None)."""
    return {
        k: v.item() if isinstance(v, np.generic) else v
        for k, v in params.items()
        if v is None or isinstance(v, int | float | str | bool | np.generic)
    }


def _data_fingerprint(data: Any) -> str:
    """Digest of every array in a (nested) data set."""
    import scipy.sparse as sp

    arrays: list[np.ndarray] = []

    def walk(value):
        if sp.issparse(value):
            value = value.tocsr()
            arrays.extend([value.data, value.indices, value.indptr, np.asarray(value.shape)])
        elif isinstance(value, np.ndarray):
            arrays.append(value)
        elif isinstance(value, Mapping):
            for k in sorted(value, key=str):
                arrays.append(np.frombuffer(str(k).encode(), dtype=np.uint8))
                walk(value[k])
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif value is not None:
            arrays.append(np.frombuffer(repr(value).encode(), dtype=np.uint8))

    walk(data)
    return array_fingerprint(*arrays)


def _assemble(units, outputs: list[UnitResult], n_cached: int, added=None) -> ExperimentResult:
    added = added or [{}] * len(outputs)
    rows = [{**row, **extra} for out, extra in zip(outputs, added, strict=True) for row in out.rows]
    extras: dict[str, list[pd.DataFrame]] = {}
    models = {}
    for (unit, _, _), out in zip(units, outputs, strict=True):
        for name, frame in (out.extras or {}).items():
            if frame is not None and len(frame):
                extras.setdefault(name, []).append(frame)
        if out.model is not None:
            models[model_name(unit)] = out.model
    recorded = [out.rows[0].get("cpu_time_s") if out.rows else None for out in outputs]
    cpu = sum(float(c) for c in recorded if c is not None)
    cpu += sum(float(a.get("shared_cv_cpu_time_s", 0.0)) for a in added)
    return ExperimentResult(
        results=pd.DataFrame(rows),
        extras={k: pd.concat(v, ignore_index=True) for k, v in extras.items()},
        models=models,
        n_cached=n_cached,
        cpu_seconds=cpu,
        n_unmeasured=sum(c is None for c in recorded),
    )
