"""Nodes of the ``mvfs`` pipeline (ADMM-MVFS spec §6.2, "project protocol").

Data flow: raw mfeat (six views, ``01_raw``) -> the selected views (``03_primary``) -> seeded
stratified train/test splits (``05_model_input``) -> every selector registered under
``mvfs.selectors`` fitted once per split on the training rows, z-scored with statistics of the
training rows only (``07_model_output``: rankings, ADMM/RFS convergence histories) -> the top-k
features of each ranking evaluated with a linear SVM and 1-NN for every k of the grid (results
table) -> shared reporting (accuracy vs k, training time), the convergence figure and the
objective gap between the ADMM and centralised RFS at the same λ (``08_reporting``).

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

from multiview_lab.evaluation import build_estimator, run_units, stable_seed  # noqa: E402

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


def _selector_spec(spec: dict[str, Any], backend: str, client) -> dict[str, Any]:
    """The method spec with the execution backend injected into selectors that take one."""
    params = dict(spec.get("params") or {})
    if spec.get("distributed", False) and "backend" not in params:
        params["backend"] = backend
        if backend == "dask":
            params["client"] = client
        return {**spec, "params": params}
    return spec


def _fit_selector(unit, spec, Xs_train, y_train) -> dict[str, Any]:
    """Fit one selector on one standardised training split; keep its ranking and history."""
    selector = build_estimator(spec, random_state=unit["seed"])
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
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit every registered selector once per split on the z-scored training rows.

    A selector spec holds ``estimator`` and ``params`` (see
    :func:`multiview_lab.evaluation.build_estimator`); ``distributed: true`` marks the selectors
    that receive ``backend`` (and, for Dask, the node's client) from ``execution``. With
    ``backend: local`` the (split, selector) units run with joblib (``protocol.n_jobs``); with
    ``dask`` they run one after the other on the cluster (no nested parallelism).

    Returns
    -------
    rankings : DataFrame
        One row per (split, method): ``fit_time_s``, ``ranking`` (global feature indices, best
        first), ``lam``, ``n_iter`` and the final ``objective`` (NaN for filters).
    histories : DataFrame
        Per-iteration ``objective, primal_residual, dual_residual, rho, time`` of the iterative
        selectors (RFS has objective and time only).
    """
    if not selectors:
        raise ValueError("No selector registered under mvfs.selectors.")
    backend, address = _check_execution(execution)
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
                jobs.append(
                    delayed(_fit_selector)(
                        unit, _selector_spec(spec, backend, client), Xs_train, y_train
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


def _score_ranking(unit, ranking, ks, classifiers, X_train, y_train, X_test, y_test):
    """Accuracy of every classifier on the top-k features of one ranking, for every k."""
    rows = []
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
    k (a flat reference line).

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
                    unit, ranking, unit_ks, classifiers, X_train, y_train, X_test, y_test
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
        top_k_overlap``.
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
