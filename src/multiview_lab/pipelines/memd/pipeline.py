"""The ``memd`` pipeline: raw data -> gene sets and sparse text tasks -> CV folds -> one training
node per method -> shared reporting, accuracy-vs-K figures and top-ranked words (namespace
``memd``)."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.memd.nodes import (
    build_datasets,
    build_text_tasks,
    make_splits,
    prepare_gene_data,
    top_words,
)
from multiview_lab.pipelines.memd.task import make_task
from multiview_lab.pipelines.reporting.nodes import plot_figures


def create_pipeline(**kwargs) -> Pipeline:
    """Build the MeMd pipeline (namespace ``memd``)."""
    data = Pipeline(
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
            Node(build_datasets, ["gene_data", "text_tasks"], "datasets", name="build_datasets"),
            Node(make_splits, ["datasets", "params:protocol"], "splits", name="make_splits"),
        ],
        namespace="memd",
    )
    train = training.create_pipeline("memd", make_task, datasets="datasets", extras=["curves"])
    report = Pipeline(
        [
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
    return data + train + report + reporting.create_pipeline(namespace="memd", figures=True)
