"""MIML-GP (He, Gu & Wang 2012) on scene and COREL: splits, evaluation, tables, Figure 3, K^f."""

from multiview_lab.pipelines.miml.pipeline import create_pipeline

__all__ = ["create_pipeline"]
