"""Nodes of the ``gbc`` pipeline (Gradient Boosting Consensus, Shi et al. SDM 2012; spec §5).

Data flow: raw mfeat / terrorist files -> vector sources (``03_primary``) and graphs as edge lists
(``04_feature``: the mfeat kNN graph on ``mor`` and its noisy copy, the two terrorist graphs) ->
split tables (:mod:`.splits`, ``05_model_input``) -> the shared training stage (one node per
method of ``gbc.methods``, run by :func:`multiview_lab.protocol.run_experiment` with the task
of :mod:`.task`: transductive error on the instances outside the training part,
``07_model_output``) -> shared reporting, weight trajectories and the Table 4 analogue
(``08_reporting``). This module holds the data preparation and the weight summaries/figure.
"""

from __future__ import annotations

import logging
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from multiview_lab.gbc.graphs import (  # noqa: E402
    calibrate_graph_noise,
    edges_to_adjacency,
    knn_similarity_graph,
    n_undirected_edges,
    same_label_edge_fraction,
)
from multiview_lab.gbc.settings import noisy_copy  # noqa: E402

logger = logging.getLogger(__name__)


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


# ----------------------------------------------------------------------------------- weights
def summarise_final_weights(weights: pd.DataFrame) -> pd.DataFrame:
    """Learned weight of every source and graph at the last iteration, mean ± std over splits.

    Columns ``dataset, setting, train_pct, method, kind, name, weight_mean, weight_std,
    n_splits``.
    """
    cols = ["dataset", "setting", "train_pct", "method", "kind", "name"]
    if weights.empty or "weight" not in weights:
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
    data = weights[weights["method"] == method] if "method" in weights else weights.iloc[:0]
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
