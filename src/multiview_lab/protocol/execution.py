"""Execution backends of the experiment engine: local joblib workers or a Dask cluster.

Both run independent *units* (one function call each, whose arguments are small: a split, a
method, a seed) over a few large *data sets* that every unit of a data set shares. They differ
in how the data travel:

* :class:`LocalBackend` (``backend: local``): joblib with ``n_jobs`` worker processes; large
  arrays are memory-mapped by joblib, so they are not copied per unit.
* :class:`DaskBackend` (``backend: dask``): a ``distributed.Client`` on ``scheduler_address``,
  or a ``LocalCluster`` bound to 127.0.0.1 with the dashboard off when the address is empty.
  Each data set is scattered once (broadcast to every worker), and units refer to it by future.
  A worker that dies mid-run loses only the units it was computing: the scheduler gives them to
  another worker. The driver alone writes the unit cache and the artefacts.

One ``execution`` block of the parameters selects the backend (:func:`backend_from_config`).
A Dask backend is kept for the whole process (every training node of a ``kedro run`` shares one
cluster and its scattered data) until :func:`close_backends`, which the project's hooks call at
the end of a run.
"""

from __future__ import annotations

import atexit
import logging
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from joblib import Parallel, delayed

logger = logging.getLogger(__name__)

BACKENDS = ("local", "dask")
EXECUTION_KEYS = (
    "backend",
    "n_jobs",
    "scheduler_address",
    "n_workers",
    "threads_per_worker",
    "blas_threads",
    "cache_dir",
    "archive_dir",
    "cache_only",
    "refit_kept_models",
)


def _call(i, fn, args):
    return i, fn(*args)


class LocalBackend:
    """joblib workers on this machine (``n_jobs=1``: in this process, one unit after another)."""

    name = "local"
    client = None

    def __init__(self, n_jobs: int = 1) -> None:
        if int(n_jobs) == 0:
            raise ValueError("execution.n_jobs must be a non-zero integer (-1: all cores).")
        self.n_jobs = int(n_jobs)
        self.payload_bytes: list[int] = []
        self.scattered_bytes = 0

    def put(self, key: str, data: Any) -> Any:
        """A reference to ``data`` for :meth:`run` (locally, the data itself)."""
        return data

    def run(self, fn: Callable, calls: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """``(i, fn(*calls[i]))`` as each call finishes (any order)."""
        if not calls:
            return iter(())
        if self.n_jobs == 1:
            return ((i, fn(*args)) for i, args in enumerate(calls))
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator_unordered")
        return parallel(delayed(_call)(i, fn, args) for i, args in enumerate(calls))

    def describe(self) -> str:
        return f"local joblib, {self.n_jobs} worker(s)"


class DaskBackend:
    """Units on a Dask cluster (see the module docstring)."""

    name = "dask"

    def __init__(
        self, scheduler_address: str = "", n_workers: int = 2, threads_per_worker: int = 1
    ) -> None:
        from distributed import Client, LocalCluster

        self.scheduler_address = str(scheduler_address or "")
        self.cluster = None
        if self.scheduler_address:
            self.client = Client(self.scheduler_address)
        else:
            self.cluster = LocalCluster(
                n_workers=int(n_workers),
                threads_per_worker=int(threads_per_worker),
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # the scheduler serves its HTTP routes even without the dashboard, on 8787 by
                # default: a free port instead, so that two runs (or a user's own cluster) do
                # not collide and warn
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            )
            self.client = Client(self.cluster)
        self._scattered: dict[str, Any] = {}
        self.payload_bytes: list[int] = []
        self.scattered_bytes = 0
        logger.info("Dask backend: %s.", self.describe())

    def put(self, key: str, data: Any) -> Any:
        """Scatter ``data`` to every worker once; the same ``key`` (a digest of the data's
        content) gives the same future."""
        if key not in self._scattered:
            self.scattered_bytes += len(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
            [future] = self.client.scatter([data], broadcast=True, hash=False)
            self._scattered[key] = future
        return self._scattered[key]

    def run(self, fn: Callable, calls: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Submit every call; yield ``(i, result)`` as they complete."""
        from distributed import Future, as_completed

        if not calls:
            return iter(())
        futures = {}
        for i, args in enumerate(calls):
            small = tuple(None if isinstance(a, Future) else a for a in args)
            self.payload_bytes.append(len(pickle.dumps((fn, small), pickle.HIGHEST_PROTOCOL)))
            futures[self.client.submit(fn, *args, pure=False)] = i

        def results():
            for future, result in as_completed(list(futures), with_results=True):
                yield futures[future], result

        return results()

    def describe(self) -> str:
        where = self.scheduler_address or "LocalCluster on 127.0.0.1"
        workers = len(self.client.scheduler_info().get("workers", {}))
        return f"dask, {where}, {workers} worker(s)"

    def close(self) -> None:
        self._scattered.clear()
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


_DASK: dict[tuple, DaskBackend] = {}


def check_execution(execution: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``execution`` block with its defaults, checked (unknown keys are errors)."""
    execution = dict(execution or {})
    unknown = sorted(set(execution) - set(EXECUTION_KEYS))
    if unknown:
        raise ValueError(f"execution: unknown key(s) {unknown}; allowed: {list(EXECUTION_KEYS)}.")
    out = {
        "backend": "local",
        "n_jobs": 1,
        "scheduler_address": "",
        "n_workers": 2,
        "threads_per_worker": 1,
        "blas_threads": 1,
        "cache_dir": None,
        "archive_dir": None,
        "cache_only": False,
        "refit_kept_models": True,
        **execution,
    }
    for flag in ("cache_only", "refit_kept_models"):
        if not isinstance(out[flag], bool):
            raise ValueError(f"execution.{flag} must be true or false; got {out[flag]!r}.")
    if out["cache_only"] and not (out["cache_dir"] or out["archive_dir"]):
        raise ValueError(
            "execution.cache_only needs execution.cache_dir or execution.archive_dir (the "
            "cache to read)."
        )
    if out["backend"] not in BACKENDS:
        raise ValueError(
            f"execution.backend must be one of {list(BACKENDS)}; got {out['backend']!r}."
        )
    return out


def backend_from_config(execution: Mapping[str, Any] | None):
    """The backend an ``execution`` block names (a Dask backend is shared per process)."""
    config = check_execution(execution)
    if config["backend"] == "local":
        return LocalBackend(config["n_jobs"])
    key = (config["scheduler_address"], int(config["n_workers"]), int(config["threads_per_worker"]))
    backend = _DASK.get(key)
    if backend is None:
        backend = _DASK[key] = DaskBackend(*key)
    return backend


def close_backends() -> None:
    """Close every Dask client and LocalCluster this process started."""
    while _DASK:
        _, backend = _DASK.popitem()
        try:
            backend.close()
        except Exception as exc:  # noqa: BLE001 - closing must not mask the run's own outcome
            logger.warning("Closing the Dask backend failed: %s", exc)


atexit.register(close_backends)
