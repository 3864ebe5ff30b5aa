"""The ``memd`` pipeline: raw data -> gene sets and sparse text tasks -> CV folds -> evaluation
-> shared reporting, accuracy-vs-K figures and top-ranked words (namespace ``memd``)."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting
from multiview_lab.pipelines.memd.nodes import (
    build_text_tasks,
    evaluate_methods,
    make_splits,
    prepare_gene_data,
    top_words,
)
from multiview_lab.pipelines.reporting.nodes import plot_figures


def create_pipeline(**kwargs) -> Pipeline:
    """Build the MeMd pipeline (namespace ``memd``)."""
    method = Pipeline(
        [
            Node(
                prepare_gene_data,
                ["genes_raw", "params:data"],
                "gene_data",
                name="prepare_gene_data",
            ),
            Node(
                build_text_tasks,
                ["newsgroups_raw", "params:data"],
                "text_tasks",
                name="build_text_tasks",
            ),
            Node(
                make_splits,
                ["gene_data", "text_tasks", "params:protocol"],
                "splits",
                name="make_splits",
            ),
            Node(
                evaluate_methods,
                ["gene_data", "text_tasks", "splits", "params:methods", "params:protocol"],
                ["results", "curves"],
                name="evaluate_methods",
            ),
            Node(
                plot_figures,
                ["curves", "params:curve_figures"],
                "curve_figures",
                name="plot_accuracy_vs_features",
            ),
            Node(
                top_words,
                ["text_tasks", "params:top_words"],
                ["top_words", "top_words_md"],
                name="top_words",
            ),
        ],
        namespace="memd",
    )
    return method + reporting.create_pipeline(namespace="memd", figures=True)
