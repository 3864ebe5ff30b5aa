"""The ``reproduction`` pipeline: every paper's claims checked on the latest results."""

from multiview_lab.pipelines.reproduction.pipeline import create_pipeline

__all__ = ["create_pipeline"]
