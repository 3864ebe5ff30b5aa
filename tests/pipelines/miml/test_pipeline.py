"""End to end: ``kedro run --pipeline=miml --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to a temporary SQLite store; once locally and once on a 2-worker Dask
LocalCluster (processes), which must give the same tables."""

import pickle
import time

import mlflow
import numpy as np
import pandas as pd
import pytest

from multiview_lab.data.miml_scene import load_miml_scene
from multiview_lab.miml import evaluate_miml
from multiview_lab.pipelines.miml.nodes import prepare_scene
from multiview_lab.pipelines.miml.task import SceneTask
from multiview_lab.protocol import close_backends
from tests.conftest import (
    logged_models,
    make_project_copy,
    method_runs,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

SCENE_METHODS = [
    "MIML-GP",
    "MIML-GP-special",
    "MIML-GP-special-identity",
    "MIMLSVM",
    "MIMLRBF",
    "MIML-kNN",
]
FIGURE3 = ["exact", "eig-0.9", "eig-0.99"]  # the smoke run disables three settings
METRICS = ["hamming_loss", "one_error", "coverage", "ranking_loss", "one_minus_average_precision"]
NEWSGROUPS = ["collective", "standard"]
TABLES = [
    "results.csv",
    "corel_results.csv",
    "figure3_study.csv",
    "label_covariances.csv",
    "reuters_results.csv",
    "newsgroups_results.csv",
]
RAW = ["miml_scene", "corel_mi", "miml_reuters_text", "mil_newsgroups"]


@pytest.fixture(scope="module")
def miml_smoke(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("miml_project"), RAW)
    start = time.perf_counter()
    run_pipeline(project, "miml", env="smoke")
    return project, time.perf_counter() - start


@pytest.fixture(scope="module")
def miml_smoke_dask(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("miml_dask"), RAW)
    try:
        run_pipeline(
            project, "miml", env="smoke", runtime_params={"execution": {"backend": "dask"}}
        )
    finally:
        close_backends()
    return project


def test_catalog_outputs(miml_smoke):
    project, seconds = miml_smoke
    out = project / "data"
    scene_splits = pd.read_parquet(out / "05_model_input/miml/scene_splits.parquet")
    assert scene_splits["fold"].tolist() == [0, 1]
    assert len(pd.read_parquet(out / "05_model_input/miml/corel_splits.parquet")) == 4
    assert len(pd.read_parquet(out / "05_model_input/miml/figure3_splits.parquet")) == 1
    results = pd.read_csv(out / "07_model_output/miml/results.csv")
    assert (
        results["method"].tolist() == SCENE_METHODS * 2
        and results["fold"].tolist() == [0] * 6 + [1] * 6
    )
    assert results[METRICS].ge(0).all().all() and results["one_error"].le(1).all()
    assert (results.groupby("fold")["seed"].nunique() == 1).all()  # one seed per split
    table = pd.read_csv(out / "08_reporting/miml/scene_table.csv")
    assert list(table.columns[:2]) == ["dataset", "method"] and (table["n_folds"] == 2).all()
    assert {f"{m}_mean" for m in METRICS} <= set(table.columns)
    md = (out / "08_reporting/miml/scene_table.md").read_text()
    assert md.startswith("| dataset | method | Hamming loss")
    corel = pd.read_csv(out / "08_reporting/miml/corel_table.csv")
    assert set(corel["method"]) == {"collective", "standard"}
    assert set(corel["dataset"]) == {"African", "Dinosaurs"} and (corel["n_splits"] == 2).all()
    assert (corel["accuracy_ci_low"] <= corel["accuracy_mean"]).all()
    study = pd.read_csv(out / "07_model_output/miml/figure3_study.csv")
    assert study["variant"].tolist() == FIGURE3
    assert (study["m"] <= study["m"].iloc[0]).all() and study["m"].iloc[1:].is_monotonic_increasing
    assert study["rel_error_F"].iloc[0] == 0 and (study["rel_error_F"].iloc[1:] > 0).all()
    covs = pd.read_csv(out / "07_model_output/miml/label_covariances.csv")
    assert set(covs["method"]) == {"MIML-GP", "MIML-GP-special", "MIML-GP-special-identity"}
    assert len(covs) == 3 * 2 * 25  # methods with a K^f x folds x 5 x 5 labels
    for png in (
        "figure3.png",
        "label_covariance.png",
        "figures/scene_metrics.png",
        "figures/scene_times.png",
    ):
        assert (out / "08_reporting/miml" / png).stat().st_size > 10_000
    assert seconds < 150  # ~60 s on an idle 2-core machine; margin for a shared one


def test_text_studies_outputs(miml_smoke):
    """Reuters (Table 3) and 20 Newsgroups (Table 5) on the smoke slices: every method has
    its rows, the metrics lie in their ranges, the tables are written."""
    project, _ = miml_smoke
    out = project / "data"
    splits = pd.read_parquet(out / "05_model_input/miml/reuters_splits.parquet")
    assert splits["fold"].tolist() == [0, 1] and all(len(t) == 20 for t in splits["test"])
    results = pd.read_csv(out / "07_model_output/miml/reuters_results.csv")
    assert results["method"].tolist() == SCENE_METHODS * 2
    assert set(results["dataset"]) == {"reuters"} and results["fold"].tolist() == [0] * 6 + [1] * 6
    assert results[METRICS].notna().all().all() and results[METRICS].ge(0).all().all()
    assert results[[m for m in METRICS if m != "coverage"]].le(1).all().all()
    assert results["coverage"].le(6).all()  # at most Q - 1 = 6
    gp = results[results["method"].str.startswith("MIML-GP")]
    assert (gp["delta"] == 1.0).all() and (gp["rank_m"] <= 243).all()  # linear kernel
    table = pd.read_csv(out / "08_reporting/miml/reuters_table.csv")
    assert table["method"].tolist() == SCENE_METHODS and (table["n_folds"] == 2).all()
    assert {f"{m}_mean" for m in METRICS} <= set(table.columns)
    md = (out / "08_reporting/miml/reuters_table.md").read_text()
    assert md.startswith("| dataset | method | Hamming loss") and md.count("| reuters |") == 6
    ng = pd.read_csv(out / "07_model_output/miml/newsgroups_results.csv")
    assert ng["method"].tolist() == NEWSGROUPS * 4  # 2 repetitions x 2 folds
    assert ng["repeat"].tolist() == [0] * 4 + [1] * 4 and ng["fold"].tolist() == [0, 0, 1, 1] * 2
    for col in ("accuracy", "auc", "balanced_accuracy", "positive_rate"):
        assert ng[col].between(0, 1).all(), col
    assert (ng["n_test"] == 8).all()  # 40 bags, 5 folds
    table = pd.read_csv(out / "08_reporting/miml/newsgroups_table.csv")
    assert table["method"].tolist() == NEWSGROUPS and set(table["dataset"]) == {"Newsgroups2"}
    assert (table["n_repeats"] == 2).all() and (table["n_folds"] == 2).all()
    md = (out / "08_reporting/miml/newsgroups_table.md").read_text()
    assert md.startswith("| task | method | accuracy | AUC")


def test_dask_backend_gives_the_same_tables(miml_smoke, miml_smoke_dask):
    local_project, _ = miml_smoke
    for name in TABLES:
        local = pd.read_csv(local_project / "data/07_model_output/miml" / name)
        remote = pd.read_csv(miml_smoke_dask / "data/07_model_output/miml" / name)
        timing = [c for c in local.columns if c.endswith("_time_s")]
        pd.testing.assert_frame_equal(local.drop(columns=timing), remote.drop(columns=timing))
    _, run = project_run("miml", miml_smoke_dask)
    assert run.info.status == "FINISHED" and run.data.params["execution.backend"] == "dask"


def test_mlflow_run_finished_with_metrics_artifacts_and_models(miml_smoke):
    project, _ = miml_smoke
    client, run = project_run("miml", project)
    assert run.info.status == "FINISHED"
    assert run.data.params["miml.protocol.folds_run"] == "[0, 1]"
    methods = method_runs(client, run)
    assert "scene/one_minus_average_precision" in methods["MIML-GP"].data.metrics
    assert "reuters/one_minus_average_precision" in methods["MIML-GP"].data.metrics
    assert "corel/African/accuracy" in methods["standard"].data.metrics
    assert "newsgroups/Newsgroups2/auc" in methods["standard"].data.metrics
    reported = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/miml")}
    assert {
        "08_reporting/miml/scene_table.md",
        "08_reporting/miml/corel_table.md",
        "08_reporting/miml/reuters_table.md",
        "08_reporting/miml/newsgroups_table.md",
        "08_reporting/miml/figure3.png",
        "08_reporting/miml/label_covariance.png",
    } <= reported
    outputs = {a.path for a in client.list_artifacts(run.info.run_id, "07_model_output/miml")}
    assert "07_model_output/miml/results.csv" in outputs
    models = list(logged_models(client, run).values())
    names = {m.name: m for m in models}
    # one model per method of each study: its first split
    assert {f"{m}_scene_fold0" for m in SCENE_METHODS} <= set(names)
    assert {"collective_African_split0", "standard_African_split0"} <= set(names)
    assert {f"{m}_reuters_fold0" for m in SCENE_METHODS} <= set(names)
    assert {f"{m}_Newsgroups2_repeat0_fold0" for m in NEWSGROUPS} <= set(names)
    assert len(names) == 2 * len(SCENE_METHODS) + 2 + len(FIGURE3) + len(NEWSGROUPS)
    # a logged model loads back and predicts on the pipeline's inputs (fold 0's standardised
    # test bags) as the one in the catalog, and scores what the results table says
    scene = prepare_scene(
        load_miml_scene(project / "data/01_raw/miml_scene/miml_scene.npz"), {"max_bags": 200}
    )
    splits = pd.read_parquet(project / "data/05_model_input/miml/scene_splits.parquet")
    split = splits.iloc[0].to_dict()
    bags, Y = SceneTask().test_part(scene["scene"], split, None)
    local = pickle.loads((project / "data/06_models/miml/models.pkl").read_bytes())
    results = pd.read_csv(project / "data/07_model_output/miml/results.csv")
    for method in ("MIML-GP", "MIMLSVM"):
        loaded = mlflow.sklearn.load_model(names[f"{method}_scene_fold0"].model_uri)
        np.testing.assert_array_equal(
            loaded.decision_function(bags), local[f"{method}_scene_fold0"].decision_function(bags)
        )
        row = results[(results["method"] == method) & (results["fold"] == 0)].iloc[0]
        scores = evaluate_miml(loaded, bags, Y)
        for metric in METRICS:
            assert scores[metric] == pytest.approx(row[metric], abs=1e-12), (method, metric)


def test_table4_timing_study(miml_smoke):
    """Table 4: every scene and Reuters method timed on fold 0 (the smoke env's n_splits: 1),
    after its study's training (the node reads the study's results), CPU and wall seconds."""
    from multiview_lab.pipelines.miml.pipeline import create_pipeline

    nodes = {n.name: n for n in create_pipeline().nodes}
    assert "miml.results" in nodes["miml.time_timing"].inputs
    assert "miml.reuters_results" in nodes["miml.time_reuters_timing"].inputs
    project, _ = miml_smoke
    out = project / "data"
    for name, dataset in (("timing.csv", "scene"), ("reuters_timing.csv", "reuters")):
        timing = pd.read_csv(out / "07_model_output/miml" / name)
        assert timing["method"].tolist() == SCENE_METHODS
        assert set(timing["dataset"]) == {dataset} and set(timing["fold"]) == {0}
        assert (timing[["fit_cpu_s", "fit_time_s", "score_cpu_s", "score_time_s"]] > 0).all().all()
    md = (out / "08_reporting/miml/table4.md").read_text()
    assert "| dataset | method | training (CPU s) | testing (CPU s)" in md
    assert md.count("| scene |") == 6 and md.count("| reuters |") == 6
    assert (out / "08_reporting/miml/table4.png").stat().st_size > 10_000
