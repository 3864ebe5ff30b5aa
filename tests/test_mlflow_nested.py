"""MLflow: one parent run per ``kedro run`` and one nested run per method.

Real smoke runs through a KedroSession (hooks included) into a real SQLite store of this
module: the methods' runs carry the same metric names (so MLflow's charts and run comparison
set the methods side by side), Figure 2 is a series over n, each kept model sits in its
method's run with a signature, and a failing run marks the parent and the method runs FAILED.
"""

from __future__ import annotations

import copy
import os
import pickle

import mlflow
import numpy as np
import pandas as pd
import pytest

from multiview_lab.hooks import method_of_model, split_by_method
from multiview_lab.io import NpzDataset
from multiview_lab.pipelines.reporting.nodes import method_metrics
from tests.conftest import make_project_copy, run_pipeline

# PB-MVBoost's smoke run cut to three fitted methods (and PB-MVBoost's reading
# PB-MVBoost-final-rho, scored as a method of its own), one task, two training sizes
PBMVBOOST = {
    "pbmvboost": {
        "protocol": {"tasks": [0], "n_train": [100, 150]},
        "methods": {
            m: {"enabled": False}
            for m in "Mono Fusion_dt MV-MV rBoost.SH MVBoost Fusion_Cq-all "
            "PB-MVBoost-reference".split()
        },
    }
}
# MeMd's smoke run with its three quickest methods
MEMD = {
    "memd": {
        "methods": {
            m: {"enabled": False}
            for m in "MeMd-JS MeMd-J-gaussian MeMd-JS-gaussian DME-faithful SVM-strong DME-strong "
            "NB-ANOVA-F NB-chi2".split()
        }
    }
}


def _merge(base: dict, more: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in more.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


@pytest.fixture(scope="module")
def store(mlflow_uri, tmp_path_factory):
    """This module's own SQLite store (the session's is restored afterwards)."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow_nested') / 'mlflow.db'}"
    os.environ["MLFLOW_TRACKING_URI"] = uri
    mlflow.set_tracking_uri(uri)
    yield uri
    os.environ["MLFLOW_TRACKING_URI"] = mlflow_uri
    mlflow.set_tracking_uri(mlflow_uri)


def _family(experiment: str):
    """The latest parent run of ``experiment`` and its method runs by name."""
    client = mlflow.MlflowClient()
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id], order_by=["attributes.start_time"])
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags][-1]
    children = {
        r.info.run_name: r
        for r in runs
        if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id
    }
    return client, parent, children


def _models(run) -> dict:
    return {
        m.name: m
        for m in mlflow.search_logged_models(
            experiment_ids=[run.info.experiment_id],
            filter_string=f"source_run_id = '{run.info.run_id}'",
            output_format="list",
        )
    }


@pytest.fixture(scope="module")
def pbmvboost_run(store, tmp_path_factory):
    project = make_project_copy(tmp_path_factory.mktemp("pbmvboost_nested"), ["mnist.npz"])
    params = _merge(PBMVBOOST, {"execution": {"cache_dir": str(project / "unit_cache")}})
    run_pipeline(project, "pbmvboost", env="smoke", runtime_params=params)
    return project, params


def test_metric_names_leave_the_method_out():
    summary = pd.DataFrame(
        {
            "dataset": ["D", "D"],
            "method": ["A (x)", "B"],
            "n_train": [500, 500],
            "accuracy_mean": [0.9, 0.8],
            "accuracy_std": [0.01, np.nan],
            "k_mean": [np.nan, 3.0],
            "k_std": [0.0, 1.0],
            "n_draws": [5, 5],
        }
    )
    reporting = {"group_by": ["dataset", "method", "n_train"], "metrics": ["accuracy", "k"],
                 "repeat_key": "draw"}  # fmt: skip
    assert method_metrics(summary, reporting) == {
        "A (x)": {
            "D/n_train500/accuracy": 0.9,
            "std/D/n_train500/accuracy": 0.01,
            "repetitions/D/n_train500": 5.0,
        },  # no k: the metric does not apply
        "B": {
            "D/n_train500/accuracy": 0.8,
            "D/n_train500/k": 3.0,
            "std/D/n_train500/k": 1.0,
            "repetitions/D/n_train500": 5.0,
        },
    }
    assert method_metrics(summary, {**reporting, "group_by": ["dataset", "n_train"]}) == {}
    per_method, rest = split_by_method(
        {
            "fig/D/A _x_/acc_mean": [[100, 0.5], [200, 0.6]],
            "corel/T/B/acc_std": 0.1,
            "corel/T/B/acc_ci_half": 0.2,
            "gap/rel_gap_mean": 0.01,
            "pair/A _x_/B/diff": 1.0,  # two methods: not one method's
        },
        ["A (x)", "B"],
    )
    assert per_method == {
        "A (x)": {"fig/D/acc": [[100, 0.5], [200, 0.6]]},
        "B": {"std/corel/T/acc": 0.1, "corel/T/acc_ci_half": 0.2},
    }
    assert rest == {"gap/rel_gap_mean": 0.01, "pair/A _x_/B/diff": 1.0}
    methods = ["PB-MVBoost", "PB-MVBoost-reference", "rBoost.SH", "Fusion", "Fusion_dt"]
    assert method_of_model("PB-MVBoost-reference_MNIST1_task0", methods) == "PB-MVBoost-reference"
    assert method_of_model("rBoost-SH_MNIST1_task0", methods) == "rBoost.SH"
    assert method_of_model("Fusion_dt_MNIST1", methods) == "Fusion_dt"
    assert method_of_model("Other_MNIST1", methods) is None


def test_one_nested_run_per_method_with_the_same_metric_names(pbmvboost_run):
    project, _ = pbmvboost_run
    client, parent, children = _family("pbmvboost")
    table = pd.read_csv(project / "data/08_reporting/pbmvboost/table1.csv")
    methods = list(dict.fromkeys(table["method"]))
    assert set(children) == set(methods) == {
        "Concat", "MV-AdaBoost", "PB-MVBoost", "PB-MVBoost-final-rho",
    }  # fmt: skip
    assert parent.info.status == "FINISHED"
    assert all(c.info.status == "FINISHED" for c in children.values())
    assert parent.data.tags["methods"].split(", ") == list(children)  # training order, reading
    # the same names in every method's run, the method out of them; std and repetitions apart
    assert len({frozenset(c.data.metrics) for c in children.values()}) == 1
    row = table.set_index(["dataset", "method"]).loc[("MNIST1", "Concat")]
    concat = children["Concat"].data.metrics
    assert concat["MNIST1/n_train100/accuracy"] == pytest.approx(row["accuracy_mean"])
    assert concat["std/MNIST1/n_train100/accuracy"] == pytest.approx(row["accuracy_std"])
    assert concat["repetitions/MNIST1/n_train100"] == 2
    # Figure 2 (F1 against n, smoke conf) as a series over n in each method's run
    figure = pd.read_csv(project / "data/08_reporting/pbmvboost/figure_data/figure2_f1.csv")
    for name, child in children.items():
        history = client.get_metric_history(child.info.run_id, "figure2_f1/MNIST1/f1")
        line = figure[(figure["method"] == name) & (figure["dataset"] == "MNIST1")]
        points = sorted((h.step, h.value) for h in history)
        assert [step for step, _ in points] == [100, 150] == sorted(line["n_train"])
        assert [v for _, v in points] == pytest.approx(list(line.sort_values("n_train")["f1_mean"]))
    # the parent: the run's params, provenance and reports; no method's metric
    assert parent.data.params["pbmvboost.methods.Concat.estimator"] == "ConcatClassifier"
    assert not any(m in key for key in parent.data.metrics for m in methods)
    artifacts = {
        a.path for a in client.list_artifacts(parent.info.run_id, "08_reporting/pbmvboost")
    }
    assert "08_reporting/pbmvboost/table1.csv" in artifacts
    # a method's run: its registry entry as params, the run's provenance as tags
    assert children["Concat"].data.params["estimator"] == "ConcatClassifier"
    assert children["PB-MVBoost"].data.params["params.n_estimators"] == "10"
    reading = children["PB-MVBoost-final-rho"]
    assert reading.data.tags["reading_of"] == "PB-MVBoost"
    assert reading.data.params["reading.vote"] == "final_rho"
    assert reading.data.tags["kedro.run_id"] == parent.data.tags["kedro.run_id"]


def test_models_sit_in_their_method_run_with_its_scores(pbmvboost_run):
    project, _ = pbmvboost_run
    _, parent, children = _family("pbmvboost")
    assert _models(parent) == {}
    assert _models(children["PB-MVBoost-final-rho"]) == {}  # a reading: no model of its own
    local = pickle.loads((project / "data/06_models/pbmvboost/models.pkl").read_bytes())
    views = NpzDataset(filepath=str(project / "data/03_primary/pbmvboost/views.npz")).load()
    Xs = [X[:20] for X in views["MNIST1"]["X_test"]]
    logged = {}
    for name, child in children.items():
        models = _models(child)
        assert all(m.startswith(name.replace(".", "-") + "_MNIST") for m in models)
        logged.update(models)
        for model in models.values():
            # the model's page lists its method's scores (and only those)
            scores = {m.key: m.value for m in model.metrics}
            assert scores["MNIST1/n_train100/accuracy"] == pytest.approx(
                child.data.metrics["MNIST1/n_train100/accuracy"]
            )
    assert set(logged) == set(local)  # every kept model, PB-MVBoost's 4 (keep_models) included
    for name in (
        "Concat_MNIST1_task0_draw0_n_train100",
        "PB-MVBoost_MNIST1_task0_draw0_n_train150",
    ):
        model = logged[name]
        info = mlflow.models.get_model_info(model.model_uri)
        # a list of views: an output-only signature, the input described
        assert info.signature.inputs is None and info.signature.outputs is not None
        assert "list of 4 views" in model.tags["mlflow.note.content"]
        # ... so that the pyfunc flavour takes the list the estimator needs
        pyfunc = mlflow.pyfunc.load_model(model.model_uri)
        np.testing.assert_array_equal(pyfunc.predict(Xs), local[name].predict(Xs))


def test_a_second_pipeline_gets_its_method_runs_and_array_signatures(store, tmp_path):
    project = make_project_copy(tmp_path / "memd", ["genes", "20newsgroups"])
    # a caller (a notebook) has its own experiment active: the run leaves it active
    mlflow.set_experiment("a notebook's experiment")
    active = (mlflow.tracking.fluent._active_experiment_id, os.environ.get("MLFLOW_EXPERIMENT_ID"))
    run_pipeline(project, "memd", env="smoke", runtime_params=MEMD)
    assert (
        mlflow.tracking.fluent._active_experiment_id,
        os.environ.get("MLFLOW_EXPERIMENT_ID"),
    ) == active
    _, parent, children = _family("memd")
    assert set(children) == {"MeMd-J", "SVM-faithful", "GaussianNB"}
    assert parent.info.status == "FINISHED"
    summary = pd.read_csv(project / "data/08_reporting/memd/summary.csv")
    row = summary.set_index(["dataset", "method"]).loc[("golub", "MeMd-J")]
    assert children["MeMd-J"].data.metrics["golub/accuracy"] == pytest.approx(row["accuracy_mean"])
    # the methods run on the same data sets have the same names (K: MeMd's selected features)
    names = {n: {k for k in c.data.metrics if not k.endswith("/k")} for n, c in children.items()}
    assert names["MeMd-J"] == names["SVM-faithful"] >= {"golub/accuracy", "repetitions/golub"}
    ((name, model),) = _models(children["GaussianNB"]).items()
    info = mlflow.models.get_model_info(model.model_uri)
    width = pickle.loads((project / "data/06_models/memd/models.pkl").read_bytes())[name]
    assert info.signature.inputs.inputs[0].shape == (-1, width.n_features_in_)
    assert info.saved_input_example_info is not None
    # the input example (two test rows of the unit) goes through the pyfunc flavour
    example = mlflow.models.Model.load(model.model_uri).load_input_example()
    assert mlflow.pyfunc.load_model(model.model_uri).predict(example).shape == (2,)


def test_a_failed_run_marks_the_parent_and_the_method_runs_failed(pbmvboost_run):
    """Reporting fails after every method trained (units from the unit cache): the method runs
    opened as their training nodes finished end FAILED with the parent, the error on each."""
    project, params = pbmvboost_run
    bad = _merge(params, {"pbmvboost": {"reporting": {"table_query": "n_train == 999"}}})
    with pytest.raises(ValueError, match="table_query"):
        run_pipeline(project, "pbmvboost", env="smoke", runtime_params=bad)
    _, parent, children = _family("pbmvboost")
    assert parent.info.status == "FAILED" and "table_query" in parent.data.tags["error"]
    assert set(children) == {"Concat", "MV-AdaBoost", "PB-MVBoost"}  # the trained methods
    for child in children.values():
        assert child.info.status == "FAILED" and child.info.end_time is not None
        assert "table_query" in child.data.tags["error"]
