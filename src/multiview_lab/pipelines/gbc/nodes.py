"""Nodes of the ``gbc`` pipeline (Gradient Boosting Consensus, Shi et al. SDM 2012; spec §5).

Data flow: raw mfeat / terrorist files -> vector sources (``03_primary``) and graphs as edge lists
(``04_feature``: the mfeat kNN graph on ``mor`` and its noisy copy, the two terrorist graphs) ->
seeded stratified splits in both settings, uniform and non-overlapping (``05_model_input``) ->
every method registered under ``gbc.methods`` (GBC, its ablations, the joined-feature baselines)
on every (dataset, setting, train_pct, split) unit, scored transductively on the instances
outside the training part (``07_model_output``) -> shared reporting, weight trajectories and
the number-of-sources study (Table 4 analogue) (``08_reporting``).

A method spec holds either ``estimator`` + ``params`` (an estimator of
:mod:`multiview_lab.estimators` with ``fit(sources, graphs, y, labeled_mask)`` and
``predict_transductive()``, i.e. a GBC variant) or ``baseline`` (a name of
:data:`multiview_lab.gbc.baselines.BASELINES`) + ``param_grid`` / ``cv`` / ``threshold`` /
``max_iter``. Optional keys: ``tune`` (GBC: a grid of parameters chosen by stratified k-fold CV
on the training part, ``{grid: {lambda0: [...], ...}, folds: 3}``) and ``trajectory: true``
(record the source and graph weights over the iterations).
"""

from __future__ import annotations

import itertools
import logging
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import delayed  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from multiview_lab.evaluation import build_estimator, run_units, stable_seed  # noqa: E402
from multiview_lab.gbc.baselines import BASELINES, fit_baseline, joined_features  # noqa: E402
from multiview_lab.gbc.graphs import (  # noqa: E402
    calibrate_graph_noise,
    edges_to_adjacency,
    knn_similarity_graph,
    n_undirected_edges,
    same_label_edge_fraction,
)
from multiview_lab.gbc.settings import (  # noqa: E402
    SETTINGS,
    build_sources,
    make_instance_sets,
    noisy_copy,
)

logger = logging.getLogger(__name__)

UNIT_KEYS = ["dataset", "setting", "train_pct", "split"]


# ----------------------------------------------------------------------------------- data
def _keep_rows(n: int, every: int | None) -> np.ndarray:
    """Rows kept when ``every`` = k > 1 (every k-th instance; smoke runs), else all rows."""
    every = 1 if every is None else int(every)
    if every < 1:
        raise ValueError(f"every must be a positive integer; got {every}.")
    return np.arange(0, n, every)


def prepare_mfeat(mfeat_raw: tuple[dict, np.ndarray], config: dict[str, Any]) -> dict[str, Any]:
    """The digits' vector sources (spec §5.2): ``fou, fac, kar, pix, zer`` by default.

    Parameters
    ----------
    mfeat_raw : (views, y)
        Output of :func:`multiview_lab.data.mfeat.load_mfeat`.
    config : dict
        ``sources`` (view names, in order) and optionally ``every`` (keep every k-th digit).

    Returns
    -------
    dict
        ``sources`` (list of float arrays, row r = instance r), ``source_names``, ``y``.
    """
    views, y = mfeat_raw
    names = list(config["sources"])
    unknown = [v for v in names if v not in views]
    if not names or unknown:
        raise ValueError(f"mfeat sources {unknown or names} must be among {sorted(views)}.")
    rows = _keep_rows(y.shape[0], config.get("every"))
    return {
        "sources": [np.asarray(views[v], dtype=np.float64)[rows] for v in names],
        "source_names": np.array(names),
        "y": np.asarray(y)[rows],
    }


def build_mfeat_graphs(
    mfeat_raw: tuple[dict, np.ndarray], config: dict[str, Any]
) -> dict[str, Any]:
    """Graph (6) and its noisy copy (7) from the morphological view (spec §5.2).

    The clean graph is the k-nearest-neighbour graph of Gaussian similarities on the standardised
    ``graph_view`` features; the noisy one adds N(0, σ_n²) noise to the similarities first, with
    σ_n = ``graph_noise`` or, for ``"auto"``, calibrated so that ≈ ``noise_target`` of its edges
    link same-label digits.

    Returns
    -------
    dict
        ``names`` ([``mor``, ``mor_noisy``]), ``edges`` (one (m, 2) array per graph, each
        undirected edge once), ``n_instances`` and ``noise`` (σ_n used).
    """
    views, y = mfeat_raw
    view = config.get("graph_view", "mor")
    if view not in views:
        raise ValueError(f"graph_view {view!r} is not an mfeat view; have {sorted(views)}.")
    rows = _keep_rows(y.shape[0], config.get("every"))
    features, labels = np.asarray(views[view])[rows], np.asarray(y)[rows]
    k, seed = int(config.get("graph_k", 10)), int(config.get("graph_seed", 0))
    noise = config.get("graph_noise", "auto")
    if noise == "auto":
        noise, _ = calibrate_graph_noise(
            features,
            labels,
            k=k,
            target=float(config.get("noise_target", 0.5)),
            random_state=seed,
            n_steps=int(config.get("noise_steps", 10)),
        )
    elif not (isinstance(noise, int | float) and noise >= 0):
        raise ValueError(f"graph_noise must be 'auto' or a number >= 0; got {noise!r}.")
    graphs = [
        knn_similarity_graph(features, k=k),
        knn_similarity_graph(features, k=k, noise=float(noise), random_state=seed),
    ]
    logger.info("mfeat graphs: k=%d, noise sigma_n=%.4g.", k, noise)
    return {
        "names": np.array([view, f"{view}_noisy"]),
        "edges": [_upper_edges(G) for G in graphs],
        "n_instances": np.int64(labels.shape[0]),
        "noise": np.float64(noise),
    }


def _upper_edges(G) -> np.ndarray:
    """(m, 2) array of the undirected edges of a symmetric adjacency, each once (a < b)."""
    upper = G.tocoo()
    keep = upper.row < upper.col
    return np.column_stack([upper.row[keep], upper.col[keep]]).astype(np.int64)


def prepare_terrorist(terrorist_raw: tuple, config: dict[str, Any]) -> dict[str, Any]:
    """The terrorist attacks' two vector sources: the 106 binary features and a noisy copy.

    ``noise_sigma`` (σ = 1, spec §5.2) and ``noise_seed`` define the copy; ``every`` keeps every
    k-th attack (smoke runs).
    """
    X, y, _classes, _edges, _ids = terrorist_raw
    rows = _keep_rows(y.shape[0], config.get("every"))
    X = np.asarray(X, dtype=np.float64)[rows]
    noisy = noisy_copy(
        X, sigma=float(config.get("noise_sigma", 1.0)), random_state=config.get("noise_seed", 0)
    )
    return {
        "sources": [X, noisy],
        "source_names": np.array(["features", "features_noisy"]),
        "y": np.asarray(y)[rows],
    }


def load_terrorist_graph_edges(terrorist_raw: tuple, config: dict[str, Any]) -> dict[str, Any]:
    """The terrorist graphs ``loc`` (same location) and ``loc_org`` (stand-in for "same
    organisation", spec §5.2) from their edge files, restricted to the kept attacks."""
    X, _y, _classes, edges, _ids = terrorist_raw
    n = X.shape[0]
    rows = _keep_rows(n, config.get("every"))
    new_index = np.full(n, -1, dtype=np.int64)
    new_index[rows] = np.arange(rows.shape[0])
    names = list(config.get("graphs", ["loc", "loc_org"]))
    unknown = [g for g in names if g not in edges]
    if not names or unknown:
        raise ValueError(f"terrorist graphs {unknown or names} must be among {sorted(edges)}.")
    out = []
    for g in names:
        pairs = new_index[np.asarray(edges[g], dtype=np.int64)]
        pairs = pairs[(pairs >= 0).all(axis=1)]
        out.append(_upper_edges(edges_to_adjacency(pairs, rows.shape[0])))
    return {
        "names": np.array(names),
        "edges": out,
        "n_instances": np.int64(rows.shape[0]),
        "noise": np.float64(0.0),
    }


def _adjacencies(graphs: dict[str, Any]) -> list:
    n = int(graphs["n_instances"])
    return [edges_to_adjacency(e, n) for e in graphs["edges"]]


def collect_datasets(
    mfeat_data: dict, mfeat_graphs: dict, terrorist_data: dict, terrorist_graphs: dict
) -> dict[str, dict[str, Any]]:
    """One mapping name -> {sources, source_names, y, graph_names, graphs (sparse)}."""
    out = {}
    for name, data, graphs in (
        ("mfeat", mfeat_data, mfeat_graphs),
        ("terrorist", terrorist_data, terrorist_graphs),
    ):
        n = np.asarray(data["y"]).shape[0]
        if int(graphs["n_instances"]) != n:
            raise ValueError(
                f"{name}: graphs are over {int(graphs['n_instances'])} instances but the "
                f"sources hold {n}."
            )
        out[name] = {
            "sources": list(data["sources"]),
            "source_names": [str(s) for s in data["source_names"]],
            "y": np.asarray(data["y"]),
            "graph_names": [str(g) for g in graphs["names"]],
            "graphs": _adjacencies(graphs),
        }
    return out


def graph_statistics(datasets: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Per graph: undirected edges, isolated nodes and the fraction of same-label edges."""
    rows = []
    for name, d in datasets.items():
        for g, G in zip(d["graph_names"], d["graphs"], strict=True):
            degree = np.asarray(G.sum(axis=1)).ravel()
            rows.append(
                {
                    "dataset": name,
                    "graph": g,
                    "n_instances": G.shape[0],
                    "n_edges": n_undirected_edges(G),
                    "isolated_nodes": int((degree == 0).sum()),
                    "same_label_fraction": same_label_edge_fraction(G, d["y"]),
                }
            )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------- splits
def stratified_train_indices(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Sorted training indices: ``round(fraction·n_c)`` per class, at least 1 and at most
    n_c − 1 (every class is seen in training and keeps a test instance when it has two)."""
    if not 0 < fraction < 1:
        raise ValueError(f"training fraction must lie in (0, 1); got {fraction}.")
    rng = np.random.default_rng(seed)
    out = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        k = int(np.clip(round(fraction * members.size), 1, max(members.size - 1, 1)))
        out.append(rng.choice(members, size=k, replace=False))
    return np.sort(np.concatenate(out))


def absent_entries(
    n: int,
    p: int,
    setting: str,
    missing_fraction: float,
    missing_mode: str,
    seed: int,
) -> np.ndarray:
    """Flat indices ``r·p + i`` of (instance r, source i) records deleted by the setting.

    Non-overlapping: ``missing_fraction`` of the instances lose ⌊p/2⌋ sources (spec §5.2,
    via :func:`multiview_lab.gbc.settings.make_instance_sets`); uniform: none.
    """
    sets = make_instance_sets(
        n,
        p,
        setting,
        missing_fraction=missing_fraction,
        missing_mode=missing_mode,
        random_state=seed,
    )
    present = np.zeros((n, p), dtype=bool)
    for i, s in enumerate(sets):
        present[s, i] = True
    return np.flatnonzero(~present.ravel()).astype(np.int64)


def make_splits(datasets: dict[str, dict[str, Any]], protocol: dict[str, Any]) -> pd.DataFrame:
    """Seeded units (dataset, setting, train_pct, split): training indices and deleted records.

    The training part of (dataset, train_pct, split) and the deleted records of (dataset, split)
    do not depend on the setting, so the two settings differ only by the deleted records.

    Returns
    -------
    DataFrame
        ``dataset, setting, train_pct, split, seed, train_indices, absent`` (see
        :func:`absent_entries`).
    """
    settings = list(protocol["settings"])
    bad = [s for s in settings if s not in SETTINGS]
    if bad:
        raise ValueError(f"settings {bad} are not among {SETTINGS}.")
    pcts = [int(p) for p in protocol["train_pcts"]]
    if not pcts or any(not 0 < p < 100 for p in pcts):
        raise ValueError(f"train_pcts must be percentages in (0, 100); got {pcts}.")
    n_splits, base = int(protocol["n_splits"]), int(protocol.get("seed", 0))
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1; got {n_splits}.")
    rows = []
    for name in protocol["datasets"]:
        if name not in datasets:
            raise ValueError(f"Unknown dataset {name!r}; built: {sorted(datasets)}.")
        y = datasets[name]["y"]
        n, p = y.shape[0], len(datasets[name]["sources"])
        for split in range(n_splits):
            miss_seed = stable_seed(name, "missing", split, base=base)
            for setting in settings:
                absent = absent_entries(
                    n,
                    p,
                    setting,
                    float(protocol.get("missing_fraction", 0.3)),
                    protocol.get("missing_mode", "per_instance"),
                    miss_seed,
                )
                for pct in pcts:
                    seed = stable_seed(name, pct, split, base=base)
                    rows.append(
                        {
                            "dataset": name,
                            "setting": setting,
                            "train_pct": pct,
                            "split": split,
                            "seed": seed,
                            "train_indices": stratified_train_indices(y, pct / 100, seed),
                            "absent": absent,
                        }
                    )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------- evaluation
def _unit_sources(data: dict[str, Any], absent: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    n, p = data["y"].shape[0], len(data["sources"])
    present = np.ones(n * p, dtype=bool)
    present[np.asarray(absent, dtype=np.int64)] = False
    present = present.reshape(n, p)
    return build_sources(data["sources"], [np.flatnonzero(present[:, i]) for i in range(p)])


def _method_kind(name: str, spec: dict[str, Any]) -> str:
    if ("estimator" in spec) == ("baseline" in spec):
        raise ValueError(
            f"method {name!r} needs exactly one of 'estimator' (a GBC-like estimator) or "
            f"'baseline' (one of {BASELINES}); got keys {sorted(spec)}."
        )
    if "baseline" in spec and spec["baseline"] not in BASELINES:
        raise ValueError(f"method {name!r}: baseline {spec['baseline']!r} not in {BASELINES}.")
    return "estimator" if "estimator" in spec else "baseline"


def _tune_grid(spec: dict[str, Any]) -> list[dict[str, Any]]:
    grid = (spec.get("tune") or {}).get("grid") or {}
    keys = sorted(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*grid.values())]


def _select_by_cv(spec, sources, graphs, y, labeled, seed) -> tuple[dict[str, Any], float]:
    """Grid point of ``spec.tune`` with the lowest k-fold CV error on the training part.

    Each fold's labels are hidden (the instances stay in the fit, unlabelled, as the test part
    does) and scored transductively. Ties keep the first grid point (grid order).
    """
    tune = spec["tune"]
    grid = _tune_grid(spec)
    train = np.flatnonzero(labeled)
    folds = StratifiedKFold(int(tune.get("folds", 3)), shuffle=True, random_state=seed)
    splits = list(folds.split(train, y[train]))
    best, best_err = None, np.inf
    for point in grid:
        errs = []
        for _, hold in splits:
            mask = labeled.copy()
            mask[train[hold]] = False
            params = {**(spec.get("params") or {}), **point}
            model = build_estimator({**spec, "params": params}, random_state=seed)
            model.fit(sources, graphs, y, mask)
            errs.append(np.mean(model.predict_transductive()[train[hold]] != y[train[hold]]))
        err = float(np.mean(errs))
        if err < best_err - 1e-12:
            best, best_err = point, err
    return best, best_err


def _mean_history(histories) -> np.ndarray:
    """Average weight histories of one-vs-rest models; shorter ones (early stopping) are
    held at their last value."""
    if isinstance(histories, np.ndarray):
        return histories
    length = max(h.shape[0] for h in histories)
    padded = [np.vstack([h, np.repeat(h[-1:], length - h.shape[0], axis=0)]) for h in histories]
    return np.mean(padded, axis=0)


def _weight_records(unit, model, data) -> list[dict[str, Any]]:
    records = []
    for kind, attr, names in (
        ("source", "source_weights_history_", data["source_names"]),
        ("graph", "graph_weights_history_", data["graph_names"]),
    ):
        hist = _mean_history(getattr(model, attr))
        if hist.size == 0:
            continue
        for j, name in enumerate(names):
            for t in range(hist.shape[0]):
                records.append(
                    {**unit, "kind": kind, "name": name, "iteration": t, "weight": hist[t, j]}
                )
    return records


def _fit_and_score(unit, spec, data, split_row) -> dict[str, Any]:
    """Fit one method on one unit; transductive error on the instances outside training."""
    y = data["y"]
    labeled = np.zeros(y.shape[0], dtype=bool)
    labeled[np.asarray(split_row["train_indices"], dtype=np.int64)] = True
    sources = _unit_sources(data, split_row["absent"])
    graphs = data["graphs"] if spec.get("graphs", True) else []
    row = {**unit}
    weights: list[dict[str, Any]] = []
    start = time.perf_counter()
    if _method_kind(unit["method"], spec) == "baseline":
        X = joined_features(sources, graphs, y.shape[0], train_mask=labeled)
        model = fit_baseline(
            spec["baseline"],
            X,
            y,
            labeled,
            param_grid=spec.get("param_grid"),
            cv=int(spec.get("cv", 3)),
            threshold=float(spec.get("threshold", 0.9)),
            max_iter=int(spec.get("max_iter", 10)),
            random_state=unit["seed"],
        )
        pred = model.predict(X[np.flatnonzero(~labeled)])
    else:
        params = dict(spec.get("params") or {})
        if spec.get("tune"):
            chosen, cv_err = _select_by_cv(spec, sources, graphs, y, labeled, unit["seed"])
            params.update(chosen)
            row["cv_error"] = cv_err
        model = build_estimator({**spec, "params": params}, random_state=unit["seed"])
        model.fit(sources, graphs, y, labeled)
        pred = model.predict_transductive()[~labeled]
        row["lambda0"] = float(getattr(model, "lambda0", np.nan))
        row["lambda1"] = float(getattr(model, "lambda1", np.nan))
        row["n_iter"] = float(np.mean(getattr(model, "n_iter_", np.nan)))
        if spec.get("trajectory"):
            weights = _weight_records(unit, model, data)
    row["fit_time_s"] = time.perf_counter() - start
    row["error"] = float(np.mean(pred != y[~labeled]))
    return {"row": row, "weights": weights}


def evaluate_methods(
    datasets: dict[str, dict[str, Any]],
    splits: pd.DataFrame,
    methods: dict[str, dict[str, Any]],
    protocol: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit every registered method on every unit of ``splits`` (the paper's Figs. 3–6 protocol).

    Units (dataset, setting, train_pct, split, method) are independent, each seeded with
    ``stable_seed`` of its keys, and run with joblib (``protocol.n_jobs``): results do not
    depend on ``n_jobs``. ``protocol.methods_by_dataset`` (optional) restricts the methods run
    on a dataset (e.g. the Fig. 5 ablations on the digits only).

    Returns
    -------
    results : DataFrame
        One row per unit: keys, ``error`` (transductive, on the instances outside the training
        part), ``fit_time_s`` and, for GBC variants, ``lambda0, lambda1`` (chosen by CV when
        tuned, with ``cv_error``) and ``n_iter`` (mean over the one-vs-rest models).
    weights : DataFrame
        ``kind`` (source/graph), ``name``, ``iteration``, ``weight`` per unit of the methods with
        ``trajectory: true`` (averaged over the one-vs-rest models).
    """
    if not methods:
        raise ValueError("No method registered under gbc.methods.")
    for name, spec in methods.items():
        _method_kind(name, spec)
    only = protocol.get("methods_by_dataset") or {}
    jobs = []
    for _, s in splits.iterrows():
        names = only.get(s["dataset"], list(methods))
        unknown = [m for m in names if m not in methods]
        if unknown:
            raise ValueError(f"methods_by_dataset names unregistered method(s) {unknown}.")
        for method in names:
            unit = {
                **{k: s[k] for k in UNIT_KEYS},
                "method": method,
                "seed": stable_seed(*(s[k] for k in UNIT_KEYS), method, base=int(s["seed"])),
            }
            unit["train_pct"], unit["split"] = int(unit["train_pct"]), int(unit["split"])
            jobs.append(delayed(_fit_and_score)(unit, methods[method], datasets[s["dataset"]], s))
    outputs = run_units(jobs, n_jobs=protocol.get("n_jobs", 1), label="gbc evaluation")
    results = pd.DataFrame([o["row"] for o in outputs])
    weights = [w for o in outputs for w in o["weights"]]
    columns = [*UNIT_KEYS, "method", "seed", "kind", "name", "iteration", "weight"]
    return results, pd.DataFrame(weights, columns=columns)


# ----------------------------------------------------------------------------------- weights
def summarise_final_weights(weights: pd.DataFrame) -> pd.DataFrame:
    """Learned weight of every source and graph at the last iteration, mean ± std over splits.

    Columns ``dataset, setting, train_pct, method, kind, name, weight_mean, weight_std,
    n_splits``.
    """
    cols = ["dataset", "setting", "train_pct", "method", "kind", "name"]
    if weights.empty:
        return pd.DataFrame(columns=[*cols, "weight_mean", "weight_std", "n_splits"])
    last = weights.loc[weights.groupby([*cols, "split"])["iteration"].idxmax()]
    out = last.groupby(cols, sort=True)["weight"].agg(["mean", "std", "count"]).reset_index()
    out = out.rename(columns={"mean": "weight_mean", "std": "weight_std", "count": "n_splits"})
    out["weight_std"] = out["weight_std"].fillna(0.0)
    return out


def plot_weight_trajectories(weights: pd.DataFrame, figure: dict[str, Any]) -> plt.Figure:
    """Source and graph weights over the iterations (mean over splits), one row per
    (dataset, setting), for ``figure.method`` at ``figure.train_pct``: the noisy source and
    the noisy graph should be visibly down-weighted."""
    method, pct = figure.get("method", "GBC"), figure.get("train_pct")
    data = weights[weights["method"] == method]
    if pct is not None:
        data = data[data["train_pct"] == int(pct)]
    if data.empty:
        raise ValueError(
            f"No weight trajectory for method {method!r} at train_pct={pct}: "
            "set trajectory: true for it."
        )
    panels = list(data.groupby(["dataset", "setting"], sort=True).groups)
    fig, axes = plt.subplots(
        len(panels), 2, figsize=(11, 3.0 * len(panels)), squeeze=False, sharex="row"
    )
    mean = data.groupby(["dataset", "setting", "kind", "name", "iteration"], sort=True)[
        "weight"
    ].mean()
    for row, (name, setting) in zip(axes, panels, strict=True):
        for ax, kind in zip(row, ("source", "graph"), strict=True):
            block = mean.loc[(name, setting, kind)] if (name, setting, kind) in mean else None
            if block is not None:
                for entity, line in block.groupby(level=0, sort=True):
                    style = "--" if "noisy" in str(entity) else "-"
                    ax.plot(line.index.get_level_values(-1), line.to_numpy(), style, label=entity)
                ax.legend(fontsize="small")
            ax.set_title(f"{name} / {setting}: {kind} weights")
            ax.set_xlabel("iteration t")
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
    fig.suptitle(f"{method}: learned weights (G8, G9), train {pct}% (mean over splits)")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------- Table 4
def evaluate_source_counts(
    datasets: dict[str, dict[str, Any]],
    methods: dict[str, dict[str, Any]],
    study: dict[str, Any],
) -> pd.DataFrame:
    """Number-of-sources study (the paper's Table 4, here on ``study.dataset``).

    For each count k in ``study.n_sources`` and choice c < ``study.n_choices``, draw k vector
    sources at random (all graphs kept) and a stratified training part of ``study.train_pct`` %,
    both seeded by (k, c), and fit ``study.method``; units run with joblib (``study.n_jobs``).

    Returns
    -------
    DataFrame
        ``dataset, setting, train_pct, num_sources, choice, method, sources, seed, error,
        fit_time_s, ...`` (one row per choice).
    """
    name, method = study["dataset"], study["method"]
    if name not in datasets:
        raise ValueError(f"sources study: unknown dataset {name!r}; built {sorted(datasets)}.")
    if method not in methods:
        raise ValueError(f"sources study: method {method!r} is not registered in gbc.methods.")
    data = datasets[name]
    p, n = len(data["sources"]), data["y"].shape[0]
    counts = [int(k) for k in study["n_sources"]]
    if any(not 1 <= k <= p for k in counts):
        raise ValueError(f"sources study: n_sources {counts} must lie in [1, {p}].")
    base, pct = int(study.get("seed", 0)), int(study["train_pct"])
    setting = study.get("setting", "uniform")
    jobs = []
    for k in counts:
        for choice in range(int(study["n_choices"])):
            seed = stable_seed(name, "sources", k, choice, base=base)
            chosen = np.sort(np.random.default_rng(seed).choice(p, size=k, replace=False))
            sub = {
                **data,
                "sources": [data["sources"][i] for i in chosen],
                "source_names": [data["source_names"][i] for i in chosen],
            }
            absent = absent_entries(
                n, k, setting, float(study.get("missing_fraction", 0.3)), "per_instance", seed
            )
            split_row = {
                "train_indices": stratified_train_indices(data["y"], pct / 100, seed),
                "absent": absent,
            }
            unit = {
                "dataset": name,
                "setting": setting,
                "train_pct": pct,
                "num_sources": k,
                "choice": choice,
                "method": method,
                "sources": "+".join(sub["source_names"]),
                "seed": seed,
            }
            jobs.append(delayed(_fit_and_score)(unit, methods[method], sub, split_row))
    outputs = run_units(jobs, n_jobs=study.get("n_jobs", 1), label="gbc sources study")
    return pd.DataFrame([o["row"] for o in outputs])
