"""The ``reproduction`` pipeline: the five pipelines' latest results -> claims -> one report.

``kedro run --pipelines=reproduction`` reads what each method pipeline last wrote (its results
tables and ``run_info.json``: which env they came from), checks every claim of
``reproduction.papers`` and writes ``data/08_reporting/reproduction/report.{md,html}`` and
``verdicts.csv``. The tables it reads are listed under ``reproduction.tables`` (read from every
conf env when the pipeline is built), each the catalog entry ``reproduction.<pipeline>_<table>``.
"""

from kedro.pipeline import Node, Pipeline

from multiview_lab.pipelines.reproduction.nodes import (
    REFERENCE,
    check_claims,
    measure_costs,
    verdict_metrics,
    write_report,
)
from multiview_lab.pipelines.training.pipeline import conf_values


def _table_names() -> list[str]:
    names: list[str] = []
    for block in conf_values("reproduction", "tables"):
        for name in block if isinstance(block, dict) else ():
            if name not in names:
                names.append(str(name))
    return names


def _references() -> list[str]:
    """The parameter keys that ``reference`` claims name (published tables held elsewhere)."""
    keys: list[str] = []
    for papers in conf_values("reproduction", "papers"):
        for spec in (papers or {}).values():
            for claim in (spec or {}).get("claims") or []:
                ref = claim.get("reference") if claim.get("kind") == "reference" else None
                if ref and ref not in keys:
                    keys.append(str(ref))
    return keys


def create_pipeline(**kwargs) -> Pipeline:
    """Build the reproduction pipeline (namespace ``reproduction``)."""
    tables = _table_names()
    pipelines = sorted({t.partition(".")[0] for t in tables})
    # dataset names: reproduction.<pipeline>_<table> (Kedro keeps dots for namespaces)
    infos = {f"{p}.run_info": f"{p}_run_info" for p in pipelines}
    references = {f"{REFERENCE}{r}": f"params:{r}" for r in _references()}
    inputs = {
        "papers": "params:papers",
        "tables": "params:tables",
        **{t: t.replace(".", "_", 1) for t in tables},
        **infos,
        **references,
    }
    return Pipeline(
        [
            Node(check_claims, inputs, "verdicts", name="check_claims"),
            Node(
                measure_costs,
                {"tables": "params:tables", **{t: t.replace(".", "_", 1) for t in tables}},
                "costs",
                name="measure_costs",
            ),
            Node(
                write_report,
                {
                    "verdicts": "verdicts",
                    "papers": "params:papers",
                    "costs": "costs",
                    "figures_dir": "params:figures_dir",
                    **infos,
                },
                ["report_md", "report_html"],
                name="write_report",
            ),
            Node(verdict_metrics, "verdicts", "metrics", name="verdict_metrics"),
        ],
        namespace="reproduction",
        parameters=set(references.values()),
        tags=["reporting"],
    )
