"""Supervised multiview feature selection by distributed ADMM on mfeat (``kedro run --pipeline=mvfs``)."""

from multiview_lab.pipelines.mvfs.pipeline import create_pipeline

__all__ = ["create_pipeline"]
