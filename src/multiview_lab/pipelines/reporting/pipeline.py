"""The shared reporting pipeline, instantiated once per method under the method's namespace.

``create_pipeline(namespace="gbc")`` reads ``gbc.results`` and ``params:gbc.reporting`` and
writes ``gbc.summary`` (CSV), ``gbc.summary_md`` (Markdown), ``gbc.metrics`` (JSON, logged to
MLflow as metrics), with ``figures=True`` ``gbc.figures`` (PNG figures) and ``gbc.figure_data``
(the numbers each figure draws, one CSV per figure) and ``gbc.figure_metrics`` (the lines of
the line figures as MLflow metric series, the swept key as the step), and with ``reference=True``
``gbc.reference_comparison`` (CSV) and ``gbc.reference_comparison_md`` (Markdown): the summary
beside the published values of ``reporting.reference``.
"""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines.reporting.nodes import (
    compare_with_reference,
    figure_metrics,
    figure_tables,
    plot_figures,
    summarise_results,
    summary_to_markdown,
    summary_to_metrics,
)


def create_pipeline(
    namespace: str, figures: bool = False, reference: bool = False, **kwargs
) -> Pipeline:
    """Reporting nodes for one method.

    Parameters
    ----------
    namespace : str
        The method's namespace (its pipeline name); inputs and outputs are prefixed with it.
    figures : bool, default=False
        Add the nodes drawing the ``reporting.figures`` PNGs and writing their data.
    reference : bool, default=False
        Add the node setting the summary beside the published values ``reporting.reference``.
    """
    nodes = [
        Node(
            summarise_results, ["results", "params:reporting"], "summary", name="summarise_results"
        ),
        Node(
            summary_to_markdown,
            ["summary", "params:reporting"],
            "summary_md",
            name="write_summary_markdown",
        ),
        Node(
            summary_to_metrics,
            ["summary", "params:reporting"],
            "metrics",
            name="summary_to_mlflow_metrics",
        ),
    ]
    if figures:
        nodes += [
            Node(plot_figures, ["results", "params:reporting"], "figures", name="plot_figures"),
            Node(
                figure_tables,
                ["results", "params:reporting"],
                "figure_data",
                name="write_figure_data",
            ),
            Node(
                figure_metrics,
                ["results", "params:reporting"],
                "figure_metrics",
                name="figure_lines_to_mlflow_series",
            ),
        ]
    if reference:
        nodes.append(
            Node(
                compare_with_reference,
                ["summary", "params:reporting"],
                ["reference_comparison", "reference_comparison_md"],
                name="compare_with_reference",
            )
        )
    return Pipeline(nodes, namespace=namespace, tags=["reporting"])
