"""The C-bound notebook executes top to bottom on a finished smoke run."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "pbmvboost_cbound.ipynb"


def test_notebook_runs_on_smoke_artefacts(pbmvboost_smoke_project, monkeypatch):
    monkeypatch.setenv("MULTIVIEW_LAB_PROJECT", str(pbmvboost_smoke_project))
    monkeypatch.setenv("MULTIVIEW_LAB_ENV", "smoke")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "train_cbound" in text and "MNIST1" in text
