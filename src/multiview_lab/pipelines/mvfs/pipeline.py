"""The ``mvfs`` pipeline: mfeat views -> splits -> λ by inner CV -> one training node per selector
(selection and top-k evaluation) -> objective gap, convergence, reporting."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.mvfs.lam_cv import attach_lam, select_lam
from multiview_lab.pipelines.mvfs.nodes import (
    build_views,
    make_splits,
    objective_gap,
    plot_convergence,
    plot_lam_sensitivity,
)
from multiview_lab.pipelines.mvfs.task import make_task


def create_pipeline(**kwargs) -> Pipeline:
    """Build the ADMM-MVFS pipeline (namespace ``mvfs``)."""
    data = Pipeline(
        [
            Node(build_views, ["mfeat_raw", "params:data"], "views", name="build_views"),
            Node(make_splits, ["views", "params:protocol"], "splits", name="make_splits"),
            Node(
                select_lam,
                [
                    "views",
                    "splits",
                    "params:selectors",
                    "params:lam_cv",
                    "params:protocol",
                    "params:execution",
                ],
                ["lam_cv", "lam_chosen", "lam_metrics"],
                name="select_lam",
            ),
            Node(attach_lam, ["splits", "lam_chosen"], "training_splits", name="attach_lam"),
            Node(
                plot_lam_sensitivity,
                ["lam_cv", "lam_chosen"],
                "lam_sensitivity",
                name="plot_lam_sensitivity",
            ),
        ],
        namespace="mvfs",  # the raw input becomes mvfs.mfeat_raw
        parameters={"params:execution"},  # the run's global execution block
    )
    train = training.create_pipeline(
        "mvfs",
        make_task,
        datasets="views",
        splits="training_splits",
        registry="selectors",
        extras=["rankings", "histories"],
    )
    figures = Pipeline(
        [
            Node(
                objective_gap,
                ["rankings", "params:objective_gap"],
                ["objective_gap", "gap_metrics"],
                name="objective_gap",
            ),
            Node(
                plot_convergence,
                ["histories", "params:convergence"],
                "convergence",
                name="plot_convergence",
            ),
        ],
        namespace="mvfs",
    )
    return data + train + figures + reporting.create_pipeline(namespace="mvfs", figures=True)
