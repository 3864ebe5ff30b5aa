"""Nodes of the ``mvfs`` pipeline (ADMM-MVFS spec §6.2, "project protocol").

Data flow: raw mfeat (six views, ``01_raw``) -> the selected views (``03_primary``) -> seeded
stratified train/test splits (``05_model_input``) -> λ chosen per split by inner stratified CV on
the training rows (``mvfs.lam_cv``; table of inner-CV scores, chosen λ, sensitivity figure) ->
every selector registered under ``mvfs.selectors`` fitted once per split on the training rows,
z-scored with statistics of the training rows only, the selectors flagged ``lam_cv: true`` (the
ADMM and RFS) with the split's chosen λ (``07_model_output``: rankings, ADMM/RFS convergence
histories) -> the top-k features of each ranking evaluated with a linear SVM and 1-NN for every k
of the grid (results table) -> shared reporting (accuracy vs k, training time), the convergence
figure and the objective gap between the ADMM and centralised RFS at the same λ
(``08_reporting``).

The ADMM's execution backend comes from ``mvfs.execution`` (``backend: local | dask``,
``scheduler_address``): with ``dask`` one ``distributed.Client`` serves the whole node (a
127.0.0.1 ``LocalCluster`` when the address is empty) and is closed when the node ends.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import delayed  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from multiview_lab.evaluation import build_estimator, run_units, stable_seed  # noqa: E402
from multiview_lab.mvfs import cross_validate_lam, lam_max  # noqa: E402

logger = logging.getLogger(__name__)

BACKENDS = ("local", "dask")
CLASSIFIERS = ("linear_svm", "1nn")
HISTORY_KEYS = ("objective", "primal_residual", "dual_residual", "rho", "time")


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
        ``{"X": [view arrays], "y": labels, "names": view names}`` (raw, unscaled features).
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
    return {"X": Xs, "y": y, "names": np.array(names)}


def make_splits(views: dict[str, Any], protocol: dict[str, Any]) -> pd.DataFrame:
    """Seeded stratified train/test splits (spec §6.2: 50/50, seeds 0..9).

    Split ``s`` uses seed ``protocol.seed + s`` so that any split can be reproduced alone.

    Returns
    -------
    DataFrame
        Columns ``split, seed, train_idx, test_idx`` (sorted row indices).
    """
    y = np.asarray(views["y"])
    n_splits = int(protocol.get("n_splits", 10))
    test_size = float(protocol.get("test_size", 0.5))
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1; got {n_splits}.")
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in (0, 1); got {test_size}.")
    rows = []
    for split in range(n_splits):
        seed = int(protocol.get("seed", 0)) + split
        train, test = train_test_split(
            np.arange(y.shape[0]), test_size=test_size, stratify=y, random_state=seed
        )
        rows.append(
            {"split": split, "seed": seed, "train_idx": np.sort(train), "test_idx": np.sort(test)}
        )
    return pd.DataFrame(rows)


def standardise_split(Xs, train_idx, test_idx) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Z-score every view with the mean and (ML) standard deviation of the training rows only.

    Constant training columns get scale 1 (they stay constant, hence carry no information).
    Returns the standardised training and test views.
    """
    train, test = [], []
    for X in Xs:
        X_train = X[train_idx]
        loc = X_train.mean(axis=0)
        scale = X_train.std(axis=0)
        scale[scale == 0] = 1.0
        train.append((X_train - loc) / scale)
        test.append((X[test_idx] - loc) / scale)
    return train, test


# -- λ by inner cross-validation ----------------------------------------------------------------
LAM_CV_COLUMNS = ["split", "lam", "fold", "score", "lam_max", "null_model", "fit_time_s", "chosen"]
LAM_CHOSEN_COLUMNS = ["split", "lam", "lam_max", "lam_frac", "score_mean", "score_std"]


def _lam_cv_enabled(lam_cv: dict[str, Any] | None) -> bool:
    return bool(lam_cv) and bool(lam_cv.get("enabled", True))


def select_lam(
    views: dict[str, Any],
    splits: pd.DataFrame,
    selectors: dict[str, dict[str, Any]],
    lam_cv: dict[str, Any] | None,
    protocol: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """λ by inner stratified cross-validation on the training rows of every split (spec §6.2).

    Calls :func:`multiview_lab.mvfs.cross_validate_lam` once per split on the views z-scored with
    the split's training statistics. ``lam_cv`` holds:

    * ``enabled`` (default true; false or a null section: nothing is run, the selectors keep the
      ``lam`` / ``lam_frac`` of their params and the outputs are empty);
    * ``fit_with``: the name of the selector (an entry of ``mvfs.selectors``, fitted with its
      params updated by ``lam_cv.params``, always in-process) fitted on the inner folds;
    * ``grid`` (λ values), ``folds`` (stratified, shuffled with the split's seed);
    * ``k`` (int or list; null: ``protocol.k_grid``) and ``classifiers`` (same format as
      ``protocol.classifiers``; null: those of the protocol): the criterion is the held-out
      accuracy averaged over the classifiers and k, then over the folds; ties go to the largest λ.

    The selectors flagged ``lam_cv: true`` in ``mvfs.selectors`` are then fitted with the split's
    chosen λ by :func:`fit_selectors`.

    Returns
    -------
    table : DataFrame
        One row per (split, λ, fold): ``split, lam, fold, score, score_<classifier>..., lam_max,
        null_model, fit_time_s, chosen`` (``lam_max`` of the fold's training part; ``null_model``:
        λ ≥ λ_max, not fitted, majority-class score).
    chosen : DataFrame
        One row per split: ``split, lam, lam_max, lam_frac, score_mean, score_std`` (``lam_max``
        of the whole training split, the one the final fits see; ``lam_frac = lam / lam_max``).
    metrics : dict
        ``lam_cv/split<s>/lam``, ``.../lam_frac`` and ``.../score`` for MLflow.
    """
    if not _lam_cv_enabled(lam_cv):
        logger.info("mvfs.lam_cv disabled: λ from the selectors' lam / lam_frac.")
        return pd.DataFrame(columns=LAM_CV_COLUMNS), pd.DataFrame(columns=LAM_CHOSEN_COLUMNS), {}
    name = lam_cv.get("fit_with", "RFS")
    if name not in selectors:
        raise ValueError(
            f"mvfs.lam_cv.fit_with must name a selector of mvfs.selectors; got {name!r}, "
            f"registered: {sorted(selectors)}."
        )
    spec = selectors[name]
    fit_spec = {
        "estimator": spec["estimator"],
        "params": {**(spec.get("params") or {}), **(lam_cv.get("params") or {})},
    }
    classifiers = lam_cv.get("classifiers") or protocol.get("classifiers") or {}
    unknown = sorted(set(classifiers) - set(CLASSIFIERS))
    if not classifiers or unknown:
        raise ValueError(
            f"mvfs.lam_cv.classifiers must name some of {list(CLASSIFIERS)}; "
            f"got {list(classifiers)}."
        )
    ks = lam_cv.get("k") or protocol["k_grid"]
    Xs, y = views["X"], np.asarray(views["y"])
    tables, chosen, metrics = [], [], {}
    for _, split in splits.iterrows():
        s = int(split["split"])
        Xs_train, _ = standardise_split(Xs, split["train_idx"], split["test_idx"])
        y_train = y[split["train_idx"]]
        seed = stable_seed("mvfs-lam-cv", s)
        with threadpool_limits(limits=protocol.get("blas_threads")):  # in-process (n_jobs=1)
            result = cross_validate_lam(
                build_estimator(fit_spec, random_state=seed),
                Xs_train,
                y_train,
                lam_cv.get("grid"),
                classifier=[_classifier(c, cspec or {}, seed) for c, cspec in classifiers.items()],
                k=ks,
                n_folds=int(lam_cv.get("folds", 5)),
                random_state=int(split["seed"]),
                n_jobs=int(protocol.get("n_jobs", 1)),
            )
        table = result.to_frame(list(classifiers))
        table.insert(0, "split", s)
        tables.append(table)
        lam_max_train = lam_max(Xs_train, y_train, fit_spec["params"].get("standardize", "zscore"))
        best = result.best_index
        row = {
            "split": s,
            "lam": result.best_lam,
            "lam_max": lam_max_train,
            "lam_frac": result.best_lam / lam_max_train,
            "score_mean": float(result.mean_scores[best]),
            "score_std": float(result.std_scores[best]),
        }
        chosen.append(row)
        for key in ("lam", "lam_frac"):
            metrics[f"lam_cv/split{s}/{key}"] = float(row[key])
        metrics[f"lam_cv/split{s}/score"] = row["score_mean"]
        logger.info("Split %d: λ = %.4g (%.3g λ_max) by inner CV.", s, row["lam"], row["lam_frac"])
    return pd.concat(tables, ignore_index=True), pd.DataFrame(chosen), metrics


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
        ax.set_xlabel("λ")
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
            f"λ ≥ λ_max: W = 0, majority class {null['score'].mean():.3f}",
            xy=(0.98, 0.03),
            xycoords="axes fraction",
            ha="right",
            fontsize="small",
        )
    axes[0][0].set_ylabel("inner-CV accuracy")
    axes[0][-1].legend(fontsize="small", loc="lower center")
    fig.suptitle("λ sensitivity on mfeat (inner CV; ★ chosen, ⋮ λ_max of the folds)")
    fig.tight_layout()
    return fig


# -- selection ----------------------------------------------------------------------------------
def _check_execution(execution: dict[str, Any]) -> tuple[str, str]:
    backend = execution.get("backend", "local")
    if backend not in BACKENDS:
        raise ValueError(
            f"mvfs.execution.backend must be one of {list(BACKENDS)}; got {backend!r}."
        )
    return backend, str(execution.get("scheduler_address") or "")


@contextlib.contextmanager
def dask_client(scheduler_address: str = "", n_workers: int = 2):
    """One ``distributed.Client`` for a whole node, closed on exit.

    An empty address starts a ``LocalCluster`` bound to 127.0.0.1 with the dashboard off
    (``n_workers`` single-threaded worker processes), closed with the client.
    """
    from distributed import Client, LocalCluster

    cluster = None
    if scheduler_address:
        client = Client(scheduler_address)
    else:
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _selector_spec(spec: dict[str, Any], backend: str, client, lam: float | None = None):
    """The method spec with the execution backend injected into selectors that take one and,
    when ``lam`` is given, ``lam = lam, lam_frac = None`` (the λ chosen by the inner CV)."""
    params = dict(spec.get("params") or {})
    if spec.get("distributed", False) and "backend" not in params:
        params["backend"] = backend
        if backend == "dask":
            params["client"] = client
    if lam is not None:
        params.update(lam=float(lam), lam_frac=None)
    return {**spec, "params": params}


def _split_lams(lam_chosen: pd.DataFrame | None, splits: pd.DataFrame) -> dict[int, float]:
    """Split -> λ chosen by the inner CV ({} when the CV is disabled)."""
    if lam_chosen is None or lam_chosen.empty:
        return {}
    lams = {
        int(s): float(lam) for s, lam in zip(lam_chosen["split"], lam_chosen["lam"], strict=True)
    }
    missing = sorted(set(map(int, splits["split"])) - set(lams))
    if missing:
        raise ValueError(f"No λ chosen by the inner CV for split(s) {missing}.")
    return lams


def _fit_selector(unit, spec, Xs_train, y_train, blas_threads=None) -> dict[str, Any]:
    """Fit one selector on one standardised training split; keep its ranking and history."""
    selector = build_estimator(spec, random_state=unit["seed"])
    with threadpool_limits(limits=blas_threads):
        start = time.perf_counter()
        selector.fit(Xs_train, y_train)
        fit_time = time.perf_counter() - start
    history = getattr(selector, "history_", None)
    row = {
        **unit,
        "fit_time_s": fit_time,
        "ranking": np.asarray(selector.ranking_, dtype=np.int64),
        "lam": float(getattr(selector, "lam_", np.nan)),
        "n_iter": int(getattr(selector, "n_iter_", 0)),
        "stop_reason": str(getattr(selector, "stop_reason_", "")),
        "objective": float(history["objective"][-1]) if history else np.nan,
    }
    frame = None
    if history:
        frame = pd.DataFrame(
            {key: np.asarray(history[key], dtype=float) for key in HISTORY_KEYS if key in history}
        )
        frame.insert(0, "iteration", np.arange(1, len(frame) + 1))
        frame.insert(0, "method", unit["method"])
        frame.insert(0, "split", unit["split"])
    return {"row": row, "history": frame}


def fit_selectors(
    views: dict[str, Any],
    splits: pd.DataFrame,
    selectors: dict[str, dict[str, Any]],
    execution: dict[str, Any],
    protocol: dict[str, Any],
    lam_chosen: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit every registered selector once per split on the z-scored training rows.

    A selector spec holds ``estimator`` and ``params`` (see
    :func:`multiview_lab.evaluation.build_estimator`); ``distributed: true`` marks the selectors
    that receive ``backend`` (and, for Dask, the node's client) from ``execution``; ``lam_cv:
    true`` marks those that receive the split's λ of ``lam_chosen`` (from :func:`select_lam`;
    ``lam = λ, lam_frac = None``), so that the ADMM and RFS minimise the same objective. With no
    chosen λ (CV disabled) they keep the ``lam`` / ``lam_frac`` of their params. With
    ``backend: local`` the (split, selector) units run with joblib (``protocol.n_jobs``); with
    ``dask`` they run one after the other on the cluster (no nested parallelism). Each in-process
    fit is limited to ``protocol.blas_threads`` BLAS threads (null: no limit).

    Returns
    -------
    rankings : DataFrame
        One row per (split, method): ``fit_time_s``, ``ranking`` (global feature indices, best
        first), ``lam``, ``n_iter``, ``stop_reason`` (the ADMM's, else "") and the final
        ``objective`` (NaN for filters).
    histories : DataFrame
        Per-iteration ``objective, primal_residual, dual_residual, rho, time`` of the iterative
        selectors (RFS has objective and time only).
    """
    if not selectors:
        raise ValueError("No selector registered under mvfs.selectors.")
    backend, address = _check_execution(execution)
    lams = _split_lams(lam_chosen, splits)
    Xs, y = views["X"], np.asarray(views["y"])
    with contextlib.ExitStack() as stack:
        client = None
        n_jobs = int(protocol.get("n_jobs", 1))
        if backend == "dask" and any(s.get("distributed") for s in selectors.values()):
            client = stack.enter_context(
                dask_client(address, n_workers=int(execution.get("n_workers", 2)))
            )
            n_jobs = 1  # the cluster parallelises inside each fit
        jobs = []
        for _, split in splits.iterrows():
            Xs_train, _ = standardise_split(Xs, split["train_idx"], split["test_idx"])
            y_train = y[split["train_idx"]]
            for method, spec in selectors.items():
                unit = {
                    "dataset": "mfeat",
                    "method": method,
                    "split": int(split["split"]),
                    "seed": stable_seed("mvfs", method, int(split["split"])),
                }
                lam = lams.get(unit["split"]) if spec.get("lam_cv", False) else None
                jobs.append(
                    delayed(_fit_selector)(
                        unit,
                        _selector_spec(spec, backend, client, lam),
                        Xs_train,
                        y_train,
                        protocol.get("blas_threads"),
                    )
                )
        outputs = run_units(jobs, n_jobs=n_jobs, label=f"mvfs selectors ({backend})")
    rankings = pd.DataFrame([o["row"] for o in outputs])
    frames = [o["history"] for o in outputs if o["history"] is not None]
    histories = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["split", "method", "iteration", *HISTORY_KEYS])
    )
    return rankings, histories


# -- evaluation ---------------------------------------------------------------------------------
def _classifier(name: str, spec: dict[str, Any], seed: int):
    if name == "linear_svm":
        Cs = list(spec.get("Cs", [1.0]))
        svm = LinearSVC(C=Cs[0], max_iter=int(spec.get("max_iter", 5000)), random_state=seed)
        if len(Cs) == 1:
            return svm
        return GridSearchCV(svm, {"C": Cs}, cv=int(spec.get("cv", 5)))
    if name == "1nn":
        return KNeighborsClassifier(n_neighbors=1)
    raise ValueError(f"Unknown classifier {name!r}; choose from {list(CLASSIFIERS)}.")


def _score_ranking(
    unit, ranking, ks, classifiers, X_train, y_train, X_test, y_test, blas_threads=None
):
    """Accuracy of every classifier on the top-k features of one ranking, for every k."""
    rows = []
    with threadpool_limits(limits=blas_threads):
        for k in ks:
            cols = ranking[:k]
            for name, spec in classifiers.items():
                model = _classifier(name, spec or {}, unit["seed"])
                model.fit(X_train[:, cols], y_train)
                accuracy = float(np.mean(model.predict(X_test[:, cols]) == y_test))
                rows.append({**unit, "k": int(k), "classifier": name, "accuracy": accuracy})
    return rows


def evaluate_selections(
    views: dict[str, Any],
    splits: pd.DataFrame,
    rankings: pd.DataFrame,
    protocol: dict[str, Any],
) -> pd.DataFrame:
    """Accuracy of the top-k features of every ranking, for every k, with each classifier.

    The features are the views z-scored on the training rows of the split, concatenated; the
    top-k columns are taken in ranking order. ``protocol.all_features`` (a method name, or null)
    adds the all-features baseline, evaluated once per split and classifier and repeated at every
    k (a flat reference line). Units run with ``protocol.n_jobs`` joblib workers and
    ``protocol.blas_threads`` BLAS threads each.

    Returns
    -------
    DataFrame
        The results table: ``dataset, split, method, k, classifier, accuracy, fit_time_s``
        (``fit_time_s`` is the selector's training time; 0 for all features).
    """
    ks = sorted(int(k) for k in protocol["k_grid"])
    classifiers = protocol.get("classifiers") or {}
    unknown = sorted(set(classifiers) - set(CLASSIFIERS))
    if not classifiers or unknown:
        raise ValueError(
            f"protocol.classifiers must name some of {list(CLASSIFIERS)}; got {list(classifiers)}."
        )
    Xs, y = views["X"], np.asarray(views["y"])
    d = sum(X.shape[1] for X in Xs)
    if ks[0] < 1 or ks[-1] > d:
        raise ValueError(f"k_grid must lie in [1, {d}]; got {ks}.")
    all_name = protocol.get("all_features")
    jobs = []
    for _, split in splits.iterrows():
        Xs_train, Xs_test = standardise_split(Xs, split["train_idx"], split["test_idx"])
        X_train, X_test = np.hstack(Xs_train), np.hstack(Xs_test)
        y_train, y_test = y[split["train_idx"]], y[split["test_idx"]]
        block = rankings[rankings["split"] == split["split"]]
        units = [
            (r["method"], np.asarray(r["ranking"], dtype=int), ks, r["fit_time_s"])
            for _, r in block.iterrows()
        ]
        if all_name:
            units.append((all_name, np.arange(d), [d], 0.0))
        for method, ranking, unit_ks, fit_time in units:
            unit = {
                "dataset": "mfeat",
                "split": int(split["split"]),
                "method": method,
                "seed": stable_seed("mvfs-eval", int(split["split"])),
                "fit_time_s": float(fit_time),
            }
            jobs.append(
                delayed(_score_ranking)(
                    unit,
                    ranking,
                    unit_ks,
                    classifiers,
                    X_train,
                    y_train,
                    X_test,
                    y_test,
                    protocol.get("blas_threads"),
                )
            )
    outputs = run_units(jobs, n_jobs=int(protocol.get("n_jobs", 1)), label="mvfs evaluation")
    results = pd.DataFrame([row for rows in outputs for row in rows])
    if all_name:  # the all-features score, repeated at every k of the grid
        full = results[results["method"] == all_name]
        repeated = pd.concat([full.assign(k=k) for k in ks], ignore_index=True)
        results = pd.concat([results[results["method"] != all_name], repeated], ignore_index=True)
    columns = ["dataset", "split", "method", "k", "classifier", "accuracy", "fit_time_s"]
    return results[columns].sort_values(["split", "method", "classifier", "k"], ignore_index=True)


# -- ADMM vs RFS --------------------------------------------------------------------------------
def objective_gap(
    rankings: pd.DataFrame, gap: dict[str, Any]
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Relative objective gap of the ADMM to centralised RFS at the same λ, per split.

    ``gap.method`` and ``gap.reference`` name the two selectors; ``gap.top_k`` the size of the
    top-k sets compared. Both minimise the same objective (spec (A1) = RFS on the concatenated
    views), so ``(J_admm − J_rfs) / J_rfs`` measures only stopping precision.

    Returns
    -------
    table : DataFrame
        ``split, lam, J_method, J_reference, rel_gap, n_iter_method, n_iter_reference,
        stop_reason_method, top_k_overlap`` (a negative ``rel_gap``: the method ended below the
        reference, i.e. within the reference's own stopping precision).
    metrics : dict
        ``objective_gap/rel_gap_mean``, ``..._max`` and ``objective_gap/top_k_overlap_mean``.
    """
    method, reference = gap["method"], gap["reference"]
    top_k = int(gap.get("top_k", 10))
    a = rankings[rankings["method"] == method].set_index("split")
    b = rankings[rankings["method"] == reference].set_index("split")
    if a.empty or b.empty:
        raise ValueError(
            f"objective gap needs selectors {method!r} and {reference!r}; "
            f"fitted: {sorted(rankings['method'].unique())}."
        )
    rows = []
    for split in a.index.intersection(b.index):
        lam_a, lam_b = a.at[split, "lam"], b.at[split, "lam"]
        if not np.isclose(lam_a, lam_b, rtol=1e-9):
            raise ValueError(
                f"Split {split}: {method} used λ={lam_a:.6g} but {reference} λ={lam_b:.6g}; "
                "give both the same lam or lam_frac."
            )
        J_a, J_b = a.at[split, "objective"], b.at[split, "objective"]
        overlap = np.intersect1d(a.at[split, "ranking"][:top_k], b.at[split, "ranking"][:top_k])
        rows.append(
            {
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
                "top_k_overlap": int(overlap.size),
            }
        )
    table = pd.DataFrame(rows)
    metrics = {
        "objective_gap/rel_gap_mean": float(table["rel_gap"].mean()),
        "objective_gap/rel_gap_max": float(table["rel_gap"].max()),
        f"objective_gap/top{top_k}_overlap_mean": float(table["top_k_overlap"].mean()),
    }
    logger.info("ADMM vs RFS: %s", metrics)
    return table, metrics


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
