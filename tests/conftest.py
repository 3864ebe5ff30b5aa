"""Shared fixtures: a temporary copy of the project in which pipelines run end to end.

The copy holds ``pyproject.toml``, ``conf/``, an empty ``src/`` (the package is the installed one) and the raw data the run needs. MLflow logs to a SQLite store inside the copy (``MLFLOW_TRACKING_URI``),
so the developer's own ``mlflow.db`` is never touched.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
LAYERS = (
    "02_intermediate",
    "03_primary",
    "04_feature",
    "05_model_input",
    "06_models",
    "07_model_output",
    "08_reporting",
)


def synthetic_views(n_train: int = 400, n_test: int = 150, seed: int = 0) -> dict:
    """``{"SYN": {X_train, X_test, y_train, y_test}}``: 3 classes, 3 noisy views of 12 features
    (float32) for the one-vs-all multiview tasks."""
    rng = np.random.default_rng(seed)
    y_train, y_test = rng.integers(0, 3, n_train), rng.integers(0, 3, n_test)

    def make(y):
        base = np.eye(3)[y] * 40
        return [
            (base @ rng.normal(size=(3, 12)) + rng.normal(0, 30, (len(y), 12))).astype(np.float32)
            for _ in range(3)
        ]

    return {
        "SYN": {"X_train": make(y_train), "X_test": make(y_test), "y_train": y_train,
                "y_test": y_test}
    }  # fmt: skip


def make_project_copy(dest: Path, raw_files: list[str]) -> Path:
    """Copy the project's configuration and the listed raw files into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_ROOT / "pyproject.toml", dest / "pyproject.toml")
    shutil.copy(PROJECT_ROOT / ".telemetry", dest / ".telemetry")
    shutil.copytree(PROJECT_ROOT / "conf", dest / "conf", ignore=shutil.ignore_patterns("local"))
    (dest / "conf" / "local").mkdir(exist_ok=True)
    (dest / "src").mkdir(exist_ok=True)  # Kedro checks it exists; the package is installed
    for rel in raw_files:
        src = PROJECT_ROOT / "data" / "01_raw" / rel
        target = dest / "data" / "01_raw" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy(src, target)
    for layer in LAYERS:
        (dest / "data" / layer).mkdir(parents=True, exist_ok=True)
    return dest


#: the Kedro run ids of the ``run_pipeline`` calls in each project copy, oldest first (MLflow's
#: ``kedro.run_id`` tag)
RUN_IDS: dict[Path, list[str]] = {}


def run_pipeline(project: Path, pipeline: str, env: str = "smoke", runtime_params=None):
    """Run one pipeline through a real KedroSession (hooks included) in ``project``."""
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(project)
    with KedroSession.create(
        project_path=project, env=env, runtime_params=runtime_params or {}
    ) as session:
        RUN_IDS.setdefault(Path(project), []).append(session.session_id)
        return session.run(pipeline_names=[pipeline])


def project_run(experiment: str, project: Path):
    """The MLflow client and the parent run of the last ``run_pipeline`` in ``project`` among
    the runs of ``experiment`` (named after the pipeline) in the test store.

    Other tests of the same worker run the same pipeline and env into the session's store, and
    some run other pipelines or partial runs in the same project copy, so "the latest smoke run"
    is not necessarily this project's: the run is the one tagged with the project's latest
    Kedro session id that has a run in ``experiment``. Its methods' nested runs:
    :func:`method_runs`."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, f"no MLflow experiment {experiment!r} (named after the pipeline)"
    runs = client.search_runs([exp.experiment_id])
    by_session = {
        r.data.tags.get("kedro.run_id"): r for r in runs if "mlflow.parentRunId" not in r.data.tags
    }
    for session_id in reversed(RUN_IDS.get(Path(project), [])):
        if session_id in by_session:
            return client, by_session[session_id]
    raise AssertionError(f"no MLflow run of {project} among {len(by_session)} {experiment} runs")


def method_runs(client, run) -> dict:
    """The nested runs of a parent run, by method name."""
    children = client.search_runs(
        [run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run.info.run_id}'"
    )
    return {r.info.run_name: r for r in children}


def logged_models(client, run) -> dict:
    """The models logged by a parent run (in its methods' runs, or itself), by name."""
    import mlflow

    ids = {run.info.run_id, *(r.info.run_id for r in method_runs(client, run).values())}
    models = mlflow.search_logged_models(
        experiment_ids=[run.info.experiment_id], output_format="list"
    )
    return {m.name: m for m in models if m.source_run_id in ids}


@pytest.fixture(scope="session")
def mlflow_uri(tmp_path_factory):
    """A fresh SQLite MLflow store for the whole test session."""
    path = tmp_path_factory.mktemp("mlflow") / "mlflow.db"
    uri = f"sqlite:///{path}"
    old = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = uri
    os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")
    yield uri
    if old is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = old


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test made: node functions return open figures, which Kedro's
    ``MatplotlibDataset`` closes after saving, but a test calling a node directly does not (and
    pyplot would warn about more than 20 open figures)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


#: the raw data each pipeline's smoke run reads
SMOKE_RAW = {
    "pbmvboost": ["mnist.npz"],
    "gbc": ["mfeat", "terrorist_attack"],
    "miml": ["miml_scene", "corel_mi", "miml_reuters_text", "mil_newsgroups"],
    "memd": ["genes", "20newsgroups"],
    "mvfs": ["mfeat"],
    "benchmark": ["3sources"],
}


@pytest.fixture(scope="session")
def smoke_project(tmp_path_factory, mlflow_uri):
    """``smoke_project(name)``: the project copy after one ``kedro run --pipelines=<name>
    --env=smoke``, run once per test session and shared by every test that reads it (the
    pipeline's own tests, the notebooks, the reproduction report)."""
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            project = make_project_copy(tmp_path_factory.mktemp(f"{name}_project"), SMOKE_RAW[name])
            run_pipeline(project, name, env="smoke")
            done[name] = project
        return done[name]

    return get


@pytest.fixture(scope="session")
def pbmvboost_smoke_project(smoke_project):
    """The project copy after one ``kedro run --pipelines=pbmvboost --env=smoke``."""
    return smoke_project("pbmvboost")
