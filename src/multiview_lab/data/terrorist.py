"""Loader for the LINQS/UMD TerrorAttack relational data (data/01_raw/terrorist_attack).

The raw folder holds the original ``terrorist_attack.nodes``, ``terrorist_attack.labels`` and the
two edge lists, each gzipped byte-for-byte.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import scipy.sparse as sp

TERRORIST_GRAPHS = ("loc", "loc_org")


def _lines(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh if line.strip()]


def load_terrorist(raw_dir: str | Path = "data/01_raw/terrorist_attack"):
    """Load the 1293 attacks: binary features, labels, and both edge lists as index pairs.

    Returns
    -------
    X : ndarray of shape (1293, 106), float
        Binary attributes.
    y : ndarray of int, shape (1293,)
        Class index into ``classes``.
    classes : list of str
        The 6 attack types (the part of the class URI after ``#``), in the order of
        ``terrorist_attack.labels``.
    edges : dict[str, ndarray of shape (m, 2)]
        ``"loc"`` (same location, 3172 edges) and ``"loc_org"`` (same location and organisation,
        571 edges) as pairs of row indices, each undirected edge listed once.
    node_ids : list of str
        The attack URIs, in row order.
    """
    raw_dir = Path(raw_dir)
    classes = [u.split("#")[-1] for u in _lines(raw_dir / "terrorist_attack.labels.gz")]
    class_index = {c: k for k, c in enumerate(classes)}
    node_ids, rows, labels = [], [], []
    for line in _lines(raw_dir / "terrorist_attack.nodes.gz"):
        parts = line.split("\t")
        node_ids.append(parts[0])
        rows.append(parts[1:-1])
        labels.append(class_index[parts[-1].split("#")[-1]])
    X = np.array(rows, dtype=np.float64)
    y = np.array(labels, dtype=np.int64)
    index = {u: r for r, u in enumerate(node_ids)}
    if len(index) != len(node_ids):
        raise ValueError("terrorist_attack.nodes has duplicate attack ids.")
    edges = {}
    for name in TERRORIST_GRAPHS:
        pairs = [line.split() for line in _lines(raw_dir / f"terrorist_attack_{name}.edges.gz")]
        try:
            edges[name] = np.array([[index[a], index[b]] for a, b in pairs], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"terrorist_attack_{name}.edges names an unknown node {exc}.") from exc
    return X, y, classes, edges, node_ids


def load_terrorist_graphs(raw_dir: str | Path = "data/01_raw/terrorist_attack"):
    """The two attack graphs as symmetric binary ``scipy.sparse`` adjacency matrices.

    Returns
    -------
    graphs : dict[str, scipy.sparse.csr_array of shape (1293, 1293)]
        ``"loc"`` and ``"loc_org"`` over the row index of :func:`load_terrorist`, undirected.
    """
    X, _, _, edges, _ = load_terrorist(raw_dir)
    n = X.shape[0]
    graphs = {}
    for name, pairs in edges.items():
        a, b = pairs[:, 0], pairs[:, 1]
        G = sp.coo_array((np.ones(2 * a.size), (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr()
        G.sum_duplicates()
        G.data[:] = 1.0
        graphs[name] = G
    return graphs
