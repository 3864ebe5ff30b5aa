"""End to end: ``kedro run --pipelines=mvfs --env=smoke`` in temporary project copies, locally and
on a real 2-worker Dask LocalCluster (``execution.backend=dask``), with the MLflow hooks writing
to a temporary SQLite store."""

import pickle

import mlflow
import numpy as np
import pandas as pd
import pytest

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

SELECTORS = {"ADMM-MVFS", "RFS", "Fisher score", "ANOVA F", "ReliefF"}
METHODS = SELECTORS | {"All features"}
TIMING = list(TIMING_COLUMNS)


@pytest.fixture(scope="module")
def local_project(smoke_project):
    return smoke_project("mvfs")


@pytest.fixture(scope="module")
def dask_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("mvfs_dask"), ["mfeat"])
    try:
        run_pipeline(
            project, "mvfs", env="smoke", runtime_params={"execution": {"backend": "dask"}}
        )
    finally:
        close_backends()
    return project


def test_catalog_outputs(local_project):
    out = local_project / "data"
    results = pd.read_csv(out / "07_model_output/mvfs/results.csv")
    assert set(results["method"]) == METHODS
    # selectors x k x classifiers, one split; the all-features baseline is scored by 1-NN only
    assert len(results) == 5 * 2 * 2 + 2
    assert set(results["k"]) == {10, 40} and set(results["classifier"]) == {"linear_svm", "1nn"}
    assert results["accuracy"].between(0.5, 1).all()  # 10 balanced classes: chance is 0.1
    assert (results["seed"] == 0).all() and (results[TIMING] > 0).all().all()
    full = results[results["method"] == "All features"]
    assert full["accuracy"].nunique() == 1 and set(full["classifier"]) == {"1nn"}
    splits = pd.read_parquet(out / "05_model_input/mvfs/splits.parquet")
    assert len(splits) == 1 and len(splits["train"][0]) == 1000 and len(splits["test"][0]) == 1000
    summary = pd.read_csv(out / "08_reporting/mvfs/summary.csv")
    assert list(summary.columns[:5]) == ["dataset", "method", "classifier", "k", "accuracy_mean"]
    gap = pd.read_csv(out / "08_reporting/mvfs/objective_gap.csv")
    assert gap["rel_gap"].notna().all() and (gap["n_iter_method"] == 15).all()
    for png in (
        "convergence.png",
        "lam_sensitivity.png",
        "figures/accuracy_vs_k.png",
        "figures/training_time.png",
    ):
        assert (out / "08_reporting/mvfs" / png).stat().st_size > 10_000
    # λ by inner CV (smoke: 3 λ x 2 folds, 1-NN): the chosen λ reaches the ADMM and RFS
    chosen = pd.read_csv(out / "08_reporting/mvfs/lam_chosen.csv")
    assert list(chosen["split"]) == [0] and chosen["lam"].iloc[0] in (1.0, 100.0)
    table = pd.read_csv(out / "07_model_output/mvfs/lam_cv.csv")
    assert len(table) == 3 * 2 and table.loc[table["lam"] == 1000.0, "null_model"].all()
    rankings = pd.read_parquet(out / "07_model_output/mvfs/rankings.parquet").set_index("method")
    assert rankings.loc[["ADMM-MVFS", "RFS"], "lam"].eq(chosen["lam"].iloc[0]).all()
    assert gap["lam"].iloc[0] == chosen["lam"].iloc[0]
    histories = pd.read_csv(out / "07_model_output/mvfs/histories.csv")
    assert set(histories["method"]) == {"ADMM-MVFS", "RFS"}


def test_mlflow_run_metrics_artifacts_and_models(local_project):
    client, run = project_run("mvfs", local_project)
    assert run.info.status == "FINISHED"
    assert run.data.params["mvfs.protocol.n_splits"] == "1"
    assert "mfeat/linear_svm/k10/accuracy" in method_runs(client, run)["ADMM-MVFS"].data.metrics
    admm = method_runs(client, run)["ADMM-MVFS"].data.metrics
    assert {
        "objective_gap/rel_gap",
        "objective_gap/rel_gap_max",
        "objective_gap/top10_overlap",
    } <= set(admm)
    assert run.data.metrics["lam_cv/split0/lam"] in (1.0, 100.0)
    assert {"lam_cv/split0/lam_frac", "lam_cv/split0/score"} <= set(run.data.metrics)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/mvfs")}
    assert {
        "08_reporting/mvfs/summary.csv",
        "08_reporting/mvfs/convergence.png",
        "08_reporting/mvfs/lam_chosen.csv",
        "08_reporting/mvfs/lam_sensitivity.png",
    } <= artifacts
    models = list(logged_models(client, run).values())
    assert {m.name for m in models} == {
        f"{name.replace(' ', '-')}_mfeat_split0" for name in METHODS
    }  # one fitted selector per method (the first split)
    # a logged model loads back and selects the features of the one in the catalog
    local = pickle.loads((local_project / "data/06_models/mvfs/models.pkl").read_bytes())
    views = NpzDataset(filepath=str(local_project / "data/03_primary/mvfs/views.npz")).load()
    Xs = views["mfeat"]["X"]
    for model in models:
        if not model.name.startswith(("ADMM-MVFS", "RFS")):
            continue
        loaded = mlflow.sklearn.load_model(model.model_uri)
        assert loaded.transform(Xs).shape == (2000, 10)
        np.testing.assert_array_equal(loaded.transform(Xs), local[model.name].transform(Xs))
        np.testing.assert_array_equal(loaded.ranking_, local[model.name].ranking_)


def test_dask_backend_gives_the_same_tables(local_project, dask_project):
    def table(project, name, drop=()):
        path = project / "data/07_model_output/mvfs" / name
        frame = pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)
        return frame.drop(columns=list(drop))

    pd.testing.assert_frame_equal(
        table(local_project, "results.csv", TIMING), table(dask_project, "results.csv", TIMING)
    )
    pd.testing.assert_frame_equal(
        table(local_project, "lam_cv.csv", ["fit_time_s"]),
        table(dask_project, "lam_cv.csv", ["fit_time_s"]),
    )
    pd.testing.assert_frame_equal(
        table(local_project, "histories.csv", ["time"]),
        table(dask_project, "histories.csv", ["time"]),
    )
    local, remote = (table(p, "rankings.parquet") for p in (local_project, dask_project))
    pd.testing.assert_frame_equal(local.drop(columns="ranking"), remote.drop(columns="ranking"))
    for a, b in zip(local["ranking"], remote["ranking"], strict=True):
        np.testing.assert_array_equal(a, b)
    _, run = project_run("mvfs", dask_project)
    assert run.info.status == "FINISHED" and run.data.params["execution.backend"] == "dask"
