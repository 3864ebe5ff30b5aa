"""The ``gbc`` pipeline: Gradient Boosting Consensus on mfeat and the terrorist attacks."""

from multiview_lab.pipelines.gbc.pipeline import create_pipeline

__all__ = ["create_pipeline"]
