"""The shared per-method training stage, reused by every pipeline (see :mod:`.pipeline`)."""

from multiview_lab.pipelines.training.pipeline import (
    conf_values,
    create_pipeline,
    create_timing_pipeline,
    method_slug,
    registered_methods,
)

__all__ = [
    "conf_values",
    "create_pipeline",
    "create_timing_pipeline",
    "method_slug",
    "registered_methods",
]
