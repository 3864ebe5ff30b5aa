"""kedro-viz: the static export of the DAG holds the pipeline's nodes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_project_copy

pytestmark = pytest.mark.slow


def test_kedro_viz_build_contains_pbmvboost_nodes(tmp_path):
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
    names = {n["name"] for n in main["nodes"]}
    for expected in (
        "build_views",
        "draw_training_samples",
        "evaluate_methods",
        "plot_figure4",
        "summarise",
    ):
        assert any(expected in n for n in names), expected
    assert "pbmvboost" in {p["id"] for p in main["pipelines"]}
