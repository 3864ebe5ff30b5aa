"""Shared fixtures: a temporary copy of the project in which pipelines run end to end.

The copy holds ``pyproject.toml``, ``conf/``, an empty ``src/`` (the package is the installed one) and the raw data the run needs. MLflow logs to a SQLite store inside the copy (``MLFLOW_TRACKING_URI``),
so the developer's own ``mlflow.db`` is never touched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


def run_pipeline(project: Path, pipeline: str, env: str = "smoke", runtime_params=None):
    """Run one pipeline through a real KedroSession (hooks included) in ``project``."""
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(project)
    with KedroSession.create(
        project_path=project, env=env, runtime_params=runtime_params or {}
    ) as session:
        return session.run(pipeline_names=[pipeline])


def mlflow_runs(experiment: str):
    """The MLflow client and the runs of ``experiment`` in the test store, oldest first."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, f"no MLflow experiment {experiment!r} (named after the pipeline)"
    return client, client.search_runs([exp.experiment_id], order_by=["attributes.start_time"])


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


@pytest.fixture(scope="session")
def pbmvboost_smoke_project(tmp_path_factory, mlflow_uri):
    """The project copy after one ``kedro run --pipeline=pbmvboost --env=smoke``."""
    project = make_project_copy(tmp_path_factory.mktemp("pbmvboost_project"), ["mnist.npz"])
    run_pipeline(project, "pbmvboost", env="smoke")
    return project
