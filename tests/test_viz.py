"""kedro-viz: the static export of the DAG holds the pipeline's nodes, one training node per
method, and every dataset on its layer."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, make_project_copy

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


LAYER_ORDER = ["raw", "intermediate", "primary", "feature", "model_input", "models",
               "model_output", "reporting"]  # fmt: skip


def test_no_node_reads_a_later_layer_than_it_writes():
    """kedro-viz draws layers as ordered bands and refuses a cycle (it then drops them all):
    every node of every pipeline reads datasets on its outputs' layers or earlier ones."""
    from kedro.framework.project import pipelines
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(PROJECT_ROOT)
    with KedroSession.create(project_path=PROJECT_ROOT, env="base") as session:
        catalog = session.load_context().catalog

        def layer(name):
            meta = getattr(catalog.get(name), "metadata", None) or {}
            return LAYER_ORDER.index(meta["kedro-viz"]["layer"])

        bad = []
        for pname, pipe in pipelines.items():
            for node in pipe.nodes:
                ins = [d for d in node.inputs if not d.startswith("params:")]
                if not ins or not node.outputs:
                    continue
                if max(map(layer, ins)) > min(map(layer, node.outputs)):
                    bad.append((pname, node.name))
    assert not bad, bad
