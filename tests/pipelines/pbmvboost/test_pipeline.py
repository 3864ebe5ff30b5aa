"""End to end: ``kedro run --pipeline=pbmvboost --env=smoke`` in a temporary project copy,
with the real MLflow hooks writing to a temporary SQLite store."""

import pickle

import mlflow
import numpy as np
import pandas as pd
import pytest

from multiview_lab.io import NpzDataset
from tests.conftest import (
    logged_models,
    make_project_copy,
    method_runs,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

TABLE_COLUMNS = [
    "dataset",
    "method",
    "accuracy_mean",
    "accuracy_std",
    "f1_mean",
    "f1_std",
    "n_draws",
    "n_train",
]


def test_catalog_outputs(pbmvboost_smoke_project):
    out = pbmvboost_smoke_project / "data"
    table = pd.read_csv(out / "08_reporting/pbmvboost/table1.csv")
    assert list(table.columns[: len(TABLE_COLUMNS)]) == TABLE_COLUMNS
    assert set(table["dataset"]) == {"MNIST1", "MNIST2"}
    assert set(table["method"]) == {
        "Mono",
        "Concat",
        "Fusion_dt",
        "MV-MV",
        "rBoost.SH",
        "MV-AdaBoost",
        "MVBoost",
        "Fusion_Cq-all",
        "PB-MVBoost",
        "PB-MVBoost-final-rho",
        "PB-MVBoost-reference",
    }
    assert {"accuracy_worse", "f1_worse", "accuracy_p", "f1_p"} <= set(table.columns)
    assert (table["n_draws"] == 2).all() and (table["n_train"] == 100).all()
    assert table["accuracy_mean"].between(0.5, 1).all()
    assert (out / "08_reporting/pbmvboost/table1.md").read_text().startswith("| dataset")
    assert (out / "08_reporting/pbmvboost/figure4.png").stat().st_size > 10_000
    assert (out / "08_reporting/pbmvboost/figures/figure3.png").stat().st_size > 10_000
    fig3 = pd.read_csv(out / "08_reporting/pbmvboost/figure_data/figure3.csv")
    assert list(fig3.columns) == [
        "dataset", "method", "accuracy_mean", "accuracy_std", "f1_mean", "f1_std",
        "fit_time_s_mean", "fit_time_s_std", "n_draws",
    ]  # fmt: skip
    assert len(fig3) == 2 * 2 and (fig3["n_draws"] == 2).all()
    pb1 = table.set_index(["dataset", "method"]).loc[("MNIST1", "PB-MVBoost"), "accuracy_mean"]
    assert (
        fig3.set_index(["dataset", "method"]).loc[("MNIST1", "PB-MVBoost"), "accuracy_mean"] == pb1
    )
    results = pd.read_csv(out / "07_model_output/pbmvboost/results.csv")
    assert len(results) == 2 * 2 * 2 * 11  # datasets x tasks x draws x methods
    pb = results[results["method"] == "PB-MVBoost"]
    # the PAC-Bayes chain on the training sample: Gibbs risk < 1/2, majority-vote risk <= C-bound
    assert (pb["train_gibbs_risk"] < 0.5).all()
    assert pb["train_multiview_cbound"].between(-1e-12, 1).all()
    assert (pb["train_majority_vote_risk"] <= pb["train_multiview_cbound"] + 1e-12).all()
    # Table 1 beside the paper's: the smoke run (n = 100) has no result at the paper's n = 500
    paper = pd.read_csv(out / "08_reporting/pbmvboost/table1_vs_paper.csv")
    assert len(paper) == 2 * 9 and paper["accuracy_ours"].isna().all()
    assert paper.set_index(["dataset", "method"]).loc[("MNIST1", "PB-MVBoost"), "f1_published"] == (
        0.8066
    )
    traj = pd.read_csv(out / "07_model_output/pbmvboost/trajectories.csv")
    assert traj["iteration"].max() == 10
    assert (out / "03_primary/pbmvboost/views.npz").exists()


def test_mlflow_run_finished_with_params_metrics_artifacts_models(pbmvboost_smoke_project):
    client, run = project_run("pbmvboost", pbmvboost_smoke_project)
    assert run.info.status == "FINISHED"
    assert run.data.params["pbmvboost.protocol.n_draws"] == "2"
    # provenance: runner class, env, pipeline, commit, and a note saying what the run is
    tags = run.data.tags
    assert tags["kedro.runner"] == "SequentialRunner" and tags["kedro.pipelines"] == "pbmvboost"
    assert "git.commit" in tags  # the project copy is no git checkout: "unknown (...)"
    assert "PB-MVBoost" in tags["mlflow.note.content"]
    assert "NOT the paper's protocol" in tags["mlflow.note.content"]
    experiment = client.get_experiment(run.info.experiment_id)
    assert "MNIST" in experiment.tags["mlflow.note.content"]
    assert client.get_experiment("0").lifecycle_stage == "deleted"  # no empty "Default"
    assert run.data.params["pbmvboost.methods.PB-MVBoost.params.n_estimators"] == "10"
    # one nested run per method (its reading PB-MVBoost-final-rho included), the same names
    methods = method_runs(client, run)
    assert "PB-MVBoost-final-rho" in methods and len(methods) == 11
    assert len({frozenset(m.data.metrics) for m in methods.values()}) == 1
    pb = methods["PB-MVBoost"]
    assert "MNIST1/n_train100/accuracy" in pb.data.metrics
    assert not any("PB-MVBoost" in key for key in run.data.metrics)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/pbmvboost")}
    assert {
        "08_reporting/pbmvboost/table1.csv",
        "08_reporting/pbmvboost/table1_vs_paper.md",
        "08_reporting/pbmvboost/figure4.png",
    } <= artifacts
    data = {
        a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/pbmvboost/figure_data")
    }
    assert "08_reporting/pbmvboost/figure_data/figure3.csv" in data
    # Figure 2's lines as metric series over n (one size, 100, in the smoke run)
    history = client.get_metric_history(pb.info.run_id, "figure2_f1/MNIST1/f1")
    assert [m.step for m in history] == [100]
    assert history[0].value == pytest.approx(pb.data.metrics["MNIST1/n_train100/f1"])
    models = list(logged_models(client, run).values())
    # the first unit of each of the 10 fitted methods, and PB-MVBoost on the other 3 (data set,
    # task) units of draw 0 (protocol.keep_models)
    names = sorted(m.name for m in models)
    assert len(names) == 13
    assert {n.split("_MNIST")[0] for n in names} == {
        "Mono", "Concat", "Fusion_dt", "MV-MV", "rBoost-SH", "MV-AdaBoost", "MVBoost",
        "Fusion_Cq-all", "PB-MVBoost", "PB-MVBoost-reference",
    }  # fmt: skip
    # every logged model loads back and predicts like the one in the catalog, on the test views
    local = pickle.loads(
        (pbmvboost_smoke_project / "data/06_models/pbmvboost/models.pkl").read_bytes()
    )
    views = NpzDataset(
        filepath=str(pbmvboost_smoke_project / "data/03_primary/pbmvboost/views.npz")
    ).load()
    Xs = [X[:50] for X in views["MNIST1"]["X_test"]]
    for model in models:
        loaded = mlflow.sklearn.load_model(model.model_uri)
        divisor = 255.0 if model.name.startswith("Fusion_Cq") else 1.0
        inputs = [X / divisor for X in Xs]
        np.testing.assert_array_equal(loaded.predict(inputs), local[model.name].predict(inputs))


def test_failed_run_is_marked_failed_and_writes_no_report(tmp_path, mlflow_uri):
    project = make_project_copy(tmp_path / "p", ["mnist.npz"])
    with pytest.raises(ValueError, match="n_train"):
        run_pipeline(
            project,
            "pbmvboost",
            env="smoke",
            runtime_params={"pbmvboost": {"protocol": {"n_train": [10**6]}}},
        )
    _, run = project_run("pbmvboost", project)
    assert run.info.status == "FAILED"
    assert "n_train" in run.data.tags["error"]
    assert not any((project / "data" / "08_reporting").rglob("*.csv"))
