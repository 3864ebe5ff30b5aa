"""multiview_lab.notebook: which run the notebooks say they read, and the fitted models they
find in that MLflow run, whether logged in the run itself or in nested per-method runs (MLflow
3 logged models), or as model folders among a run's artefacts (the older layout)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from multiview_lab.notebook import (
    PipelineResults,
    describe_run,
    find_project,
    read_run_info,
    tracking_uri,
)

X = np.array([[0.0], [1.0], [2.0], [3.0]])
Y = np.array([0, 0, 1, 1])


@pytest.fixture(scope="module")
def store_uri(tmp_path_factory):
    """One SQLite MLflow store for the module (creating one takes seconds)."""
    import mlflow

    uri = f"sqlite:///{tmp_path_factory.mktemp('nb_mlflow') / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_URI", uri)
        mlflow.set_tracking_uri(uri)
        yield uri
    mlflow.set_tracking_uri(None)


@pytest.fixture
def store(store_uri, tmp_path, request):
    """A new experiment in the module's store; returns (uri, experiment id)."""
    import mlflow

    experiment = mlflow.create_experiment(
        request.node.name, artifact_location=(tmp_path / "art").as_uri()
    )
    return store_uri, experiment


def _fitted(C=1.0):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=C).fit(X, Y)


def _log(name, model):
    import mlflow.sklearn

    mlflow.sklearn.log_model(model, name=name, pip_requirements=["scikit-learn"])


def _results(tmp_path, uri, run_id):
    return PipelineResults(
        pipeline="demo",
        project_path=tmp_path,
        env="smoke",
        catalog={},
        run_info={"mlflow_run_id": run_id},
        tracking_uri=uri,
    )


def test_models_of_the_run_itself_by_method_prefix(tmp_path, store):
    import mlflow

    uri, experiment = store
    with mlflow.start_run(experiment_id=experiment) as run:
        _log("PB-MVBoost-reference_MNIST1_task0", _fitted(0.1))
        _log("PB-MVBoost_MNIST1_task0", _fitted(1.0))
        _log("PB-MVBoost_MNIST2_task0", _fitted(2.0))
    results = _results(tmp_path, uri, run.info.run_id)
    assert len(results.models()) == 3
    # "PB-MVBoost" is not "PB-MVBoost-reference"; the words narrow it down to one unit
    assert results.find_model("PB-MVBoost", "MNIST2")["name"] == "PB-MVBoost_MNIST2_task0"
    assert results.find_model("PB-MVBoost")["name"] == "PB-MVBoost_MNIST1_task0"
    model = results.load_model("PB-MVBoost", "MNIST1")
    assert model.C == 1.0 and model.predict([[3.0]])[0] == 1
    with pytest.raises(LookupError, match="No logged model of 'Mono'"):
        results.find_model("Mono")


def test_models_of_nested_per_method_runs(tmp_path, store):
    import mlflow

    uri, experiment = store
    with mlflow.start_run(experiment_id=experiment) as parent:
        with mlflow.start_run(run_name="Mono", nested=True, experiment_id=experiment):
            _log("MNIST1_task0_draw0", _fitted(0.5))
        with mlflow.start_run(run_name="PB-MVBoost", nested=True, experiment_id=experiment):
            _log("MNIST1_task0_draw0", _fitted(3.0))
            with mlflow.start_run(
                run_name="readings", nested=True, experiment_id=experiment
            ):  # a grandchild
                _log("PB-MVBoost_MNIST2_task1", _fitted(4.0))
    results = _results(tmp_path, uri, parent.info.run_id)
    table = results.models()
    assert set(table["run_name"]) == {"Mono", "PB-MVBoost", "readings"}
    assert results.load_model("PB-MVBoost", "MNIST1").C == 3.0  # the child run's name
    assert results.load_model("Mono").C == 0.5
    assert results.load_model("PB-MVBoost", "MNIST2").C == 4.0  # the model's own name


def test_models_among_run_artefacts(tmp_path, store):
    import mlflow
    import mlflow.sklearn

    uri, experiment = store
    mlflow.sklearn.save_model(_fitted(5.0), tmp_path / "saved", pip_requirements=["scikit-learn"])
    with mlflow.start_run(experiment_id=experiment) as run:
        mlflow.log_artifacts(str(tmp_path / "saved"), artifact_path="models/GBC_mfeat_split0")
    results = _results(tmp_path, uri, run.info.run_id)
    row = results.find_model("GBC", "mfeat")
    assert row["model_uri"] == f"runs:/{run.info.run_id}/models/GBC_mfeat_split0"
    assert results.load_model("GBC").C == 5.0


def test_a_run_that_refitted_no_kept_model_says_why_it_has_none(tmp_path, store):
    import mlflow

    uri, experiment = store
    with mlflow.start_run(experiment_id=experiment) as run:
        mlflow.log_param("execution.refit_kept_models", False)
    results = _results(tmp_path, uri, run.info.run_id)
    with pytest.raises(LookupError, match=r"refit_kept_models: false.*--env=smoke` without it"):
        results.find_model("GBC")
    with mlflow.start_run(experiment_id=experiment) as plain:
        mlflow.log_param("execution.refit_kept_models", True)
    with pytest.raises(LookupError, match=r"it logged: \[\]$"):
        _results(tmp_path, uri, plain.info.run_id).find_model("GBC")


def test_no_run_recorded_says_how_to_get_one(tmp_path):
    results = PipelineResults("gbc", tmp_path, None, {}, None, "sqlite:///x.db")
    with pytest.raises(LookupError, match="make run PIPELINE=gbc"):
        results.models()
    assert "no data/08_reporting/gbc/run_info.json" in describe_run(None, "gbc")


def test_run_info_description_and_tracking_uri(tmp_path, monkeypatch):
    folder = tmp_path / "data/08_reporting/mvfs"
    folder.mkdir(parents=True)
    info = {
        "pipeline": "mvfs",
        "env": "base",
        "finished_at": "2026-12-01T10:00:00+00:00",
        "git_commit": "a" * 40,
        "git_dirty": "true",
        "partial": {"node_names": ["fit"]},
        "mlflow_run_id": "abc",
        "mlflow_experiment": "mvfs",
    }
    (folder / "run_info.json").write_text(json.dumps(info))
    assert read_run_info(tmp_path, "mvfs") == info and read_run_info(tmp_path, "gbc") is None
    text = describe_run(info, "mvfs")
    assert "`kedro run --pipeline=mvfs --env=base`" in text and "MLflow run: abc" in text
    assert "aaaaaaaaaaaa (uncommitted changes)" in text and "PARTIAL run" in text
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking_uri(tmp_path, {"tracking_uri": "sqlite:///mlflow.db"}) == (
        f"sqlite:///{tmp_path / 'mlflow.db'}"
    )
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere.db")
    assert tracking_uri(tmp_path, {}) == "sqlite:////elsewhere.db"


def test_find_project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.kedro]\npackage_name = 'x'\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.delenv("MULTIVIEW_LAB_PROJECT", raising=False)
    assert find_project(tmp_path / "notebooks") == tmp_path
    monkeypatch.setenv("MULTIVIEW_LAB_PROJECT", str(tmp_path / "notebooks"))
    assert find_project() == tmp_path / "notebooks"
