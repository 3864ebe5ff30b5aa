"""Nodes of the ``miml`` pipeline (Bayesian MIML with a GP prior; MIML-GP spec Sect. 6).

Data flow: raw scene / COREL files (``RawDataset``) -> bag lists (optionally a seeded slice) ->
seeded splits (``05_model_input``): scene K-fold CV, COREL 50/50 splits per one-vs-rest task,
the Figure 3 50/50 splits -> every method registered under ``miml.methods`` (scene) and
``miml.corel.methods`` (COREL) fitted on every split (``07_model_output``) -> shared reporting of
the five lower-is-better metrics (scene table), the COREL accuracy table with 95 % intervals,
the Figure 3 study (rank ``m`` against the exact ``K_sum``) and the heat map of the learned label
covariance (``08_reporting/miml``).

Every evaluation unit (data set, split, method) is seeded with ``stable_seed`` and runs through
``evaluation.run_units`` with its BLAS thread pool limited (``blas_threads``), so results do not
depend on ``n_jobs``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import delayed  # noqa: E402
from scipy import stats  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from multiview_lab.data.corel import COREL_CATEGORIES  # noqa: E402
from multiview_lab.evaluation import build_estimator, run_units, stable_seed  # noqa: E402
from multiview_lab.miml.protocol import (  # noqa: E402
    evaluate_miml,
    kfold_splits,
    random_half_splits,
    standardize_bags,
)

logger = logging.getLogger(__name__)

METRICS = (
    "hamming_loss",
    "one_error",
    "coverage",
    "ranking_loss",
    "one_minus_average_precision",
)


# ----------------------------------------------------------------------------------------------
# ingestion
# ----------------------------------------------------------------------------------------------
def _slice(n: int, max_bags: int | None, seed: int, name: str) -> np.ndarray:
    """Indices of all bags, or of a seeded random subset of ``max_bags`` (kept in order)."""
    if max_bags is None:
        return np.arange(n)
    if not 2 <= int(max_bags) <= n:
        raise ValueError(f"{name}: max_bags={max_bags} must lie in [2, {n}].")
    rng = np.random.default_rng(stable_seed(name, "slice", base=seed))
    return np.sort(rng.choice(n, size=int(max_bags), replace=False))


def prepare_scene(raw: tuple, data: dict[str, Any]) -> dict[str, Any]:
    """Scene bags and label sets, optionally a seeded slice of ``data.max_bags`` bags.

    Parameters
    ----------
    raw : tuple
        ``(bags, targets, label_names)`` from :func:`multiview_lab.data.miml_scene.load_miml_scene`.
    data : dict
        ``max_bags`` (int or ``None`` = all 2000) and ``seed``.

    Returns
    -------
    dict
        ``bags`` (list of (n_i, d) arrays), ``Y`` ((n, Q) 0/1), ``label_names``.
    """
    bags, Y, names = raw
    Y = np.asarray(Y)
    if len(bags) != Y.shape[0] or Y.ndim != 2 or Y.shape[1] != len(names):
        raise ValueError(
            f"scene: {len(bags)} bags, targets {Y.shape} and {len(names)} label names disagree."
        )
    keep = _slice(len(bags), data.get("max_bags"), data.get("seed", 0), "scene")
    out = {"bags": [bags[i] for i in keep], "Y": Y[keep], "label_names": list(names)}
    missing = np.flatnonzero(out["Y"].sum(axis=0) == 0)
    if missing.size:
        raise ValueError(f"scene slice has no bag with label(s) {[names[i] for i in missing]}.")
    logger.info("scene: %d bags, %d labels.", len(out["bags"]), Y.shape[1])
    return out


def prepare_corel(corel: dict[str, Any], *raw_tasks: tuple) -> dict[str, dict[str, Any]]:
    """The COREL one-vs-rest tasks named in ``corel.tasks``.

    ``raw_tasks`` are the outputs of :func:`multiview_lab.data.corel.load_corel_task` for every
    category of :data:`~multiview_lab.data.corel.COREL_CATEGORIES`, in that order. With
    ``corel.max_bags`` each task keeps a seeded random slice of its bags (smoke runs).

    Returns
    -------
    dict
        task -> ``{"bags": list of (n_i, 9) arrays, "y": (n,) 0/1}``.
    """
    if len(raw_tasks) != len(COREL_CATEGORIES):
        raise ValueError(
            f"prepare_corel needs one raw task per category {COREL_CATEGORIES}; got "
            f"{len(raw_tasks)}."
        )
    available = dict(zip(COREL_CATEGORIES, raw_tasks, strict=True))
    tasks = list(corel.get("tasks") or [])
    unknown = [t for t in tasks if t not in available]
    if not tasks or unknown:
        raise ValueError(
            f"miml.corel.tasks must be a non-empty subset of {COREL_CATEGORIES}; got {tasks}."
        )
    out = {}
    for task in tasks:
        bags, y = available[task]
        keep = _slice(len(bags), corel.get("max_bags"), corel.get("seed", 0), task)
        y = np.asarray(y)[keep]
        if y.min() == y.max():
            raise ValueError(f"COREL {task}: the slice holds one class only; raise max_bags.")
        out[task] = {"bags": [bags[i] for i in keep], "y": y}
        logger.info("COREL %s: %d bags, %d positive.", task, y.size, int(y.sum()))
    return out


# ----------------------------------------------------------------------------------------------
# splits
# ----------------------------------------------------------------------------------------------
def _rows(study, dataset, splits, keep, seed):
    return [
        {
            "study": study,
            "dataset": dataset,
            "split": int(k),
            "seed": int(seed),
            "train_idx": np.asarray(splits[k][0], dtype=np.int64),
            "test_idx": np.asarray(splits[k][1], dtype=np.int64),
        }
        for k in keep
    ]


def _which(n_total: int, run: Sequence[int] | None, name: str) -> list[int]:
    keep = list(range(n_total)) if run is None else [int(k) for k in run]
    bad = [k for k in keep if not 0 <= k < n_total]
    if not keep or bad:
        raise ValueError(
            f"{name}: splits to run {keep} must be a non-empty subset of 0..{n_total - 1}."
        )
    return keep


def make_splits(
    scene: dict[str, Any],
    corel: dict[str, Any],
    protocol: dict[str, Any],
    figure3: dict[str, Any],
) -> pd.DataFrame:
    """All seeded splits of the protocol, one row each.

    * ``study="scene"``: ``protocol.n_folds``-fold CV (seeded plain K-fold, spec Sect. 6.2);
      only the folds listed in ``protocol.folds_run`` (``null`` = all) are evaluated.
    * ``study="corel"``: ``protocol.corel_repeats`` random 50/50 splits per task, seeded by task.
    * ``study="figure3"``: ``figure3.n_repeats`` random 50/50 splits of the scene bags (of a
      seeded subset of ``figure3.max_bags`` bags when given: the exact model costs O((Qn)^3)).

    Returns
    -------
    DataFrame
        Columns ``study, dataset, split, seed, train_idx, test_idx`` (indices into the bags).
    """
    base = int(protocol.get("seed", 0))
    n_folds = int(protocol.get("n_folds", 10))
    n = len(scene["bags"])
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds={n_folds} must lie in [2, {n}] (number of scene bags).")
    rows = []
    seed = stable_seed("scene", "kfold", base=base)
    folds = kfold_splits(n, n_splits=n_folds, random_state=seed)
    rows += _rows(
        "scene", "scene", folds, _which(n_folds, protocol.get("folds_run"), "folds_run"), seed
    )
    repeats = int(protocol.get("corel_repeats", 5))
    for task, data in corel.items():
        seed = stable_seed("corel", task, base=base)
        rows += _rows(
            "corel",
            task,
            random_half_splits(len(data["bags"]), repeats, seed),
            range(repeats),
            seed,
        )
    repeats = int(figure3.get("n_repeats", 1))
    seed = stable_seed("figure3", base=base)
    pool = _slice(n, figure3.get("max_bags"), base, "figure3")  # the exact model is O((Qn)^3)
    halves = [(pool[a], pool[b]) for a, b in random_half_splits(pool.size, repeats, seed)]
    rows += _rows("figure3", "scene", halves, range(repeats), seed)
    splits = pd.DataFrame(rows)
    logger.info("splits: %s", splits.groupby("study").size().to_dict())
    return splits


# ----------------------------------------------------------------------------------------------
# evaluation units
# ----------------------------------------------------------------------------------------------
def _fit_timed(model, train, Y):
    start = time.perf_counter()
    model.fit(train, Y)
    return time.perf_counter() - start


def _model_info(model) -> dict[str, Any]:
    """Fitted quantities worth a column (kernel width, rank, EM loops) when the model has them."""
    info = {}
    for attr, col in (("delta_", "delta"), ("m_", "rank_m"), ("n_em_iter_", "n_em_iter")):
        value = getattr(model, attr, None)
        if value is not None:
            info[col] = float(value)
    return info


def _scene_unit(unit, spec, train, Y_train, test, Y_test, blas_threads, keep_model):
    """Fit one method on one scene fold (features standardised on the training instances)."""
    train, test = standardize_bags(train, test)
    model = build_estimator(spec, random_state=unit["seed"])
    with threadpool_limits(blas_threads):
        fit_time = _fit_timed(model, train, Y_train)
        start = time.perf_counter()
        scores = evaluate_miml(model, test, Y_test)
        predict_time = time.perf_counter() - start
    row = {**unit, **scores, "fit_time_s": fit_time, "predict_time_s": predict_time}
    row.update(_model_info(model))
    Kf = getattr(model, "Kf_", None)
    return {
        "row": row,
        "Kf": None if Kf is None else np.asarray(Kf),
        "model": model if keep_model else None,
    }


def _check_methods(methods: dict[str, Any], where: str) -> None:
    if not methods:
        raise ValueError(f"No method registered under {where}.")
    for name, spec in methods.items():
        if not isinstance(spec, dict) or "estimator" not in spec:
            raise ValueError(f"{where}.{name} needs an 'estimator' entry; got {spec!r}.")
        if "/" in name or name.isdigit():
            raise ValueError(f"Method name {name!r} must not contain '/' or be all digits.")


def _units_of(splits: pd.DataFrame, study: str) -> pd.DataFrame:
    required = {"study", "dataset", "split", "seed", "train_idx", "test_idx"}
    if not required <= set(splits.columns):
        raise ValueError(f"splits lack column(s) {sorted(required - set(splits.columns))}.")
    rows = splits[splits["study"] == study]
    if rows.empty:
        raise ValueError(f"No {study!r} split in the splits table.")
    return rows


def evaluate_scene(
    scene: dict[str, Any],
    splits: pd.DataFrame,
    methods: dict[str, dict[str, Any]],
    protocol: dict[str, Any],
) -> tuple[pd.DataFrame, dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """Fit every registered method on every scene fold and score the five MIML metrics.

    A method spec holds ``estimator`` (a name of :mod:`multiview_lab.estimators`) and
    ``params``. Each (fold, method) unit has its own seed ``stable_seed("scene", fold, method)``.
    ``protocol.log_models`` (``{methods: [...], folds: [...]}``, folds default to the first
    fold run) names the fitted models to keep for MLflow.

    Returns
    -------
    results : DataFrame
        One row per unit: ``dataset, fold, method, seed``, the five metrics,
        ``hamming_loss_top_fallback``, ``fit_time_s``, ``predict_time_s`` and, for MIML-GP,
        ``delta``, ``rank_m``, ``n_em_iter``.
    label_covariances : dict
        method -> ``fold<k>`` -> learned ``K^f`` (models that have one).
    models : dict
        ``<method>_scene_fold<k>`` -> fitted estimator, for ``protocol.log_models``.
    """
    _check_methods(methods, "miml.methods")
    bags, Y = scene["bags"], np.asarray(scene["Y"])
    base = int(protocol.get("seed", 0))
    scene_splits = _units_of(splits, "scene")
    log_models = protocol.get("log_models") or {}
    keep_folds = log_models.get("folds") or [int(scene_splits["split"].iloc[0])]
    jobs = []
    for _, s in scene_splits.iterrows():
        tr, te = np.asarray(s["train_idx"]), np.asarray(s["test_idx"])
        train, test = [bags[i] for i in tr], [bags[i] for i in te]
        for method, spec in methods.items():
            unit = {
                "dataset": "scene",
                "fold": int(s["split"]),
                "method": method,
                "seed": stable_seed("scene", int(s["split"]), method, base=base),
            }
            jobs.append(
                delayed(_scene_unit)(
                    unit,
                    spec,
                    train,
                    Y[tr],
                    test,
                    Y[te],
                    protocol.get("blas_threads", 1),
                    method in (log_models.get("methods") or []) and unit["fold"] in keep_folds,
                )
            )
    outputs = run_units(jobs, n_jobs=protocol.get("n_jobs", 1), label="miml scene")
    results = pd.DataFrame([o["row"] for o in outputs])
    covariances: dict[str, dict[str, np.ndarray]] = {}
    for o in outputs:
        if o["Kf"] is not None:
            covariances.setdefault(o["row"]["method"], {})[f"fold{o['row']['fold']}"] = o["Kf"]
    models = {
        f"{o['row']['method']}_scene_fold{o['row']['fold']}": o["model"]
        for o in outputs
        if o["model"] is not None
    }
    return results, covariances, models


def _corel_unit(unit, spec, train, y_train, test, y_test, blas_threads):
    """Fit one assumption on one COREL split; accuracy of the thresholded prediction."""
    train, test = standardize_bags(train, test)
    model = build_estimator(spec, random_state=unit["seed"])
    with threadpool_limits(blas_threads):
        fit_time = _fit_timed(model, train, y_train[:, None])
        pred = np.asarray(model.predict(test)).reshape(len(test), -1)[:, 0]
    pos = y_test == 1
    row = {
        **unit,
        "accuracy": float(np.mean(pred == y_test)),
        # the 1:19 tasks make "always negative" score ~0.95: report it and balanced accuracy
        "balanced_accuracy": float((np.mean(pred[pos] == 1) + np.mean(pred[~pos] == 0)) / 2)
        if 0 < pos.sum() < pos.size
        else float("nan"),
        "majority_accuracy": float(max(pos.mean(), 1 - pos.mean())),
        "fit_time_s": fit_time,
        "n_test": int(y_test.size),
    }
    row.update(_model_info(model))
    return row


def evaluate_corel(
    corel: dict[str, Any],
    splits: pd.DataFrame,
    methods: dict[str, dict[str, Any]],
    protocol: dict[str, Any],
) -> pd.DataFrame:
    """Fit every COREL method (e.g. the collective and the standard assumption) on every
    (task, 50/50 split); one row per unit with its test accuracy."""
    _check_methods(methods, "miml.corel.methods")
    base = int(protocol.get("seed", 0))
    jobs = []
    for _, s in _units_of(splits, "corel").iterrows():
        task = s["dataset"]
        if task not in corel:
            raise ValueError(f"splits name COREL task {task!r}, not prepared ({sorted(corel)}).")
        bags, y = corel[task]["bags"], np.asarray(corel[task]["y"])
        tr, te = np.asarray(s["train_idx"]), np.asarray(s["test_idx"])
        for method, spec in methods.items():
            unit = {
                "dataset": task,
                "split": int(s["split"]),
                "method": method,
                "seed": stable_seed("corel", task, int(s["split"]), method, base=base),
            }
            jobs.append(
                delayed(_corel_unit)(
                    unit,
                    spec,
                    [bags[i] for i in tr],
                    y[tr],
                    [bags[i] for i in te],
                    y[te],
                    protocol.get("blas_threads", 1),
                )
            )
    rows = run_units(jobs, n_jobs=protocol.get("n_jobs", 1), label="miml COREL")
    return pd.DataFrame(rows)


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
    """COREL table: one row per task, one column per method, ``mean ± CI half-width``."""
    methods = list(dict.fromkeys(summary["method"]))
    lines = ["| task | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for task, block in summary.groupby("dataset", sort=False):
        block = block.set_index("method")
        cells = [
            f"{block.loc[m, 'accuracy_mean']:.3f} ± {block.loc[m, 'accuracy_ci_half']:.3f}"
            if m in block.index
            else "–"
            for m in methods
        ]
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
            cells = [f"{balanced.loc[task, m]:.3f}" for m in methods]
            lines.append(f"| {task} | {majority[task]:.3f} | " + " | ".join(cells) + " |")
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
# Figure 3: rank m of the low-rank K_sum against the exact model
# ----------------------------------------------------------------------------------------------
def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def _figure3_unit(unit, params, variants, train, Y_train, test, Y_test, blas_threads):
    """Exact model (``low_rank="none"``) and every low-rank variant on one 50/50 split."""
    train, test = standardize_bags(train, test)
    spec = {"estimator": "MIMLGPClassifier", "params": {**params, "low_rank": "none"}}
    rows = []
    with threadpool_limits(blas_threads):
        exact = build_estimator(spec, random_state=unit["seed"])
        fit_time = _fit_timed(exact, train, Y_train)
        rows.append(
            {
                **unit,
                "variant": "exact",
                "m": float(exact.m_),
                "rel_error_F": 0.0,
                "rel_error_Kf": 0.0,
                "fit_time_s": fit_time,
                "n_em_iter": exact.n_em_iter_,
                **evaluate_miml(exact, test, Y_test),
            }
        )
        for k, override in enumerate(variants):
            spec = {"estimator": "MIMLGPClassifier", "params": {**params, **override}}
            model = build_estimator(spec, random_state=unit["seed"])
            fit_time = _fit_timed(model, train, Y_train)
            rows.append(
                {
                    **unit,
                    "variant": f"v{k}",
                    "m": float(model.m_),
                    "rel_error_F": _rel(model.Fsum_, exact.Fsum_),
                    "rel_error_Kf": _rel(model.Kf_, exact.Kf_),
                    "fit_time_s": fit_time,
                    "n_em_iter": model.n_em_iter_,
                    **evaluate_miml(model, test, Y_test),
                }
            )
    return rows


def run_figure3(
    scene: dict[str, Any],
    splits: pd.DataFrame,
    figure3: dict[str, Any],
    protocol: dict[str, Any],
) -> pd.DataFrame:
    """The paper's Figure 3 study on scene 50/50 splits.

    For each split the exact model (full-rank ``K_sum``) and one low-rank model per entry of
    ``figure3.variants`` (parameter overrides, e.g. ``trace_frac`` of the eigenvalue rule or
    ``n_nystrom``) are fitted with ``figure3.params``; the rows hold the rank ``m``, the relative
    errors ``||F_sum - F_sum^exact|| / ||F_sum^exact||`` and ``||K^f - K^f_exact||_F /
    ||K^f_exact||_F``, the five metrics and the training time.
    """
    variants = list(figure3.get("variants") or [])
    if not variants:
        raise ValueError("miml.figure3.variants must list at least one low-rank setting.")
    params = dict(figure3.get("params") or {})
    if params.get("likelihood", "collective") != "collective":
        raise ValueError("Figure 3 compares low-rank K_sum: it needs likelihood='collective'.")
    bags, Y = scene["bags"], np.asarray(scene["Y"])
    base = int(protocol.get("seed", 0))
    jobs = []
    for _, s in _units_of(splits, "figure3").iterrows():
        tr, te = np.asarray(s["train_idx"]), np.asarray(s["test_idx"])
        unit = {
            "repeat": int(s["split"]),
            "seed": stable_seed("figure3", int(s["split"]), base=base),
        }
        jobs.append(
            delayed(_figure3_unit)(
                unit,
                params,
                variants,
                [bags[i] for i in tr],
                Y[tr],
                [bags[i] for i in te],
                Y[te],
                protocol.get("blas_threads", 1),
            )
        )
    outputs = run_units(jobs, n_jobs=protocol.get("n_jobs", 1), label="miml Figure 3")
    return pd.DataFrame([row for rows in outputs for row in rows])


def plot_figure3(study: pd.DataFrame) -> plt.Figure:
    """Figure 3: relative errors of F and K^f, the five metrics and the training time against
    the rank ``m`` (mean over repetitions; the exact model drawn as dashed lines)."""
    if study.empty or "variant" not in study.columns:
        raise ValueError("Figure 3 study is empty.")
    mean = study.groupby("variant", sort=False).mean(numeric_only=True).reset_index()
    low = mean[mean["variant"] != "exact"].sort_values("m")
    exact = mean[mean["variant"] == "exact"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].plot(low["m"], low["rel_error_F"], "o-", label="F (bag sums)")
    axes[0].plot(low["m"], low["rel_error_Kf"], "s-", label="$K^f$")
    axes[0].set_yscale("log")
    axes[0].set_title("(a) relative error vs exact $K_{sum}$")
    for metric in METRICS:
        line = axes[1].plot(low["m"], low[metric], "o-", ms=3, label=metric)
        if not exact.empty:
            axes[1].axhline(exact[metric].iloc[0], ls="--", lw=0.8, color=line[0].get_color())
    axes[1].set_title("(b) performance (dashed: exact)")
    axes[2].plot(low["m"], low["fit_time_s"], "o-", label="low rank")
    if not exact.empty:
        axes[2].axhline(exact["fit_time_s"].iloc[0], ls="--", color="k", label="exact")
    axes[2].set_title("(c) training time (s)")
    for ax in axes:
        ax.set_xlabel("rank m")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("MIML-GP on scene: low-rank $K_{sum}$ (paper Fig. 3)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------------------
# label covariance heat map
# ----------------------------------------------------------------------------------------------
def plot_label_covariance(
    label_covariances: dict[str, dict[str, np.ndarray]],
    scene: dict[str, Any],
    heatmap: dict[str, Any],
) -> plt.Figure:
    """Heat map of the learned ``K^f`` of ``heatmap.method`` (mean over the folds run) and of
    the corresponding label correlation matrix, with the scene label names."""
    method = heatmap.get("method")
    if method not in label_covariances:
        raise ValueError(
            f"heatmap.method={method!r} learned no K^f; methods with one: {sorted(label_covariances)}."
        )
    Kf = np.mean(np.stack(list(label_covariances[method].values())), axis=0)
    sd = np.sqrt(np.clip(np.diag(Kf), 1e-300, None))
    corr = Kf / np.outer(sd, sd)
    names = scene["label_names"]
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
    fig.suptitle(
        f"{method}: learned label covariance (mean over {len(label_covariances[method])} fold(s))"
    )
    fig.tight_layout()
    return fig
