"""End to end: ``kedro run --pipeline=mvfs --env=smoke`` in temporary project copies, locally and
with the ADMM on a real 2-worker Dask LocalCluster, with the MLflow hooks writing to a temporary
SQLite store."""

import numpy as np
import pandas as pd
import pytest

from tests.conftest import make_project_copy, mlflow_runs, run_pipeline

pytestmark = pytest.mark.slow

METHODS = {"ADMM-MVFS", "RFS", "Fisher score", "ANOVA F", "ReliefF"}


@pytest.fixture(scope="module")
def local_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("mvfs_local"), ["mfeat"])
    run_pipeline(project, "mvfs", env="smoke")
    return project


@pytest.fixture(scope="module")
def dask_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("mvfs_dask"), ["mfeat"])
    run_pipeline(
        project, "mvfs", env="smoke", runtime_params={"mvfs": {"execution": {"backend": "dask"}}}
    )
    return project


def test_catalog_outputs(local_project):
    out = local_project / "data"
    results = pd.read_csv(out / "07_model_output/mvfs/results.csv")
    assert set(results["method"]) == METHODS
    assert len(results) == 5 * 2 * 2  # methods x k x classifiers, one split
    assert set(results["k"]) == {10, 40} and set(results["classifier"]) == {"linear_svm", "1nn"}
    assert results["accuracy"].between(0.5, 1).all()  # 10 balanced classes: chance is 0.1
    splits = pd.read_parquet(out / "05_model_input/mvfs/splits.parquet")
    assert len(splits) == 1 and len(splits["train_idx"][0]) == 1000
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


def test_mlflow_run_finished_with_metrics_and_artifacts(local_project):
    client, runs = mlflow_runs("mvfs")
    run = [r for r in runs if r.info.status == "FINISHED"][0]
    assert run.data.params["mvfs.protocol.n_splits"] == "1"
    assert "mfeat/ADMM-MVFS/linear_svm/10/accuracy_mean" in run.data.metrics
    assert "objective_gap/rel_gap_mean" in run.data.metrics
    assert run.data.metrics["lam_cv/split0/lam"] in (1.0, 100.0)
    assert {"lam_cv/split0/lam_frac", "lam_cv/split0/score"} <= set(run.data.metrics)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/mvfs")}
    assert {
        "08_reporting/mvfs/summary.csv",
        "08_reporting/mvfs/convergence.png",
        "08_reporting/mvfs/lam_chosen.csv",
        "08_reporting/mvfs/lam_sensitivity.png",
    } <= artifacts


def test_dask_backend_selects_the_same_features(local_project, dask_project):
    local = pd.read_parquet(local_project / "data/07_model_output/mvfs/rankings.parquet")
    remote = pd.read_parquet(dask_project / "data/07_model_output/mvfs/rankings.parquet")
    local, remote = local.set_index("method"), remote.set_index("method")
    for method in METHODS:  # the top 40 (largest k) are the features the evaluation uses
        a, b = local.at[method, "ranking"][:40], remote.at[method, "ranking"][:40]
        assert np.array_equal(a, b), method
    assert np.isclose(
        local.at["ADMM-MVFS", "objective"], remote.at["ADMM-MVFS", "objective"], rtol=1e-10
    )
    _, runs = mlflow_runs("mvfs")
    assert any(r.data.params.get("mvfs.execution.backend") == "dask" for r in runs)
    assert all(r.info.status == "FINISHED" for r in runs)
