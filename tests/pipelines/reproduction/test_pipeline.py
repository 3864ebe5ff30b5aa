"""End to end: ``kedro run --pipelines=reproduction`` in a project copy, on results written
for the test (PB-MVBoost's Table 1 exactly as published) and on a real pbmvboost smoke run."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from multiview_lab.reproduction.claims import NOT_RUN, PASSING, VERDICTS
from tests.conftest import PROJECT_ROOT, make_project_copy, project_run, run_pipeline

pytestmark = pytest.mark.slow


def _conf():
    return yaml.safe_load((PROJECT_ROOT / "conf/base/parameters_reproduction.yml").read_text())[
        "reproduction"
    ]


def _table1_results(draws: int = 20, seed: int = 0) -> pd.DataFrame:
    """Per-unit rows whose draw means are the published Table 1 cells (noise 1e-4)."""
    params = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters_pbmvboost.yml").read_text())
    rng = np.random.default_rng(seed)
    rows = []
    for rec in params["pbmvboost"]["reporting"]["reference"]["values"]:
        for draw in range(draws):
            for task in range(10):
                rows.append(
                    {
                        "dataset": rec["dataset"], "method": rec["method"], "task": task,
                        "draw": draw, "n_train": rec["n_train"], "seed": draw,
                        "accuracy": rec["accuracy"] + 1e-4 * rng.standard_normal(),
                        "f1": rec["f1"] + 1e-4 * rng.standard_normal(),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table1_project(tmp_path_factory, mlflow_uri):
    project = make_project_copy(tmp_path_factory.mktemp("reproduction_project"), [])
    out = project / "data/07_model_output/pbmvboost"
    out.mkdir(parents=True)
    _table1_results().to_csv(out / "results.csv", index=False)
    run_pipeline(project, "reproduction", env="base")
    return project


def test_every_claim_in_conf_gets_one_verdict(table1_project):
    verdicts = pd.read_csv(table1_project / "data/08_reporting/reproduction/verdicts.csv")
    conf = _conf()
    assert set(verdicts["paper"]) == set(conf["papers"])
    assert verdicts["verdict"].isin(VERDICTS).all()
    for paper, spec in conf["papers"].items():
        ids = verdicts.loc[verdicts["paper"] == paper, "id"].tolist()
        for c in spec["claims"]:
            # a reference claim expands to <id>/<cell>...; every other claim keeps its id
            hits = [i for i in ids if i == c["id"] or i.startswith(f"{c['id']}/")]
            assert hits, f"claim {c['id']} of {paper} has no verdict"
    # the 36 published cells are reproduced, the arrows' comparisons are significant
    table1 = verdicts[verdicts["id"].str.startswith("table1/")]
    assert len(table1) == 36 + 4
    assert (table1["verdict"] == "reproduced").all(), table1[["id", "verdict", "detail"]]


def test_absent_results_are_not_run_and_never_shown_as_a_pass(table1_project):
    verdicts = pd.read_csv(table1_project / "data/08_reporting/reproduction/verdicts.csv")
    others = verdicts[verdicts["paper"] != "pbmvboost"]
    assert (others["verdict"] == NOT_RUN).all()
    # the sizes this results table lacks: the n sweep cannot be judged
    trend = verdicts[verdicts["id"] == "f1-increases-with-n-mnist1"].iloc[0]
    assert trend["verdict"] == NOT_RUN and "only one value" in trend["detail"]
    html = (table1_project / "data/08_reporting/reproduction/report.html").read_text()
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    not_run = [r for r in rows if ">not run</span>" in r and "<th>" not in r]
    assert len(not_run) == (verdicts["verdict"] == NOT_RUN).sum()
    for r in not_run:
        assert not any(f">{v}</span>" in r for v in PASSING)
    md = (table1_project / "data/08_reporting/reproduction/report.md").read_text()
    assert "no run_info.json" in md  # where the results come from is unknown: said so


def test_report_logged_to_mlflow(table1_project):
    client, run = project_run("reproduction", table1_project)
    assert run.info.status == "FINISHED"
    assert run.data.metrics["pbmvboost/reproduced"] >= 40
    assert run.data.metrics["all/not_run"] >= 1
    names = {a.path for a in client.list_artifacts(run.info.run_id, "08_reporting/reproduction")}
    assert "08_reporting/reproduction/report.html" in names


def test_reads_a_real_smoke_run_and_names_its_env(pbmvboost_smoke_project):
    info = pbmvboost_smoke_project / "data/08_reporting/pbmvboost/run_info.json"
    assert '"env": "smoke"' in info.read_text()
    run_pipeline(pbmvboost_smoke_project, "reproduction", env="smoke")
    verdicts = pd.read_csv(pbmvboost_smoke_project / "data/08_reporting/reproduction/verdicts.csv")
    pb = verdicts[verdicts["paper"] == "pbmvboost"]
    assert set(pb["env"]) == {"smoke"}
    # smoke trains at n = 100: Table 1 (n = 500) is not run, the C-bound chain is judged
    assert (pb[pb["id"].str.startswith("table1/")]["verdict"] == NOT_RUN).all()
    chain = pb[pb["id"] == "cbound-chain"].iloc[0]
    assert chain["verdict"] != NOT_RUN and chain["n"] > 0
    md = (pbmvboost_smoke_project / "data/08_reporting/reproduction/report.md").read_text()
    assert "env **smoke**" in md


def test_a_run_that_writes_no_report_keeps_the_reports_run_info(pbmvboost_smoke_project):
    """A run that only prepares data (``--to-outputs``, a benchmark's data preparation) must not
    relabel the results of the run that wrote the reports."""
    import json

    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    info = pbmvboost_smoke_project / "data/08_reporting/pbmvboost/run_info.json"
    before = json.loads(info.read_text())
    bootstrap_project(pbmvboost_smoke_project)
    with KedroSession.create(project_path=pbmvboost_smoke_project, env="smoke") as session:
        session.run(pipeline_names=["pbmvboost"], to_outputs=["pbmvboost.draws"])
    after = json.loads(info.read_text())
    assert after["kedro_run_id"] == before["kedro_run_id"] and after.get("partial") is None
