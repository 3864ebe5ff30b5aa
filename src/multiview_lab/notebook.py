"""Helpers for the notebooks of ``notebooks/``: a pipeline's latest results, read through the
Kedro catalog, with the run that wrote them and the fitted models that run logged to MLflow.

>>> from multiview_lab.notebook import open_results
>>> results = open_results("pbmvboost")          # doctest: +SKIP
Results of `kedro run --pipeline=pbmvboost --env=smoke`, finished 2026-12-01T14:26:34+00:00 ...
>>> table = results.load("summary")              # the catalog entry pbmvboost.summary
>>> model = results.load_model("PB-MVBoost", "MNIST1_task0")  # from the run's MLflow models

Which project and which configuration environment (``conf/<env>``):

* ``MULTIVIEW_LAB_PROJECT``: the project folder (default: the nearest folder above the working
  directory holding a Kedro ``pyproject.toml``, i.e. this repository from ``notebooks/``);
* ``MULTIVIEW_LAB_ENV``: the Kedro environment the catalog is opened with (default: the one
  recorded by the last run of the pipeline, else Kedro's default).

Every ``kedro run`` writes ``data/08_reporting/<pipeline>/run_info.json`` (env, finish time, git
commit, MLflow run id: see :func:`multiview_lab.hooks.write_run_info`);
:func:`open_results` prints it, so a notebook always says which run it shows. The fitted models
are found in that MLflow run **and its nested child runs** (MLflow 3 logged models, or model
folders among the runs' artefacts for the older layout).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT_VAR = "MULTIVIEW_LAB_PROJECT"
ENV_VAR = "MULTIVIEW_LAB_ENV"
REPORTING = Path("data") / "08_reporting"


def find_project(start: str | os.PathLike | None = None) -> Path:
    """``$MULTIVIEW_LAB_PROJECT``, else the nearest folder at or above ``start`` (default: the
    working directory) whose ``pyproject.toml`` has a ``[tool.kedro]`` table."""
    if os.environ.get(PROJECT_VAR):
        return Path(os.environ[PROJECT_VAR]).expanduser().resolve()
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.kedro]" in pyproject.read_text(encoding="utf-8"):
            return folder
    raise FileNotFoundError(
        f"No Kedro project at or above {here}: set {PROJECT_VAR} to the project folder."
    )


def read_run_info(project_path: Path, pipeline: str) -> dict[str, Any] | None:
    """The ``run_info.json`` the last run of ``pipeline`` wrote, or ``None`` before any run."""
    path = Path(project_path) / REPORTING / pipeline / "run_info.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def tracking_uri(project_path: Path, mlflow_config: dict[str, Any] | None) -> str:
    """The MLflow tracking URI the project's hooks log to: ``$MLFLOW_TRACKING_URI``, else
    ``conf/<env>/mlflow.yml``'s ``tracking_uri`` (a relative SQLite path is anchored at the
    project root)."""
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"]
    uri = str((mlflow_config or {}).get("tracking_uri") or "sqlite:///mlflow.db")
    prefix = "sqlite:///"
    if uri.startswith(prefix) and not uri.startswith(prefix + "/"):
        uri = prefix + str(Path(project_path) / uri[len(prefix) :])
    return uri


def describe_run(info: dict[str, Any] | None, pipeline: str) -> str:
    """One paragraph saying which run wrote the results (from its ``run_info.json``)."""
    if not info:
        return (
            f"WARNING: no data/08_reporting/{pipeline}/run_info.json: these files come from an "
            "unknown (older) run; re-run the pipeline to know which."
        )
    commit = str(info.get("git_commit") or "unknown")
    if re.fullmatch(r"[0-9a-f]{40}", commit):
        commit = commit[:12] + (" (uncommitted changes)" if info.get("git_dirty") == "true" else "")
    lines = [
        f"Results of `kedro run --pipeline={info.get('pipeline', pipeline)} "
        f"--env={info.get('env')}`, finished {info.get('finished_at')} (UTC)",
        f"  git commit: {commit}",
        f"  MLflow run: {info.get('mlflow_run_id')} "
        f"(experiment {info.get('mlflow_experiment', pipeline)!r})",
    ]
    if info.get("partial"):
        lines.append(f"  PARTIAL run, only {info['partial']}: other outputs may be older.")
    if info.get("runtime_params"):
        lines.append(f"  runtime parameters: {info['runtime_params']}")
    if info.get("env") in ("smoke", None):
        lines.append("  (a smoke run: a tiny slice for checks, not comparable with the paper)")
    return "\n".join(lines)


def _run_tree(client, run_id: str) -> list:
    """The run ``run_id`` and every run nested under it (children, grandchildren, ...)."""
    from mlflow.entities import ViewType

    root = client.get_run(run_id)
    # a nested run may sit in another experiment (``start_run(nested=True)`` without an id)
    experiments = [root.info.experiment_id] + [
        e.experiment_id
        for e in client.search_experiments(view_type=ViewType.ALL)
        if e.experiment_id != root.info.experiment_id
    ]
    runs, frontier = [root], [run_id]
    while frontier:
        parent = frontier.pop()
        token = None
        while True:
            page = client.search_runs(
                experiments,
                filter_string=f"tags.`mlflow.parentRunId` = '{parent}'",
                run_view_type=ViewType.ALL,
                max_results=500,
                page_token=token,
            )
            runs.extend(page)
            frontier.extend(r.info.run_id for r in page)
            token = page.token
            if not token:
                break
    return runs


def _artifact_models(client, run_id: str, path: str | None = None) -> list[str]:
    """Folders of ``run_id``'s artefacts holding an ``MLmodel`` file (the pre-MLflow-3 layout)."""
    found = []
    for item in client.list_artifacts(run_id, path):
        if item.is_dir:
            found.extend(_artifact_models(client, run_id, item.path))
        elif Path(item.path).name == "MLmodel":
            found.append(str(Path(item.path).parent.as_posix()))
    return found


def logged_models(run_id: str, uri: str | None = None):
    """The models logged by MLflow run ``run_id`` and its nested runs, as a DataFrame with the
    columns ``name`` (the model's name), ``run_name``, ``run_id``, ``method`` (a ``method``
    tag of the model or its run, when one is set) and ``model_uri`` (for
    ``mlflow.sklearn.load_model``), sorted by run then name."""
    import pandas as pd
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    runs = _run_tree(client, run_id)
    by_id = {r.info.run_id: r for r in runs}
    rows = []

    def method_tag(*tag_sets):
        for tags in tag_sets:
            for key in ("method", "multiview_lab.method", "kedro.method"):
                if tags.get(key):
                    return str(tags[key])
        return None

    experiment_ids = sorted({r.info.experiment_id for r in runs})
    for rid, run in by_id.items():
        token = None
        while True:
            page = client.search_logged_models(
                experiment_ids, filter_string=f"source_run_id = '{rid}'", page_token=token
            )
            for m in page:
                rows.append(
                    {
                        "name": m.name,
                        "run_name": run.info.run_name,
                        "run_id": rid,
                        "method": method_tag(m.tags or {}, run.data.tags),
                        "model_uri": m.model_uri,
                    }
                )
            token = page.token
            if not token:
                break
    if not rows:  # models logged as run artefacts (``artifact_path=``, MLflow 2)
        for rid, run in by_id.items():
            for folder in _artifact_models(client, rid):
                rows.append(
                    {
                        "name": Path(folder).name,
                        "run_name": run.info.run_name,
                        "run_id": rid,
                        "method": method_tag(run.data.tags),
                        "model_uri": f"runs:/{rid}/{folder}",
                    }
                )
    columns = ["name", "run_name", "run_id", "method", "model_uri"]
    order = {rid: i for i, rid in enumerate(by_id)}
    table = pd.DataFrame(rows, columns=columns)
    if table.empty:
        return table
    table["_order"] = table["run_id"].map(order)
    return table.sort_values(["_order", "name"]).drop(columns="_order").reset_index(drop=True)


def _is_method(row, method: str, root_run_id: str) -> bool:
    names = {method, method.replace(".", "-")}
    if row["method"] in names:
        return True
    if any(row["name"] == n or row["name"].startswith(n + "_") for n in names):
        return True
    # a nested run per method: its name is the method (or ends with "/<method>")
    run_name = str(row["run_name"] or "")
    return row["run_id"] != root_run_id and any(
        run_name == n or run_name.endswith(("/" + n, ":" + n)) for n in names
    )


@dataclass
class PipelineResults:
    """A pipeline's latest results: its catalog, the run that wrote them, its MLflow models."""

    pipeline: str
    project_path: Path
    env: str | None
    catalog: Any
    run_info: dict[str, Any] | None
    tracking_uri: str
    _models: Any = field(default=None, repr=False)

    @property
    def mlflow_run_id(self) -> str | None:
        return (self.run_info or {}).get("mlflow_run_id")

    def describe(self) -> str:
        env = self.env or "Kedro's default (base + local)"
        return (
            f"{describe_run(self.run_info, self.pipeline)}\n"
            f"Project {self.project_path}; catalog opened with env {env}; "
            f"MLflow store {self.tracking_uri}"
        )

    def load(self, name: str):
        """Load catalog entry ``<pipeline>.<name>`` (or ``name`` itself if it is an entry)."""
        full = name if name in self.catalog else f"{self.pipeline}.{name}"
        return self.catalog.load(full)

    def models(self):
        """The run's logged models (see :func:`logged_models`); cached."""
        if self._models is None:
            if not self.mlflow_run_id:
                raise LookupError(
                    f"No MLflow run recorded for the {self.pipeline} results on disk (no "
                    "run_info.json, or MLflow disabled): re-run the pipeline, e.g. "
                    f"`make run PIPELINE={self.pipeline}`."
                )
            self._models = logged_models(self.mlflow_run_id, self.tracking_uri)
        return self._models

    def find_model(self, method: str, *words: str):
        """The first logged model of ``method`` whose name (or its run's name) contains every
        one of ``words`` (e.g. a data set and a split): a row of :meth:`models`."""
        table = self.models()
        hits = table[[_is_method(r, method, self.mlflow_run_id) for _, r in table.iterrows()]]
        for word in words:
            text = hits["name"].astype(str) + "/" + hits["run_name"].astype(str)
            hits = hits[text.str.contains(word, regex=False)]
        if hits.empty:
            raise LookupError(
                f"No logged model of {method!r} with {list(words)} in MLflow run "
                f"{self.mlflow_run_id} or its child runs; it logged: "
                f"{sorted(table['name'])[:30]}{self._why_no_models() if table.empty else ''}"
            )
        return hits.iloc[0]

    def _why_no_models(self) -> str:
        """Why a run logged no model, when its ``execution`` params say (else "")."""
        from mlflow.tracking import MlflowClient

        try:
            params = MlflowClient(self.tracking_uri).get_run(self.mlflow_run_id).data.params
        except Exception:  # noqa: BLE001 - only adds to an error message: never replaces it
            return ""
        if params.get("execution.refit_kept_models") != "False":
            return ""
        return (
            ". The run read its units from the unit archive without refitting the models it "
            "keeps (execution.refit_kept_models: false, e.g. `make paper-report`); run "
            f"`kedro run --pipelines={self.pipeline} --env={self.env or 'base'}` without it "
            "to fit and log them."
        )

    def load_model(self, method: str, *words: str):
        """``mlflow.sklearn.load_model`` of :meth:`find_model` (printing which model)."""
        import mlflow
        import mlflow.sklearn

        row = self.find_model(method, *words)
        mlflow.set_tracking_uri(self.tracking_uri)
        print(f"Loading {row['name']} ({row['model_uri']}, run {row['run_name']})")
        return mlflow.sklearn.load_model(row["model_uri"])


def _restore_notebook_display() -> None:
    """Undo, in a notebook's kernel, what opening a Kedro session does to its display.

    The pipelines' modules select matplotlib's file-only Agg backend when they are imported:
    figures show inline again. Kedro's ``RichHandler`` replaces IPython's plain-text formatter
    with rich's, which writes an empty output block before every result and colour codes into
    its text: IPython's own formatter comes back.
    """
    try:
        from IPython import get_ipython
        from IPython.core.formatters import PlainTextFormatter
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    shell.run_line_magic("matplotlib", "inline")
    formatters = shell.display_formatter.formatters
    if not isinstance(formatters["text/plain"], PlainTextFormatter):
        formatters["text/plain"] = PlainTextFormatter(parent=shell.display_formatter)


@contextlib.contextmanager
def _quiet_kedro():
    """Keep Kedro's INFO lines (logging set-up, every dataset load) out of the notebook: only
    warnings and errors show. ``logging.getLogger("kedro").setLevel("INFO")`` brings them back."""
    logging.disable(logging.INFO)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
        logging.getLogger("kedro").setLevel(logging.WARNING)


def open_results(
    pipeline: str, project: str | os.PathLike | None = None, env: str | None = None
) -> PipelineResults:
    """Open ``pipeline``'s latest results through the Kedro catalog and print which run
    wrote them (see the module docstring for the project and env defaults)."""
    project_path = Path(project).resolve() if project else find_project()
    info = read_run_info(project_path, pipeline)
    if info is None and not (project_path / REPORTING / pipeline).is_dir():
        raise FileNotFoundError(
            f"No {pipeline} results in {project_path / REPORTING}: run "
            f"`make run PIPELINE={pipeline}` (or `kedro run --pipeline={pipeline} --env=smoke` "
            "for a quick one) first."
        )
    env = env or os.environ.get(ENV_VAR) or (info or {}).get("env") or None
    with _quiet_kedro():
        from kedro.framework.session import KedroSession
        from kedro.framework.startup import bootstrap_project

        bootstrap_project(project_path)
        with KedroSession.create(project_path=project_path, env=env) as session:
            context = session.load_context()
            try:
                mlflow_config = dict(context.config_loader["mlflow"] or {})
            except KeyError:
                mlflow_config = {}
    _restore_notebook_display()
    results = PipelineResults(
        pipeline=pipeline,
        project_path=project_path,
        env=env,
        catalog=context.catalog,
        run_info=info,
        tracking_uri=tracking_uri(project_path, mlflow_config),
    )
    print(results.describe())
    if info and env and info.get("env") != env:
        print(
            f"WARNING: the files on disk come from a run in env {info.get('env')!r}, not {env!r}."
        )
    return results
