"""The ``mvfs`` pipeline: mfeat views -> splits -> selectors -> top-k evaluation -> reporting."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting
from multiview_lab.pipelines.mvfs.nodes import (
    build_views,
    evaluate_selections,
    fit_selectors,
    make_splits,
    objective_gap,
    plot_convergence,
    plot_lam_sensitivity,
    select_lam,
)


def create_pipeline(**kwargs) -> Pipeline:
    """Build the ADMM-MVFS pipeline (namespace ``mvfs``)."""
    method = Pipeline(
        [
            Node(build_views, ["mfeat_raw", "params:data"], "views", name="build_views"),
            Node(make_splits, ["views", "params:protocol"], "splits", name="make_splits"),
            Node(
                select_lam,
                ["views", "splits", "params:selectors", "params:lam_cv", "params:protocol"],
                ["lam_cv", "lam_chosen", "lam_metrics"],
                name="select_lam",
            ),
            Node(
                plot_lam_sensitivity,
                ["lam_cv", "lam_chosen"],
                "lam_sensitivity",
                name="plot_lam_sensitivity",
            ),
            Node(
                fit_selectors,
                [
                    "views",
                    "splits",
                    "params:selectors",
                    "params:execution",
                    "params:protocol",
                    "lam_chosen",
                ],
                ["rankings", "histories"],
                name="fit_selectors",
            ),
            Node(
                evaluate_selections,
                ["views", "splits", "rankings", "params:protocol"],
                "results",
                name="evaluate_selections",
            ),
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
        namespace="mvfs",  # the raw input becomes mvfs.mfeat_raw
    )
    return method + reporting.create_pipeline(namespace="mvfs", figures=True)
