"""The ``benchmark`` pipeline: any registered method on any multiview data set named in conf."""

from multiview_lab.pipelines.benchmark.pipeline import create_pipeline

__all__ = ["create_pipeline"]
