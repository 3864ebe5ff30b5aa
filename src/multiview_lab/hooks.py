"""MLflow tracking for every ``kedro run``: one MLflow run per Kedro run.

Why project hooks rather than kedro-mlflow (see ``../shared/stack.md``): kedro-mlflow breaks
``kedro run`` until configured, cannot run under ``ParallelRunner``, its versioned artefact
datasets fail under Kedro 1.7 and it doubles CLI start-up. These hooks do the few things the
project needs, all from the main process, so they work under every runner:

* ``before_pipeline_run``: set the tracking URI (``conf/<env>/mlflow.yml``, overridden by the
  ``MLFLOW_TRACKING_URI`` environment variable), use the experiment named after the pipeline,
  start a run, log every parameter the pipeline reads (flattened) and the environment as tags;
* ``after_pipeline_run``: for each dataset the pipeline produced, log it by what its catalog
  entry says: files under ``data/08_reporting`` and entries with ``metadata: {mlflow: artifact}``
  as artefacts, ``metadata: {mlflow: metrics}`` as
  metrics (a flat ``dict`` name -> value, or name -> ``[[step, value], ...]`` for a series,
  e.g. a figure's line over training sizes), ``metadata: {mlflow: model}`` as MLflow scikit-learn
  models (a single estimator, or a ``dict`` name -> estimator); then mark the run FINISHED;
* ``on_pipeline_error`` (and any failure while logging): mark the run FAILED;
* a run interrupted by Ctrl-C or ``SIGTERM`` (which Kedro's error hook does not see) is marked
  KILLED with the reason as a tag, instead of staying RUNNING or being closed as FINISHED by
  MLflow's own exit handler. Only ``SIGKILL`` leaves a run RUNNING.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import platform
import re
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kedro.framework.hooks import hook_impl

logger = logging.getLogger(__name__)

REPORTING_DIR = "08_reporting"
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


def _is_reporting_file(filepath: Path, project_path: Path) -> bool:
    try:
        rel = filepath.resolve().relative_to(project_path.resolve())
    except ValueError:
        return False
    return REPORTING_DIR in rel.parts


def _trusted_types(model: Any) -> list[str]:
    """Types skops must trust to load ``model``; refuse anything outside the known packages."""
    import skops.io as sio

    untrusted = sio.get_untrusted_types(data=sio.dumps(model))
    foreign = [t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES)]
    if foreign:
        raise ValueError(f"Refusing to log a model holding untrusted types {foreign}.")
    return untrusted


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


def write_run_info(project_path: Path, run_params: Mapping[str, Any], **extra: Any) -> list[Path]:
    """Write ``data/08_reporting/<pipeline>/run_info.json`` for each pipeline of a finished run:
    which env, commit and MLflow run its reports come from (the reproduction pipeline reads it).

    A partial run (``--nodes``, ``--from-nodes``, ``--tags``, ...) records its filters under
    ``partial``. Returns the files written.
    """
    import datetime
    import json

    git = _git_state(project_path)
    filters = {k: run_params.get(k) for k in _FILTERS if run_params.get(k)}
    written = []
    for name in run_params.get("pipeline_names") or ["__default__"]:
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


class MlflowHooks:
    """Project hooks that track each Kedro run in MLflow (see the module docstring)."""

    def __init__(self) -> None:
        self._run_id: str | None = None
        self._experiment: str | None = None
        self._catalog = None
        self._project_path: Path | None = None
        self._config: dict[str, Any] = {}
        self._previous_sigterm = None

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
        """Close the open run with ``status`` (and the error as a tag); stop watching signals."""
        if error is not None:
            mlflow.set_tag("error", error[:5000])
        mlflow.end_run(status=status)
        self._run_id = None
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

    def _experiment_id(self, mlflow, name: str) -> str:
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

    @hook_impl
    def before_pipeline_run(self, run_params: dict[str, Any], pipeline, catalog) -> None:
        if self._config.get("enabled", True) is False:
            return
        import mlflow

        self._catalog = catalog
        if self._project_path is None:
            self._project_path = Path(run_params.get("project_path") or Path.cwd())
        names = run_params.get("pipeline_names") or ["__default__"]
        experiment = self._config.get("experiment_name") or "+".join(names)
        self._experiment = experiment
        mlflow.set_tracking_uri(self._tracking_uri())
        experiment_id = self._experiment_id(mlflow, experiment)
        self._drop_empty_default(mlflow)
        env = run_params.get("env") or "base"
        description = "\n\n".join(
            t
            for t in (
                *(self._description("pipelines", n) for n in names),
                self._description("envs", env),
            )
            if t
        )
        run = mlflow.start_run(
            experiment_id=experiment_id,
            run_name=f"{experiment}-{env}-{run_params.get('run_id', '')[:19]}",
            tags={
                "kedro.run_id": str(run_params.get("run_id")),
                "kedro.env": env,
                "kedro.pipelines": ",".join(names),
                "kedro.runner": _runner_name(run_params.get("runner")),
                "kedro.version": str(run_params.get("kedro_version")),
                "python": platform.python_version(),
                **_git_state(self._project_path),
                **({"mlflow.note.content": description} if description else {}),
            },
        )
        self._run_id = run.info.run_id
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
        logger.info(
            "MLflow run %s in experiment %r (%s).",
            self._run_id,
            experiment,
            mlflow.get_tracking_uri(),
        )

    @hook_impl
    def after_pipeline_run(self, run_params: dict[str, Any], pipeline, catalog) -> None:
        project = self._project_path or Path(run_params.get("project_path") or Path.cwd())
        if self._run_id is None:
            write_run_info(project, run_params, mlflow_run_id=None)
            return
        import mlflow

        try:
            for path in write_run_info(
                project, run_params, mlflow_run_id=self._run_id, mlflow_experiment=self._experiment
            ):
                mlflow.log_artifact(
                    str(path), artifact_path=path.parent.relative_to(project / "data").as_posix()
                )
            self._log_outputs(mlflow, pipeline, catalog)
        except Exception:
            # An exception here does not reach on_pipeline_error: close the run as failed.
            logger.exception("Logging to MLflow failed; marking run %s FAILED.", self._run_id)
            self._end_run(mlflow, "FAILED")
            raise
        run_id = self._run_id
        self._end_run(mlflow, "FINISHED")
        self._log_summary(pipeline, catalog, run_id)

    def _report_dirs(self, pipeline, catalog) -> list[str]:
        """The folders under data/08_reporting the run wrote to, relative to the project."""
        dirs = set()
        for name in pipeline.all_outputs():
            if name not in catalog:
                continue
            dataset = catalog[name]
            path = getattr(dataset, "_filepath", None) or getattr(dataset, "_path", None)
            if path is None or not _is_reporting_file(Path(str(path)), self._project_path):
                continue
            rel = Path(str(path)).resolve().relative_to(self._project_path.resolve()).parts
            cut = rel.index(REPORTING_DIR) + 2  # data/08_reporting/<pipeline>
            dirs.add(Path(*rel[:cut]).as_posix() + "/")
        return sorted(dirs)

    def _log_summary(self, pipeline, catalog, run_id: str) -> None:
        """The run's last lines: where its reports are, its MLflow run and how to browse it."""
        reports = ", ".join(self._report_dirs(pipeline, catalog)) or "none"
        logger.info(
            "Run finished. Reports: %s. MLflow run %s (experiment %r). Browse it with "
            "`make mlflow-ui` (http://127.0.0.1:5000), the DAG with `make viz`.",
            reports,
            run_id,
            self._experiment,
        )

    @hook_impl
    def on_pipeline_error(self, error, run_params, pipeline, catalog) -> None:
        if self._run_id is None:
            return
        import mlflow

        logger.info("MLflow run %s marked FAILED.", self._run_id)
        self._end_run(mlflow, "FAILED", f"{type(error).__name__}: {error}")

    def _log_outputs(self, mlflow, pipeline, catalog) -> None:
        for name in sorted(pipeline.all_outputs()):
            if name not in catalog:
                continue
            dataset = catalog[name]
            meta = (getattr(dataset, "metadata", None) or {}).get("mlflow")
            # a file dataset's file, or a PartitionedDataset's folder
            filepath = getattr(dataset, "_filepath", None) or getattr(dataset, "_path", None)
            if meta == "metrics":
                _log_metrics(mlflow, catalog.load(name))
            elif meta == "model":
                self._log_models(mlflow, name, catalog.load(name))
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

    def _log_models(self, mlflow, dataset_name: str, models: Any) -> None:
        import mlflow.sklearn

        if not isinstance(models, Mapping):
            models = {dataset_name.replace(".", "-"): models}
        requirements = self._config.get("model_pip_requirements") or []
        for model_name, model in models.items():
            info = mlflow.sklearn.log_model(
                model,
                name=str(model_name),
                serialization_format="skops",
                skops_trusted_types=_trusted_types(model),
                pip_requirements=list(requirements),
            )
            logger.info("Logged MLflow model %s (%s).", model_name, info.model_uri)


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
