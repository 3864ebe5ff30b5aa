"""Adding a method is configuration: a plain scikit-learn classifier registered in the conf of a
project copy runs through the whole pipeline (its own training node, its rows in Table 1, its
model in MLflow) with no code change."""

import pandas as pd
import pytest
import yaml

from tests.conftest import (
    logged_models,
    make_project_copy,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

NEW = {
    "estimator": "ConcatViews",
    "params": {
        "estimator": "sklearn.linear_model.LogisticRegression",
        "params": {"max_iter": 300},
    },
    "input_divisor": 255,
}


def test_a_scikit_learn_classifier_registered_in_conf_runs_end_to_end(tmp_path, mlflow_uri):
    project = make_project_copy(tmp_path / "p", ["mnist.npz"])
    conf = project / "conf" / "base" / "parameters_pbmvboost.yml"
    params = yaml.safe_load(conf.read_text())
    params["pbmvboost"]["methods"]["LogReg-concat"] = NEW
    conf.write_text(yaml.safe_dump(params, sort_keys=False))

    run_pipeline(
        project,
        "pbmvboost",
        env="smoke",
        runtime_params={"pbmvboost": {"protocol": {"tasks": [0]}}},
    )
    table = pd.read_csv(project / "data/08_reporting/pbmvboost/table1.csv")
    row = table[(table["method"] == "LogReg-concat") & (table["dataset"] == "MNIST1")].iloc[0]
    assert row["n_draws"] == 2 and 0.8 < row["accuracy_mean"] <= 1
    assert (project / "data/06_models/pbmvboost/units/logreg_concat.pkl").exists()
    client, run = project_run("pbmvboost", project)
    assert run.info.status == "FINISHED"
    names = list(logged_models(client, run))
    assert any(n.startswith("LogReg-concat_") for n in names)
