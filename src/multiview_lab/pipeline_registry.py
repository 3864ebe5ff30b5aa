"""Explicit pipeline registry: every name maps to a method's ``create_pipeline``.

The registry is explicit (no ``find_pipelines``) so that each registered name is a real pipeline
folder and ``kedro run --pipeline=NAME`` imports only what it needs.
"""

from kedro.pipeline import Pipeline


def register_pipelines() -> dict[str, Pipeline]:
    """Map pipeline names to pipelines; ``__default__`` is PB-MVBoost, the user's main job."""
    from multiview_lab.pipelines import pbmvboost

    pipelines = {"pbmvboost": pbmvboost.create_pipeline()}
    pipelines["__default__"] = pipelines["pbmvboost"]
    return pipelines
