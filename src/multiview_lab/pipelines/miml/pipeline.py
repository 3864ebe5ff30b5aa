"""The ``miml`` pipeline: raw data -> splits -> scene / COREL evaluation -> shared reporting,
COREL table, Figure 3 study and the label-covariance heat map (namespace ``miml``)."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.pipelines import reporting
from multiview_lab.pipelines.miml.nodes import (
    corel_report,
    evaluate_corel,
    evaluate_scene,
    make_splits,
    plot_figure3,
    plot_label_covariance,
    prepare_corel,
    prepare_scene,
    run_figure3,
)


def create_pipeline(**kwargs) -> Pipeline:
    """Build the MIML-GP pipeline (namespace ``miml``)."""
    method = Pipeline(
        [
            Node(prepare_scene, ["scene_raw", "params:data"], "scene", name="prepare_scene"),
            Node(
                prepare_corel,
                ["params:corel", *(f"corel_raw_{c}" for c in COREL_CATEGORIES)],
                "corel",
                name="prepare_corel",
            ),
            Node(
                make_splits,
                ["scene", "corel", "params:protocol", "params:figure3"],
                "splits",
                name="make_splits",
            ),
            Node(
                evaluate_scene,
                ["scene", "splits", "params:methods", "params:protocol"],
                ["results", "label_covariances", "models"],
                name="evaluate_scene",
            ),
            Node(
                evaluate_corel,
                ["corel", "splits", "params:corel.methods", "params:protocol"],
                "corel_results",
                name="evaluate_corel",
            ),
            Node(
                corel_report,
                ["corel_results", "params:corel"],
                ["corel_summary", "corel_summary_md", "corel_metrics"],
                name="corel_report",
            ),
            Node(
                run_figure3,
                ["scene", "splits", "params:figure3", "params:protocol"],
                "figure3_study",
                name="run_figure3",
            ),
            Node(plot_figure3, "figure3_study", "figure3", name="plot_figure3"),
            Node(
                plot_label_covariance,
                ["label_covariances", "scene", "params:heatmap"],
                "label_covariance_heatmap",
                name="plot_label_covariance",
            ),
        ],
        namespace="miml",
    )
    return method + reporting.create_pipeline(namespace="miml", figures=True)
