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
        contenders: [A, B]            # optional: the best is taken among these methods only
      table_query: "n_train == 500"   # optional: rows of the table (pandas query)
      figures:                        # optional: PNGs, lines against a swept key or bars
        - {name: accuracy_vs_n, x: n_train, y: accuracy, hue: method, facet: dataset}
        - {name: time, kind: bar, x: dataset, y: [accuracy, fit_time_s], query: "n_train == 500"}
      paper_table:                    # optional: also the paper's layout in summary.md
        {by: [dataset], columns: [n_train], metrics: [accuracy]}   # best of a column in bold
      labels: {fit_time_s: "fit time (s)"}   # optional: axis / header words for a column
      better: {k: null}               # optional: max / min / null per metric (default: by name)
      reference:                      # optional: published values to set the summary against
        source: "Goyal et al. (2019), Table 1"
        tolerance: {accuracy: 0.01}   # |ours - published| beyond this is flagged
        values:                       # one record per published cell row; keys from group_by
          - {dataset: MNIST1, method: Mono, accuracy: 0.9034}
"""

from __future__ import annotations

import logging
import numbers
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from multiview_lab import formatting as fmt  # noqa: E402
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
            contenders=sig.get("contenders"),
        )
    order = reporting.get("table_columns")
    if order:
        missing = [c for c in order if c not in summary.columns]
        if missing:
            raise ValueError(f"table_columns {missing} are not in the summary {list(summary)}.")
        summary = summary[[*order, *(c for c in summary.columns if c not in order)]]
    logger.info("Summary of %d results in %d rows.", len(results), len(summary))
    return summary


def _digits_of(reporting: dict[str, Any]) -> dict[str, int]:
    """Decimals per metric: ``reporting.digits`` is one int for every metric (default 4) or a
    mapping metric -> int, metrics not named keeping 4 (e.g. ``{k: 1}`` for feature counts)."""
    digits_spec = reporting.get("digits", 4)
    if isinstance(digits_spec, dict):
        unknown = sorted(set(digits_spec) - set(reporting["metrics"]))
        if unknown:
            raise ValueError(f"reporting.digits names metrics {unknown} not in reporting.metrics.")
        return {m: int(digits_spec.get(m, 4)) for m in reporting["metrics"]}
    return dict.fromkeys(reporting["metrics"], int(digits_spec))


def _count_column(summary: pd.DataFrame, reporting: dict[str, Any]) -> str | None:
    """The summary's number-of-repetitions column (``n_<repeat_key>s`` or ``n``), if any."""
    repeat_key = reporting.get("repeat_key")
    name = f"n_{repeat_key}s" if repeat_key else "n"
    return name if name in summary.columns else None


def _cell(row: Any, metric: str, digits: int, count: str | None, summary: pd.DataFrame) -> str:
    """One ``mean ± std`` cell (``mean ± –`` for one repetition), ``↓`` if flagged worse."""
    get = row.get if isinstance(row, dict) else row.__getitem__
    mean = get(f"{metric}_mean")
    if not np.isfinite(mean):
        return "–"  # the metric does not apply to this row (e.g. no K)
    cell = fmt.mean_std(mean, get(f"{metric}_std"), digits, get(count) if count else None)
    if f"{metric}_worse" in summary.columns and bool(get(f"{metric}_worse")):
        cell += " ↓"
    return cell


def summary_to_markdown(summary: pd.DataFrame, reporting: dict[str, Any]) -> str:
    """Render the summary as Markdown: the long table, then the paper's layout if configured.

    Cells are ``mean ± std`` in the project's number format
    (:mod:`multiview_lab.formatting`), ``mean ± –`` for a single repetition; a
    cell flagged significantly worse than the best of its column is marked with ``↓``.
    ``reporting.digits`` sets the decimals (one int, or a mapping metric -> int).

    ``reporting.paper_table`` adds the table as the paper prints it (see
    :func:`paper_layout_markdown`): methods as rows, the ``columns`` keys and metrics as
    columns, the best of each column in bold.
    """
    digits_of = _digits_of(reporting)
    keys = list(reporting["group_by"])
    metrics = list(reporting["metrics"])
    count = _count_column(summary, reporting)
    header = keys + [fmt.words(m, reporting.get("labels"), math=False) for m in metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in summary.to_dict("records"):
        cells = [str(row[k]) for k in keys]
        cells += [_cell(row, m, digits_of[m], count, summary) for m in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    note = ""
    if count:
        reps = sorted(summary[count].astype(int).unique().tolist())
        note = f"\n\nRepetitions per row: {', '.join(map(str, reps))}."
        if 1 in reps:
            note += " ± – = one repetition, no standard deviation."
    if any(c.endswith("_worse") for c in summary.columns):
        alpha = reporting.get("significance", {}).get("alpha", 0.02)
        note += f" ↓ = significantly worse than the best of its column (Wilcoxon rank-sum, p < {alpha})."
    text = "\n".join(lines) + note + "\n"
    if reporting.get("paper_table"):
        text += "\n" + paper_layout_markdown(summary, reporting)
    return text


def paper_layout_markdown(summary: pd.DataFrame, reporting: dict[str, Any]) -> str:
    """The summary in the paper's layout: one row per method, the best of each column in bold.

    ``reporting.paper_table`` holds ``columns`` (group_by keys whose values become columns,
    e.g. ``[dataset]`` or ``[train_pct]``), optionally ``by`` (keys giving one table each,
    e.g. ``[dataset, setting]``), ``metrics`` (default: ``reporting.metrics``) and ``query``
    (pandas syntax, rows to keep). Every other group_by key must take one value per table.
    A column's best is its highest or lowest mean as :func:`multiview_lab.formatting.better`
    says (``reporting.better`` overrides per metric); ties are all
    bold, and a metric without a better side (a chosen K) has none.
    """
    spec = reporting["paper_table"]
    rows_key = method_key(reporting)
    columns = list(spec.get("columns", []))
    by = list(spec.get("by", []))
    metrics = list(spec.get("metrics", reporting["metrics"]))
    labels = reporting.get("labels")
    unknown = sorted(set(columns + by + [rows_key]) - set(reporting["group_by"]))
    if unknown:
        raise ValueError(f"paper_table names {unknown}, which are not group_by keys.")
    unknown = sorted(set(metrics) - set(reporting["metrics"]))
    if unknown:
        raise ValueError(f"paper_table.metrics names {unknown}, not in reporting.metrics.")
    data = summary.query(spec["query"]) if spec.get("query") else summary
    if data.empty:
        return f"No rows of the summary match paper_table.query {spec.get('query')!r}.\n"
    digits_of = _digits_of(reporting)
    count = _count_column(summary, reporting)
    rest = [k for k in reporting["group_by"] if k not in {rows_key, *columns, *by}]
    blocks = data.groupby(by, sort=False) if by else [((), data)]
    out = []
    for values, block in blocks:
        values = values if isinstance(values, tuple) else (values,)
        many = [k for k in rest if block[k].nunique() > 1]
        if many:
            raise ValueError(
                f"paper_table: {many} take several values in one table; add them to "
                "paper_table.columns or paper_table.by, or select with paper_table.query."
            )
        fixed = [f"{k} = {block[k].iloc[0]}" for k in rest]
        title = ", ".join([*(f"{k} = {v}" for k, v in zip(by, values, strict=True)), *fixed])
        col_values = list(dict.fromkeys(map(tuple, block[columns].to_numpy()))) if columns else [()]
        methods = list(dict.fromkeys(block[rows_key]))
        header, cells = [str((labels or {}).get(rows_key, rows_key))], {m: [] for m in methods}
        for cv in col_values:
            part = block
            for k, v in zip(columns, cv, strict=True):
                part = part[part[k] == v]
            part = part.set_index(rows_key)
            for metric in metrics:
                # a text value names itself (MNIST1); a number says what it counts (k = 10)
                name = " ".join(
                    str(v) if isinstance(v, str) else f"{k} = {v}"
                    for k, v in zip(columns, cv, strict=True)
                )
                if len(metrics) > 1 or not name:
                    name = f"{name} {fmt.words(metric, labels, math=False)}".strip()
                header.append(name)
                direction = fmt.better(metric, reporting.get("better"))
                means = pd.to_numeric(part[f"{metric}_mean"], errors="coerce")
                best = None
                if direction and means.notna().any():
                    best = means.max() if direction == "max" else means.min()
                for m in methods:
                    if m not in part.index:
                        cells[m].append("")
                        continue
                    row = part.loc[m].to_dict()
                    text = _cell(row, metric, digits_of[metric], count, summary)
                    if best is not None and np.isfinite(row[f"{metric}_mean"]):
                        if fmt.number(row[f"{metric}_mean"], digits_of[metric]) == fmt.number(
                            best, digits_of[metric]
                        ):
                            text = f"**{text}**"
                    cells[m].append(text)
        table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        table += ["| " + " | ".join([str(m), *cells[m]]) + " |" for m in methods]
        heading = "In the paper's layout" + (f" ({title})" if title else "")
        out.append(f"{heading}; the best of each column in bold.\n\n" + "\n".join(table) + "\n")
    return "\n".join(out)


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


def metric_name_part(value: Any, key: str | None = None) -> str:
    """One component of an MLflow metric name: a text value as is, a number after its key
    (``n_train500``, as :func:`multiview_lab.protocol.engine.model_name` names units), the
    characters MLflow refuses in a metric name replaced by ``_``."""
    if key is not None and isinstance(value, numbers.Number) and not isinstance(value, bool):
        if float(value).is_integer():
            value = int(value)
        value = f"{key}{value}"
    return _METRIC_NAME.sub("_", str(value))


def method_key(reporting: dict[str, Any]) -> str:
    """The column naming the method in a reporting block's tables (``method`` unless
    ``reporting.method_key`` or ``reporting.significance.method_key`` says otherwise)."""
    return str(
        reporting.get("method_key")
        or (reporting.get("significance") or {}).get("method_key")
        or "method"
    )


def method_metrics(summary: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The summary table as one set of MLflow metrics per method, under the same names for
    every method, so that runs of different methods compare metric by metric.

    For each summary row, with ``<keys>`` the row's ``group_by`` values other than the method
    joined by ``/`` (numbers after their key, see :func:`metric_name_part`):

    * ``<keys>/<metric>``: the mean over repetitions (e.g. ``MNIST1/n_train500/accuracy``);
    * ``std/<keys>/<metric>``: its standard deviation (a section of its own in the MLflow UI,
      not charted beside the results);
    * ``repetitions/<keys>``: the number of repetitions (the summary's ``n_<repeat_key>s``).

    Returns ``{method: {name: value}}``; empty when ``group_by`` has no method column (a table
    over something else, e.g. a study of one method, stays a run-level table).
    """
    key = method_key(reporting)
    group_by = list(reporting["group_by"])
    if key not in group_by or key not in summary.columns:
        return {}
    others = [k for k in group_by if k != key]
    repeat_key = reporting.get("repeat_key")
    count = f"n_{repeat_key}s" if repeat_key else "n"

    def name(*parts: str) -> str:
        return "/".join(p for p in parts if p)

    out: dict[str, dict[str, float]] = {}
    for row in summary.to_dict("records"):
        prefix = name(*(metric_name_part(row[k], k) for k in others))
        metrics = out.setdefault(str(row[key]), {})
        for m in reporting["metrics"]:
            mean, std = row.get(f"{m}_mean"), row.get(f"{m}_std")
            if mean is None or not np.isfinite(float(mean)):
                continue  # the metric does not apply to this row (e.g. no K)
            metrics[name(prefix, m)] = float(mean)
            if std is not None and np.isfinite(float(std)):
                metrics[name("std", prefix, m)] = float(std)
        if count in row and np.isfinite(float(row[count])):
            metrics[name("repetitions", prefix)] = float(row[count])
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


_LINE_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D")


def _hue_styles(values) -> dict[Any, dict[str, Any]]:
    """One line style per hue value, the same in every panel.

    The ten colours of Matplotlib's default cycle are reused with another line style and
    marker from the eleventh value on, so that up to 40 lines stay distinguishable (the
    PB-MVBoost figures draw 11).
    """
    colours = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    styles = {}
    for i, value in enumerate(dict.fromkeys(values)):
        cycle = i // len(colours)
        styles[value] = {
            "color": colours[i % len(colours)],
            "linestyle": _LINE_STYLES[cycle % len(_LINE_STYLES)],
            "marker": _MARKERS[cycle % len(_MARKERS)],
        }
    return styles


def _grid(n_panels: int, spec: dict[str, Any], width: float, height: float, sharey: bool):
    """A figure of ``n_panels`` panels wrapped at ``spec.columns`` per row (default 3)."""
    ncols = max(1, min(n_panels, int(spec.get("columns", 3))))
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, sharey=sharey
    )
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def _identical(series: dict[Any, np.ndarray]) -> list[list[Any]]:
    """Groups (of two or more) of series keys whose values are the same to 1e-12."""
    groups: list[list[Any]] = []
    for key, values in series.items():
        for group in groups:
            ref = series[group[0]]
            if ref.shape == values.shape and np.allclose(
                ref, values, rtol=0.0, atol=1e-12, equal_nan=True
            ):
                group.append(key)
                break
        else:
            groups.append([key])
    return [g for g in groups if len(g) > 1]


def _mark_identical(panels: list[dict[Any, np.ndarray]]) -> tuple[dict[Any, str], list[str]]:
    """How identical series are marked, so that a series hidden under another is not missed.

    Returns the legend suffix of each hue value identical to others in every panel where
    they appear together (``" (= B)"``), and per panel a note naming the groups identical
    in that panel only (``"A = B"``), for its title.
    """
    per_panel = [_identical(p) for p in panels]
    pairs: dict[tuple[Any, Any], list[bool]] = {}
    for series, groups in zip(panels, per_panel, strict=True):
        keys = list(series)
        same = {frozenset((a, b)) for g in groups for a in g for b in g if a != b}
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                pairs.setdefault((a, b), []).append(frozenset((a, b)) in same)
    always = {pair for pair, flags in pairs.items() if all(flags)}
    suffix: dict[Any, str] = {}
    for a, b in always:
        suffix[b] = suffix.get(b, "") or f" (= {a})"
    notes = []
    for groups in per_panel:
        local = [
            " = ".join(map(str, g))
            for g in groups
            if not all((a, b) in always for i, a in enumerate(g) for b in g[i + 1 :])
        ]
        notes.append("; ".join(local))
    return suffix, notes


def place_legend(fig: plt.Figure, title: str | None = None) -> None:
    """One legend for the figure, beside the top-right panel where it hides nothing.

    Placed after ``tight_layout`` as a figure legend, so that it does not shrink the panels;
    the catalog saves with ``bbox_inches=tight``, which keeps it in the PNG.
    """
    axes = [ax for ax in fig.axes if ax.get_visible()]
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        top_right = max(axes, key=lambda ax: (ax.get_position().y1, ax.get_position().x1))
        box = top_right.get_position()
        fig.legend(
            list(handles.values()),
            list(handles),
            title=title,
            fontsize="small",
            loc="upper left",
            bbox_to_anchor=(box.x1 + 0.01, box.y1),
            borderaxespad=0.0,
        )


def _integer_axis(ax, values: pd.Series, log: bool) -> None:
    """Ticks at the values of a sweep of one point, whole-number ticks for a whole-number key."""
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.isna().any():
        return
    unique = np.unique(numeric)
    if len(unique) <= 3:
        ax.set_xticks(
            unique, [fmt.number(v, 0) if float(v).is_integer() else str(v) for v in unique]
        )
        if len(unique) == 1:
            ax.set_xlim(unique[0] - 1, unique[0] + 1) if not log else None
    elif not log and np.all(np.mod(unique, 1) == 0):
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))


def _line_figure(summary: pd.DataFrame, spec: dict[str, Any], labels=None):
    """Mean ± std of ``y`` against ``x``, a line per ``hue``, a panel per ``facet``; returns the
    figure and its legend's title."""
    x, y, hue, facet = spec["x"], spec["y"], spec.get("hue", "method"), spec.get("facet")
    facets = sorted(summary[facet].unique()) if facet else [None]
    styles = _hue_styles(summary[hue])
    fig, axes = _grid(len(facets), spec, 5.0, 4.0, sharey=True)
    blocks = [summary if f is None else summary[summary[facet] == f] for f in facets]
    panels = [
        {
            h: line.sort_values(x)[[x, f"{y}_mean", f"{y}_std"]].to_numpy(float)
            for h, line in block.groupby(hue, sort=False)
        }
        for block in blocks
    ]
    suffix, notes = _mark_identical(panels)
    single = summary.groupby([c for c in (facet, hue) if c])[x].nunique().max() <= 1
    for ax, fval, block, note in zip(axes, facets, blocks, notes, strict=True):
        for hval, line in block.groupby(hue, sort=False):
            line = line.sort_values(x)
            style = dict(styles[hval])
            if single:  # a "sweep" of one point: points, not lines
                style["linestyle"] = "none"
            ax.errorbar(
                line[x],
                line[f"{y}_mean"],
                yerr=line[f"{y}_std"],
                ms=6 if single else 3,
                capsize=2,
                label=f"{hval}{suffix.get(hval, '')}",
                **style,
            )
        ax.set_xlabel(spec.get("xlabel") or fmt.words(x, labels))
        if spec.get("xscale"):
            ax.set_xscale(spec["xscale"])
        _integer_axis(ax, block[x], bool(spec.get("xscale")))
        title = str(fval) if facet else ""
        if note:
            title = f"{title}\n(identical: {note})".strip()
        ax.set_title(title, fontsize="medium")
        ax.grid(alpha=0.3)
    for ax in axes[:: axes[0].get_gridspec().ncols]:
        ax.set_ylabel(spec.get("ylabel") or fmt.words(y, labels))
    return fig, (fmt.words(hue, labels) if hue != "method" else None)


def _bar_figure(summary: pd.DataFrame, spec: dict[str, Any], labels=None):
    """Grouped bars of each metric of ``y`` per ``x`` and ``hue``, a panel per metric; returns
    the figure and its legend's title (none)."""
    x, hue = spec["x"], spec.get("hue", "method")
    metrics = spec["y"] if isinstance(spec["y"], list) else [spec["y"]]
    xs = list(dict.fromkeys(summary[x]))
    hues = list(dict.fromkeys(summary[hue]))
    width = 0.8 / max(len(hues), 1)
    fig, axes = _grid(
        len(metrics), spec, max(4.5, 0.35 * len(xs) * len(hues) + 1.5), 3.8, sharey=False
    )
    panels = [
        {
            h: summary[summary[hue] == h]
            .set_index(x)
            .reindex(xs)[[f"{m}_mean", f"{m}_std"]]
            .to_numpy(float)
            for h in hues
        }
        for m in metrics
    ]
    suffix, notes = _mark_identical(panels)
    titles = spec.get("titles", {})
    # the colours of the line figures; from the eleventh bar on, hatched as well
    colours = {h: style["color"] for h, style in _hue_styles(hues).items()}
    n_colours = len(plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"]))
    hatches = {h: ("", "//", "..", "xx")[(j // n_colours) % 4] for j, h in enumerate(hues)}
    for ax, metric, note in zip(axes, metrics, notes, strict=True):
        for j, hval in enumerate(hues):
            block = summary[summary[hue] == hval].set_index(x).reindex(xs)
            ax.bar(
                np.arange(len(xs)) + (j - (len(hues) - 1) / 2) * width,
                block[f"{metric}_mean"],
                width,
                yerr=block[f"{metric}_std"],
                capsize=2,
                color=colours[hval],
                hatch=hatches[hval],
                edgecolor="white" if hatches[hval] else None,
                label=f"{hval}{suffix.get(hval, '')}",
            )
        ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs])
        title = titles.get(metric) or fmt.words(metric, labels)
        if note:
            title += f"\n(identical: {note})"
        ax.set_title(title, fontsize="medium")
        if spec.get("log_metrics") and metric in spec["log_metrics"]:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    return fig, None


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
        fig, legend_title = draw(summary, spec, reporting.get("labels"))
        if spec.get("title"):
            fig.suptitle(spec["title"])
        fig.tight_layout()
        place_legend(fig, legend_title)
        figures[f"{spec['name']}.png"] = fig
    return figures


def figure_metrics(
    results: pd.DataFrame, reporting: dict[str, Any]
) -> dict[str, list[list[float]]]:
    """The lines of each line figure as MLflow metric series, the swept key as the step.

    For every ``kind: line`` entry of ``reporting.figures`` whose ``x`` values are integers
    (e.g. training sizes), one series per line: ``<figure>/<facet>/<hue>/<y>_mean`` ->
    ``[[x, mean], ...]`` in increasing ``x``; the MLflow UI then draws the figure's curves
    and compares them across runs. Figures with non-integer ``x`` are left to their CSV.
    """
    series: dict[str, list[list[float]]] = {}
    for spec, summary in _figure_summaries(results, reporting):
        if spec.get("kind", "line") != "line":
            continue
        x, y, hue, facet = spec["x"], spec["y"], spec.get("hue", "method"), spec.get("facet")
        xs = pd.to_numeric(summary[x], errors="coerce")
        if xs.isna().any() or not np.all(np.mod(xs, 1) == 0):
            logger.info("Figure %r: %s is not an integer step; no metric series.", spec["name"], x)
            continue
        keys = [c for c in (facet, hue) if c]
        for values, line in summary.groupby(keys, sort=False):
            values = values if isinstance(values, tuple) else (values,)
            name = "/".join(_METRIC_NAME.sub("_", str(v)) for v in (spec["name"], *values))
            line = line.sort_values(x)
            series[f"{name}/{y}_mean"] = [
                [int(step), float(value)]
                for step, value in zip(line[x], line[f"{y}_mean"], strict=True)
                if np.isfinite(value)
            ]
    return series


def figure_tables(results: pd.DataFrame, reporting: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The numbers behind each figure of ``reporting.figures`` (one CSV each, named after it):
    per point, the mean, std and count over repetitions that :func:`plot_figures` draws."""
    return {spec["name"]: summary for spec, summary in _figure_summaries(results, reporting)}


def _reference_records(reporting: dict[str, Any]) -> pd.DataFrame:
    """The ``reporting.reference.values`` records as a table, checked against the summary."""
    reference = reporting.get("reference") or {}
    records = reference.get("values")
    if not records:
        raise ValueError("reporting.reference.values must list the published records.")
    table = pd.DataFrame.from_records(records)
    group_by = list(reporting["group_by"])
    metrics = list(reporting["metrics"])
    keys = [c for c in table.columns if c in group_by]
    published = [c for c in table.columns if c in metrics]
    extras = {f"{m}_{x}" for m in published for x in ("std", "worse")}
    other = sorted(set(table.columns) - set(keys) - set(published) - extras)
    if other:
        raise ValueError(
            f"reporting.reference.values has column(s) {other} that are neither group_by keys "
            f"{group_by}, metrics {metrics} nor <metric>_std / <metric>_worse of a metric given."
        )
    if not keys or not published:
        raise ValueError(
            "Each reporting.reference record needs at least one group_by key and one metric; "
            f"got columns {list(table.columns)}."
        )
    if table.duplicated(subset=keys).any():
        dup = table.loc[table.duplicated(subset=keys, keep=False), keys]
        raise ValueError(
            f"reporting.reference.values repeats the record(s) {dup.to_dict('records')}."
        )
    tolerance = reference.get("tolerance") or {}
    unknown = sorted(set(tolerance) - set(published))
    if unknown:
        raise ValueError(f"reporting.reference.tolerance names {unknown}, not published metrics.")
    # Keys compare as strings: YAML reads 500 as int, and a CSV summary may hold "500".
    for key in keys:
        table[key] = table[key].astype(str)
    return table


def compare_with_reference(
    summary: pd.DataFrame, reporting: dict[str, Any]
) -> tuple[pd.DataFrame, str]:
    """Set the summary beside published values (e.g. the paper's table), cell by cell.

    ``reporting.reference`` holds ``values`` (one record per published row, keyed by some of the
    ``group_by`` columns, with the published value of some metrics and optionally their
    published ``<metric>_std`` and significance flag ``<metric>_worse``), an optional
    ``tolerance`` per metric and an optional ``source``. For every record and published metric
    the table gives ``<metric>_ours`` (the summary mean), ``<metric>_ours_std``,
    ``<metric>_published`` (and ``_published_std``), ``<metric>_diff`` (ours - published),
    ``<metric>_beyond`` (``|diff| > tolerance``; false when the metric has no tolerance) and,
    when both sides flag significance, ``<metric>_worse_ours`` / ``<metric>_worse_published``.
    A record with no summary row keeps NaN for ours and is logged; summary rows that several
    records' keys match (too few keys) raise ``ValueError``.

    Returns
    -------
    table : DataFrame
        One row per reference record.
    markdown : str
        The same as a Markdown table, ``ours (published)`` per cell, cells beyond their
        tolerance marked with ``*``, and the source named.
    """
    reference = reporting.get("reference") or {}
    table = _reference_records(reporting)
    keys = [c for c in table.columns if c in reporting["group_by"]]
    metrics = [m for m in reporting["metrics"] if m in table.columns]
    ours = summary.copy()
    for key in keys:
        ours[key] = ours[key].astype(str)
    flagged = [m for m in metrics if f"{m}_worse" in ours.columns and f"{m}_worse" in table]
    ours = ours[
        [
            *keys,
            *(f"{m}_{s}" for m in metrics for s in ("mean", "std")),
            *(f"{m}_worse" for m in flagged),
        ]
    ]
    if ours.duplicated(subset=keys).any():
        raise ValueError(
            f"The summary has several rows per reference key {keys}: add the other group_by "
            f"keys {sorted(set(reporting['group_by']) - set(keys))} to the records, or select "
            "one row per key with reporting.table_query."
        )
    merged = table.merge(ours, on=keys, how="left", suffixes=("_published", ""))
    missing = merged[f"{metrics[0]}_mean"].isna() & table[metrics[0]].notna()
    if missing.all():
        published = {k: sorted(table[k].unique().tolist()) for k in keys}
        run = {k: sorted(ours[k].unique().tolist()) for k in keys}
        differ = {k: (published[k], run[k]) for k in keys if set(published[k]) != set(run[k])}
        logger.info(
            "Against %s: nothing compared. No published row has a result in this run "
            "(published vs this run: %s).",
            reference.get("source", "the reference"),
            "; ".join(f"{k} {a} vs {b}" for k, (a, b) in differ.items()) or "no key in common",
        )
    elif missing.any():
        logger.warning(
            "No result for %d reference record(s): %s.",
            int(missing.sum()),
            merged.loc[missing, keys].to_dict("records"),
        )
    tolerance = reference.get("tolerance") or {}
    out = merged[keys].copy()
    for m in metrics:
        out[f"{m}_ours"] = merged[f"{m}_mean"]
        out[f"{m}_ours_std"] = merged[f"{m}_std"]
        out[f"{m}_published"] = pd.to_numeric(merged[m], errors="raise")
        if f"{m}_std" in table:
            out[f"{m}_published_std"] = pd.to_numeric(merged[f"{m}_std_published"])
        out[f"{m}_diff"] = out[f"{m}_ours"] - out[f"{m}_published"]
        tol = tolerance.get(m)
        out[f"{m}_beyond"] = out[f"{m}_diff"].abs() > float(tol) if tol is not None else False
        if m in flagged:
            out[f"{m}_worse_ours"] = merged[f"{m}_worse"].astype("boolean")
            out[f"{m}_worse_published"] = merged[f"{m}_worse_published"].astype("boolean")
    n_beyond = int(sum(out[f"{m}_beyond"].sum() for m in metrics))
    n_compared = int(
        sum((out[f"{m}_published"].notna() & out[f"{m}_ours"].notna()).sum() for m in metrics)
    )
    if n_compared:
        logger.info(
            "Against %s: %d of %d compared cells differ beyond their tolerance.",
            reference.get("source", "the reference"),
            n_beyond,
            n_compared,
        )
    return out, _reference_markdown(out, keys, metrics, reference)


def _reference_cell(row: pd.Series, metric: str, value: str, std: str, worse: str) -> str:
    """``mean ± std ↓`` of one side of a reference comparison ('' when there is no value)."""
    mean = row[f"{metric}_{value}"]
    if pd.isna(mean):
        return ""
    text = fmt.number(mean, 4)
    if pd.notna(row.get(f"{metric}_{std}", np.nan)):
        text += f" ± {fmt.number(row[f'{metric}_{std}'], 4)}"
    flag = row.get(f"{metric}_{worse}", False)
    if pd.notna(flag) and bool(flag):
        text += " ↓"
    return text


def _reference_markdown(
    table: pd.DataFrame, keys: list[str], metrics: list[str], reference: dict[str, Any]
) -> str:
    header = [*keys, *metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        cells = [str(row[k]) for k in keys]
        for m in metrics:
            text = _reference_cell(row, m, "ours", "ours_std", "worse_ours") or "–"
            published = _reference_cell(row, m, "published", "published_std", "worse_published")
            if published:
                text += f" ({published})"
            if bool(row[f"{m}_beyond"]):
                text += " *"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    tolerance = reference.get("tolerance") or {}
    note = f"\n\nOurs (published: {reference.get('source', 'reference values')}); – = no result."
    if tolerance:
        limits = ", ".join(f"{m} {t}" for m, t in tolerance.items())
        note += f" * = differs from the published value by more than the tolerance ({limits})."
    if any(c.endswith("_worse_ours") for c in table.columns):
        note += " ↓ = significantly worse than the best of its column."
    return "\n".join(lines) + note + "\n"
