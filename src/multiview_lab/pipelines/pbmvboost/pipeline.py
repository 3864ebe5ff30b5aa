"""The ``pbmvboost`` pipeline: views -> draws -> evaluation -> shared reporting + Figure 4."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting
from multiview_lab.pipelines.pbmvboost.nodes import (
    build_views,
    draw_training_samples,
    evaluate_methods,
    plot_figure4,
)


def create_pipeline(**kwargs) -> Pipeline:
    """Build the PB-MVBoost pipeline (namespace ``pbmvboost``)."""
    method = Pipeline(
        [
            Node(build_views, ["mnist_raw", "params:data"], "views", name="build_views"),
            Node(
                draw_training_samples,
                ["views", "params:protocol"],
                "draws",
                name="draw_training_samples",
            ),
            Node(
                evaluate_methods,
                ["views", "draws", "params:methods", "params:protocol"],
                ["results", "trajectories", "models"],
                name="evaluate_methods",
            ),
            Node(plot_figure4, ["trajectories", "params:figure4"], "figure4", name="plot_figure4"),
        ],
        namespace="pbmvboost",
        inputs={"mnist_raw"},
    )
    return method + reporting.create_pipeline(namespace="pbmvboost", figures=True, reference=True)
