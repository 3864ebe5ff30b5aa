"""End to end: ``kedro run --pipeline=memd --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to the session's temporary SQLite store."""

import pandas as pd
import pytest

from tests.conftest import make_project_copy, mlflow_runs, run_pipeline

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def memd_smoke_project(tmp_path_factory, mlflow_uri):
    """The project copy after one ``kedro run --pipeline=memd --env=smoke``."""
    project = make_project_copy(tmp_path_factory.mktemp("memd_project"), ["genes", "20newsgroups"])
    run_pipeline(project, "memd", env="smoke")
    return project


def test_catalog_outputs(memd_smoke_project):
    out = memd_smoke_project / "data"
    results = pd.read_csv(out / "07_model_output/memd/results.csv")
    gene = results[results["data_type"] == "gene"]
    text = results[results["data_type"] == "text"]
    assert set(gene["dataset"]) == {"golub"} and set(text["dataset"]) == {"baseball_vs_hockey"}
    assert len(gene) == 8 * 3 * 2 and len(text) == 8 * 2 * 2  # methods x folds x repetitions
    assert results["accuracy"].between(0, 1).all()
    assert gene.query("method == 'MeMd-J'")["accuracy"].mean() > 0.85  # golub is easy
    assert results.query("method.str.startswith('MeMd')")["k"].ge(1).all()
    summary = pd.read_csv(out / "08_reporting/memd/summary.csv")
    assert list(summary.columns[:7]) == [
        "dataset",
        "method",
        "accuracy_mean",
        "accuracy_std",
        "k_mean",
        "k_std",
        "n_runs",
    ]
    assert len(summary) == 16 and (summary["n_runs"] == 2).all()
    assert (out / "08_reporting/memd/summary.md").read_text().startswith("| dataset")
    words = pd.read_csv(out / "08_reporting/memd/top_words.csv")
    assert set(words["class"]) == {"rec.sport.baseball", "rec.sport.hockey"}
    assert (words.groupby("class").size() == 5).all()
    for name in (
        "curves/accuracy_vs_k_genes",
        "curves/accuracy_vs_k_text",
        "figures/accuracy_genes",
    ):
        assert (out / f"08_reporting/memd/{name}.png").stat().st_size > 5_000
    curves = pd.read_csv(out / "07_model_output/memd/curves.csv")
    assert set(curves["method"]) == {"MeMd-J", "MeMd-JS", "MeMd-J-gaussian", "MeMd-JS-gaussian"}
    assert (out / "04_feature/memd/text_tasks.pkl").exists()
    assert (out / "05_model_input/memd/splits.parquet").exists()


def test_mlflow_run_finished_with_metrics_and_artifacts(memd_smoke_project):
    client, runs = mlflow_runs("memd")
    run = [r for r in runs if r.data.tags.get("kedro.env") == "smoke"][-1]
    assert run.info.status == "FINISHED"
    assert run.data.params["memd.protocol.gene.n_folds"] == "3"
    assert 0.85 < run.data.metrics["golub/MeMd-J/accuracy_mean"] <= 1
    assert "baseball_vs_hockey/NB-chi2/accuracy_mean" in run.data.metrics
    reported = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/memd")}
    assert {"08_reporting/memd/summary.csv", "08_reporting/memd/top_words.md"} <= reported
    model_output = {a.path for a in client.list_artifacts(run.info.run_id, "07_model_output/memd")}
    assert {"07_model_output/memd/results.csv", "07_model_output/memd/curves.csv"} <= model_output
    curves = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/memd/curves")}
    assert "08_reporting/memd/curves/accuracy_vs_k_text.png" in curves
