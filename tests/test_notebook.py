"""The notebooks of ``notebooks/`` (one per pipeline) execute top to bottom on a finished smoke
run of their pipeline, say which run they read, draw their figures inline and load a fitted
model from MLflow; and they are stored without outputs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: notebook -> (its pipeline, the model it loads, what its printed output must mention)
CASES = {
    "pbmvboost_cbound": ("pbmvboost", "PB-MVBoost", ["train_cbound", "MNIST1", "view weights"]),
    "gbc": ("gbc", "GBC", ["learned source weights", "the pipeline reported"]),
    "miml": ("miml", "MIML-GP", []),
    "memd": ("memd", "MeMd-J", ["the pipeline reported"]),
    "mvfs": ("mvfs", "ADMM-MVFS", ["the pipeline reported", "top 40 features per view"]),
}


def _execute(name: str, project: Path, monkeypatch):
    """Run notebook ``name`` on ``project``'s smoke results; return its code cells' outputs."""
    monkeypatch.setenv("MULTIVIEW_LAB_PROJECT", str(project))
    monkeypatch.setenv("MULTIVIEW_LAB_ENV", "smoke")
    monkeypatch.setenv("KEDRO_DISABLE_TELEMETRY", "1")
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]


def _check(name: str, project: Path, monkeypatch) -> None:
    pipeline, method, mentions = CASES[name]
    outputs = _execute(name, project, monkeypatch)
    errors = [f"{o['ename']}: {o['evalue']}" for o in outputs if o.get("output_type") == "error"]
    assert not errors
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    # it says which run it read: the env and the MLflow run recorded in run_info.json
    info = json.loads((project / "data/08_reporting" / pipeline / "run_info.json").read_text())
    assert f"`kedro run --pipeline={pipeline} --env=smoke`" in text
    assert f"MLflow run: {info['mlflow_run_id']}" in text
    assert "catalog opened with env smoke" in text
    # results shown by IPython's own formatter: no empty block before each (Kedro's
    # RichHandler installs rich's formatter) and no colour codes in their text
    shown = [o for o in outputs if o.get("output_type") in ("display_data", "execute_result")]
    plain = [o["data"].get("text/plain", "") for o in shown]
    assert all(t.strip() and "\x1b[" not in t for t in plain), plain
    # its figures are drawn inline, not only to a file
    assert any("image/png" in o.get("data", {}) for o in outputs), "no inline figure"
    # a fitted model came from MLflow and predicted
    assert f"Loading {method}_" in text and "models:/" in text
    for mention in mentions:
        assert mention in text


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_notebook_runs_on_its_pipelines_smoke_run(name, smoke_project, monkeypatch):
    _check(name, smoke_project(CASES[name][0]), monkeypatch)


def test_every_notebook_is_tested_and_stored_without_outputs():
    stored = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert stored == sorted(CASES)
    for name in stored:
        nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), (
            f"{name}.ipynb is stored with outputs: clear them (small diffs; the tests run it)"
        )
        assert nb.cells[0].cell_type == "markdown"
        assert any('open_results("' in c.source for c in code)
