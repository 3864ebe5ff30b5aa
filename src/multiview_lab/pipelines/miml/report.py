"""The MIML-GP paper's own tables and figures (``08_reporting/miml``): the COREL accuracy table
with Student-t intervals, the 20 Newsgroups table (Table 5: accuracy and AUC, mean ± std
over the repetitions of 10-fold CV), the Figure 3 study (low-rank ``K_sum`` against the exact
model), Table 4 (the timing study of scene and Reuters) and the heat map of the learned label
covariance ``K^f``. The scene and Reuters (Table 3) tables are the shared reporting's.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from multiview_lab import formatting as fmt  # noqa: E402
from multiview_lab.evaluation import summarise  # noqa: E402
from multiview_lab.pipelines.reporting.nodes import (  # noqa: E402
    plot_figures,
    summarise_results,
    summary_to_markdown,
)

METRICS = (
    "hamming_loss",
    "one_error",
    "coverage",
    "ranking_loss",
    "one_minus_average_precision",
)


# ----------------------------------------------------------------------------------------------
# COREL table (accuracy with 95 % intervals)
# ----------------------------------------------------------------------------------------------
def summarise_corel(results: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Mean accuracy per (task, method) with a Student-t ``confidence`` interval over splits.

    The half-width is ``t_{(1+c)/2, r-1} * std / sqrt(r)`` over the ``r`` splits (0 when r = 1).
    """
    missing = {"dataset", "method", "split", "accuracy"} - set(results.columns)
    if missing:
        raise ValueError(f"COREL results lack column(s) {sorted(missing)}.")
    if results.empty:
        raise ValueError("COREL results are empty: nothing to summarise.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}.")
    grouped = results.groupby(["dataset", "method"], sort=False)
    out = grouped["accuracy"].agg(accuracy_mean="mean", accuracy_std="std", n_splits="size")
    out["accuracy_std"] = out["accuracy_std"].fillna(0.0)
    r = out["n_splits"].to_numpy()
    t = np.where(r > 1, stats.t.ppf((1 + confidence) / 2, np.maximum(r - 1, 1)), 0.0)
    out["accuracy_ci_half"] = t * out["accuracy_std"] / np.sqrt(r)
    out["accuracy_ci_low"] = out["accuracy_mean"] - out["accuracy_ci_half"]
    out["accuracy_ci_high"] = out["accuracy_mean"] + out["accuracy_ci_half"]
    for extra in ("balanced_accuracy", "majority_accuracy", "fit_time_s"):
        if extra in results.columns:
            out[f"{extra}_mean"] = grouped[extra].mean()
    return out.reset_index()


def corel_to_markdown(summary: pd.DataFrame, confidence: float = 0.95) -> str:
    """COREL table: one row per task, one column per method, ``mean ± CI half-width``
    (``mean ± –`` for a single split, which has no interval); the best of each row in bold."""
    methods = list(dict.fromkeys(summary["method"]))
    lines = ["| task | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for task, block in summary.groupby("dataset", sort=False):
        block = block.set_index("method")
        best = fmt.number(block["accuracy_mean"].max())
        cells = []
        for m in methods:
            if m not in block.index:
                cells.append("–")
                continue
            mean = block.loc[m, "accuracy_mean"]
            text = fmt.mean_std(mean, block.loc[m, "accuracy_ci_half"], n=block.loc[m, "n_splits"])
            cells.append(f"**{text}**" if fmt.number(mean) == best else text)
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    n = ", ".join(map(str, sorted(summary["n_splits"].unique())))
    note = (
        f"\n\nAccuracy (one-vs-rest, seeded 50/50 splits: {n} per task), mean ± half-width of"
        f" the {confidence:.0%} Student-t interval."
    )
    if "balanced_accuracy_mean" in summary.columns:
        balanced = summary.pivot(index="dataset", columns="method", values="balanced_accuracy_mean")
        majority = summary.groupby("dataset", sort=False)["majority_accuracy_mean"].first()
        lines += [
            "",
            "| task | always-negative | " + " | ".join(f"{m} (balanced)" for m in methods) + " |",
        ]
        lines.append("|---|---|" + "---|" * len(methods))
        for task in majority.index:
            cells = [fmt.number(balanced.loc[task, m]) for m in methods]
            lines.append(f"| {task} | {fmt.number(majority[task])} | " + " | ".join(cells) + " |")
        note += (
            " Second table: accuracy of always predicting the majority class, and the mean"
            " balanced accuracy (mean of the true-positive and true-negative rates)."
        )
    return "\n".join(lines) + note + "\n"


def corel_report(
    results: pd.DataFrame, corel: dict[str, Any]
) -> tuple[pd.DataFrame, str, dict[str, float]]:
    """COREL summary table (CSV), its Markdown and MLflow metrics ``corel/<task>/<method>/...``."""
    confidence = float(corel.get("confidence", 0.95))
    summary = summarise_corel(results, confidence)
    metrics = {}
    for _, row in summary.iterrows():
        prefix = f"corel/{row['dataset']}/{row['method']}"
        metrics[f"{prefix}/accuracy_mean"] = float(row["accuracy_mean"])
        metrics[f"{prefix}/accuracy_ci_half"] = float(row["accuracy_ci_half"])
        if "balanced_accuracy_mean" in row:
            metrics[f"{prefix}/balanced_accuracy_mean"] = float(row["balanced_accuracy_mean"])
    return summary, corel_to_markdown(summary, confidence), metrics


# ----------------------------------------------------------------------------------------------
# 20 Newsgroups table (Table 5)
# ----------------------------------------------------------------------------------------------
NEWSGROUPS_METRICS = ("accuracy", "auc", "balanced_accuracy", "positive_rate")


def summarise_newsgroups(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std per (task, method) over the repetitions of K-fold CV (paper Table 5).

    Each repetition's value is the mean over its folds (folds of equal size, so the pooled
    accuracy of the repetition); mean and sample std are then taken over repetitions
    (``n_repeats``; std 0 with one repetition). Fit time is averaged the same way.
    """
    missing = {"dataset", "method", "repeat", "fold", *NEWSGROUPS_METRICS} - set(results.columns)
    if missing:
        raise ValueError(f"20 Newsgroups results lack column(s) {sorted(missing)}.")
    metrics = [*NEWSGROUPS_METRICS, *(["fit_time_s"] if "fit_time_s" in results else [])]
    summary = summarise(
        results,
        group_by=["dataset", "method"],
        metrics=metrics,
        repeat_key="repeat",
        average_over=["fold"],
    )
    folds = results.groupby(["dataset", "method", "repeat"], sort=False)["fold"].nunique()
    folds = folds.groupby(["dataset", "method"]).max().rename("n_folds").reset_index()
    return summary.merge(folds, on=["dataset", "method"], how="left", sort=False)


def newsgroups_to_markdown(summary: pd.DataFrame) -> str:
    """20 Newsgroups table: one row per (task, method), accuracy, AUC and balanced accuracy as
    ``mean ± std`` (``mean ± –`` for one repetition) in the project's number format (the
    paper's Table 5 prints percentages), and the rate of positive predictions."""
    lines = [
        "| task | method | accuracy | AUC | balanced accuracy | predicted positive |",
        "|---|---|---|---|---|---|",
    ]
    for row in summary.itertuples(index=False):
        cells = [
            fmt.mean_std(getattr(row, f"{m}_mean"), getattr(row, f"{m}_std"), n=row.n_repeats)
            for m in ("accuracy", "auc", "balanced_accuracy")
        ]
        lines.append(
            f"| {row.dataset} | {row.method} | "
            + " | ".join(cells)
            + f" | {fmt.number(row.positive_rate_mean)} |"
        )
    reps = ", ".join(map(str, sorted(summary["n_repeats"].unique())))
    folds = ", ".join(map(str, sorted(summary["n_folds"].unique())))
    note = (
        f"\n\nMean ± std over {reps} repetition(s) of stratified K-fold CV ({folds} fold(s) run"
        " per repetition; a repetition's value is the mean over its folds). AUC: area under"
        " the ROC curve of the predictive probability of the positive label. Predicted"
        " positive: fraction of test bags predicted positive (half of the paper's bags are).\n"
    )
    return "\n".join(lines) + note


def newsgroups_report(
    results: pd.DataFrame, newsgroups: dict[str, Any]
) -> tuple[pd.DataFrame, str, dict[str, float]]:
    """20 Newsgroups summary (CSV), its Markdown and MLflow metrics
    ``newsgroups/<task>/<method>/<metric>_<mean|std>``."""
    summary = summarise_newsgroups(results)
    metrics = {}
    for _, row in summary.iterrows():
        prefix = f"newsgroups/{row['dataset']}/{row['method']}"
        for m in NEWSGROUPS_METRICS:
            for stat in ("mean", "std"):
                value = float(row[f"{m}_{stat}"])
                if np.isfinite(value):
                    metrics[f"{prefix}/{m}_{stat}"] = value
    return summary, newsgroups_to_markdown(summary), metrics


# ----------------------------------------------------------------------------------------------
# Table 4: training and testing times
# ----------------------------------------------------------------------------------------------
def table4(
    scene: pd.DataFrame, reuters: pd.DataFrame, reporting: dict[str, Any]
) -> tuple[pd.DataFrame, str, plt.Figure]:
    """Table 4 from the timing studies of scene and Reuters
    (:func:`multiview_lab.protocol.timing.time_methods`): the summary, its Markdown and the
    figure named ``table4`` in ``reporting.figures``, by the shared reporting. A study that was
    skipped (an empty table) is left out; with both skipped the Markdown and the figure say so."""
    parts = [t for t in (scene, reuters) if t is not None and len(t)]
    if not parts:
        fig, ax = plt.subplots(figsize=(5, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, "No timing study ran", ha="center", va="center")
        return pd.DataFrame(), "No timing study ran (miml.timing and miml.reuters.timing).\n", fig
    timing = pd.concat(parts, ignore_index=True)
    summary = summarise_results(timing, reporting)
    intro = (
        "Training (fit) and testing (scoring) time of every method, each fitted and scored on "
        "the same folds one after another in one process with one BLAS thread. CPU seconds "
        "are the comparable figure; wall seconds grow with the load of other processes.\n\n"
    )
    figure = plot_figures(timing, reporting)["table4.png"]
    return summary, intro + summary_to_markdown(summary, reporting), figure


# ----------------------------------------------------------------------------------------------
# Figure 3: rank m of the low-rank K_sum against the exact model
# ----------------------------------------------------------------------------------------------
def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def figure3_study(
    results: pd.DataFrame, fits: pd.DataFrame, figure3: dict[str, Any]
) -> pd.DataFrame:
    """The paper's Figure 3 study from the fits of ``miml.figure3.methods``.

    ``figure3.reference`` (default ``exact``) names the exact model (full-rank ``K_sum``,
    ``low_rank: none``); every method is set beside it on each 50/50 split: ``variant`` (the
    method), the rank ``m``, the relative errors ``||F_sum - F_sum^exact|| / ||F_sum^exact||``
    and ``||K^f - K^f_exact||_F / ||K^f_exact||_F``, the five metrics and the training time:
    ``fit_time_s`` (wall) and ``cpu_time_s`` (the unit's CPU seconds, its fit nearly all of
    them; the units run in parallel workers, so the wall seconds also measure the load).
    """
    methods = dict(figure3.get("methods") or {})
    reference = figure3.get("reference", "exact")
    if reference not in methods or len(methods) < 2:
        raise ValueError(
            f"miml.figure3.methods must hold the exact model {reference!r} (figure3.reference) "
            f"and at least one low-rank setting; got {sorted(methods)}."
        )
    for name, entry in methods.items():
        if (entry.get("params") or {}).get("likelihood", "collective") != "collective":
            raise ValueError(
                f"Figure 3 compares low-rank K_sum: {name!r} needs likelihood='collective'."
            )
    keys = ["dataset", "repeat"]
    fitted = set(fits["method"]) if len(fits) else set()
    missing = sorted(set(results["method"]) - fitted)
    if missing:
        raise ValueError(f"Figure 3: {missing} kept no F_sum / K^f (not MIMLGPClassifier?).")
    fits = fits.set_index([*keys, "method"])
    rows = []
    for row in results.to_dict("records"):
        at = (row["dataset"], row["repeat"])
        exact, fit = fits.loc[(*at, reference)], fits.loc[(*at, row["method"])]
        rows.append(
            {
                **{k: row[k] for k in (*keys, "seed")},
                "variant": row["method"],
                "m": float(row["rank_m"]),
                "rel_error_F": _rel(fit["Fsum"], exact["Fsum"]),
                "rel_error_Kf": _rel(fit["Kf"], exact["Kf"]),
                **{k: row[k] for k in ("fit_time_s", "score_time_s", "n_em_iter", "delta")},
                "cpu_time_s": row.get("cpu_time_s", np.nan),
                **{k: row[k] for k in (*METRICS, "hamming_loss_top_fallback")},
            }
        )
    return pd.DataFrame(rows)


def plot_figure3(study: pd.DataFrame, figure3: dict[str, Any]) -> plt.Figure:
    """Figure 3: relative errors of F and K^f, the five metrics and the training time against
    the rank ``m`` (mean over repetitions; the exact model drawn as dashed lines)."""
    if study.empty or "variant" not in study.columns:
        raise ValueError("Figure 3 study is empty.")
    reference = figure3.get("reference", "exact")
    mean = study.groupby("variant", sort=False).mean(numeric_only=True).reset_index()
    low = mean[mean["variant"] != reference].sort_values("m")
    exact = mean[mean["variant"] == reference]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].plot(low["m"], low["rel_error_F"], "o-", label="F (bag sums)")
    axes[0].plot(low["m"], low["rel_error_Kf"], "s-", label="$K^f$")
    axes[0].set_yscale("log")
    axes[0].set_title("(a) relative error vs exact $K_{sum}$")
    for metric in METRICS:
        line = axes[1].plot(low["m"], low[metric], "o-", ms=3, label=fmt.words(metric))
        if not exact.empty:
            axes[1].axhline(exact[metric].iloc[0], ls="--", lw=0.8, color=line[0].get_color())
    axes[1].set_title("(b) performance (dashed: exact)")
    # CPU seconds where every unit recorded them: wall seconds of parallel workers vary with load
    cpu = "cpu_time_s" in mean and bool(mean["cpu_time_s"].notna().all())
    time_col = "cpu_time_s" if cpu else "fit_time_s"
    axes[2].plot(low["m"], low[time_col], "o-", label="low rank")
    if not exact.empty:
        axes[2].axhline(exact[time_col].iloc[0], ls="--", color="k", label="exact")
    axes[2].set_title("(c) training time (CPU s)" if cpu else "(c) training time (wall s)")
    for ax in axes:
        ax.set_xlabel("rank $m$")
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axes[0].legend(fontsize="small")
    axes[2].legend(fontsize="small")
    # below its panel: beside it, it would cover panel (c); inside, the five lines
    axes[1].legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    fig.suptitle("MIML-GP on scene: low-rank $K_{sum}$ (paper Fig. 3)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------------------
# label covariance heat map
# ----------------------------------------------------------------------------------------------
def plot_label_covariance(
    label_covariances: pd.DataFrame, scene: dict[str, Any], heatmap: dict[str, Any]
) -> plt.Figure:
    """Heat map of the learned ``K^f`` of ``heatmap.method`` (mean over the folds run) and of
    the corresponding label correlation matrix, with the scene label names.

    ``label_covariances`` is the scene task's long table (``method, fold, i, j, value``)."""
    method = heatmap.get("method")
    learned = sorted(set(label_covariances["method"])) if len(label_covariances) else []
    if method not in learned:
        raise ValueError(f"heatmap.method={method!r} learned no K^f; methods with one: {learned}.")
    block = label_covariances[label_covariances["method"] == method]
    Kf = block.pivot_table(index="i", columns="j", values="value", aggfunc="mean").to_numpy()
    n_folds = block["fold"].nunique()
    sd = np.sqrt(np.clip(np.diag(Kf), 1e-300, None))
    corr = Kf / np.outer(sd, sd)
    names = scene["scene"]["label_names"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, M, title, cmap in (
        (axes[0], Kf, "$K^f$ (label covariance)", "viridis"),
        (axes[1], corr, "label correlation", "RdBu_r"),
    ):
        lim = np.abs(M).max()
        im = ax.imshow(M, cmap=cmap, vmin=-lim if cmap == "RdBu_r" else None, vmax=lim)
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set_yticks(range(len(names)), names)
        for i in range(M.shape[0]):
            for j in range(M.shape[1]):
                ax.text(j, i, f"{M[i, j]:.2f}", ha="center", va="center", fontsize=8)
        ax.set_title(title)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(f"{method}: learned label covariance (mean over {n_folds} fold(s))")
    fig.tight_layout()
    return fig
