"""``kedro run --pipelines=pbmvboost`` with the Dask backend (a real 2-worker LocalCluster of
processes) gives the tables of the local run."""

import pandas as pd
import pytest

from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.conftest import make_project_copy, project_run, run_pipeline

pytestmark = pytest.mark.slow
TIMING = list(TIMING_COLUMNS)


def test_dask_backend_gives_the_local_tables(tmp_path, pbmvboost_smoke_project):
    project = make_project_copy(tmp_path / "p", ["mnist.npz"])
    run_pipeline(
        project,
        "pbmvboost",
        env="smoke",
        runtime_params={"execution": {"backend": "dask", "n_workers": 2}},
    )
    for rel in ("07_model_output/pbmvboost/results.csv", "08_reporting/pbmvboost/table1.csv"):
        local = pd.read_csv(pbmvboost_smoke_project / "data" / rel)
        dask = pd.read_csv(project / "data" / rel)
        drop = [c for c in local.columns if c in TIMING or c.startswith("fit_time")]
        pd.testing.assert_frame_equal(local.drop(columns=drop), dask.drop(columns=drop))
    _, run = project_run("pbmvboost", project)
    assert run.info.status == "FINISHED"
    assert run.data.params["execution.backend"] == "dask"
