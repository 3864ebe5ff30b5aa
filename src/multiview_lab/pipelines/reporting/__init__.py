"""Shared reporting: summary tables, Markdown, MLflow metrics and curve figures for any method."""

from multiview_lab.pipelines.reporting.pipeline import create_pipeline

__all__ = ["create_pipeline"]
