"""PB-MVBoost on MNIST1/MNIST2: views, training draws, one-vs-all evaluation, Table 1, Figure 4."""

from multiview_lab.pipelines.pbmvboost.pipeline import create_pipeline

__all__ = ["create_pipeline"]
