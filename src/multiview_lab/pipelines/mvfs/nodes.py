"""Nodes of the ``mvfs`` pipeline (ADMM-MVFS spec §6.2, "project protocol").

Data flow: raw mfeat (six views, ``01_raw``) -> the selected views (``03_primary``) -> seeded
stratified 50/50 splits (``05_model_input``) -> λ chosen per split by inner stratified CV on the
training rows (an engine experiment of its own, :mod:`.lam_cv`: table of inner-CV scores,
chosen λ, sensitivity figure) -> the splits with their chosen λ -> the shared training stage
(one node per selector registered under ``mvfs.selectors``, run by
:func:`multiview_lab.protocol.run_experiment` with the task of :mod:`.task`: every selector
fitted on the z-scored training rows, the ``lam_cv: true`` ones with the split's λ, its top-k
features scored by each classifier for every k; results, rankings, convergence histories) ->
shared reporting (accuracy vs k, training time), the convergence figure and the objective gap
between the ADMM and centralised RFS at the same λ (``08_reporting``).

Execution (local joblib or Dask) is the run's global ``execution`` block; the ADMM is
``distributed: true`` and runs its own view/class workers on the run's backend.
"""

from __future__ import annotations

import logging
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from multiview_lab import formatting as fmt  # noqa: E402
from multiview_lab.pipelines.reporting.nodes import place_legend  # noqa: E402
from multiview_lab.protocol import splits  # noqa: E402

logger = logging.getLogger(__name__)

DATASET = "mfeat"


# -- data ---------------------------------------------------------------------------------------
def build_views(mfeat_raw: tuple[dict[str, np.ndarray], np.ndarray], data: dict[str, Any]):
    """Pick the configured views of mfeat, in order, with the labels.

    Parameters
    ----------
    mfeat_raw : tuple
        ``(views, y)`` as returned by :func:`multiview_lab.data.mfeat.load_mfeat`: a dict
        view name -> (n, d_v) array and the (n,) labels.
    data : dict
        ``views``: list of view names (``fou, fac, kar, pix, zer, mor``).

    Returns
    -------
    dict
        ``{"mfeat": {"X": [view arrays], "y": labels, "names": view names}}`` (raw, unscaled
        features), the data sets of the engine by name.
    """
    views, y = mfeat_raw
    names = list(data.get("views") or views)
    missing = [name for name in names if name not in views]
    if missing:
        raise ValueError(f"Unknown mfeat view(s) {missing}; loaded: {sorted(views)}.")
    Xs = [np.asarray(views[name], dtype=np.float64) for name in names]
    y = np.asarray(y)
    for name, X in zip(names, Xs, strict=True):
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"View {name!r} has shape {X.shape}; expected ({y.shape[0]}, d).")
    logger.info(
        "mfeat: %d samples, views %s.",
        y.shape[0],
        {n: X.shape[1] for n, X in zip(names, Xs, strict=True)},
    )
    return {DATASET: {"X": Xs, "y": y, "names": np.array(names)}}


def make_splits(views: dict[str, Any], protocol: dict[str, Any]) -> pd.DataFrame:
    """Seeded stratified train/test splits (spec §6.2: 50/50, seeds 0..9).

    Split ``s`` uses seed ``protocol.seed + s`` (the seed every method gets on it), so that any
    split can be reproduced alone.

    Returns
    -------
    DataFrame
        The split table: ``dataset, split, seed, train, test`` (sorted row indices).
    """
    n_splits = int(protocol.get("n_splits", 10))
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1; got {n_splits}.")
    test_size = float(protocol.get("test_size", 0.5))
    rows = []
    for name, data in views.items():
        y = np.asarray(data["y"])
        seeds = [int(protocol.get("seed", 0)) + s for s in range(n_splits)]
        parts = [splits.stratified_holdout(y, test_size, seed) for seed in seeds]
        rows += splits.split_rows({"dataset": name}, parts, seeds, index="split")
    return splits.split_table(rows)


# -- figures and tables -----------------------------------------------------------------------
def plot_lam_sensitivity(table: pd.DataFrame, chosen: pd.DataFrame) -> plt.Figure:
    """Sensitivity curve: inner-CV score vs λ (log x), one line per split, chosen λ starred.

    One panel for the criterion and one per classifier (``score_<name>`` columns), mean ± std over
    the folds; dotted verticals at λ_max of the folds (mean). The y axis spans the fitted λ: the
    λ ≥ λ_max points (W = 0, majority-class score) fall below it and are stated in a note.
    """
    if table.empty:
        fig, ax = plt.subplots(figsize=(5, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "λ fixed by the selectors' params\n(mvfs.lam_cv disabled)", ha="center")
        return fig
    panels = ["score"] + [c for c in table.columns if c.startswith("score_")]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False, sharey=True
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    low, high = [], []
    for ax, column in zip(axes[0], panels, strict=True):
        for i, (split, block) in enumerate(table.groupby("split")):
            colour = colours[i % len(colours)]
            stats = block.groupby("lam").agg(
                mean=(column, "mean"), std=(column, "std"), null=("null_model", "all")
            )
            stats["std"] = stats["std"].fillna(0.0)
            ax.errorbar(
                stats.index,
                stats["mean"],
                yerr=stats["std"],
                marker="o",
                ms=3,
                capsize=2,
                color=colour,
                label=f"split {split}",
            )
            fitted = stats[~stats["null"]]
            low.append((fitted["mean"] - fitted["std"]).min())
            high.append((fitted["mean"] + fitted["std"]).max())
            best = chosen.loc[chosen["split"] == split, "lam"]
            if not best.empty:
                lam = float(best.iloc[0])
                ax.plot(lam, stats.at[lam, "mean"], "*", ms=12, color=colour, mec="k")
            ax.axvline(block["lam_max"].mean(), ls=":", lw=1, color=colour)
        ax.set_xscale("log")
        ax.set_xlabel(r"$\lambda$")
        ax.set_title(
            "criterion (mean over classifiers and k)"
            if column == "score"
            else f"{column.removeprefix('score_')} (mean over k)"
        )
        ax.grid(alpha=0.3)
    null = table[table["null_model"]]
    if np.isfinite(np.nanmin(low)):
        span = max(np.nanmax(high) - np.nanmin(low), 0.02)
        axes[0][0].set_ylim(np.nanmin(low) - 0.15 * span, min(np.nanmax(high) + 0.05 * span, 1.0))
    if not null.empty:
        axes[0][0].annotate(
            rf"$\lambda \geq \lambda_{{max}}$: W = 0, majority class {fmt.number(null['score'].mean())}",
            xy=(0.98, 0.03),
            xycoords="axes fraction",
            ha="right",
            fontsize="small",
        )
    axes[0][0].set_ylabel("inner-CV accuracy")
    fig.suptitle(
        r"$\lambda$ sensitivity on mfeat (inner CV; ★ chosen, dotted: $\lambda_{max}$ of the folds)"
    )
    fig.tight_layout()
    place_legend(fig)
    return fig


# -- ADMM vs RFS ------------------------------------------------------------------------------
def objective_gap(
    rankings: pd.DataFrame, gap: dict[str, Any]
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Relative objective gap of the ADMM to centralised RFS at the same λ, per split.

    ``gap.method`` names the selector (or a list of selectors, e.g. the ADMM at the spec's
    stopping rule and at a tighter one) compared with ``gap.reference``; ``gap.top_k`` the size
    of the top-k sets compared. Both minimise the same objective (spec (A1) = RFS on the
    concatenated views), so ``(J_method − J_reference) / J_reference`` measures only stopping
    precision.

    Returns
    -------
    table : DataFrame
        ``method, split, lam, J_method, J_reference, rel_gap, n_iter_method,
        n_iter_reference, stop_reason_method, top_k_overlap`` (a negative ``rel_gap``: the
        method ended below the reference, i.e. within the reference's own stopping precision).
    metrics : dict
        Per method: ``objective_gap/<method>/rel_gap_mean``, ``..._max`` and
        ``objective_gap/<method>/top<k>_overlap_mean`` (MLflow logs them in the method's run).
    """
    methods = gap["method"]
    methods = [methods] if isinstance(methods, str) else list(methods)
    reference = gap["reference"]
    top_k = int(gap.get("top_k", 10))
    fitted = sorted(rankings["method"].unique())
    missing = [m for m in (*methods, reference) if m not in fitted]
    if missing:
        raise ValueError(
            f"objective gap needs selectors {[*methods, reference]}; {missing} not fitted "
            f"(fitted: {fitted})."
        )
    b = rankings[rankings["method"] == reference].set_index("split")
    rows, metrics = [], {}
    for method in methods:
        a = rankings[rankings["method"] == method].set_index("split")
        block = []
        for split in a.index.intersection(b.index):
            lam_a, lam_b = a.at[split, "lam"], b.at[split, "lam"]
            if not np.isclose(lam_a, lam_b, rtol=1e-9):
                raise ValueError(
                    f"Split {split}: {method} used λ={lam_a:.6g} but {reference} "
                    f"λ={lam_b:.6g}; give both the same lam or lam_frac."
                )
            J_a, J_b = a.at[split, "objective"], b.at[split, "objective"]
            top_a, top_b = a.at[split, "ranking"][:top_k], b.at[split, "ranking"][:top_k]
            block.append(
                {
                    "method": method,
                    "split": int(split),
                    "lam": float(lam_a),
                    "J_method": float(J_a),
                    "J_reference": float(J_b),
                    "rel_gap": float((J_a - J_b) / J_b),
                    "n_iter_method": int(a.at[split, "n_iter"]),
                    "n_iter_reference": int(b.at[split, "n_iter"]),
                    "stop_reason_method": str(a["stop_reason"].get(split, ""))
                    if "stop_reason" in a
                    else "",
                    "top_k_overlap": int(np.intersect1d(top_a, top_b).size),
                }
            )
        gaps = np.array([r["rel_gap"] for r in block])
        overlaps = np.array([r["top_k_overlap"] for r in block])
        metrics[f"objective_gap/{method}/rel_gap_mean"] = float(gaps.mean())
        metrics[f"objective_gap/{method}/rel_gap_max"] = float(gaps.max())
        metrics[f"objective_gap/{method}/top{top_k}_overlap_mean"] = float(overlaps.mean())
        rows += block
        logger.info(
            "%s against %s at the same λ (%s): relative objective gap mean %.3g, max %.3g; "
            "%.1f of the top %d features shared on average.",
            method, reference, fmt.count(len(block), "split"), gaps.mean(), gaps.max(),
            overlaps.mean(), top_k,
        )  # fmt: skip
    return pd.DataFrame(rows), metrics


def plot_convergence(histories: pd.DataFrame, convergence: dict[str, Any]) -> plt.Figure:
    """Convergence of the ADMM: objective, primal and dual residuals per iteration (all splits).

    ``convergence.method`` names the selector to plot.
    """
    method = convergence.get("method", "ADMM-MVFS")
    data = histories[histories["method"] == method]
    if data.empty:
        raise ValueError(f"No history recorded for selector {method!r}.")
    panels = [
        ("objective", "objective J(W^k)"),
        ("primal_residual", "primal residual ||r^k||"),
        ("dual_residual", "dual residual ||s^k||"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, (key, title) in zip(axes, panels, strict=True):
        for split, block in data.groupby("split"):
            ax.plot(block["iteration"], block[key], lw=1, label=f"split {split}")
        ax.set_yscale("log")
        ax.set_xlabel("ADMM iteration k")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    if data["split"].nunique() <= 10:
        axes[-1].legend(fontsize="small")
    fig.suptitle(f"{method}: convergence on mfeat (project protocol)")
    fig.tight_layout()
    return fig
