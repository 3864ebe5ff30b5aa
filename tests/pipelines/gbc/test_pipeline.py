"""End to end: ``kedro run --pipeline=gbc --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to a temporary SQLite store; the same run on a 2-worker Dask
LocalCluster gives the same tables."""

import pickle

import mlflow
import numpy as np
import pandas as pd
import pytest

from multiview_lab.gbc.graphs import edges_to_adjacency
from multiview_lab.io import NpzDataset
from multiview_lab.protocol import close_backends
from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.conftest import (
    logged_models,
    make_project_copy,
    method_runs,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

METHODS = {
    "GBC",
    "GBC-no-consensus",
    "GBC-no-graph",
    "GBC-lambda0",
    "GBC-literal",
    "GBC-no-weight-learning",
    "SVM",
    "Self-SVM",
    "GBDT",
    "Self-GBDT",
}


@pytest.fixture(scope="module")
def gbc_smoke_project(smoke_project):
    return smoke_project("gbc")


def test_catalog_outputs(gbc_smoke_project):
    out = gbc_smoke_project / "data"
    results = pd.read_csv(out / "07_model_output/gbc/results.csv")
    assert len(results) == 2 * 2 * 2 * len(METHODS)  # datasets x settings x train % x methods
    assert list(results.columns) == [
        "dataset", "method", "setting", "train_pct", "split", "seed", "lambda0", "lambda1",
        "n_iter", "error", "fit_time_s", "score_time_s", "cpu_time_s",
    ]  # fmt: skip
    assert set(results["method"]) == METHODS
    assert (results.groupby(["dataset", "setting", "train_pct"])["seed"].nunique() == 1).all()
    assert set(results["setting"]) == {"uniform", "non_overlapping"}
    assert results["error"].between(0, 1).all()
    table = pd.read_csv(out / "08_reporting/gbc/table_error.csv")
    assert list(table.columns[:5]) == ["dataset", "setting", "method", "train_pct", "error_mean"]
    assert set(table["dataset"]) == {"mfeat", "terrorist"} and set(table["train_pct"]) == {10, 50}
    assert (out / "08_reporting/gbc/table_error.md").read_text().startswith("| dataset")
    for png in ("weights.png", "figures/error_mfeat.png", "figures/error_terrorist.png"):
        assert (out / "08_reporting/gbc" / png).stat().st_size > 10_000
    graphs = NpzDataset(filepath=str(out / "04_feature/gbc/mfeat_graphs.npz")).load()
    assert list(graphs["names"]) == ["mor", "mor_noisy"] and int(graphs["n_instances"]) == 250
    stats = pd.read_csv(out / "08_reporting/gbc/graphs.csv").set_index("graph")
    assert stats.loc["mor", "same_label_fraction"] > stats.loc["mor_noisy", "same_label_fraction"]
    terror = NpzDataset(filepath=str(out / "04_feature/gbc/terrorist_graphs.npz")).load()
    assert all((e[:, 0] < e[:, 1]).all() for e in terror["edges"])
    weights = pd.read_csv(out / "08_reporting/gbc/final_weights.csv")
    assert set(weights["method"]) == {"GBC"}
    sums = weights.groupby(["dataset", "setting", "train_pct", "kind"])["weight_mean"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=1e-9)
    table4 = pd.read_csv(out / "08_reporting/gbc/table4_sources.csv")
    assert table4["num_sources"].tolist() == [1, 2]
    study = pd.read_csv(out / "07_model_output/gbc/sources_results.csv")
    assert set(study["method"]) == {"GBC"} and study["num_sources"].tolist() == [1, 2]
    splits = pd.read_parquet(out / "05_model_input/gbc/splits.parquet")
    assert {"train", "test", "absent"} <= set(splits.columns) and len(splits) == 8
    assert (out / "05_model_input/gbc/source_count_splits.parquet").exists()


def test_mlflow_run_finished_with_params_metrics_artifacts(gbc_smoke_project):
    client, run = project_run("gbc", gbc_smoke_project)
    assert run.info.status == "FINISHED"
    assert run.data.params["gbc.protocol.n_splits"] == "1"
    assert run.data.params["gbc.methods.GBC.params.n_iter"] == "5"
    methods = method_runs(client, run)
    assert 0 <= methods["GBC"].data.metrics["mfeat/uniform/train_pct10/error"] <= 1
    assert "terrorist/non_overlapping/train_pct50/error" in methods["Self-GBDT"].data.metrics
    assert "mfeat/uniform/10/2/error_mean" in run.data.metrics  # Table 4 analogue
    reporting = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/gbc")}
    assert {
        "08_reporting/gbc/table_error.csv",
        "08_reporting/gbc/table4_sources.md",
        "08_reporting/gbc/weights.png",
        "08_reporting/gbc/graphs.csv",
    } <= reporting
    outputs = {a.path for a in client.list_artifacts(run.info.run_id, "07_model_output/gbc")}
    assert "07_model_output/gbc/results.csv" in outputs


def test_logged_models_load_and_predict_on_the_pipeline_inputs(gbc_smoke_project):
    """One model per method is logged (skops); it loads back with mlflow.sklearn and predicts
    on the pipeline's own sources and graphs like the catalog's model."""
    client, run = project_run("gbc", gbc_smoke_project)
    models = list(logged_models(client, run).values())
    by_name = {m.name: m for m in models}
    assert {name.split("_mfeat_")[0] for name in by_name} == METHODS
    data = gbc_smoke_project / "data"
    local = pickle.loads((data / "06_models/gbc/models.pkl").read_bytes())
    assert set(local) == set(by_name)
    mfeat = NpzDataset(filepath=str(data / "03_primary/gbc/mfeat.npz")).load()
    graphs = NpzDataset(filepath=str(data / "04_feature/gbc/mfeat_graphs.npz")).load()
    n = int(graphs["n_instances"])
    adjacency = [edges_to_adjacency(e, n) for e in graphs["edges"]]
    sources = list(mfeat["sources"])
    for method, args in (("GBC", (sources,)), ("SVM", (sources, adjacency))):
        name = f"{method}_mfeat_uniform_train_pct10_split0"
        loaded = mlflow.sklearn.load_model(by_name[name].model_uri)
        pred = loaded.predict(*args)
        np.testing.assert_array_equal(pred, local[name].predict(*args))
        assert pred.shape == (n,) and set(pred) <= set(mfeat["y"])
    # the baseline's inductive prediction on its own inputs is its transduction (uniform)
    np.testing.assert_array_equal(pred, local[name].predict_transductive())


@pytest.fixture(scope="module")
def gbc_dask_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("gbc_dask"), ["mfeat", "terrorist_attack"])
    try:
        run_pipeline(project, "gbc", env="smoke", runtime_params={"execution": {"backend": "dask"}})
    finally:
        close_backends()
    return project


def test_dask_backend_gives_the_local_tables(gbc_smoke_project, gbc_dask_project):
    """The smoke run on a real 2-worker LocalCluster (processes): same tables but timings."""
    timing = list(TIMING_COLUMNS)
    for table in ("results", "weights", "sources_results"):
        local, remote = (
            pd.read_csv(p / f"data/07_model_output/gbc/{table}.csv")
            for p in (gbc_smoke_project, gbc_dask_project)
        )
        assert len(local) > 0
        pd.testing.assert_frame_equal(
            local.drop(columns=timing, errors="ignore"),
            remote.drop(columns=timing, errors="ignore"),
        )
    _, run = project_run("gbc", gbc_dask_project)
    assert run.info.status == "FINISHED" and run.data.params["execution.backend"] == "dask"


def test_bad_setting_fails_the_run(tmp_path, mlflow_uri):
    project = make_project_copy(tmp_path / "p", ["mfeat", "terrorist_attack"])
    with pytest.raises(ValueError, match="settings"):
        run_pipeline(
            project,
            "gbc",
            env="smoke",
            runtime_params={"gbc": {"protocol": {"settings": ["sparse"]}}},
        )
    _, run = project_run("gbc", project)
    assert run.info.status == "FAILED" and "settings" in run.data.tags["error"]
    reports = project / "data" / "08_reporting" / "gbc"
    assert (reports / "graphs.csv").exists()  # the graph stage ran before the failure
    assert not (reports / "table_error.csv").exists() and not (reports / "figures").exists()
