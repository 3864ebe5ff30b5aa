"""End to end: ``kedro run --pipeline=gbc --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to a temporary SQLite store."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.io import NpzDataset
from tests.conftest import make_project_copy, mlflow_runs, run_pipeline

pytestmark = pytest.mark.slow

METHODS = {
    "GBC",
    "GBC-no-consensus",
    "GBC-no-graph",
    "GBC-lambda0",
    "GBC-no-weight-learning",
    "SVM",
    "Self-SVM",
    "GBDT",
    "Self-GBDT",
}


@pytest.fixture(scope="module")
def gbc_smoke_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(
        tmp_path_factory.mktemp("gbc_project"), ["mfeat", "terrorist_attack"]
    )
    run_pipeline(project, "gbc", env="smoke")
    return project


def test_catalog_outputs(gbc_smoke_project):
    out = gbc_smoke_project / "data"
    results = pd.read_csv(out / "07_model_output/gbc/results.csv")
    assert len(results) == 2 * 2 * 2 * len(METHODS)  # datasets x settings x train % x methods
    assert set(results["method"]) == METHODS
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
    assert (out / "05_model_input/gbc/splits.parquet").exists()


def test_mlflow_run_finished_with_params_metrics_artifacts(gbc_smoke_project):
    client, runs = mlflow_runs("gbc")
    run = [r for r in runs if r.data.tags.get("kedro.env") == "smoke"][-1]
    assert run.info.status == "FINISHED"
    assert run.data.params["gbc.protocol.n_splits"] == "1"
    assert run.data.params["gbc.methods.GBC.params.n_iter"] == "5"
    assert 0 <= run.data.metrics["mfeat/uniform/GBC/10/error_mean"] <= 1
    assert "terrorist/non_overlapping/Self-GBDT/50/error_mean" in run.data.metrics
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


def test_bad_setting_fails_the_run(tmp_path, mlflow_uri):
    project = make_project_copy(tmp_path / "p", ["mfeat", "terrorist_attack"])
    with pytest.raises(ValueError, match="settings"):
        run_pipeline(
            project,
            "gbc",
            env="smoke",
            runtime_params={"gbc": {"protocol": {"settings": ["sparse"]}}},
        )
    _, runs = mlflow_runs("gbc")
    assert runs[-1].info.status == "FAILED" and "settings" in runs[-1].data.tags["error"]
    reports = project / "data" / "08_reporting" / "gbc"
    assert (reports / "graphs.csv").exists()  # the graph stage ran before the failure
    assert not (reports / "table_error.csv").exists() and not (reports / "figures").exists()
