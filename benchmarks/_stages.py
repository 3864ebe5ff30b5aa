"""What the benchmarks share: a pipeline's training stages, prepared through a real KedroSession."""

from __future__ import annotations

from pathlib import Path

from multiview_lab.protocol.engine import _unit_record
from multiview_lab.protocol.registry import is_enabled, parse_methods
from multiview_lab.protocol.sharing import apply_protocol_sharing
from multiview_lab.protocol.splits import REPETITION_KEYS, key_columns

__all__ = ["REPETITION_KEYS", "prepare_stages", "stage_units", "training_stages"]


def training_stages(pipeline) -> dict:
    """The training stages of a Kedro pipeline: ``(datasets, splits, registry, protocol) ->
    make_task``, read from its ``<pipeline>.<method>.train`` nodes."""
    stages = {}
    for node in pipeline.nodes:
        kw = getattr(node.func, "keywords", {}) or {}
        if "make_task" in kw and "method" in kw:
            stages.setdefault(tuple(node.inputs[:4]), kw["make_task"])
    return stages


def prepare_stages(project: Path, name: str, env: str, runtime_params=None) -> list[dict]:
    """Run pipeline ``name``'s nodes up to its training stages in ``env``; return each stage's
    inputs: ``label`` (the registry key), ``protocol_key``, ``datasets``, ``splits``, ``methods``, ``protocol``, ``execution`` (the
    env's global block) and ``make_task``."""
    from kedro.framework.project import pipelines
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(project)
    with KedroSession.create(
        project_path=project, env=env, runtime_params=runtime_params or {}
    ) as session:
        context = session.load_context()
        stages = training_stages(pipelines[name])
        needed = sorted({d for key in stages for d in key[:2]})
        session.run(pipeline_names=[name], to_outputs=needed)
        catalog = context.catalog
        return [
            {
                "label": registry.removeprefix(f"params:{name}."),
                "protocol_key": protocol.removeprefix(f"params:{name}."),
                "datasets": catalog.load(datasets),
                "splits": catalog.load(splits),
                "methods": catalog.load(registry),
                "protocol": catalog.load(protocol),
                "execution": catalog.load("params:execution"),
                "make_task": make_task,
            }
            for (datasets, splits, registry, protocol), make_task in stages.items()
        ]


def stage_units(stage: dict) -> tuple[list, dict]:
    """The units of a stage as the engine forms them: ``[(unit, method, split)]``, methods."""
    task = stage["make_task"](stage["protocol"])
    entries = {
        k: apply_protocol_sharing(v, stage["protocol"])  # as the training node does
        for k, v in dict(stage["methods"]).items()
        if is_enabled(v)
    }
    methods = parse_methods(entries, task.method_options)
    keys = key_columns(stage["splits"])
    units = [
        (_unit_record(keys, split, m.name), m, split)
        for split in stage["splits"].to_dict("records")
        for m in methods.values()
        if task.applies(m, split)
    ]
    return units, task
