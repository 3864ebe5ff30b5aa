"""End to end: ``kedro run --pipelines=benchmark --env=smoke`` on the shipped 3sources in a
temporary project copy (real MLflow hooks, temporary store), and a data set added by conf alone."""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml

from multiview_lab.io.multiview_files import save_views_npz
from tests.conftest import (
    PROJECT_ROOT,
    make_project_copy,
    method_runs,
    project_run,
    run_pipeline,
)

pytestmark = pytest.mark.slow

METHODS = ["PB-MVBoost", "MVBoost", "MV-AdaBoost", "rBoost.SH", "MV-MV", "Mono", "Concat",
           "GBC-inductive", "ADMM-MVFS-LinearSVC", "MeMd", "LogReg-concat"]  # fmt: skip


@pytest.fixture(scope="module")
def benchmark_smoke_project(smoke_project):
    return smoke_project("benchmark")


def test_every_method_runs_on_3sources(benchmark_smoke_project):
    out = benchmark_smoke_project / "data"
    results = pd.read_csv(out / "07_model_output/benchmark/results.csv")
    assert results["method"].drop_duplicates().tolist() == METHODS
    assert len(results) == len(METHODS) * 3 and set(results["dataset"]) == {"3sources"}
    assert results[["accuracy", "f1_macro"]].stack().between(0, 1).all()
    assert (results["fit_time_s"] > 0).all() and (results["n_test"] >= 56).all()
    assert results.groupby("split")["seed"].nunique().eq(1).all()  # paired comparisons
    # only GBC, which asked for it, saw the sparse views densified
    assert set(results.loc[results["densified"], "method"]) == {"GBC-inductive"}
    means = results.groupby("method")["accuracy"].mean()
    assert means["LogReg-concat"] > 0.8 and means["ADMM-MVFS-LinearSVC"] > 0.8
    summary = pd.read_csv(out / "08_reporting/benchmark/summary.csv")
    assert list(summary.columns[:4]) == ["dataset", "method", "accuracy_mean", "accuracy_std"]
    assert {"f1_macro_mean", "fit_time_s_mean", "accuracy_worse"} <= set(summary.columns)
    assert (summary["n_splits"] == 3).all()
    assert (
        "| method | 3sources accuracy | 3sources macro-F1 |"
        in (out / "08_reporting/benchmark/summary.md").read_text()
    )
    assert (out / "08_reporting/benchmark/figures/scores.png").stat().st_size > 5_000
    table = pd.read_csv(out / "08_reporting/benchmark/datasets.csv")
    assert table.loc[0, "views"] == "bbc(3560) reuters(3631) guardian(3068)"
    datasets = pickle.loads((out / "03_primary/benchmark/datasets.pkl").read_bytes())
    assert sp.issparse(datasets["3sources"]["X"])  # stored sparse, never densified
    models = pickle.loads((out / "06_models/benchmark/models.pkl").read_bytes())
    mvmv = next(m for name, m in models.items() if name.startswith("MV-MV_"))
    assert type(mvmv).__name__ == "OneVsRestClassifier" and len(mvmv.estimators_) == 6


def test_mlflow_run_has_one_nested_run_per_method(benchmark_smoke_project):
    client, run = project_run("benchmark", benchmark_smoke_project)
    assert run.info.status == "FINISHED"
    assert run.data.params["benchmark.protocol.n_folds"] == "3"
    children = method_runs(client, run)
    assert set(children) == set(METHODS)
    assert 0 < children["MeMd"].data.metrics["3sources/f1_macro"] <= 1


def test_every_catalog_entry_has_a_kedro_viz_layer():
    catalog = yaml.safe_load((PROJECT_ROOT / "conf/base/catalog_benchmark.yml").read_text())
    layers = {"raw", "intermediate", "primary", "feature", "model_input", "models"}
    layers |= {"model_output", "reporting"}
    for name, entry in catalog.items():
        assert entry["metadata"]["kedro-viz"]["layer"] in layers, name


def test_a_data_set_is_added_by_conf_alone(tmp_path, mlflow_uri):
    """A user's sparse .npz and CSV table, named in conf only, get their rows in the results."""
    project = make_project_copy(tmp_path / "p", [])
    (project / "data/01_raw").mkdir(parents=True, exist_ok=True)  # every project has it
    rng = np.random.default_rng(0)
    y = np.repeat(["cat", "dog", "owl"], 12)
    codes = np.unique(y, return_inverse=True)[1]
    signal = np.eye(3)[codes] * 3
    v1 = sp.csr_matrix(np.maximum(signal @ rng.normal(size=(3, 8)) + rng.normal(size=(36, 8)), 0))
    v2 = signal @ rng.normal(size=(3, 5)) + rng.normal(size=(36, 5))
    save_views_npz(tmp_path / "mine.npz", [v1, v2], y, view_names=["words", "numbers"])
    table = pd.DataFrame(v2, columns=[f"n{i}" for i in range(5)]).assign(
        **{f"w{i}": v1.toarray()[:, i] for i in range(8)}, kind=y
    )
    table.to_csv(tmp_path / "mine.csv", index=False)
    conf = project / "conf/smoke/parameters_benchmark.yml"
    params = yaml.safe_load(conf.read_text())
    params["benchmark"]["datasets"] = {
        "3sources": {"enabled": False},
        "mfeat": {"enabled": False},
        "my_npz": {"format": "npz", "path": str(tmp_path / "mine.npz")},
        "my_table": {"path": str(tmp_path / "mine.csv"), "label_column": "kind",
                     "views": {"numbers": "n*", "words": [f"w{i}" for i in range(8)]}},
    }  # fmt: skip
    keep = {"MV-MV", "LogReg-concat"}
    base = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters_benchmark.yml").read_text())
    for name in base["benchmark"]["methods"]:
        if name not in keep:
            params["benchmark"]["methods"].setdefault(name, {})["enabled"] = False
    conf.write_text(yaml.safe_dump(params))
    run_pipeline(project, "benchmark", env="smoke")
    results = pd.read_csv(project / "data/07_model_output/benchmark/results.csv")
    assert set(results["dataset"]) == {"my_npz", "my_table"}
    assert set(results["method"]) == keep and len(results) == 2 * 2 * 3
    assert results.groupby("dataset")["accuracy"].mean().gt(0.6).all()
    described = pd.read_csv(project / "data/08_reporting/benchmark/datasets.csv")
    assert described.set_index("dataset")["views"].to_dict() == {
        "my_npz": "words(8) numbers(5)",
        "my_table": "numbers(5) words(8)",
    }
