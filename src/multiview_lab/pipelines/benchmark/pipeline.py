"""The ``benchmark`` pipeline: data sets named in conf -> splits -> one training node per
method -> shared reporting (namespace ``benchmark``)."""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines import reporting, training
from multiview_lab.pipelines.benchmark.nodes import describe_datasets, load_datasets, make_splits
from multiview_lab.pipelines.benchmark.task import make_task


def create_pipeline(**kwargs) -> Pipeline:
    """Build the benchmark pipeline (namespace ``benchmark``)."""
    data = Pipeline(
        [
            Node(load_datasets, ["raw", "params:datasets"], "datasets", name="load_datasets"),
            Node(describe_datasets, "datasets", "dataset_table", name="describe_datasets"),
            Node(
                make_splits,
                ["datasets", "params:protocol", "params:methods"],
                "splits",
                name="make_splits",
            ),
        ],
        namespace="benchmark",
    )
    train = training.create_pipeline("benchmark", make_task, datasets="datasets")
    return data + train + reporting.create_pipeline(namespace="benchmark", figures=True)
