"""Reporting nodes shared by every method.

They read a method's *results table* (one row per evaluation unit, key columns and metric
columns; see :mod:`multiview_lab.evaluation`) and the method's ``reporting`` parameters:

.. code-block:: yaml

    reporting:
      group_by: [dataset, method]     # one summary row per combination
      metrics: [accuracy, f1]         # metric columns to summarise
      repeat_key: draw                # std over this key (random draws, folds, splits)
      average_over: [task]            # averaged within a repetition first
      table_columns: [dataset, ...]   # optional: column order of the CSV (the rest follow)
      significance:                   # optional: Wilcoxon rank-sum flags (Table 1 style)
        column_keys: [dataset]
        method_key: method
        alpha: 0.02
      table_query: "n_train == 500"   # optional: rows of the table (pandas query)
      figures:                        # optional: PNGs, lines against a swept key or bars
        - {name: accuracy_vs_n, x: n_train, y: accuracy, hue: method, facet: dataset}
        - {name: time, kind: bar, x: dataset, y: [accuracy, fit_time_s], query: "n_train == 500"}
"""

from __future__ import annotations

import logging
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from multiview_lab.evaluation import flag_significance, summarise  # noqa: E402

logger = logging.getLogger(__name__)

_METRIC_NAME = re.compile(r"[^\w.\-/ ]")


def summarise_results(results: pd.DataFrame, reporting: dict[str, Any]) -> pd.DataFrame:
    """Summary table: mean and std of each metric per group, with optional significance flags.

    ``reporting.table_query`` (pandas syntax, optional) selects the rows of the table, e.g. the
    paper's training size when the results also hold a sweep for the figures.
    """
    if reporting.get("table_query"):
        results = results.query(reporting["table_query"])
        if results.empty:
            raise ValueError(f"No results match table_query {reporting['table_query']!r}.")
    summary = summarise(
        results,
        group_by=reporting["group_by"],
        metrics=reporting["metrics"],
        repeat_key=reporting.get("repeat_key"),
        average_over=reporting.get("average_over", []),
    )
    sig = reporting.get("significance")
    if sig:
        summary = flag_significance(
            results,
            summary,
            column_keys=sig.get("column_keys", []),
            method_key=sig.get("method_key", "method"),
            metrics=sig.get("metrics", reporting["metrics"]),
            repeat_key=reporting["repeat_key"],
            alpha=float(sig.get("alpha", 0.02)),
            higher_is_better=sig.get("higher_is_better", True),
        )
    order = reporting.get("table_columns")
    if order:
        missing = [c for c in order if c not in summary.columns]
        if missing:
            raise ValueError(f"table_columns {missing} are not in the summary {list(summary)}.")
        summary = summary[[*order, *(c for c in summary.columns if c not in order)]]
    logger.info("Summary of %d results in %d rows.", len(results), len(summary))
    return summary


def _fmt(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("0.") else text


def summary_to_markdown(summary: pd.DataFrame, reporting: dict[str, Any]) -> str:
    """Render the summary as a Markdown table with ``mean ± std`` cells.

    A cell flagged significantly worse than the best of its column is marked with ``↓``, and the
    best (bold) per column when significance flags are present, as in the paper's tables.
    ``reporting.digits`` sets the decimals: one int for every metric (default 4) or a mapping
    metric -> int, metrics not named keeping 4 (e.g. ``{k: 1}`` for feature counts).
    """
    digits_spec = reporting.get("digits", 4)
    if isinstance(digits_spec, dict):
        unknown = sorted(set(digits_spec) - set(reporting["metrics"]))
        if unknown:
            raise ValueError(f"reporting.digits names metrics {unknown} not in reporting.metrics.")
        digits_of = {m: int(digits_spec.get(m, 4)) for m in reporting["metrics"]}
    else:
        digits_of = dict.fromkeys(reporting["metrics"], int(digits_spec))
    keys = list(reporting["group_by"])
    metrics = list(reporting["metrics"])
    header = keys + metrics
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in summary.iterrows():
        cells = [str(row[k]) for k in keys]
        for m in metrics:
            if not np.isfinite(row[f"{m}_mean"]):
                cells.append("–")  # the metric does not apply to this row (e.g. no K)
                continue
            digits = digits_of[m]
            cell = f"{_fmt(row[f'{m}_mean'], digits)} ± {_fmt(row[f'{m}_std'], digits)}"
            if f"{m}_worse" in summary.columns and bool(row[f"{m}_worse"]):
                cell += " ↓"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    count = [c for c in summary.columns if c.startswith("n_") or c == "n"]
    note = ""
    if count:
        note = (
            f"\n\nRepetitions per row: {', '.join(sorted(map(str, summary[count[0]].unique())))}."
        )
    if any(c.endswith("_worse") for c in summary.columns):
        alpha = reporting.get("significance", {}).get("alpha", 0.02)
        note += f" ↓ = significantly worse than the best of its column (Wilcoxon rank-sum, p < {alpha})."
    return "\n".join(lines) + note + "\n"


def summary_to_metrics(summary: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, float]:
    """Flatten the summary into MLflow metrics named ``<key1>/<key2>/.../<metric>_<stat>``."""
    keys = list(reporting["group_by"])
    out: dict[str, float] = {}
    for _, row in summary.iterrows():
        prefix = "/".join(_METRIC_NAME.sub("_", str(row[k])) for k in keys)
        for m in reporting["metrics"]:
            for stat in ("mean", "std"):
                value = float(row[f"{m}_{stat}"])
                if np.isfinite(value):
                    out[f"{prefix}/{m}_{stat}"] = value
    return out


def _figure_summaries(results: pd.DataFrame, reporting: dict[str, Any]):
    """``(spec, summary)`` per entry of ``reporting.figures``: what the figure draws, mean and
    std over repetitions of its metric(s) per point, as :func:`summarise` computes them."""
    repeat_key = reporting.get("repeat_key")
    for spec in reporting.get("figures", []) or []:
        data = results.query(spec["query"]) if spec.get("query") else results
        if data.empty:
            raise ValueError(f"Figure {spec['name']!r}: no results match {spec.get('query')!r}.")
        kind = spec.get("kind", "line")
        if kind == "line":
            group = [c for c in (spec.get("facet"), spec.get("hue", "method"), spec["x"]) if c]
            metrics = [spec["y"]]
        elif kind == "bar":
            group = [spec["x"], spec.get("hue", "method")]
            metrics = spec["y"] if isinstance(spec["y"], list) else [spec["y"]]
        else:
            raise ValueError(
                f"Figure {spec['name']!r}: kind must be 'line' or 'bar'; got {kind!r}."
            )
        yield spec, summarise(data, group_by=group, metrics=metrics, repeat_key=repeat_key)


def _line_figure(summary: pd.DataFrame, spec: dict[str, Any]) -> plt.Figure:
    x, y, hue, facet = spec["x"], spec["y"], spec.get("hue", "method"), spec.get("facet")
    facets = sorted(summary[facet].unique()) if facet else [None]
    fig, axes = plt.subplots(
        1, len(facets), figsize=(5 * len(facets), 4), squeeze=False, sharey=True
    )
    for ax, fval in zip(axes[0], facets, strict=True):
        block = summary if facet is None else summary[summary[facet] == fval]
        for hval, line in block.groupby(hue, sort=False):
            line = line.sort_values(x)
            ax.errorbar(
                line[x],
                line[f"{y}_mean"],
                yerr=line[f"{y}_std"],
                marker="o",
                ms=3,
                capsize=2,
                label=str(hval),
            )
        ax.set_xlabel(spec.get("xlabel", x))
        if spec.get("xscale"):
            ax.set_xscale(spec["xscale"])
        ax.set_title(str(fval) if facet else spec.get("title", ""))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(spec.get("ylabel", y))
    axes[0][-1].legend(fontsize="small")
    return fig


def _bar_figure(summary: pd.DataFrame, spec: dict[str, Any]) -> plt.Figure:
    x, hue = spec["x"], spec.get("hue", "method")
    metrics = spec["y"] if isinstance(spec["y"], list) else [spec["y"]]
    xs = list(dict.fromkeys(summary[x]))
    hues = list(dict.fromkeys(summary[hue]))
    width = 0.8 / max(len(hues), 1)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for j, hval in enumerate(hues):
            block = summary[summary[hue] == hval].set_index(x).reindex(xs)
            ax.bar(
                np.arange(len(xs)) + (j - (len(hues) - 1) / 2) * width,
                block[f"{metric}_mean"],
                width,
                yerr=block[f"{metric}_std"],
                capsize=2,
                label=str(hval),
            )
        ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
        ax.set_title(spec.get("titles", {}).get(metric, metric))
        if spec.get("log_metrics") and metric in spec["log_metrics"]:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    axes[0][-1].legend(fontsize="small")
    return fig


def plot_figures(results: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, plt.Figure]:
    """One PNG per entry of ``reporting.figures``.

    ``kind: line`` (default) draws mean ± std of ``y`` against ``x`` with one line per ``hue``
    and one panel per ``facet``; ``kind: bar`` draws grouped bars of one or several metrics
    ``y`` per ``x`` and ``hue``. An optional ``query`` (pandas syntax) selects the rows first.
    Within each point the metric is averaged over ``average_over`` within a repetition, then
    mean and std are taken over repetitions, exactly as in the summary table.
    """
    figures: dict[str, plt.Figure] = {}
    for spec, summary in _figure_summaries(results, reporting):
        draw = _line_figure if spec.get("kind", "line") == "line" else _bar_figure
        fig = draw(summary, spec)
        if spec.get("title"):
            fig.suptitle(spec["title"])
        fig.tight_layout()
        figures[f"{spec['name']}.png"] = fig
    return figures


def figure_tables(results: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The numbers behind each figure of ``reporting.figures`` (one CSV each, named after it):
    per point, the mean, std and count over repetitions that :func:`plot_figures` draws."""
    return {spec["name"]: summary for spec, summary in _figure_summaries(results, reporting)}
