"""End to end: ``kedro run --pipeline=memd --env=smoke`` in a temporary project copy, with the
real MLflow hooks writing to the session's temporary SQLite store; then the same run on a real
2-worker Dask LocalCluster (processes), which must give the same tables."""

import pickle

import mlflow
import numpy as np
import pandas as pd
import pytest
import yaml

from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.conftest import (
    PROJECT_ROOT,
    logged_models,
    make_project_copy,
    method_runs,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

RAW = ["genes", "20newsgroups"]
TIMING = list(TIMING_COLUMNS)


@pytest.fixture(scope="module")
def memd_smoke_project(smoke_project):
    """The project copy after one ``kedro run --pipelines=memd --env=smoke``."""
    return smoke_project("memd")


def test_catalog_outputs(memd_smoke_project):
    out = memd_smoke_project / "data"
    results = pd.read_csv(out / "07_model_output/memd/results.csv")
    gene = results[results["data_type"] == "gene"]
    text = results[results["data_type"] == "text"]
    assert set(gene["dataset"]) == {"golub"} and set(text["dataset"]) == {"baseball_vs_hockey"}
    assert len(gene) == 8 * 3 * 2 and len(text) == 8 * 2 * 2  # methods x folds x repetitions
    assert "fit_seconds" not in results.columns and (results["fit_time_s"] > 0).all()
    assert results["accuracy"].between(0, 1).all()
    assert gene.query("method == 'MeMd-J'")["accuracy"].mean() > 0.85  # golub is easy
    assert results.query("method.str.startswith('MeMd')")["k"].ge(1).all()
    # one seed per split, shared by every method (paired comparison)
    assert results.groupby(["dataset", "run", "fold"])["seed"].nunique().eq(1).all()
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
    splits = pd.read_parquet(out / "05_model_input/memd/splits.parquet")
    assert list(splits.columns) == ["dataset", "data_type", "run", "fold", "seed", "train", "test"]
    assert len(splits) == 3 * 2 + 2 * 2


def test_every_catalog_entry_has_a_kedro_viz_layer():
    catalog = yaml.safe_load((PROJECT_ROOT / "conf/base/catalog_memd.yml").read_text())
    layers = {"raw", "intermediate", "primary", "feature", "model_input", "models"}
    layers |= {"model_output", "reporting"}
    for name, entry in catalog.items():
        assert entry["metadata"]["kedro-viz"]["layer"] in layers, name
    assert catalog["memd.models"]["metadata"]["mlflow"] == "model"


def test_mlflow_run_finished_with_metrics_artifacts_and_models(memd_smoke_project):
    client, run = project_run("memd", memd_smoke_project)
    assert run.info.status == "FINISHED"
    assert run.data.params["memd.protocol.gene.n_folds"] == "3"
    methods = method_runs(client, run)
    assert 0.85 < methods["MeMd-J"].data.metrics["golub/accuracy"] <= 1
    assert "baseball_vs_hockey/accuracy" in methods["NB-chi2"].data.metrics
    reported = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/memd")}
    assert {"08_reporting/memd/summary.csv", "08_reporting/memd/top_words.md"} <= reported
    model_output = {a.path for a in client.list_artifacts(run.info.run_id, "07_model_output/memd")}
    assert {"07_model_output/memd/results.csv", "07_model_output/memd/curves.csv"} <= model_output
    curves = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/memd/curves")}
    assert "08_reporting/memd/curves/accuracy_vs_k_text.png" in curves
    # the first unit of every method is logged; a logged model loads back and predicts on the
    # pipeline's own inputs (dense genes, sparse text) like the one in the catalog
    models = list(logged_models(client, run).values())
    logged = {m.name: m for m in models}
    assert len(logged) == 11
    data = memd_smoke_project / "data"
    local = pickle.loads((data / "06_models/memd/models.pkl").read_bytes())
    assert sorted(local) == sorted(logged)
    datasets = pickle.loads((data / "05_model_input/memd/datasets.pkl").read_bytes())
    for name, dataset in (
        ("MeMd-J_golub_gene_run0_fold0", "golub"),
        ("NB-chi2_baseball_vs_hockey_text_run0_fold0", "baseball_vs_hockey"),
    ):
        loaded = mlflow.sklearn.load_model(logged[name].model_uri)
        X = datasets[dataset]["X"]
        prediction = loaded.predict(X)
        np.testing.assert_array_equal(prediction, local[name].predict(X))
        assert len(np.unique(prediction)) == 2


@pytest.fixture(scope="module")
def memd_dask_project(tmp_path_factory, mlflow_uri, memd_smoke_project):
    """The same smoke run with ``execution.backend=dask`` (a 2-worker LocalCluster)."""
    project = make_project_copy(tmp_path_factory.mktemp("memd_dask"), RAW)
    params = {"execution": {"backend": "dask", "n_workers": 2, "scheduler_address": ""}}
    try:
        run_pipeline(project, "memd", env="smoke", runtime_params=params)
    finally:
        from multiview_lab.protocol import close_backends

        close_backends()
    return project


def test_dask_backend_gives_the_same_tables(memd_smoke_project, memd_dask_project):
    def table(project, name):
        return pd.read_csv(project / f"data/07_model_output/memd/{name}.csv")

    local, remote = table(memd_smoke_project, "results"), table(memd_dask_project, "results")
    assert len(local) == 80
    pd.testing.assert_frame_equal(local.drop(columns=TIMING), remote.drop(columns=TIMING))
    pd.testing.assert_frame_equal(
        table(memd_smoke_project, "curves"), table(memd_dask_project, "curves")
    )
    _, run = project_run("memd", memd_dask_project)
    assert run.info.status == "FINISHED" and run.data.params["execution.backend"] == "dask"


def test_a_run_from_the_unit_archive_computes_nothing_and_logs_no_model(
    tmp_path_factory, mlflow_uri
):
    """What ``make paper-report`` does on a fresh clone: a run whose units are all archived,
    with ``cache_only`` and ``refit_kept_models: false``, computes no unit (its table, timings
    included, is the archived run's), refits no kept model (none is logged) and finishes."""
    from multiview_lab.protocol.archive import archive_cache

    root = tmp_path_factory.mktemp("memd_archive")
    first = make_project_copy(root / "first", RAW)
    cache, archive = root / "cache", root / "archive"
    run_pipeline(
        first, "memd", env="smoke", runtime_params={"execution": {"cache_dir": str(cache)}}
    )
    archive_cache(cache, archive / "units.jsonl", commit="abc1234")
    fresh = make_project_copy(root / "fresh", RAW)
    params = {"archive_dir": str(archive), "cache_only": True, "refit_kept_models": False}
    run_pipeline(fresh, "memd", env="smoke", runtime_params={"execution": params})

    def results(project):
        return pd.read_csv(project / "data/07_model_output/memd/results.csv")

    pd.testing.assert_frame_equal(results(first), results(fresh))
    assert pickle.loads((fresh / "data/06_models/memd/models.pkl").read_bytes()) == {}
    client, run = project_run("memd", fresh)
    assert run.info.status == "FINISHED"
    assert run.data.params["execution.refit_kept_models"] == "False"
    note = run.data.tags["mlflow.note.content"]
    assert "No unit was computed" in note and "were not refitted, so they are not logged" in note
    first_note = project_run("memd", first)[1].data.tags["mlflow.note.content"]
    assert "No unit was computed" not in first_note and "not refitted" not in first_note
    assert logged_models(client, run) == {}
    assert len(logged_models(client, project_run("memd", first)[1])) == 11
