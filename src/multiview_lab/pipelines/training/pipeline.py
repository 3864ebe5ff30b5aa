"""The per-algorithm training stage of every pipeline, built from its method registry.

``create_pipeline("pbmvboost", make_task, ...)`` gives one node per registered method,
``pbmvboost.<method>.train`` (namespace ``pbmvboost.<method>``: kedro-viz draws it as one group,
and ``kedro run --pipelines=pbmvboost --nodes=pbmvboost.pb_mvboost.train`` re-runs one method),
writing ``pbmvboost.<method>.units`` (``data/06_models/<pipeline>/units/<method>.pkl``), then one
``collect_<pipeline>_results`` node writing ``<pipeline>.results``, ``<pipeline>.models`` and
the extra tables the task produces.

The node set is read from the pipeline's conf when the pipeline is built: every method under
``<pipeline>.<registry>`` in ``conf/*/parameters*.yml`` (base first, then the other
environments), so a method is added by a conf entry alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml
from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines.training.nodes import collect_units, time_stage, train_method

_RESERVED = {"results", "models", "splits", "summary", "metrics", "figures", "task"}


def method_slug(name: str) -> str:
    """A method name as a namespace: lower case, runs of other characters as ``_``."""
    slug = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
    if not slug or slug in _RESERVED or slug[0].isdigit():
        slug = f"m_{slug}"
    return slug


_PROJECT: dict[str, Path] = {}


def set_project_path(path) -> None:
    """Tell the stage which project's conf lists the methods (the hooks call it when a session
    creates its context, before the pipelines are built)."""
    _PROJECT["path"] = Path(path)


def _conf_dir() -> Path:
    from kedro.utils import find_kedro_project

    project = _PROJECT.get("path")
    if project is None or not (project / "conf").is_dir():
        project = find_kedro_project(Path.cwd())
    if project is None:  # e.g. imported outside a project: the repository this package is in
        project = Path(__file__).resolve().parents[4]
    return Path(project) / "conf"


def conf_values(pipeline: str, key: str) -> list:
    """The value of ``<pipeline>.<key>`` (a dotted key, e.g. ``"corel.methods"``) in every
    environment's parameters, base first (environments that do not set it are skipped)."""
    conf = _conf_dir()
    envs = sorted(p for p in conf.iterdir() if p.is_dir()) if conf.is_dir() else []
    envs.sort(key=lambda p: p.name != "base")
    values = []
    for env in envs:
        for path in sorted(env.glob("parameters*.yml")):
            block = (yaml.safe_load(path.read_text()) or {}).get(pipeline)
            for part in key.split("."):
                block = block.get(part) if isinstance(block, dict) else None
            if block is not None:
                values.append(block)
    return values


def registered_methods(pipeline: str, registry: str = "methods") -> list[str]:
    """Method names under ``<pipeline>.<registry>`` in every environment's parameters."""
    names: list[str] = []
    for block in conf_values(pipeline, registry):
        for name in block if isinstance(block, dict) else ():
            if str(name) not in names:
                names.append(str(name))
    return names


def create_pipeline(
    pipeline: str,
    make_task: Callable,
    *,
    datasets: str = "datasets",
    splits: str = "splits",
    registry: str = "methods",
    protocol: str = "protocol",
    extras: Sequence[str] = (),
    methods: Sequence[str] | None = None,
    stage: str | None = None,
    results: str = "results",
    models: str = "models",
) -> Pipeline:
    """One training node per method and the collecting node, for ``pipeline``.

    Parameters
    ----------
    pipeline : str
        The pipeline's namespace (``pbmvboost``); its datasets and parameters are prefixed
        with it, except ``params:execution`` (shared by every pipeline).
    make_task : callable
        ``make_task(protocol) -> Task``: the pipeline's task built from its protocol parameters.
    datasets, splits : str
        The pipeline's datasets holding the prepared data sets and the split table.
    registry, protocol : str
        The parameter keys of the method registry and of the protocol.
    extras : list of str
        Extra tables of the task, each written to ``<pipeline>.<name>``.
    methods : list of str, optional
        The method names (default: :func:`registered_methods`).
    stage : str, optional
        For a pipeline with several experiments (MIML's scene and COREL studies): the method
        nodes are namespaced ``<pipeline>.<stage>.<method>`` and the collecting node is
        ``<pipeline>.collect_<stage>_results``.
    results, models : str
        The names (within the pipeline's namespace) of the collected results and models.
    """
    names = list(methods) if methods is not None else registered_methods(pipeline, registry)
    if not names:
        raise ValueError(f"no method registered under {pipeline}.{registry} in any conf env.")
    slugs = [method_slug(n) for n in names]
    if len(set(slugs)) != len(slugs):
        raise ValueError(f"{pipeline}: method names {names} give clashing node names {slugs}.")
    ns = lambda name: f"{pipeline}.{name}"  # noqa: E731
    group = f"{stage}.{{}}" if stage else "{}"
    inputs = [
        ns(datasets),
        ns(splits),
        f"params:{ns(registry)}",
        f"params:{ns(protocol)}",
        "params:execution",
    ]
    nodes = []
    for name, slug in zip(names, slugs, strict=True):
        func = functools.update_wrapper(
            functools.partial(train_method, method=name, pipeline=pipeline, make_task=make_task),
            train_method,
        )
        nodes.append(
            Node(
                func,
                inputs,
                ns(group.format(f"{slug}.units")),
                name="train",
                namespace=ns(group.format(slug)),
                tags=["training"],
            )
        )
    collect = functools.update_wrapper(
        functools.partial(collect_units, extras=tuple(extras)), collect_units
    )
    nodes.append(
        Node(
            collect,
            [
                ns(splits),
                f"params:{ns(registry)}",
                *(ns(group.format(f"{s}.units")) for s in slugs),
            ],
            [ns(results), ns(models), *(ns(e) for e in extras)],
            name=f"collect_{stage}_results" if stage else "collect_results",
            namespace=pipeline,
            tags=["training"],
        )
    )
    return Pipeline(nodes)


def create_timing_pipeline(
    pipeline: str,
    make_task: Callable,
    *,
    datasets: str = "datasets",
    splits: str = "splits",
    registry: str = "methods",
    protocol: str = "protocol",
    timing: str = "timing",
    results: str = "results",
    output: str = "timing",
) -> Pipeline:
    """The timing study of one stage: one node, ``<pipeline>.time_<output>``.

    It fits and scores every method of ``<pipeline>.<registry>`` one after another on the first
    ``n_splits`` splits (parameters ``<pipeline>.<timing>``; see
    :func:`multiview_lab.pipelines.training.nodes.time_stage`) after the stage's training
    (``<pipeline>.<results>``), and writes ``<pipeline>.<output>``: CPU and wall seconds of
    each fit and scoring under the same conditions, for a paper's timing table.
    """
    ns = lambda name: f"{pipeline}.{name}"  # noqa: E731
    func = functools.update_wrapper(
        functools.partial(time_stage, pipeline=pipeline, make_task=make_task), time_stage
    )
    return Pipeline(
        [
            Node(
                func,
                [
                    ns(datasets),
                    ns(splits),
                    f"params:{ns(registry)}",
                    f"params:{ns(protocol)}",
                    f"params:{ns(timing)}",
                    "params:execution",
                    ns(results),
                ],
                ns(output),
                name=f"time_{output}",
                namespace=pipeline,
                tags=["timing"],
            )
        ]
    )
