"""kedro-viz: the static export of the DAG holds the pipeline's nodes, one training node per
method, and every dataset on its layer."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_project_copy

pytestmark = pytest.mark.slow


def test_kedro_viz_build_shows_the_training_nodes_and_layers(tmp_path):
    project = make_project_copy(tmp_path / "p", [])
    kedro = Path(sys.executable).with_name("kedro")
    env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1"}
    subprocess.run(
        [str(kedro), "viz", "build"],
        cwd=project,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    main = json.loads((project / "build" / "api" / "main").read_text())
    nodes = [n for n in main["nodes"] if "pbmvboost" in n.get("pipelines", [])]
    names = {n["name"] for n in nodes if n["type"] == "task"}
    for expected in ("build_views", "draw_training_samples", "plot_figure4", "collect_results"):
        assert any(expected in n for n in names), expected
    # the per-algorithm stage: one training node per registered method, grouped by method
    training = {n["id"]: n for n in nodes if n["type"] == "task" and n["name"].endswith("train")}
    assert len(training) == 10, sorted(n["name"] for n in training.values())
    groups = {n["id"] for n in main["nodes"] if n["type"] == "modularPipeline"}
    assert {"pbmvboost.pb_mvboost", "pbmvboost.fusion_cq_all", "pbmvboost.rboost_sh"} <= groups
    # every dataset of the pipeline sits on its layer, from raw to reporting
    data = [n for n in nodes if n["type"] == "data"]
    assert data and all(n.get("layer") for n in data), [
        n["name"] for n in data if not n.get("layer")
    ]
    assert {"raw", "primary", "model_input", "models", "model_output", "reporting"} <= {
        n["layer"] for n in data
    }
    assert "pbmvboost" in {p["id"] for p in main["pipelines"]}
