"""The ``gbc`` pipeline: data -> graphs (04_feature) -> splits -> training -> reporting.

Namespace ``gbc``. Two experiments run on the shared training stage with the task of
:mod:`.task`: the main study (every method of ``gbc.methods`` on ``gbc.splits`` ->
``gbc.results``, ``gbc.weights``, ``gbc.models``) and the number-of-sources study
(``gbc.sources.method`` on ``gbc.source_count_splits`` -> ``gbc.sources_results``, stage
``source_counts``). The shared reporting runs on both: error against the training percentage
(tables at 10/50/90 %) and, under ``gbc.sources``, the Table 4 analogue.
"""

from __future__ import annotations

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.gbc.nodes import (
    build_mfeat_graphs,
    collect_datasets,
    graph_statistics,
    load_terrorist_graph_edges,
    plot_weight_trajectories,
    prepare_mfeat,
    prepare_terrorist,
    summarise_final_weights,
)
from multiview_lab.pipelines.gbc.splits import make_source_count_splits, make_splits
from multiview_lab.pipelines.gbc.task import make_source_count_task, make_task


def source_study_methods() -> list[str]:
    """The method(s) ``gbc.sources.method`` names in any environment's parameters (base first):
    the study's training nodes (its task runs only the method of the run's environment)."""
    names = list(dict.fromkeys(str(m) for m in training.conf_values("gbc", "sources.method")))
    return names or ["GBC"]


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
    splits = Pipeline(
        [
            Node(
                make_splits,
                ["datasets", "params:protocol", "params:methods"],
                "splits",
                name="make_splits",
            ),
            Node(
                make_source_count_splits,
                ["datasets", "params:sources", "params:methods"],
                "source_count_splits",
                name="make_source_count_splits",
            ),
        ],
        tags=["splits"],
    )
    weights = Pipeline(
        [
            Node(summarise_final_weights, "weights", "final_weights", name="final_weights"),
            Node(
                plot_weight_trajectories,
                ["weights", "params:weights_figure"],
                "weights_figure",
                name="plot_weight_trajectories",
            ),
        ],
        tags=["evaluation"],
    )
    method = Pipeline(
        data + graphs + splits + weights,
        namespace="gbc",
        inputs={"mfeat_raw", "terrorist_raw"},
    )
    main_study = training.create_pipeline("gbc", make_task, extras=["weights"])
    source_study = training.create_pipeline(
        "gbc",
        make_source_count_task,
        splits="source_count_splits",
        protocol="sources",
        methods=source_study_methods(),
        stage="source_counts",
        results="sources_results",
        models="source_count_models",
    )
    return (
        method
        + main_study
        + source_study
        + reporting.create_pipeline(namespace="gbc", figures=True)
        + Pipeline(
            reporting.create_pipeline(namespace="gbc.sources"),
            inputs={"gbc.sources.results": "gbc.sources_results"},
        )
    )
