"""Nodes of the ``reproduction`` pipeline: every paper's claims checked, one report.

The claims are conf (``reproduction.papers.<paper>.claims``, checked by
:mod:`multiview_lab.reproduction.claims`); the tables are the method pipelines' latest results
(``reproduction.<pipeline>.<table>``, ``None`` when a pipeline never ran) and their
``run_info.json`` (which env, commit and MLflow run each came from).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from multiview_lab.reproduction.claims import NOT_RUN, PASSING, VERDICTS, evaluate_claims

logger = logging.getLogger(__name__)

_BADGE = {
    "reproduced": "#1a7f37",
    "direction holds": "#9a6700",
    "does not hold": "#cf222e",
    "not run": "#6e7781",
}


REFERENCE = "reference:"


def _split_inputs(inputs: Mapping[str, Any]) -> tuple[dict, dict, dict]:
    """The keyword inputs of a node as (tables, run infos, references): ``<pipeline>.<table>``,
    ``<pipeline>.run_info`` and ``reference:<parameter key>``."""
    tables, infos, references = {}, {}, {}
    for name, value in inputs.items():
        pipeline, _, table = name.partition(".")
        if name.startswith(REFERENCE):
            references[name.removeprefix(REFERENCE)] = value
        elif table == "run_info":
            infos[pipeline] = value
        else:
            tables[name] = value
    return tables, infos, references


def check_claims(papers: Mapping[str, Any], tables: Mapping[str, Any], **inputs: Any):
    """One row per claim of every paper: its verdict, the paper's value and ours.

    Parameters
    ----------
    papers : mapping
        ``reproduction.papers``: paper -> ``{title, pipeline, claims: [...]}``.
    tables : mapping
        ``reproduction.tables``: table name -> the columns that identify one of its units.
    **inputs
        The tables (``<pipeline>.<table>`` -> DataFrame or ``None``), the run infos
        (``<pipeline>.run_info`` -> dict or ``None``) and the parameter blocks that
        ``reference`` claims name (``reference:<key>``).
    """
    data, infos, references = _split_inputs(inputs)
    claims = {paper: list(spec.get("claims") or []) for paper, spec in papers.items()}
    verdicts = evaluate_claims(claims, data, tables, references)
    env = {
        p: _paper_env(infos.get(papers[p].get("pipeline")), group["verdict"])
        for p, group in verdicts.groupby("paper", sort=False)
    }
    verdicts.insert(1, "env", verdicts["paper"].map(env).fillna("unknown"))
    counts = verdicts["verdict"].value_counts()
    logger.info(
        "Reproduction: %d claims over %d papers: %s.",
        len(verdicts),
        len(papers),
        ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICTS),
    )
    return verdicts


def measure_costs(tables: Mapping[str, Any], **inputs: Any) -> pd.DataFrame:
    """The measured cost of each pipeline's results: one row per results table that records it.

    A unit's rows (one per score row: a feature count, a classifier, ...) repeat its timings,
    and so do the rows of another reading of the same fit under its own method name (e.g.
    PB-MVBoost-final-rho: PB-MVBoost's fit with the literal final vote). So a unit is the rows
    sharing ``seed``, ``fit_time_s`` and ``cpu_time_s`` (floats measured per unit: two units never
    share them); rows without a measured fit time are told apart by ``method`` as well. A shared
    inner CV adds its ``shared_cv_cpu_time_s`` once.
    Columns: ``pipeline``, ``table``, ``units``, ``measured`` (units with a ``cpu_time_s``;
    results written before it have none) and ``cpu_hours``.
    """
    data, _, _ = _split_inputs(inputs)
    rows = []
    for name in tables:
        frame = data.get(name)
        if frame is None or "cpu_time_s" not in getattr(frame, "columns", ()):
            continue
        units = _units(frame)
        measured = units[units["cpu_time_s"].notna()]
        shared = units.get("shared_cv_cpu_time_s")  # on every row of its reference unit
        shared_s = 0.0 if shared is None else float(shared.dropna().sum())
        rows.append(
            {
                "pipeline": name.partition(".")[0],
                "table": name,
                "units": len(units),
                "measured": len(measured),
                "cpu_hours": (float(measured["cpu_time_s"].sum()) + shared_s) / 3600,
            }
        )
    return pd.DataFrame(rows, columns=["pipeline", "table", "units", "measured", "cpu_hours"])


def _units(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per unit of a results table (see :func:`measure_costs`)."""
    by = [c for c in ("seed", "fit_time_s", "cpu_time_s") if c in frame.columns]
    timed = (
        frame["fit_time_s"].gt(0)
        if "fit_time_s" in frame.columns
        else pd.Series(False, index=frame.index)
    )
    untimed = [*by, "method"] if "method" in frame.columns else by
    return pd.concat([frame[timed].drop_duplicates(by), frame[~timed].drop_duplicates(untimed)])


def _cost_text(costs: pd.DataFrame | None, pipeline: str | None) -> str:
    """``measured cost 5.2 CPU-hours over 1,200 units`` (and how many have no record)."""
    if costs is None or not len(costs) or pipeline is None:
        return ""
    mine = costs[costs["pipeline"] == pipeline]
    if not len(mine):
        return ""
    units, measured = int(mine["units"].sum()), int(mine["measured"].sum())
    if measured == 0:
        return "; cost not recorded (results written before units recorded their CPU time)"
    missing = f", {units - measured:,} units without a record" if measured < units else ""
    return (
        f"; measured cost {mine['cpu_hours'].sum():.2f} CPU-hours over {measured:,} units{missing}"
    )


def verdict_metrics(verdicts: pd.DataFrame) -> dict[str, float]:
    """Counts of each verdict, overall and per paper (MLflow metrics)."""
    out: dict[str, float] = {}
    for paper, group in [("all", verdicts), *verdicts.groupby("paper", sort=False)]:
        counts = group["verdict"].value_counts()
        for v in VERDICTS:
            out[f"{paper}/{v.replace(' ', '_')}"] = float(counts.get(v, 0))
        ran = group[group["verdict"] != NOT_RUN]
        if len(ran):
            out[f"{paper}/pass_fraction"] = float(ran["verdict"].isin(PASSING).mean())
    return out


NO_FIGURES = "the pipeline has not run in this project"
MISSING_FIGURE = "not written by the pipeline's latest run"


def _provenance(info: Mapping[str, Any] | None, notes: Mapping[str, str] | None = None) -> str:
    """Where a paper's results came from; ``notes`` (the paper's ``protocol_notes``: env ->
    text) adds what that env's protocol leaves out of the paper's, e.g. a stated cut."""
    if not info:
        return (
            "no run_info.json: the pipeline never ran here, or its results predate the record "
            "(env unknown)"
        )
    note = (notes or {}).get(str(info.get("env")))
    commit = str(info.get("git_commit") or "?")[:10]
    dirty = " (uncommitted changes)" if str(info.get("git_dirty")) == "true" else ""
    partial = " — a partial run" if info.get("partial") else ""
    run = info.get("mlflow_run_id")
    protocol, execution = _split_overrides(info.get("runtime_params"))
    overrides = "".join(
        f" — with `--params` {', '.join(f'{k}={v}' for k, v in given.items())} ({what})"
        for given, what in (
            (protocol, "not the env's own protocol"),
            (execution, "how it ran: the results do not depend on it"),
        )
        if given
    )
    return (
        f"env **{info.get('env')}**, finished {info.get('finished_at')}, commit {commit}{dirty}"
        + (f", MLflow run {run}" if run else "")
        + partial
        + overrides
        + (f"; this env's protocol: {' '.join(str(note).split())}" if note else "")
    )


def _paper_env(info: Mapping[str, Any] | None, verdicts: pd.Series) -> str:
    """A paper's "results from": :func:`_env_label`, or ``not run`` when there is no run
    record and no claim could be checked (the pipeline has not run here: not an unknown env)."""
    label = _env_label(info)
    return "not run" if label == "unknown" and bool((verdicts == NOT_RUN).all()) else label


def _env_label(info: Mapping[str, Any] | None) -> str:
    """The env a paper's results came from, as the summary table shows it: ``paper``, or
    ``paper (with --params)`` / ``paper (partial)`` when the run was not the env's own."""
    if not info:
        return "unknown"
    protocol, _ = _split_overrides(info.get("runtime_params"))
    marks = [m for m, on in (("partial", info.get("partial")),
                             ("with --params", protocol)) if on]  # fmt: skip
    return str(info.get("env", "unknown")) + (f" ({', '.join(marks)})" if marks else "")


EXECUTION_PARAMS = "execution."
"""``--params`` under ``execution`` (workers, backend, BLAS threads, the unit cache and archive)
say how a run was executed, not what it computed: a unit's result does not depend on them
(docs/architecture.md), so they do not make a run "not the env's own protocol"."""


def _split_overrides(params: Mapping[str, Any] | None) -> tuple[dict, dict]:
    """A run's ``--params``, dotted, split into those that change the protocol and the
    ``execution`` ones."""
    given = _dotted(params or {})
    execution = {k: v for k, v in given.items() if k.startswith(EXECUTION_PARAMS)}
    return {k: v for k, v in given.items() if k not in execution}, execution


def _dotted(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": [1]}}`` -> ``{"a.b": [1]}`` (the form ``--params`` takes)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_dotted(value, name + "."))
        else:
            out[name] = value
    return out


def _counts_line(group: pd.DataFrame) -> str:
    counts = group["verdict"].value_counts()
    return ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


def write_report(
    verdicts: pd.DataFrame,
    papers: Mapping[str, Any],
    costs: pd.DataFrame | None = None,
    figures_dir: str | None = None,
    **infos: Any,
) -> tuple[str, str]:
    """The report as Markdown and as a standalone HTML page: per paper, where its results came
    from and what they cost (:func:`measure_costs`), then its claims (paper's value, ours,
    verdict, detail) and links to its figures.

    ``figures_dir`` is the folder the figures' paths are relative to (the reporting layer, of
    which the report's own folder is a child). When given, a figure whose file is not there (a
    partial run, or a pipeline whose run stopped before its figures) is named as missing
    instead of being linked as a broken image; ``None`` links every figure."""
    infos = {k.removesuffix(".run_info"): v for k, v in infos.items()}
    exists = _figure_check(figures_dir)
    text = [c for c in verdicts.columns if c != "n"]  # empty cells come back from CSV as NaN
    verdicts = verdicts.assign(
        **{c: verdicts[c].map(lambda x: "" if pd.isna(x) else str(x)) for c in text}
    )
    md = [
        "# Reproduction report",
        "",
        "Every claim of the five papers in `conf/base/parameters_reproduction.yml`, checked on "
        "the latest results of each pipeline. Verdicts: **reproduced** (within the stated "
        "tolerance, or significant), **direction holds** (the paper's direction without its "
        "strength), **does not hold**, **not run** (no results: never a pass).",
        "",
        "| paper | results from | " + " | ".join(VERDICTS) + " |",
        "|---|---|" + "---:|" * len(VERDICTS),
    ]
    for paper, group in verdicts.groupby("paper", sort=False):
        counts = group["verdict"].value_counts()
        env = _paper_env(infos.get(papers[paper].get("pipeline")), group["verdict"])
        md.append(
            f"| {papers[paper].get('title', paper)} | {env} | "
            + " | ".join(str(counts.get(v, 0)) for v in VERDICTS)
            + " |"
        )
    for paper, group in verdicts.groupby("paper", sort=False):
        spec = papers[paper]
        md += ["", f"## {spec.get('title', paper)}", ""]
        if spec.get("reference"):
            md += [f"*{spec['reference']}*", ""]
        md += [
            f"Results: {_provenance(infos.get(spec.get('pipeline')), spec.get('protocol_notes'))}"
            f"{_cost_text(costs, spec.get('pipeline'))}. {_counts_line(group)}.",
            "",
            "| claim | source | paper | ours (n) | verdict | detail |",
            "|---|---|---|---|---|---|",
        ]
        for r in group.itertuples():
            ours = f"{r.ours} ({r.n})" if r.ours else "–"
            note = getattr(r, "note", "")
            md.append(
                f"| {r.claim}{f'<br>*{note}*' if note else ''} | {r.source} | "
                f"{r.paper_value or '–'} | {ours} | **{r.verdict}** | {r.detail} |"
            )
        figures = spec.get("figures") or {}
        if figures and not infos.get(spec.get("pipeline")):
            md += ["", f"Figures: {', '.join(figures)} (not produced here: {NO_FIGURES})."]
        elif figures:
            md += [
                "",
                "Figures: "
                + ", ".join(
                    f"[{k}](../{v})" if exists(v) else f"{k} ({MISSING_FIGURE})"
                    for k, v in figures.items()
                ),
            ]
    return "\n".join(md) + "\n", _html(verdicts, papers, infos, costs, exists)


def _figure_check(figures_dir: str | None):
    """``path -> bool``: whether a figure's file exists under ``figures_dir`` (always True
    when it is None)."""
    if figures_dir is None:
        return lambda path: True
    root = Path(figures_dir)
    return lambda path: (root / path).is_file()


def _note_html(note: str) -> str:
    """A claim's note (how it is read), under its text."""
    return f'<div class="note">{html.escape(note)}</div>' if note else ""


def _html(
    verdicts: pd.DataFrame,
    papers: Mapping[str, Any],
    infos: Mapping[str, Any],
    costs: pd.DataFrame | None = None,
    exists=lambda path: True,
) -> str:
    esc = html.escape

    def badge(v: str) -> str:
        return f'<span class="badge" style="background:{_BADGE[v]}">{esc(v)}</span>'

    def md_inline(text: str) -> str:  # the provenance line's **env** and `--params`
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", esc(text))
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)

    body = [
        "<h1>Reproduction report</h1>",
        "<p>Every claim of the five papers in <code>conf/base/parameters_reproduction.yml</code>,"
        " checked on the latest results of each pipeline. " + " ".join(badge(v) for v in VERDICTS)
        + ": <i>reproduced</i> within the stated tolerance or significant; <i>direction holds</i>"
        " without the paper's strength; <i>not run</i>: no results, never a pass.</p>",
        "<table><tr><th>paper</th><th>results from</th>"
        + "".join(f"<th>{badge(v)}</th>" for v in VERDICTS)
        + "</tr>",
    ]  # fmt: skip
    for paper, group in verdicts.groupby("paper", sort=False):
        counts = group["verdict"].value_counts()
        env = _paper_env(infos.get(papers[paper].get("pipeline")), group["verdict"])
        body.append(
            f'<tr><td><a href="#{esc(paper)}">{esc(papers[paper].get("title", paper))}</a></td>'
            f"<td>{esc(str(env))}</td>"
            + "".join(f'<td class="num">{counts.get(v, 0)}</td>' for v in VERDICTS)
            + "</tr>"
        )
    body.append("</table>")
    for paper, group in verdicts.groupby("paper", sort=False):
        spec = papers[paper]
        body.append(f'<h2 id="{esc(paper)}">{esc(spec.get("title", paper))}</h2>')
        if spec.get("reference"):
            body.append(f'<p class="ref">{esc(spec["reference"])}</p>')
        body.append(
            f"<p>Results: "
            f"{md_inline(_provenance(infos.get(spec.get('pipeline')), spec.get('protocol_notes')))}"
            f"{esc(_cost_text(costs, spec.get('pipeline')))}. {esc(_counts_line(group))}.</p>"
        )
        header = (
            "<table><tr><th>claim</th><th>source</th><th>paper</th><th>ours</th><th>n</th>"
            "<th>verdict</th><th>detail</th></tr>"
        )

        def rows(frame) -> str:
            return "".join(
                f"<tr><td>{esc(r.claim)}{_note_html(getattr(r, 'note', ''))}</td>"
                f"<td>{esc(r.source)}</td>"
                f'<td class="num">{esc(r.paper_value or "–")}</td>'
                f'<td class="ours">{esc(r.ours or "–")}</td><td class="num">{r.n}</td>'
                f'<td>{badge(r.verdict)}</td><td class="detail">{esc(r.detail)}</td></tr>'
                for r in frame.itertuples()
            )

        # a published table's cells (one reference claim) fold into one block
        single = group[group["group"] == ""]
        body.append(header + rows(single) + "</table>")
        for name, cells in group[group["group"] != ""].groupby("group", sort=False):
            body.append(
                f"<details><summary>{esc(name)}: {len(cells)} published cells and "
                f"comparisons — {esc(_counts_line(cells))}</summary>"
                + header + rows(cells) + "</table></details>"
            )  # fmt: skip
        figures = spec.get("figures") or {}
        if figures and not infos.get(spec.get("pipeline")):
            body.append(
                f'<p class="nofig">Figures: {esc(", ".join(figures))} (not produced here: '
                f"{esc(NO_FIGURES)}).</p>"
            )
        elif figures:
            present = {caption: path for caption, path in figures.items() if exists(path)}
            missing = [caption for caption in figures if caption not in present]
            if missing:
                body.append(
                    f'<p class="nofig">Figures: {esc(", ".join(missing))} '
                    f"({esc(MISSING_FIGURE)}).</p>"
                )
            body.append('<div class="figures">')
            for caption, path in present.items():
                src = esc(f"../{path}")
                body.append(
                    f'<figure><a href="{src}"><img src="{src}" alt="{esc(caption)}"></a>'
                    f"<figcaption>{esc(caption)}</figcaption></figure>"
                )
            body.append("</div>")
    style = (
        "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;"
        "color:#1f2328}table{border-collapse:collapse;margin:1em 0;width:100%}"
        "th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top;font-size:14px}"
        "th{background:#f6f8fa;text-align:left}td.num{text-align:right;white-space:nowrap}"
        # ours can be a long series (a trend claim's values): it wraps, the verdict stays in view
        "td.ours{text-align:right;min-width:6em;max-width:24em;overflow-wrap:anywhere}"
        "td.detail,.note{font-size:12px;color:#57606a}.note{font-style:italic;margin-top:2px}"
        ".badge{color:#fff;border-radius:10px;"
        "padding:1px 8px;font-size:12px;white-space:nowrap}.ref{color:#57606a;font-style:italic}"
        ".figures{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;width:360px}"
        "figure img{width:100%;border:1px solid #d0d7de}figcaption{font-size:12px}"
        ".nofig{color:#57606a;font-size:13px}"
        "details{margin:1em 0}summary{cursor:pointer;font-weight:600}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Multiview Lab — reproduction report</title><style>{style}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
