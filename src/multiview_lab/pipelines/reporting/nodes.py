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
      curves:                         # optional: metric against a swept parameter
        - {name: accuracy_vs_n, x: n_train, y: accuracy, hue: method, facet: dataset}
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
    """Summary table: mean and std of each metric per group, with optional significance flags."""
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
    """
    digits = int(reporting.get("digits", 4))
    keys = list(reporting["group_by"])
    metrics = list(reporting["metrics"])
    header = keys + metrics
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in summary.iterrows():
        cells = [str(row[k]) for k in keys]
        for m in metrics:
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


def plot_curves(results: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, plt.Figure]:
    """One figure per configured curve: mean ± std of ``y`` against ``x``, a line per ``hue``.

    Within each (facet, hue, x) the metric is first averaged over ``average_over`` within a
    repetition, then mean and std are taken over repetitions, exactly as in the summary table.
    """
    figures: dict[str, plt.Figure] = {}
    repeat_key = reporting.get("repeat_key")
    for curve in reporting.get("curves", []) or []:
        x, y, hue = curve["x"], curve["y"], curve.get("hue", "method")
        facet = curve.get("facet")
        group = [c for c in (facet, hue, x) if c]
        summary = summarise(results, group_by=group, metrics=[y], repeat_key=repeat_key)
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
            ax.set_xlabel(curve.get("xlabel", x))
            if curve.get("xscale"):
                ax.set_xscale(curve["xscale"])
            ax.set_title(str(fval) if facet else curve.get("title", ""))
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel(curve.get("ylabel", y))
        axes[0][-1].legend(fontsize="small")
        fig.tight_layout()
        figures[f"{curve['name']}.png"] = fig
    return figures
