"""MLflow tracking for every ``kedro run``: one parent run, and one nested run per method.

Why project hooks rather than kedro-mlflow (see ``../shared/stack.md``): kedro-mlflow breaks
``kedro run`` until configured, cannot run under ``ParallelRunner``, its versioned artefact
datasets fail under Kedro 1.7 and it doubles CLI start-up. These hooks do the few things the
project needs, all from the main process, so they work under every runner.

**The parent run** (one per ``kedro run``, in the experiment named after the pipeline) holds
what belongs to the whole run: every parameter the pipeline reads (flattened), the environment
and provenance as tags, the reports and tables as artefacts (files under ``data/08_reporting``
and entries with ``metadata: {mlflow: artifact}``), ``run_info.json``, and the metrics that are
not about one method (e.g. the reproduction verdict counts, GBC's source-count study, MVFS's
lambda choice).

**One nested run per method** (tag ``mlflow.parentRunId``, named after the method) holds that
method's scores under **the same metric names in every method's run**, so that MLflow's chart
view and run comparison put the methods side by side (a bar per method, a line per method):

* the summary table (``<pipeline>.summary``, from the reporting conf's ``group_by`` and
  ``metrics``): ``<keys>/<metric>`` = the mean over repetitions, with the method left out of
  the name and numbers after their key (``MNIST1/n_train500/accuracy``),
  ``std/<keys>/<metric>`` and ``repetitions/<keys>``
  (:func:`multiview_lab.pipelines.reporting.nodes.method_metrics`);
* the other ``metadata: {mlflow: metrics}`` outputs (``name -> value``, or
  ``name -> [[step, value], ...]`` for a series such as a figure's line over training sizes):
  a metric whose ``/``-separated name has exactly one component naming a method of the run
  goes to that method without it (``figure2_f1/MNIST1/PB-MVBoost/f1_mean`` ->
  ``figure2_f1/MNIST1/f1``, step = n; ``.._std`` -> ``std/..``), the rest to the parent;
* its params (the method's registry entry) and its kept models (``metadata: {mlflow: model}``,
  a ``dict`` :func:`~multiview_lab.protocol.engine.model_name` -> estimator), logged after its
  metrics so that each model's page lists the method's scores. A model whose input is one 2-D
  array gets a signature and an input example (two test rows of its own unit, taken when its
  training node finished); a model taking a list of arrays (views, bags) gets an output-only
  signature and its input described in the model's description, as MLflow signatures cannot
  describe a list of arrays (a stacked-array signature would make ``mlflow.pyfunc`` reject
  the list the estimator needs).

A method's run is opened when its training node finishes (under runners that run nodes in the
main thread; otherwise at the end) and closed when the Kedro run ends, with the parent's
status: ``on_pipeline_error`` (and any failure while logging) marks the parent and every open
method run FAILED with the error as a tag; a run interrupted by Ctrl-C or ``SIGTERM`` (which
Kedro's error hook does not see) is marked KILLED, instead of staying RUNNING or being closed
as FINISHED by MLflow's own exit handler. Only ``SIGKILL`` (or the machine stopping) leaves
runs RUNNING, and the next run on the machine marks them KILLED (:func:`close_orphaned_runs`:
every run carries its process's host, pid and boot id).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import pickle
import platform
import re
import signal
import threading
import types
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kedro.framework.hooks import hook_impl

from multiview_lab import formatting as fmt

logger = logging.getLogger(__name__)

REPORTING_DIR = "08_reporting"
#: the layers whose files the reproduction pipeline reads: a run writing there relabels run_info
RESULT_DIRS = ("07_model_output", REPORTING_DIR)
_TRUSTED_PREFIXES = ("sklearn.", "multiview_lab.", "numpy.", "scipy.", "builtins.")


def flatten_params(params: Any, prefix: str = "") -> dict[str, str]:
    """Flatten nested parameters into ``{"a.b.c": "value"}`` (lists are kept as one value)."""
    out: dict[str, str] = {}
    if isinstance(params, Mapping):
        for key, value in params.items():
            out.update(flatten_params(value, f"{prefix}{key}."))
        return out
    out[prefix.rstrip(".")] = str(params)[:6000]
    return out


def _log_metrics(mlflow, metrics: Mapping[str, Any]) -> None:
    """Log ``name -> value`` metrics, and ``name -> [[step, value], ...]`` series at their
    steps (one batch per step)."""
    by_step: dict[int | None, dict[str, float]] = {}
    for key, value in metrics.items():
        if isinstance(value, list | tuple):
            for step, point in value:
                by_step.setdefault(int(step), {})[key] = float(point)
        else:
            by_step.setdefault(None, {})[key] = float(value)
    for step, batch in sorted(by_step.items(), key=lambda item: -1 if item[0] is None else item[0]):
        mlflow.log_metrics(batch, step=step)


def _output_path(dataset) -> Path | None:
    path = getattr(dataset, "_filepath", None) or getattr(dataset, "_path", None)
    return None if path is None else Path(str(path))


def written_pipelines(pipeline, catalog, project_path: Path) -> set[str]:
    """The pipelines (folder names under ``data/07_model_output`` or ``data/08_reporting``)
    whose results or reports a run of ``pipeline`` writes: the ones whose ``run_info.json`` it
    must rewrite, since the reproduction pipeline reads both layers. A run that writes neither
    (data preparation, ``--to-outputs`` of splits) relabels nothing."""
    names = set()
    root = Path(project_path).resolve()
    for name in pipeline.all_outputs():
        path = _output_path(catalog[name]) if name in catalog else None
        if path is None:
            continue
        try:
            parts = path.resolve().relative_to(root).parts
        except ValueError:
            continue
        for layer in RESULT_DIRS:
            at = parts.index(layer) if layer in parts else -1
            if 0 <= at and at + 2 < len(parts):  # data/<layer>/<pipeline>/<file or folder>
                names.add(parts[at + 1])
    return names


def _is_reporting_file(filepath: Path, project_path: Path) -> bool:
    try:
        rel = filepath.resolve().relative_to(project_path.resolve())
    except ValueError:
        return False
    return REPORTING_DIR in rel.parts


class _TypeWalker(pickle.Pickler):
    """Pickles into nothing, noting the qualified name of every class and function it meets:
    the class of each object, the classes and functions pickled by reference."""

    def __init__(self) -> None:
        super().__init__(_Discard(), protocol=4)
        self.names: set[str] = set()

    def reducer_override(self, obj):
        kind = (
            obj
            if isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType)
            else type(obj)
        )
        self.names.add(f"{getattr(kind, '__module__', None) or 'builtins'}.{kind.__qualname__}")
        return NotImplemented


class _Discard:
    """A file that drops what is written to it."""

    def write(self, data: bytes) -> int:
        return len(data)


def _reachable_types(model: Any) -> frozenset[str]:
    """The qualified names of the classes and functions a pickle of ``model`` meets (a pickle
    walk: 0.1 s for a GBC of 300 iterations, whose skops dump takes 7-20 s)."""
    walker = _TypeWalker()
    walker.dump(model)
    return frozenset(walker.names)


def _trusted_types(model: Any, known: dict[frozenset[str], list[str]]) -> list[str]:
    """Types skops must trust to load ``model``; refuse anything outside the known packages.

    ``known`` (the reachable type names -> their untrusted types) saves the skops dump this
    takes for a model whose objects have the same types as one already listed: the kept models
    of a method (140 PB-MVBoost fits in its paper run) share them.
    """
    import skops.io as sio

    key = _reachable_types(model)
    if key not in known:
        untrusted = sio.get_untrusted_types(data=sio.dumps(model))
        foreign = [t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES)]
        if foreign:
            raise ValueError(f"Refusing to log a model holding untrusted types {foreign}.")
        known[key] = list(untrusted)
    return list(known[key])


def _git_state(path: Path) -> dict[str, str]:
    """The commit checked out at ``path`` and whether tracked files differ from it."""
    import subprocess

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=path, capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"git.commit": "unknown (not a git checkout)"}
    return {
        "git.commit": commit,
        "git.dirty": str(dirty).lower(),
        "mlflow.source.git.commit": commit,  # shown by the MLflow UI as the run's version
    }


_FILTERS = ("node_names", "from_nodes", "to_nodes", "from_inputs", "to_outputs", "tags",
            "namespaces")  # fmt: skip


def write_run_info(
    project_path: Path, run_params: Mapping[str, Any], wrote=None, **extra: Any
) -> list[Path]:
    """Write ``data/08_reporting/<pipeline>/run_info.json`` for each pipeline of a finished run:
    which env, commit and MLflow run its reports come from (the reproduction pipeline reads it).

    A partial run (``--nodes``, ``--from-nodes``, ``--tags``, ...) records its filters under
    ``partial``. ``wrote``: the pipelines whose results (``data/07_model_output/<pipeline>``)
    or reports (``data/08_reporting/<pipeline>``) the run wrote (:func:`written_pipelines`);
    a pipeline not in it keeps its ``run_info.json``, which still describes the results there
    (a run that only prepared data, e.g. ``--to-outputs`` of the splits, must not relabel the
    results of an earlier run; a run that rewrote one results table must, as a partial run).
    None: every pipeline of the run. Returns the files written.
    """
    import datetime
    import json

    git = _git_state(project_path)
    filters = {k: run_params.get(k) for k in _FILTERS if run_params.get(k)}
    written = []
    for name in run_params.get("pipeline_names") or ["__default__"]:
        if wrote is not None and ("pbmvboost" if name == "__default__" else name) not in wrote:
            logger.info(
                "%s: this run wrote no report; data/08_reporting/%s/run_info.json is kept.",
                name,
                name,
            )
            continue
        info = {
            "pipeline": name,
            "env": run_params.get("env") or "base",
            "finished_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "kedro_run_id": str(run_params.get("run_id")),
            "git_commit": git.get("git.commit"),
            "git_dirty": git.get("git.dirty"),
            "partial": filters or None,
            "runtime_params": run_params.get("runtime_params") or None,
            **extra,
        }
        folder = (
            project_path / "data" / REPORTING_DIR / ("pbmvboost" if name == "__default__" else name)
        )
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "run_info.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(info, indent=2, default=str) + "\n")
        os.replace(tmp, path)
        written.append(path)
    return written


def open_tracking_store(mlflow, uri: str) -> None:
    """Point MLflow at ``uri`` and make sure its store exists, safely across processes.

    MLflow creates and migrates a SQLite store's tables on its first use. Two ``kedro run``
    started together on a fresh project (two paper queues, a run beside ``make test``) would
    both run the migration and one of them fails ("table _alembic_tmp_model_versions already
    exists", or alembic's "expected to match one row"). The first use therefore happens under
    an exclusive ``flock`` on the database file itself (created empty if missing, which SQLite
    treats as a new database); ``flock`` and SQLite's own ``fcntl`` locks do not interact, so
    the lock orders only the initialisations. Non-SQLite URIs are set as they are.
    """
    mlflow.set_tracking_uri(uri)
    prefix = "sqlite:///"
    if not uri.startswith(prefix):
        return
    path = Path(uri[len(prefix) :])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            mlflow.MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _boot_id() -> str | None:
    """This machine's boot id (Linux), or None."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch, Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + float(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def process_tags() -> dict[str, str]:
    """The tags that say which process owns a run: host, pid and boot id."""
    tags = {"kedro.host": platform.node(), "kedro.pid": str(os.getpid())}
    boot = _boot_id()
    if boot:
        tags["kedro.boot_id"] = boot
    return tags


def orphaned(tags: Mapping[str, str], start_time_ms: int) -> str | None:
    """Why a RUNNING run's Kedro process no longer exists (None: it may be alive, or the run
    is not this machine's to judge). Its tags (:func:`process_tags`) must name this host; the
    process is gone if the machine has rebooted since (another boot id), if no process has
    its pid, or if the process with its pid started after the run did (the pid was reused)."""
    if tags.get("kedro.host") != platform.node() or "kedro.pid" not in tags:
        return None
    pid = int(tags["kedro.pid"])
    where = f"pid {pid} on {tags['kedro.host']}"
    boot = _boot_id()
    if boot and tags.get("kedro.boot_id") and tags["kedro.boot_id"] != boot:
        return f"its Kedro process ({where}) was on a boot of this machine that has ended"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return f"its Kedro process ({where}) no longer exists"
    except PermissionError:
        pass
    started = _process_start(pid)
    if started is not None and started > start_time_ms / 1000 + 5:
        return f"its Kedro process ({where}) no longer exists (the pid now names a newer process)"
    return None


def local_store(uri: str) -> bool:
    """Whether a tracking URI is a store on this machine's disk (SQLite, ``file:`` or a path),
    the only kind whose orphaned runs are closed: a tracking server may hold the runs of other
    machines that share a host name (containers), whose processes this one cannot see."""
    return uri.startswith(("sqlite:", "file:")) or not re.match(r"^[a-zA-Z][\w+.-]*://", uri)


def close_orphaned_runs(mlflow) -> list[str]:
    """Mark KILLED every RUNNING run of the tracking store whose Kedro process is gone
    (:func:`orphaned`: killed by SIGKILL, the out-of-memory killer or a machine stop, which no
    exit handler sees), with the reason as its ``error`` tag. Returns their ids."""
    client = mlflow.MlflowClient()
    ids = [e.experiment_id for e in client.search_experiments()]
    closed = []
    for start in range(0, len(ids), 100):
        runs = client.search_runs(
            ids[start : start + 100],
            filter_string="attributes.status = 'RUNNING'",
            max_results=10000,
        )
        for run in runs:
            why = orphaned(run.data.tags, run.info.start_time)
            if why is None:
                continue
            client.set_tag(
                run.info.run_id,
                "error",
                f"left RUNNING: {why}; marked KILLED by a later run (its end time is when that "
                "run found it, not when the process died)",
            )
            client.set_terminated(run.info.run_id, "KILLED")
            closed.append(run.info.run_id)
            logger.info(
                "MLflow run %s (%s) was left RUNNING: %s; marked KILLED.",
                run.info.run_id, run.info.run_name, why,
            )  # fmt: skip
    return closed


@contextlib.contextmanager
def _active_experiment(mlflow, experiment_id: str):
    """MLflow's active experiment set to ``experiment_id`` for the block, then put back.

    Resuming a run (``start_run(run_id=...)``) checks the run against the process's active
    experiment, which an earlier run in this process (another pipeline, a notebook) may have
    set to its own; ``set_experiment`` alone would leave the run's experiment active (and in
    ``MLFLOW_EXPERIMENT_ID``) for whatever the process does next. MLflow has no public getter
    of the active experiment id, hence the module attribute read with a default.
    """
    from mlflow.tracking import fluent

    previous = getattr(fluent, "_active_experiment_id", None)
    previous_env = os.environ.get("MLFLOW_EXPERIMENT_ID")
    mlflow.set_experiment(experiment_id=experiment_id)
    try:
        yield
    finally:
        if hasattr(fluent, "_active_experiment_id"):
            fluent._active_experiment_id = previous
        if previous_env is None:
            os.environ.pop("MLFLOW_EXPERIMENT_ID", None)
        else:
            os.environ["MLFLOW_EXPERIMENT_ID"] = previous_env


def _runner_name(runner: Any) -> str:
    """``SequentialRunner`` from a runner, its class or its repr (none given: Kedro's default,
    the sequential runner)."""
    if runner is None or str(runner) == "None":
        return "SequentialRunner"
    text = runner if isinstance(runner, str) else type(runner).__name__
    match = re.search(r"(\w+Runner)\b", str(text))
    return match.group(1) if match else str(text)


def _exit_on_sigterm(signum, frame) -> None:
    """Turn SIGTERM into ``SystemExit`` so that exit handlers run (the default just dies)."""
    raise SystemExit(128 + signum)


def split_by_method(
    metrics: Mapping[str, Any], methods: Iterable[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Split flat metrics ``a/b/<method>/c/metric_mean`` into per-method metrics and the rest.

    A name with exactly one ``/``-separated component naming one of ``methods`` (as the
    reporting nodes write names: :func:`~multiview_lab.pipelines.reporting.nodes.metric_name_part`)
    goes to that method without the component; ``<metric>_mean`` becomes ``<metric>`` and
    ``<metric>_std`` becomes ``std/.../<metric>``. Values (numbers or series) are kept as they
    are. Returns ``({method: {name: value}}, {name: value of the others})``.
    """
    from multiview_lab.pipelines.reporting.nodes import metric_name_part

    by_part = {metric_name_part(m): str(m) for m in methods}
    per_method: dict[str, dict[str, Any]] = {}
    rest: dict[str, Any] = {}
    for key, value in metrics.items():
        parts = str(key).split("/")
        hits = [i for i, part in enumerate(parts) if part in by_part]
        if len(hits) != 1 or len(parts) < 2:
            rest[key] = value
            continue
        method = by_part[parts[hits[0]]]
        parts = parts[: hits[0]] + parts[hits[0] + 1 :]
        leaf = parts[-1]
        if leaf.endswith("_mean"):
            parts[-1] = leaf[: -len("_mean")]
        elif leaf.endswith("_std"):
            parts = ["std", *parts[:-1], leaf[: -len("_std")]]
        per_method.setdefault(method, {})["/".join(parts)] = value
    return per_method, rest


def method_of_model(name: str, methods: Iterable[str]) -> str | None:
    """The method a kept model belongs to: its name is ``model_name`` of one of the method's
    units, ``<method>_<dataset>_...`` (the longest matching method wins)."""
    from multiview_lab.protocol.engine import model_name

    best, best_len = None, -1
    for method in methods:
        prefix = model_name({"method": method})
        if (name == prefix or name.startswith(prefix + "_")) and len(prefix) > best_len:
            best, best_len = str(method), len(prefix)
    return best


def _training_method(node) -> str | None:
    """The method of a training node of :mod:`multiview_lab.pipelines.training` (else None)."""
    from multiview_lab.pipelines.training.nodes import train_method

    func = node.func
    if getattr(func, "__wrapped__", None) is train_method:
        return (getattr(func, "keywords", None) or {}).get("method")
    return None


def _head(X: Any, kind: str, n: int = 2) -> Any:
    """The first ``n`` samples of a model input: rows of a 2-D array, of each view of a list
    of views, or the first ``n`` bags of a list of bags."""
    return [V[:n] for V in X] if kind == "views" else X[:n]


def _execution_note(catalog) -> str:
    """What the run note adds when the ``execution`` block makes a run read its units rather
    than compute them (``cache_only``) or leave kept models out (``refit_kept_models``)."""
    try:
        execution = dict(catalog.load("params:execution") or {})
    except Exception:  # noqa: BLE001 - a project without the block: nothing to add
        return ""
    parts = []
    if execution.get("cache_only") is True:
        parts.append(
            "No unit was computed: every result was read from the unit cache or the "
            "repository's unit archive (execution.cache_only)."
        )
    if execution.get("refit_kept_models") is False:
        parts.append(
            "Kept models whose units only the archive holds were not refitted, so they are "
            "not logged (execution.refit_kept_models: false)."
        )
    return " ".join(parts)


def _describe_input(kind: str, example: Any) -> str:
    """A sentence on what the model's ``predict`` takes (for the model's description)."""
    if kind == "views":
        shapes = ", ".join(str(V.shape[1]) for V in example)
        dtypes = sorted({str(V.dtype) for V in example})
        return (
            f"Input: a list of {len(example)} views, one 2-D array per view with one row per "
            f"sample ({shapes} columns; {', '.join(dtypes)}), e.g. "
            "model.predict([X_view1, X_view2, ...]). MLflow signatures cannot describe a list "
            "of arrays, so the signature gives the output only (a stacked-array signature would "
            "make mlflow.pyfunc reject the list the estimator needs)."
        )
    if kind == "bags":
        width = sorted({B.shape[1] for B in example if getattr(B, "ndim", 0) == 2})
        return (
            "Input: a list of bags, one 2-D array of instances per sample (instances x "
            f"{', '.join(map(str, width))} features). MLflow signatures cannot describe a list "
            "of arrays, so the signature gives the output only."
        )
    return (
        f"Input: one 2-D {'sparse ' if kind == 'sparse' else ''}array, one row per sample "
        f"({example.shape[1]} columns); the input example is two test rows of the model's unit."
    )


class MlflowHooks:
    """Project hooks that track each Kedro run in MLflow (see the module docstring)."""

    def __init__(self) -> None:
        self._run_id: str | None = None  # the parent run
        self._experiment: str | None = None
        self._experiment_id: str | None = None
        self._catalog = None
        self._project_path: Path | None = None
        self._config: dict[str, Any] = {}
        self._previous_sigterm = None
        self._reset_run_state()

    def _reset_run_state(self) -> None:
        self._pid: int | None = None
        self._child_tags: dict[str, str] = {}
        self._children: dict[str, str] = {}  # method -> its open nested run
        self._n_methods = 0  # nested runs logged
        self._methods: dict[str, dict[str, Any]] = {}  # method -> {"params", "reading_of"}
        self._examples: dict[str, tuple[str, Any]] = {}  # model name -> (kind, input example)
        self._skops_types: dict[frozenset[str], list[str]] = {}  # see _trusted_types

    # ------------------------------------------------------------------------------------
    # Closing: every path ends the parent and every open method run
    # ------------------------------------------------------------------------------------
    def _watch_interruptions(self) -> None:
        # Registered after mlflow's own exit handler, so it runs first (atexit is LIFO).
        atexit.register(self._end_interrupted_run)
        if threading.current_thread() is threading.main_thread():
            self._previous_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)

    def _stop_watching(self) -> None:
        atexit.unregister(self._end_interrupted_run)
        if self._previous_sigterm is not None:
            with contextlib.suppress(ValueError):  # not in the main thread
                signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None

    def _end_run(self, mlflow, status: str, error: str | None = None) -> None:
        """Close every open method run and the parent with ``status`` (the error as a tag on
        each); stop watching signals."""
        parent = self._run_id
        client = mlflow.MlflowClient()
        try:
            if error is not None:
                client.set_tag(parent, "error", error[:5000])
            for method, run_id in list(self._children.items()):
                with contextlib.suppress(Exception):  # close the others whatever happens
                    if error is not None:
                        client.set_tag(run_id, "error", f"Kedro run {status}: {error}"[:5000])
                    client.set_terminated(run_id, status)
                self._children.pop(method, None)
        finally:
            # the fluent stack: a method run being logged (if any), then the parent
            while (active := mlflow.active_run()) is not None:
                mlflow.end_run(status=status)
                if active.info.run_id == parent:
                    break
            self._run_id = None
            self._children.clear()
            self._stop_watching()

    def _end_interrupted_run(self) -> None:
        """At interpreter exit with the run still open: the pipeline never ended; mark KILLED."""
        if self._run_id is None:
            return
        import mlflow

        with contextlib.suppress(Exception):
            self._end_run(
                mlflow, "KILLED", "interrupted (KeyboardInterrupt or SIGTERM) before the end"
            )
        self._run_id = None

    # ------------------------------------------------------------------------------------
    # Set-up
    # ------------------------------------------------------------------------------------
    @hook_impl
    def after_context_created(self, context) -> None:
        self._project_path = Path(context.project_path)
        try:
            self._config = dict(context.config_loader["mlflow"] or {})
        except KeyError:
            self._config = {}

    def _tracking_uri(self) -> str:
        env_uri = os.environ.get("MLFLOW_TRACKING_URI")
        if env_uri:
            return env_uri
        uri = self._config.get("tracking_uri", "sqlite:///mlflow.db")
        prefix = "sqlite:///"
        if uri.startswith(prefix) and not uri.startswith(prefix + "/"):
            # relative SQLite path: anchor it at the project root, whatever the working directory
            uri = prefix + str(self._project_path / uri[len(prefix) :])
        return uri

    def _description(self, kind: str, name: str) -> str:
        return str(((self._config.get("descriptions") or {}).get(kind) or {}).get(name) or "")

    def _run_description(self, names: Sequence[str], env: str) -> str:
        """The run's note: each pipeline's text, then the env's; a pipeline with a note of its
        own for that env (``descriptions.env_by_pipeline``: pipeline -> env -> text, e.g. the
        stated part of the paper's protocol that gbc's paper env runs) has it instead."""
        by_pipeline = (self._config.get("descriptions") or {}).get("env_by_pipeline") or {}
        env_text = self._description("envs", env)
        notes = [str((by_pipeline.get(n) or {}).get(env) or env_text) for n in names]
        texts = (*(self._description("pipelines", n) for n in names), *dict.fromkeys(notes))
        return "\n\n".join(" ".join(t.split()) for t in texts if t)

    def _get_experiment_id(self, mlflow, name: str) -> str:
        experiment = mlflow.get_experiment_by_name(name)
        if experiment is not None:
            if "mlflow.note.content" not in experiment.tags:
                text = self._description("pipelines", name)
                if text:
                    mlflow.MlflowClient().set_experiment_tag(
                        experiment.experiment_id, "mlflow.note.content", text
                    )
            return experiment.experiment_id
        location = None
        root = self._config.get("artifact_root", "mlartifacts")
        if "://" not in root:
            location = (self._project_path / root / name).resolve().as_uri()
        else:
            location = f"{root.rstrip('/')}/{name}"
        tags = {"mlflow.note.content": self._description("pipelines", name)}
        return mlflow.create_experiment(
            name, artifact_location=location, tags={k: v for k, v in tags.items() if v}
        )

    @staticmethod
    def _drop_empty_default(mlflow) -> None:
        """Delete MLflow's own empty "Default" experiment, so the UI opens on a pipeline's."""
        client = mlflow.MlflowClient()
        default = client.get_experiment("0") if mlflow.get_experiment_by_name("Default") else None
        if default is not None and default.lifecycle_stage == "active":
            if not client.search_runs(["0"], max_results=1, run_view_type=3):
                client.delete_experiment("0")

    def _read_methods(self, pipeline, catalog) -> None:
        """Each training node's method and its registry entry (the nested run's params);
        a ``readings`` entry (another prediction of the same fitted model, scored as a method
        of its own) gets the params of the method it reads, and a ``reading_of`` tag."""
        registries: dict[str, Any] = {}
        for node in getattr(pipeline, "nodes", []):
            method = _training_method(node)
            if method is None or len(node.inputs) < 3:
                continue
            registry = node.inputs[2]  # params:<pipeline>.<registry>
            if registry not in registries:
                try:
                    registries[registry] = dict(catalog.load(registry) or {})
                except Exception:  # noqa: BLE001 - params only decorate the nested run
                    registries[registry] = {}
            entry = registries[registry].get(method)
            if not isinstance(entry, Mapping):
                continue
            # the pipeline's own registry ("params:mvfs.selectors"): no prefix; a study's
            # ("params:miml.reuters.methods"): "reuters."
            study = registry.removeprefix("params:").split(".")[1:-1]
            prefix = "".join(f"{part}." for part in study)
            info = self._methods.setdefault(method, {"params": {}})
            info["params"].update(flatten_params(dict(entry), prefix))
            fitted = {k: v for k, v in entry.items() if k != "readings"}
            for reading, options in (entry.get("readings") or {}).items():
                read = self._methods.setdefault(str(reading), {"params": {}})
                read["reading_of"] = method
                read["params"].update(flatten_params(fitted, prefix))
                read["params"].update(flatten_params(options or {}, f"{prefix}reading."))

    @hook_impl
    def before_pipeline_run(self, run_params: dict[str, Any], pipeline, catalog) -> None:
        if self._config.get("enabled", True) is False:
            return
        import mlflow

        self._reset_run_state()
        self._catalog = catalog
        if self._project_path is None:
            self._project_path = Path(run_params.get("project_path") or Path.cwd())
        names = run_params.get("pipeline_names") or ["__default__"]
        experiment = self._config.get("experiment_name") or "+".join(names)
        self._experiment = experiment
        uri = self._tracking_uri()
        open_tracking_store(mlflow, uri)
        if local_store(uri):
            close_orphaned_runs(mlflow)
        experiment_id = self._get_experiment_id(mlflow, experiment)
        self._experiment_id = experiment_id
        self._drop_empty_default(mlflow)
        env = run_params.get("env") or "base"
        description = "\n\n".join(
            t for t in (self._run_description(names, env), _execution_note(catalog)) if t
        )
        git = _git_state(self._project_path)
        self._child_tags = {
            "kedro.run_id": str(run_params.get("run_id")),
            "kedro.env": env,
            "kedro.pipelines": ",".join(names),
            **git,
            **process_tags(),
        }
        run_name = f"{experiment}-{env}-{run_params.get('run_id', '')[:19]}"
        run = mlflow.start_run(
            experiment_id=experiment_id,
            run_name=run_name,
            tags={
                **self._child_tags,
                "kedro.runner": _runner_name(run_params.get("runner")),
                "kedro.version": str(run_params.get("kedro_version")),
                "python": platform.python_version(),
                **({"mlflow.note.content": description} if description else {}),
            },
        )
        self._run_id = run.info.run_id
        self._pid = os.getpid()
        self._child_tags["kedro.parent_run_name"] = run_name
        # what started the run (the UI's Source and User columns), for the method runs too
        self._child_tags.update(
            {
                k: v
                for k, v in run.data.tags.items()
                if k.startswith("mlflow.source.") or k == "mlflow.user"
            }
        )
        self._watch_interruptions()
        params: dict[str, str] = {"kedro.env": env}
        for name in sorted(pipeline.inputs()):
            if name.startswith("params:"):
                params.update(flatten_params(catalog.load(name), name[len("params:") :] + "."))
        for key, value in (run_params.get("runtime_params") or {}).items():
            params[f"runtime.{key}"] = str(value)[:6000]
        items = list(params.items())
        for start in range(0, len(items), 100):
            mlflow.log_params(dict(items[start : start + 100]))
        self._read_methods(pipeline, catalog)
        logger.info(
            "MLflow run %s in experiment %r (%s).",
            self._run_id,
            experiment,
            mlflow.get_tracking_uri(),
        )

    # ------------------------------------------------------------------------------------
    # During the run: a method's nested run opens when its training node finishes
    # ------------------------------------------------------------------------------------
    def _open_child(self, method: str) -> str:
        """The open nested run of ``method``, created (with its params) if need be."""
        if method in self._children:
            return self._children[method]
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        client = MlflowClient()
        info = self._methods.get(method, {})
        tags = {
            **self._child_tags,
            "mlflow.parentRunId": self._run_id,
            "method": method,
            **({"reading_of": info["reading_of"]} if info.get("reading_of") else {}),
        }
        run = client.create_run(self._experiment_id, run_name=method, tags=tags)
        run_id = run.info.run_id
        self._children[method] = run_id
        params = [Param(k, str(v)[:6000]) for k, v in (info.get("params") or {}).items()]
        for start in range(0, len(params), 100):
            client.log_batch(run_id, params=params[start : start + 100])
        return run_id

    def _keep_examples(self, node, inputs: Mapping[str, Any], method: str, models) -> None:
        """Two test rows of each kept model's own unit, as its task gives them to ``predict``
        (the model's input example; the inputs are in memory only while the node runs)."""
        from multiview_lab.protocol import BagsTask, model_name, parse_method
        from multiview_lab.protocol.splits import key_columns

        wanted = {name for name in models if name not in self._examples}
        if not wanted or len(node.inputs) < 4:
            return
        datasets, splits = inputs[node.inputs[0]], inputs[node.inputs[1]]
        task = node.func.keywords["make_task"](inputs[node.inputs[3]])
        if not hasattr(task, "test_part"):  # e.g. sources and graphs, scored transductively
            self._examples.update({name: ("none", type(task).__name__) for name in wanted})
            return
        entry = parse_method(method, inputs[node.inputs[2]][method], task.method_options)
        keys = key_columns(splits)
        for split in splits.to_dict("records"):
            unit = {"method": method}
            unit.update({k: getattr(split[k], "item", lambda v=split[k]: v)() for k in keys})
            name = model_name(unit)
            if name not in wanted:
                continue
            X, _ = task.test_part(datasets[unit["dataset"]], split, entry)
            if isinstance(task, BagsTask):
                kind = "bags"
            elif isinstance(X, list | tuple):
                kind = "views"
            else:
                kind = "sparse" if hasattr(X, "tocsr") else "array"
            self._examples[name] = (kind, _head(X, kind))
            wanted.discard(name)
            if not wanted:
                return

    @hook_impl
    def after_node_run(self, node, inputs, outputs) -> None:
        # Only in the process and thread that own the parent run (ParallelRunner runs nodes in
        # other processes, ThreadRunner in other threads: their methods' runs open at the end).
        if (
            self._run_id is None
            or os.getpid() != self._pid
            or threading.current_thread() is not threading.main_thread()
        ):
            return
        try:
            method = _training_method(node)
            if method is None:
                return
            out = outputs.get(node.outputs[0]) if node.outputs else None
            if not isinstance(out, Mapping) or not len(out.get("results", ())):
                return  # a method not enabled in this environment
            self._open_child(method)
            if out.get("models"):
                self._keep_examples(node, inputs, method, out["models"])
        except Exception:  # noqa: BLE001 - tracking must never fail the pipeline
            logger.warning("MLflow: could not prepare the run of %s.", node.name, exc_info=True)

    # ------------------------------------------------------------------------------------
    # End of the run
    # ------------------------------------------------------------------------------------
    @hook_impl
    def after_pipeline_run(self, run_params: dict[str, Any], pipeline, catalog) -> None:
        project = self._project_path or Path(run_params.get("project_path") or Path.cwd())
        wrote = written_pipelines(pipeline, catalog, project)
        if self._run_id is None:
            write_run_info(project, run_params, wrote, mlflow_run_id=None)
            return
        import mlflow

        try:
            for path in write_run_info(
                project, run_params, wrote,
                mlflow_run_id=self._run_id, mlflow_experiment=self._experiment,
            ):  # fmt: skip
                mlflow.log_artifact(
                    str(path), artifact_path=path.parent.relative_to(project / "data").as_posix()
                )
            self._log_outputs(mlflow, pipeline, catalog)
        except Exception as exc:
            # An exception here does not reach on_pipeline_error: close the runs as failed.
            logger.exception("Logging to MLflow failed; marking run %s FAILED.", self._run_id)
            self._end_run(mlflow, "FAILED", f"logging to MLflow: {type(exc).__name__}: {exc}")
            raise
        run_id = self._run_id
        self._end_run(mlflow, "FINISHED")
        self._log_summary(pipeline, catalog, run_id)

    def _report_dirs(self, pipeline, catalog, project: Path | None = None) -> list[str]:
        """The folders under data/08_reporting the run wrote to, relative to the project."""
        project = Path(project or self._project_path)
        dirs = set()
        for name in pipeline.all_outputs():
            if name not in catalog:
                continue
            path = _output_path(catalog[name])
            if path is None or not _is_reporting_file(path, project):
                continue
            rel = path.resolve().relative_to(project.resolve()).parts
            cut = rel.index(REPORTING_DIR) + 2  # data/08_reporting/<pipeline>
            dirs.add(Path(*rel[:cut]).as_posix() + "/")
        return sorted(dirs)

    def _log_summary(self, pipeline, catalog, run_id: str) -> None:
        """The run's last lines: where its reports are, its MLflow run and how to browse it."""
        reports = ", ".join(self._report_dirs(pipeline, catalog)) or "none"
        nested = (
            f", with a nested run for each of its {fmt.count(self._n_methods, 'method')}"
            if self._n_methods
            else ""
        )
        logger.info(
            "Run finished. Reports: %s. MLflow run %s (experiment %r)%s. Browse it with "
            "`make mlflow-ui` (http://127.0.0.1:5000), the DAG with `make viz`.",
            reports,
            run_id,
            self._experiment,
            nested,
        )

    @hook_impl
    def on_pipeline_error(self, error, run_params, pipeline, catalog) -> None:
        if self._run_id is None:
            return
        import mlflow

        logger.info("MLflow run %s (and its method runs) marked FAILED.", self._run_id)
        self._end_run(mlflow, "FAILED", f"{type(error).__name__}: {error}")

    def _method_tables(self, pipeline, catalog) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """Per-method metrics of every summary table the shared reporting turned into metrics
        (:func:`~multiview_lab.pipelines.reporting.nodes.method_metrics`), and the metrics
        datasets they replace."""
        from multiview_lab.pipelines.reporting.nodes import method_metrics, summary_to_metrics

        per_method: dict[str, dict[str, Any]] = {}
        replaced: set[str] = set()
        for node in pipeline.nodes:
            if node.func is not summary_to_metrics or len(node.inputs) != 2:
                continue
            try:
                split = method_metrics(*(catalog.load(name) for name in node.inputs))
            except Exception:  # noqa: BLE001 - e.g. an in-memory summary: split by name instead
                logger.info("MLflow: %s split by metric name.", node.outputs[0], exc_info=True)
                continue
            if split:
                _merge(per_method, split, node.outputs[0])
                replaced.update(node.outputs)
        return per_method, replaced

    def _log_outputs(self, mlflow, pipeline, catalog) -> None:
        per_method, replaced = self._method_tables(pipeline, catalog)
        methods = set(self._methods) | set(per_method) | set(self._children)
        parent_metrics: dict[str, Any] = {}
        models: dict[str, dict[str, Any]] = {}  # method (None: the parent) -> name -> model
        for name in sorted(pipeline.all_outputs()):
            if name not in catalog:
                continue
            dataset = catalog[name]
            meta = (getattr(dataset, "metadata", None) or {}).get("mlflow")
            # a file dataset's file, or a PartitionedDataset's folder
            filepath = getattr(dataset, "_filepath", None) or getattr(dataset, "_path", None)
            if meta == "metrics" and name not in replaced:
                mine, rest = split_by_method(catalog.load(name), methods)
                _merge(per_method, mine, name)
                parent_metrics.update(rest)
            elif meta == "model":
                loaded = catalog.load(name)
                if not isinstance(loaded, Mapping):
                    loaded = {name.replace(".", "-"): loaded}
                for model_name, model in loaded.items():
                    owner = method_of_model(str(model_name), methods)
                    models.setdefault(owner, {})[str(model_name)] = model
            if filepath is None:
                continue
            path = Path(str(filepath))
            if not (meta == "artifact" or _is_reporting_file(path, self._project_path)):
                continue
            # keep data/<layer>/<method>/... as <layer>/<method>/... in the run's artefacts
            try:
                rel = path.resolve().relative_to((self._project_path / "data").resolve())
                artifact_dir = rel.parent.as_posix()
            except ValueError:
                artifact_dir = "."
            artifact_dir = None if artifact_dir == "." else artifact_dir
            if path.is_dir():
                mlflow.log_artifacts(
                    str(path), artifact_path=f"{artifact_dir or ''}/{path.name}".strip("/")
                )
            elif path.exists():
                mlflow.log_artifact(str(path), artifact_path=artifact_dir)
        _log_metrics(mlflow, parent_metrics)
        for model_name, model in (models.pop(None, None) or {}).items():
            logger.info("MLflow: model %s names no method of the run; logged in the parent.",
                        model_name)  # fmt: skip
            self._log_model(mlflow, model_name, model)
        # the methods in the order they first appear: training nodes, then the tables
        order = list(dict.fromkeys([*self._children, *per_method, *models]))
        if order:
            mlflow.set_tag("methods", ", ".join(order)[:5000])
        self._n_methods = len(order)
        for method in order:
            self._log_method(mlflow, method, per_method.get(method, {}), models.get(method, {}))

    def _log_method(self, mlflow, method: str, metrics: Mapping[str, Any], models) -> None:
        """Log one method's metrics, then its models (MLflow links the run's metrics to each
        model logged after them), into its nested run, and close it FINISHED."""
        run_id = self._open_child(method)
        with _active_experiment(mlflow, self._experiment_id):
            mlflow.start_run(run_id=run_id, nested=True)
            _log_metrics(mlflow, metrics)
            for model_name, model in models.items():
                self._log_model(mlflow, model_name, model)
            mlflow.end_run(status="FINISHED")
        if models:
            logger.info(
                "MLflow: %s of %s logged in its run.", fmt.count(len(models), "model"), method,
            )  # fmt: skip
        self._children.pop(method, None)

    def _log_model(self, mlflow, model_name: str, model: Any) -> None:
        """Log one estimator (skops) with a signature and an input example when its input is
        one array, an output-only signature and a described input when it is a list."""
        import mlflow.sklearn
        from mlflow.models import infer_signature

        requirements = self._config.get("model_pip_requirements") or []
        predict = next((f for f in ("predict", "transform") if hasattr(model, f)), "predict")
        kind, example = self._examples.get(model_name, (None, None))
        signature, input_example = None, None
        if kind == "none":
            note = (
                f"No signature: the pipeline's task ({example}) gives the model no array of test "
                "rows (e.g. sources and graphs scored transductively); see the estimator's "
                f"{predict} for its input."
            )
        else:
            note = (
                "No signature: no input example was taken (its training node did not run in "
                "this run's main thread, e.g. ParallelRunner or a run from the reports only)."
            )
        if kind not in (None, "none"):
            note = _describe_input(kind, example)
            try:
                output = getattr(model, predict)(example)
                if kind in ("array", "sparse"):
                    signature, input_example = infer_signature(example, output), example
                else:
                    signature = infer_signature(None, output)
            except Exception as exc:  # noqa: BLE001 - a model without a signature still logs
                note += f" (No signature: {predict} failed on the example: {exc})"
        params = {}
        with contextlib.suppress(Exception):
            params = {k: str(v)[:6000] for k, v in model.get_params(deep=False).items()}
        info = mlflow.sklearn.log_model(
            model,
            name=str(model_name),
            serialization_format="skops",
            skops_trusted_types=_trusted_types(model, self._skops_types),
            pip_requirements=list(requirements),
            pyfunc_predict_fn=predict,
            signature=signature,
            input_example=input_example,
            params=params or None,
            tags={"mlflow.note.content": note},
        )
        logger.debug("Logged MLflow model %s (%s).", model_name, info.model_uri)


def _merge(into: dict[str, dict[str, Any]], more: Mapping[str, Mapping[str, Any]], source: str):
    """Add per-method metrics; a name a method already has keeps its first value."""
    for method, metrics in more.items():
        mine = into.setdefault(method, {})
        clash = sorted(set(mine) & set(metrics))
        if clash:
            logger.warning("MLflow: %s repeats metric(s) %s of %s; kept the first.",
                           source, clash[:5], method)  # fmt: skip
        mine.update({k: v for k, v in metrics.items() if k not in mine})


class ExecutionHooks:
    """Point the training stage at the session's conf (its method registry) and close the Dask
    clusters a run started (one serves every training node of a run)."""

    @hook_impl
    def after_context_created(self, context) -> None:
        from multiview_lab.pipelines.training.pipeline import set_project_path

        set_project_path(context.project_path)

    @hook_impl
    def after_pipeline_run(self) -> None:
        from multiview_lab.protocol import close_backends

        close_backends()

    @hook_impl
    def on_pipeline_error(self) -> None:
        from multiview_lab.protocol import close_backends

        close_backends()
