"""The ``gbc`` pipeline: data -> graphs (04_feature) -> splits -> evaluation -> reporting.

Namespace ``gbc``; the shared reporting runs twice: on ``gbc.results`` (error against the training
percentage, tables at 10/50/90 %) and, under ``gbc.sources``, on the number-of-sources study
(``gbc.sources_results``).
"""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting
from multiview_lab.pipelines.gbc.nodes import (
    build_mfeat_graphs,
    collect_datasets,
    evaluate_methods,
    evaluate_source_counts,
    graph_statistics,
    load_terrorist_graph_edges,
    make_splits,
    plot_weight_trajectories,
    prepare_mfeat,
    prepare_terrorist,
    summarise_final_weights,
)


def create_pipeline(**kwargs) -> Pipeline:
    """Build the GBC pipeline (namespace ``gbc``)."""
    data = Pipeline(
        [
            Node(prepare_mfeat, ["mfeat_raw", "params:data.mfeat"], "mfeat", name="prepare_mfeat"),
            Node(
                prepare_terrorist,
                ["terrorist_raw", "params:data.terrorist"],
                "terrorist",
                name="prepare_terrorist",
            ),
        ],
        tags=["data"],
    )
    graphs = Pipeline(
        [
            Node(
                build_mfeat_graphs,
                ["mfeat_raw", "params:data.mfeat"],
                "mfeat_graphs",
                name="build_mfeat_graphs",
            ),
            Node(
                load_terrorist_graph_edges,
                ["terrorist_raw", "params:data.terrorist"],
                "terrorist_graphs",
                name="load_terrorist_graphs",
            ),
            Node(
                collect_datasets,
                ["mfeat", "mfeat_graphs", "terrorist", "terrorist_graphs"],
                "datasets",
                name="collect_datasets",
            ),
            Node(graph_statistics, "datasets", "graph_stats", name="graph_statistics"),
        ],
        tags=["graphs"],
    )
    evaluation = Pipeline(
        [
            Node(make_splits, ["datasets", "params:protocol"], "splits", name="make_splits"),
            Node(
                evaluate_methods,
                ["datasets", "splits", "params:methods", "params:protocol"],
                ["results", "weights"],
                name="evaluate_methods",
            ),
            Node(summarise_final_weights, "weights", "final_weights", name="final_weights"),
            Node(
                plot_weight_trajectories,
                ["weights", "params:weights_figure"],
                "weights_figure",
                name="plot_weight_trajectories",
            ),
            Node(
                evaluate_source_counts,
                ["datasets", "params:methods", "params:sources"],
                "sources_results",
                name="evaluate_source_counts",
            ),
        ],
        tags=["evaluation"],
    )
    method = Pipeline(
        data + graphs + evaluation, namespace="gbc", inputs={"mfeat_raw", "terrorist_raw"}
    )
    return (
        method
        + reporting.create_pipeline(namespace="gbc", figures=True)
        + Pipeline(
            reporting.create_pipeline(namespace="gbc.sources"),
            inputs={"gbc.sources.results": "gbc.sources_results"},
        )
    )
