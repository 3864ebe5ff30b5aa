"""The ``pbmvboost`` pipeline: views -> draws -> one training node per method -> reporting."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.pbmvboost.nodes import build_views, draw_training_samples, plot_figure4
from multiview_lab.pipelines.pbmvboost.task import make_task


def create_pipeline(**kwargs) -> Pipeline:
    """Build the PB-MVBoost pipeline (namespace ``pbmvboost``)."""
    data = Pipeline(
        [
            Node(build_views, ["mnist_raw", "params:data"], "views", name="build_views"),
            Node(
                draw_training_samples,
                ["views", "params:protocol"],
                "draws",
                name="draw_training_samples",
            ),
        ],
        namespace="pbmvboost",
        inputs={"mnist_raw"},
    )
    train = training.create_pipeline(
        "pbmvboost", make_task, datasets="views", splits="draws", extras=["trajectories"]
    )
    figure = Pipeline(
        [Node(plot_figure4, ["trajectories", "params:figure4"], "figure4", name="plot_figure4")],
        namespace="pbmvboost",
    )
    return (
        data + train + figure
        + reporting.create_pipeline(namespace="pbmvboost", figures=True, reference=True)
    )  # fmt: skip
