"""The ``miml`` pipeline: raw data -> splits -> the training stage of each study (scene, COREL,
Figure 3, Reuters text, 20 Newsgroups MI) -> the timing study of scene and Reuters (Table 4) ->
shared reporting, COREL, Reuters and 20 Newsgroups tables, Table 4, Figure 3 study and the
label-covariance heat map (namespace ``miml``)."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.miml.loaders import NEWSGROUPS_TASKS
from multiview_lab.pipelines.miml.nodes import (
    make_newsgroups_splits,
    make_reuters_splits,
    make_splits,
    prepare_corel,
    prepare_newsgroups,
    prepare_reuters,
    prepare_scene,
)
from multiview_lab.pipelines.miml.report import (
    corel_report,
    figure3_study,
    newsgroups_report,
    plot_figure3,
    plot_label_covariance,
    table4,
)
from multiview_lab.pipelines.miml.task import (
    make_corel_task,
    make_figure3_task,
    make_newsgroups_task,
    make_reuters_task,
    make_scene_task,
)
from multiview_lab.pipelines.reporting.nodes import (
    summarise_results,
    summary_to_markdown,
    summary_to_metrics,
)


def _study(name: str, make_task, datasets: str | None = None, **kwargs) -> Pipeline:
    """The training stage of one study beside scene, by the pipeline's naming convention:
    ``miml.<name>_splits``, parameters ``miml.<name>.methods`` and ``miml.<name>``, outputs
    ``miml.<name>_results`` and ``miml.<name>_models``."""
    return training.create_pipeline(
        "miml",
        make_task,
        datasets=datasets or name,
        splits=f"{name}_splits",
        registry=f"{name}.methods",
        protocol=name,
        stage=name,
        results=f"{name}_results",
        models=f"{name}_models",
        **kwargs,
    )


def create_pipeline(**kwargs) -> Pipeline:
    """Build the MIML-GP pipeline (namespace ``miml``)."""
    data = Pipeline(
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
                ["scene_splits", "corel_splits", "figure3_splits"],
                name="make_splits",
            ),
            Node(
                prepare_reuters,
                ["reuters_raw", "params:reuters"],
                "reuters",
                name="prepare_reuters",
            ),
            Node(
                make_reuters_splits,
                ["reuters", "params:reuters"],
                "reuters_splits",
                name="make_reuters_splits",
            ),
            Node(
                prepare_newsgroups,
                ["params:newsgroups", *(f"newsgroups_raw_{t}" for t in NEWSGROUPS_TASKS)],
                "newsgroups",
                name="prepare_newsgroups",
            ),
            Node(
                make_newsgroups_splits,
                ["newsgroups", "params:newsgroups"],
                "newsgroups_splits",
                name="make_newsgroups_splits",
            ),
        ],
        namespace="miml",
    )
    scene = training.create_pipeline(
        "miml",
        make_scene_task,
        datasets="scene",
        splits="scene_splits",
        stage="scene",
        extras=["label_covariances"],
    )
    corel = _study("corel", make_corel_task)
    figure3 = _study("figure3", make_figure3_task, datasets="scene", extras=["figure3_fits"])
    reuters = _study("reuters", make_reuters_task)
    # Table 4: every method of scene and Reuters timed one after another in one process
    timing = training.create_timing_pipeline(
        "miml", make_scene_task, datasets="scene", splits="scene_splits"
    ) + training.create_timing_pipeline(
        "miml",
        make_reuters_task,
        datasets="reuters",
        splits="reuters_splits",
        registry="reuters.methods",
        protocol="reuters",
        timing="reuters.timing",
        results="reuters_results",
        output="reuters_timing",
    )
    newsgroups = _study("newsgroups", make_newsgroups_task)
    report = Pipeline(
        [
            Node(
                corel_report,
                ["corel_results", "params:corel"],
                ["corel_summary", "corel_summary_md", "corel_metrics"],
                name="corel_report",
            ),
            # the Reuters table with the shared reporting's nodes, as the scene table
            Node(
                summarise_results,
                ["reuters_results", "params:reuters.reporting"],
                "reuters_summary",
                name="summarise_reuters_results",
            ),
            Node(
                summary_to_markdown,
                ["reuters_summary", "params:reuters.reporting"],
                "reuters_summary_md",
                name="write_reuters_summary_markdown",
            ),
            Node(
                summary_to_metrics,
                ["reuters_summary", "params:reuters.reporting"],
                "reuters_metrics",
                name="reuters_summary_to_mlflow_metrics",
            ),
            Node(
                newsgroups_report,
                ["newsgroups_results", "params:newsgroups"],
                ["newsgroups_summary", "newsgroups_summary_md", "newsgroups_metrics"],
                name="newsgroups_report",
            ),
            Node(
                figure3_study,
                ["figure3_results", "figure3_fits", "params:figure3"],
                "figure3_study",
                name="figure3_study",
            ),
            Node(plot_figure3, ["figure3_study", "params:figure3"], "figure3", name="plot_figure3"),
            Node(
                table4,
                ["timing", "reuters_timing", "params:table4"],
                ["table4_summary", "table4_md", "table4_figure"],
                name="table4",
            ),
            Node(
                plot_label_covariance,
                ["label_covariances", "scene", "params:heatmap"],
                "label_covariance_heatmap",
                name="plot_label_covariance",
            ),
        ],
        namespace="miml",
    )
    return (
        data + scene + corel + figure3 + reuters + newsgroups + timing + report
        + reporting.create_pipeline(namespace="miml", figures=True)
    )  # fmt: skip
