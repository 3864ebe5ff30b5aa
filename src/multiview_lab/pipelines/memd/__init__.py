"""The ``memd`` pipeline: MeMd and its baselines on the gene sets and 20 Newsgroups."""

from multiview_lab.pipelines.memd.pipeline import create_pipeline

__all__ = ["create_pipeline"]
