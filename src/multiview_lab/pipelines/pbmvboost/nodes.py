"""Nodes of the ``pbmvboost`` pipeline (PB-MVBoost paper, Sect. 5; spec Sect. 5).

Data flow: raw MNIST -> four-view data sets MNIST1 / MNIST2 (``03_primary``) -> seeded training
draws (``05_model_input``) -> every registered method fitted on every (data set, one-vs-all
task, draw) and scored on the 10,000 test images (``07_model_output``) -> shared reporting
(Table 1) and Figure 4 (``08_reporting``). Methods are registered in
``parameters_pbmvboost.yml`` under ``pbmvboost.methods`` by estimator name and parameters.
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import delayed  # noqa: E402

from multiview_lab.data.mnist import extract_views  # noqa: E402
from multiview_lab.evaluation import (  # noqa: E402
    array_fingerprint,
    build_estimator,
    cache_path,
    cached_call,
    code_fingerprint,
    resolve_estimator_class,
    run_units,
    stable_seed,
    unit_key,
)
from multiview_lab.pbmvboost.metrics import binary_scores  # noqa: E402

logger = logging.getLogger(__name__)


def build_views(mnist: dict[str, np.ndarray], data: dict[str, Any]) -> dict[str, Any]:
    """Cut MNIST into the multiview data sets of the paper (MNIST1, MNIST2).

    Parameters
    ----------
    mnist : dict
        ``x_train`` (60000, 28, 28), ``y_train``, ``x_test`` (10000, 28, 28), ``y_test``.
    data : dict
        ``window`` (side of the windows), ``datasets``: name -> ``{"corners": [[r, c], ...]}``
        and optionally ``max_images: {train: int, test: int}`` to keep only the first images
        (smoke runs; ``null`` keeps all).

    Returns
    -------
    dict
        name -> ``{"X_train": [view, ...], "X_test": [view, ...], "y_train", "y_test"}`` with
        float32 views of shape (n, window**2), pixel values 0..255.
    """
    for key in ("x_train", "y_train", "x_test", "y_test"):
        if key not in mnist:
            raise ValueError(f"MNIST archive lacks {key!r}; has {sorted(mnist)}.")
    for split in ("train", "test"):
        x, y = mnist[f"x_{split}"], mnist[f"y_{split}"]
        if x.ndim != 3 or x.shape[0] != y.shape[0]:
            raise ValueError(f"MNIST {split}: images {x.shape} and labels {y.shape} do not match.")
    limit = data.get("max_images") or {}
    keep = {split: slice(None, limit.get(split)) for split in ("train", "test")}
    out = {}
    for name, spec in data["datasets"].items():
        out[name] = {
            "X_train": extract_views(
                mnist["x_train"][keep["train"]], spec["corners"], data["window"]
            ),
            "X_test": extract_views(mnist["x_test"][keep["test"]], spec["corners"], data["window"]),
            "y_train": np.asarray(mnist["y_train"][keep["train"]]),
            "y_test": np.asarray(mnist["y_test"][keep["test"]]),
        }
        logger.info(
            "%s: %d views of %d features, %d train / %d test images.",
            name,
            len(out[name]["X_train"]),
            out[name]["X_train"][0].shape[1],
            out[name]["y_train"].shape[0],
            out[name]["y_test"].shape[0],
        )
    return out


def draw_training_samples(views: dict[str, Any], protocol: dict[str, Any]) -> pd.DataFrame:
    """Seeded training draws, one per (data set, task, draw, n), as the spec's Sect. 5.2 says.

    ``train_sampling="random"`` draws ``n`` images uniformly from the 60,000 training images
    (natural class proportions, ~10 % positives); ``"balanced"`` draws ``n/2`` images of the
    task's digit and ``n/2`` from the other digits. Seed = hash(base seed, data set, task, draw,
    n), so every unit is reproducible on its own, whatever the order or parallelism.

    Returns
    -------
    DataFrame
        Columns ``dataset, task, draw, n_train, seed, indices`` (indices into the training set).
    """
    sampling = protocol.get("train_sampling", "random")
    if sampling not in ("random", "balanced"):
        raise ValueError(f"train_sampling must be 'random' or 'balanced'; got {sampling!r}.")
    rows = []
    for name in protocol["datasets"]:
        if name not in views:
            raise ValueError(f"Unknown data set {name!r}; built: {sorted(views)}.")
    # n outermost: units run in this order, so the first size listed is complete first.
    for n in protocol["n_train"]:
        for name in protocol["datasets"]:
            y = views[name]["y_train"]
            if not 2 <= n <= y.shape[0]:
                raise ValueError(f"n_train={n} must lie in [2, {y.shape[0]}].")
            for task in protocol["tasks"]:
                positives = np.flatnonzero(y == task)
                if positives.size == 0:
                    raise ValueError(f"Task {task!r}: no training image has this label.")
                for draw in range(protocol["n_draws"]):
                    seed = stable_seed(name, task, draw, n, base=protocol.get("seed", 0))
                    rng = np.random.default_rng(seed)
                    if sampling == "random":
                        idx = rng.choice(y.shape[0], size=n, replace=False)
                    else:
                        negatives = np.flatnonzero(y != task)
                        idx = np.concatenate(
                            [
                                rng.choice(positives, size=n // 2, replace=False),
                                rng.choice(negatives, size=n - n // 2, replace=False),
                            ]
                        )
                    rows.append(
                        {
                            "dataset": name,
                            "task": int(task),
                            "draw": draw,
                            "n_train": int(n),
                            "seed": seed,
                            "indices": np.sort(idx),
                        }
                    )
    return pd.DataFrame(rows)


def _train_quantities(pac: dict[str, Any]) -> dict[str, float]:
    """The scalar PAC-Bayes quantities on the training sample, as ``train_<name>`` columns."""
    return {f"train_{k}": float(v) for k, v in pac.items() if np.ndim(v) == 0}


def _fit_and_score(
    unit: dict[str, Any],
    spec: dict[str, Any],
    X_pool,
    idx,
    y_train,
    Xs_test,
    y_test,
    tie_policy: str,
    keep_model: bool,
) -> dict[str, Any]:
    """Fit one method on one training draw (rows ``idx`` of the views ``X_pool``) and score it
    on the test set. The draw is sliced here, in the worker, so a run of thousands of units
    never holds all the training samples at once (the pools are shared, memory-mapped).

    Each entry of ``spec["readings"]`` (name -> parameters) is scored as a method of its own
    from the same fitted model with those prediction-time parameters changed (e.g. PB-MVBoost's
    ``vote``): training does not depend on them, so refitting would give the same model.
    """
    Xs_train = [X[idx] for X in X_pool]
    model = build_estimator(spec, random_state=unit["seed"])
    divisor = float(spec.get("input_divisor", 1.0))
    if divisor != 1.0:  # e.g. pixels / 255 for SVMs (spec Sect. 5.2); trees see raw pixels
        Xs_train = [X / divisor for X in Xs_train]
        Xs_test = [X / divisor for X in Xs_test]
    start = time.perf_counter()
    model.fit(Xs_train, y_train)
    fit_time = time.perf_counter() - start
    score = model.decision_function(Xs_test)
    row = {**unit, **binary_scores(y_test, score, tie_policy=tie_policy), "fit_time_s": fit_time}
    pac = getattr(model, "pac_bayes_", None)
    if pac:
        row.update(_train_quantities(pac))
    rows = [row]
    for reading, params in (spec.get("readings") or {}).items():
        allowed = getattr(model, "_PREDICTION_PARAMS", ())
        other = sorted(set(params) - set(allowed))
        if other:
            raise ValueError(
                f"Reading {reading!r} of {unit['method']!r} sets {other}: only the "
                f"prediction-time parameters {list(allowed)} of {type(model).__name__} can "
                "change on a fitted model; register it as a method of its own instead."
            )
        variant = copy.copy(model).set_params(**params)
        scores = binary_scores(y_test, variant.decision_function(Xs_test), tie_policy=tie_policy)
        extra = {**unit, "method": reading, **scores, "fit_time_s": fit_time}
        if hasattr(variant, "pac_bayes_quantities"):
            extra.update(_train_quantities(variant.pac_bayes_quantities(Xs_train, y_train)))
        rows.append(extra)
    trajectory = None
    if spec.get("trajectory") and hasattr(model, "staged_decision_function"):
        trajectory = _trajectory(model, unit, Xs_train, y_train, Xs_test, y_test, tie_policy)
    return {"rows": rows, "trajectory": trajectory, "model": model if keep_model else None}


def _trajectory(model, unit, Xs_train, y_train, Xs_test, y_test, tie_policy) -> pd.DataFrame:
    """Per-iteration train/test accuracy and F1 and the empirical training C-bound (Figure 4)."""
    records = []
    stages = zip(
        model.staged_decision_function(Xs_train),
        model.staged_decision_function(Xs_test),
        strict=True,
    )
    cbound = np.asarray(model.cbound_history_, dtype=float)[:, 1]  # uniform weights (Fig. 4)
    for t, (s_train, s_test) in enumerate(stages):
        train = binary_scores(y_train, s_train, tie_policy=tie_policy)
        test = binary_scores(y_test, s_test, tie_policy=tie_policy)
        records.append(
            {
                **{k: unit[k] for k in ("dataset", "method", "task", "draw", "n_train")},
                "iteration": t + 1,
                "train_accuracy": train["accuracy"],
                "train_f1": train["f1"],
                "test_accuracy": test["accuracy"],
                "test_f1": test["f1"],
                "train_cbound": float(cbound[t]),
            }
        )
    return pd.DataFrame.from_records(records)


def evaluate_methods(
    views: dict[str, Any],
    draws: pd.DataFrame,
    methods: dict[str, dict[str, Any]],
    protocol: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Fit every registered method on every draw and score it on the one-vs-all test task.

    Each (method, data set, task, draw, n) is one independent unit with its own seed, run in
    parallel with joblib (``protocol.n_jobs``); the results do not depend on ``n_jobs``.

    A method spec holds ``estimator`` (a name of :mod:`multiview_lab.estimators` or a dotted
    path) and ``params``, and optionally ``trajectory: true`` (record per-iteration scores and
    the training C-bound, Figure 4), ``tie_policy`` (``"error"`` or ``"drop"``, default from the
    protocol), ``input_divisor`` (divide the pixels, e.g. by 255 for SVMs) and ``readings``
    (name -> prediction-time parameters: more rows scored from the same fitted model).

    With ``protocol.cache_dir`` set, every finished unit is stored there (see
    :func:`multiview_lab.evaluation.cached_call`), keyed by the unit, its training indices, the
    data set's arrays, the method spec and the source of the code it runs: this module and the
    estimator's module with every project module they import
    (:func:`~multiview_lab.evaluation.code_fingerprint`, with the numpy / scipy / scikit-learn
    versions). An interrupted run resumes where it stopped; a change of data or settings
    recomputes the units concerned, and a change of one method's code only that method's.

    Returns
    -------
    results : DataFrame
        One row per unit: keys, ``accuracy``, ``f1``, ``fit_time_s`` and, for PB-MVBoost-like
        models, the PAC-Bayes quantities on the training sample (``train_gibbs_risk``, ...).
    trajectories : DataFrame
        Per-iteration train/test scores and training C-bound for methods with
        ``trajectory: true``.
    models : dict
        Fitted models to log to MLflow (``protocol.log_models``), name -> estimator.
    """
    if not methods:
        raise ValueError("No method registered under pbmvboost.methods.")
    readings = [r for spec in methods.values() for r in (spec.get("readings") or {})]
    clash = sorted({r for r in readings if r in methods or readings.count(r) > 1})
    if clash:
        raise ValueError(f"Reading name(s) {clash} repeat a method or another reading.")
    log_models = protocol.get("log_models", {}) or {}
    cache_dir = protocol.get("cache_dir")
    fingerprints = {}
    if cache_dir:
        code = {
            method: code_fingerprint(
                __name__, resolve_estimator_class(spec["estimator"]).__module__
            )
            for method, spec in methods.items()
        }
        for name in draws["dataset"].unique():
            v = views[name]
            fingerprints[name] = array_fingerprint(
                *v["X_train"], *v["X_test"], v["y_train"], v["y_test"]
            )
        cached = 0
    jobs = []
    for _, d in draws.iterrows():
        data = views[d["dataset"]]
        idx = np.asarray(d["indices"], dtype=int)
        y_train = np.where(data["y_train"][idx] == d["task"], 1, -1)
        y_test = np.where(data["y_test"] == d["task"], 1, -1)
        for method, spec in methods.items():
            unit = {
                "dataset": d["dataset"],
                "method": method,
                "task": int(d["task"]),
                "draw": int(d["draw"]),
                "n_train": int(d["n_train"]),
                "seed": int(d["seed"]),
            }
            keep = (
                method in log_models.get("methods", [])
                and unit["draw"] in log_models.get("draws", [0])
                and unit["n_train"] == log_models.get("n_train", unit["n_train"])
            )
            tie_policy = spec.get("tie_policy", protocol.get("tie_policy", "error"))
            key = None
            if cache_dir:
                key = unit_key(
                    unit, spec, tie_policy, keep, fingerprints[d["dataset"]],
                    array_fingerprint(idx), code[method],
                )  # fmt: skip
                cached += cache_path(cache_dir, key).exists()
            jobs.append(
                delayed(cached_call)(
                    cache_dir if cache_dir else None,
                    key,
                    _fit_and_score,
                    unit,
                    spec,
                    data["X_train"],
                    idx,
                    y_train,
                    data["X_test"],
                    y_test,
                    tie_policy,
                    keep,
                )
            )
    if cache_dir:
        logger.info("%d of %d units already in the cache %s.", cached, len(jobs), cache_dir)
    outputs = run_units(jobs, n_jobs=protocol.get("n_jobs", 1), label="pbmvboost evaluation")
    results = pd.DataFrame([row for o in outputs for row in o["rows"]])
    trajectories = [o["trajectory"] for o in outputs if o["trajectory"] is not None]
    trajectories = (
        pd.concat(trajectories, ignore_index=True)
        if trajectories
        else pd.DataFrame(columns=["dataset", "method", "iteration"])
    )
    models = {
        f"{o['rows'][0]['method']}_{o['rows'][0]['dataset']}_digit{o['rows'][0]['task']}"
        f"_draw{o['rows'][0]['draw']}".replace(" ", "_"): o["model"]
        for o in outputs
        if o["model"] is not None
    }
    return results, trajectories, models


def plot_figure4(trajectories: pd.DataFrame, figure: dict[str, Any]) -> plt.Figure:
    """The paper's Figure 4: train/test accuracy and F1 and the empirical training C-bound
    over the boosting iterations, averaged over the one-vs-all tasks and draws, per data set."""
    method = figure.get("method", "PB-MVBoost")
    data = trajectories[trajectories["method"] == method]
    if data.empty:
        raise ValueError(f"No trajectory recorded for method {method!r}: set trajectory: true.")
    datasets = sorted(data["dataset"].unique())
    fig, axes = plt.subplots(len(datasets), 3, figsize=(13, 3.4 * len(datasets)), squeeze=False)
    mean = data.groupby(["dataset", "iteration"]).mean(numeric_only=True).reset_index()
    for row, name in zip(axes, datasets, strict=True):
        block = mean[mean["dataset"] == name]
        for metric, ax in zip(("accuracy", "f1"), row[:2], strict=True):
            ax.plot(block["iteration"], block[f"train_{metric}"], label="train")
            ax.plot(block["iteration"], block[f"test_{metric}"], label="test")
            ax.set_title(f"{name}: {'accuracy' if metric == 'accuracy' else 'F1'}")
            ax.legend()
        row[2].plot(block["iteration"], block["train_cbound"], color="tab:red")
        row[2].set_title(f"{name}: empirical multiview C-bound (train)")
        for ax in row:
            ax.set_xlabel("iteration t")
            ax.grid(alpha=0.3)
    fig.suptitle(f"{method}: Figure 4 (mean over tasks and draws)")
    fig.tight_layout()
    return fig
