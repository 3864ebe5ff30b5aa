"""End to end: ``kedro run --pipeline=miml --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to a temporary SQLite store."""

import time

import mlflow
import numpy as np
import pandas as pd
import pytest

from tests.conftest import make_project_copy, mlflow_runs, run_pipeline

pytestmark = pytest.mark.slow

SCENE_METHODS = {
    "MIML-GP",
    "MIML-GP-special",
    "MIML-GP-special-identity",
    "MIMLSVM",
    "MIMLRBF",
    "MIML-kNN",
}
METRICS = ["hamming_loss", "one_error", "coverage", "ranking_loss", "one_minus_average_precision"]


@pytest.fixture(scope="module")
def miml_smoke(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("miml_project"), ["miml_scene", "corel_mi"])
    start = time.perf_counter()
    run_pipeline(project, "miml", env="smoke")
    return project, time.perf_counter() - start


def test_catalog_outputs(miml_smoke):
    project, seconds = miml_smoke
    out = project / "data"
    splits = pd.read_parquet(out / "05_model_input/miml/splits.parquet")
    assert splits.groupby("study").size().to_dict() == {"corel": 4, "figure3": 1, "scene": 2}
    results = pd.read_csv(out / "07_model_output/miml/results.csv")
    assert set(results["method"]) == SCENE_METHODS and len(results) == 2 * len(SCENE_METHODS)
    assert results[METRICS].ge(0).all().all() and results["one_error"].le(1).all()
    table = pd.read_csv(out / "08_reporting/miml/scene_table.csv")
    assert list(table.columns[:2]) == ["dataset", "method"] and (table["n_folds"] == 2).all()
    assert {f"{m}_mean" for m in METRICS} <= set(table.columns)
    md = (out / "08_reporting/miml/scene_table.md").read_text()
    assert md.startswith("| dataset | method | hamming_loss")
    corel = pd.read_csv(out / "08_reporting/miml/corel_table.csv")
    assert set(corel["method"]) == {"collective", "standard"}
    assert set(corel["dataset"]) == {"African", "Dinosaurs"} and (corel["n_splits"] == 2).all()
    assert (corel["accuracy_ci_low"] <= corel["accuracy_mean"]).all()
    study = pd.read_csv(out / "07_model_output/miml/figure3_study.csv")
    assert study["variant"].tolist() == ["exact", "v0", "v1"]
    assert (study.loc[study["variant"] != "exact", "m"] <= study["m"].iloc[0]).all()
    covs = np.load(out / "07_model_output/miml/label_covariances.npz")
    assert "MIML-GP/fold0" in covs.files and covs["MIML-GP/fold0"].shape == (5, 5)
    for png in (
        "figure3.png",
        "label_covariance.png",
        "figures/scene_metrics.png",
        "figures/scene_times.png",
    ):
        assert (out / "08_reporting/miml" / png).stat().st_size > 10_000
    assert seconds < 90  # < 60 s on an idle 2-core machine; margin for a shared one


def test_mlflow_run_finished_with_metrics_and_artifacts(miml_smoke):
    client, runs = mlflow_runs("miml")
    run = [r for r in runs if r.data.tags.get("kedro.env") == "smoke"][-1]
    assert run.info.status == "FINISHED"
    assert run.data.params["miml.protocol.folds_run"] == "[0, 1]"
    assert "scene/MIML-GP/one_minus_average_precision_mean" in run.data.metrics
    assert "corel/African/standard/accuracy_mean" in run.data.metrics
    reported = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/miml")}
    assert {
        "08_reporting/miml/scene_table.md",
        "08_reporting/miml/corel_table.md",
        "08_reporting/miml/figure3.png",
        "08_reporting/miml/label_covariance.png",
    } <= reported
    outputs = {a.path for a in client.list_artifacts(run.info.run_id, "07_model_output/miml")}
    assert "07_model_output/miml/results.csv" in outputs
    models = mlflow.search_logged_models(
        experiment_ids=[run.info.experiment_id],
        filter_string=f"source_run_id = '{run.info.run_id}'",
        output_format="list",
    )
    assert [m.name for m in models] == ["MIML-GP_scene_fold0"]
    project, _ = miml_smoke
    bags = [np.random.default_rng(0).normal(size=(9, 15)) for _ in range(4)]
    loaded = mlflow.sklearn.load_model(models[0].model_uri)
    local = pd.read_pickle(project / "data/06_models/miml/models.pkl")["MIML-GP_scene_fold0"]
    np.testing.assert_array_equal(loaded.predict_proba(bags), local.predict_proba(bags))
