"""Explicit pipeline registry: every name maps to a method's pipeline package.

The registry is explicit (no ``find_pipelines``): each registered name is a real pipeline folder
with a ``create_pipeline()``, and ``tests/pipelines/<name>/`` runs every one of them end to end.
"""

import importlib

from kedro.pipeline import Pipeline

#: pipeline name -> package under ``multiview_lab.pipelines``
PIPELINES = {
    "pbmvboost": "multiview_lab.pipelines.pbmvboost",
    "gbc": "multiview_lab.pipelines.gbc",
    "miml": "multiview_lab.pipelines.miml",
    "memd": "multiview_lab.pipelines.memd",
    "mvfs": "multiview_lab.pipelines.mvfs",
    "reproduction": "multiview_lab.pipelines.reproduction",
    "benchmark": "multiview_lab.pipelines.benchmark",
}


def register_pipelines() -> dict[str, Pipeline]:
    """Map pipeline names to pipelines; ``__default__`` is PB-MVBoost, the user's main job."""
    pipelines = {
        name: importlib.import_module(module).create_pipeline()
        for name, module in PIPELINES.items()
    }
    pipelines["__default__"] = pipelines["pbmvboost"]
    return pipelines
