"""Graphs for GBC: construction from data and the neighbour-averaging operator A^i (G3a).

Every graph is a symmetric ``scipy.sparse`` adjacency matrix over the global instance index
0..n−1; a nonzero entry is an edge (weights are not used by GBC). Nothing here densifies a graph;
only :func:`knn_similarity_graph` forms the dense n × n similarity of a small feature view
(the project's construction of the mfeat graphs, the paper's digit sources (6) and (7),
described in docs/methods/gbc.md; n = 2000).

Functions are pure (inputs in, sparse matrices out) so that pipeline nodes stay thin.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist, squareform
from sklearn.utils import check_random_state

logger = logging.getLogger(__name__)


def as_adjacency(G, n: int, name: str = "graph") -> sp.csr_array:
    """Validate one adjacency matrix: square n × n, finite, non-negative, symmetric pattern.

    Returns a binary CSR array (1 where an edge is) without explicit zeros.
    """
    if not (sp.issparse(G) or isinstance(G, np.ndarray)):
        raise ValueError(
            f"{name} must be a scipy.sparse matrix (or ndarray); got {type(G).__name__}."
        )
    G = sp.csr_array(G)
    if G.shape != (n, n):
        raise ValueError(
            f"{name} has shape {G.shape}; expected ({n}, {n}) over the global instance index."
        )
    if not np.all(np.isfinite(G.data)):
        raise ValueError(f"{name} contains NaN or infinite entries.")
    if np.any(G.data < 0):
        raise ValueError(f"{name} has negative entries; an adjacency matrix must be non-negative.")
    G.eliminate_zeros()
    G.data[:] = 1.0
    if (G != G.T).nnz:
        raise ValueError(
            f"{name} is not symmetric; GBC graphs are undirected (use G.maximum(G.T))."
        )
    return G


def edges_to_adjacency(edges: np.ndarray, n: int) -> sp.csr_array:
    """Undirected binary adjacency (n × n CSR) from an (m, 2) array of index pairs."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(
            f"edge indices must lie in [0, {n}); got range [{edges.min()}, {edges.max()}]."
        )
    a, b = edges[:, 0], edges[:, 1]
    G = sp.coo_array((np.ones(2 * a.shape[0]), (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr()
    G.sum_duplicates()
    G.data[:] = 1.0
    return G


def n_undirected_edges(G) -> int:
    """Number of undirected edges (self-loops counted once)."""
    G = sp.csr_array(G)
    return int(sp.triu(G, k=0).nnz)


def same_label_edge_fraction(G, labels) -> float:
    """Fraction of undirected edges whose two end points share a label."""
    upper = sp.triu(sp.csr_array(G), k=1).tocoo()
    labels = np.asarray(labels)
    return float(np.mean(labels[upper.row] == labels[upper.col])) if upper.nnz else float("nan")


def knn_similarity_graph(
    features: np.ndarray,
    *,
    k: int = 10,
    noise: float = 0.0,
    random_state=None,
) -> sp.csr_array:
    """kNN graph of Gaussian similarities on standardised features (the paper's digit sources (6)
    and (7), built as docs/methods/gbc.md describes).

    Standardise the columns, s_ab = exp(−‖m_a − m_b‖² / (2σ_s²)) with σ_s the median pairwise
    distance; optionally add symmetric i.i.d. N(0, noise²) noise to s (graph 7); connect each
    instance to its ``k`` most similar others; symmetrise. Every node has degree ≥ k and there
    are no self-loops.

    Ties at the k-th neighbour go to the lower instance index (a stable sort), so the graph is
    a function of the features alone. A selection such as ``np.argpartition`` leaves tied
    neighbours in an order that depends on the CPU's SIMD path: on mfeat's morphological view
    (1,888 distinct rows of 2,000), 124 instances tie at the 10th neighbour, and on an AVX-512
    machine ``argpartition`` chose a different neighbour set for 69 of them, so the same commit
    built different graphs, and different GBC results, on different machines.

    Parameters
    ----------
    features : ndarray of shape (n, d)
        The view the similarity is computed from (mfeat: the 6 morphological features).
    k : int, default=10
        Neighbours per instance (``graph_k``).
    noise : float, default=0.0
        Standard deviation σ_n of the noise added to the similarity (``graph_noise``).
    random_state : int, RandomState or None
        Seeds the noise.

    Returns
    -------
    G : scipy.sparse.csr_array of shape (n, n)
        Binary symmetric adjacency.
    """
    X = np.asarray(features, dtype=np.float64)
    n = X.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k must be in [1, {n - 1}]; got {k}.")
    scale = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    dist = pdist(X)
    sigma = np.median(dist)
    S = squareform(np.exp(-(dist**2) / (2.0 * sigma**2)))
    if noise > 0:
        rng = check_random_state(random_state)
        Z = np.triu(rng.normal(0.0, noise, size=(n, n)), k=1)
        S += Z + Z.T
    np.fill_diagonal(S, -np.inf)
    nbrs = np.argsort(-S, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(n), k)
    return edges_to_adjacency(np.column_stack([rows, nbrs.ravel()]), n)


def calibrate_graph_noise(
    features: np.ndarray,
    labels,
    *,
    k: int = 10,
    target: float = 0.5,
    random_state=None,
    n_steps: int = 12,
) -> tuple[float, float]:
    """σ_n such that the noisy kNN graph links same-label instances on ≈ ``target`` of its edges.

    Bisection on log σ_n (a project decision, docs/methods/gbc.md: ``graph_noise`` set so that
    the noisy graph's same-label edge fraction is ≈ 0.5). Returns ``(sigma_n, fraction_reached)``.
    """
    lo, hi = -6.0, 1.0  # log10 sigma_n
    frac = float("nan")
    for _ in range(n_steps):
        mid = 0.5 * (lo + hi)
        G = knn_similarity_graph(features, k=k, noise=10**mid, random_state=random_state)
        frac = same_label_edge_fraction(G, labels)
        lo, hi = (mid, hi) if frac > target else (lo, mid)
        logger.debug("graph noise 10^%.3f: same-label fraction %.3f", mid, frac)
    return 10 ** (0.5 * (lo + hi)), frac


def restrict_graph(G, ids: np.ndarray) -> sp.csr_array:
    """The graph among the instances ``ids`` (N_g^i(x) = N_g(x) ∩ S_i, G3a), in ``ids`` order."""
    G = sp.csr_array(G)
    return G[ids][:, ids].tocsr()


class NeighbourAverager:
    """Builds A^i of (G3a), the neighbour averages of the paper's graph term, for any graph
    weights ŵ in O(edges).

    The sparsity pattern of A^i (the union of the q graphs on one source's instances) and every
    node's degree per graph are fixed; only the values change with ŵ, so they are recomputed by
    one gather and one ``bincount`` instead of q sparse products (``set_graph_weights`` runs
    every iteration).

    Parameters
    ----------
    adjacencies : list of sparse (m, m)
        Binary adjacency matrices on the same m instances (one source's S_i).
    """

    def __init__(self, adjacencies):
        mats = [sp.coo_array(A) for A in adjacencies]
        self.m = mats[0].shape[0] if mats else 0
        self.deg = np.column_stack(
            [np.asarray(sp.csr_array(A).sum(axis=1)).ravel() for A in adjacencies]
        )
        rows = np.concatenate([A.row for A in mats]).astype(np.int64)
        cols = np.concatenate([A.col for A in mats]).astype(np.int64)
        graph_of = np.concatenate([np.full(A.nnz, g) for g, A in enumerate(mats)])
        self.flat = rows * len(mats) + graph_of  # index into the (m, q) coefficient table
        key = rows * max(self.m, 1) + cols
        uniq, self.slot = np.unique(key, return_inverse=True)
        indices = (uniq % max(self.m, 1)).astype(np.int32)
        indptr = np.searchsorted(uniq // max(self.m, 1), np.arange(self.m + 1)).astype(np.int32)
        self.A = sp.csr_array((np.zeros(uniq.shape[0]), indices, indptr), shape=(self.m, self.m))

    def __call__(self, graph_weights) -> tuple[sp.csr_array, np.ndarray]:
        """Return ``(A, has_graph)`` for graph weights ŵ (see :func:`neighbour_average_operator`).

        ``A`` is one matrix owned by this object; the next call overwrites its values.
        """
        graph_weights = np.asarray(graph_weights, dtype=np.float64)
        w = (self.deg > 0) * graph_weights[None, :]
        total = w.sum(axis=1)
        w = np.divide(w, total[:, None], out=np.zeros_like(w), where=total[:, None] > 0)
        coef = np.divide(w, self.deg, out=np.zeros_like(w), where=self.deg > 0)
        self.A.data[:] = np.bincount(
            self.slot, weights=coef.ravel()[self.flat], minlength=self.A.data.shape[0]
        )
        return self.A, total > 0


def neighbour_average_operator(adjacencies, graph_weights) -> tuple[sp.csr_array, np.ndarray]:
    """Sparse A^i of (G3a) and the mask of rows where some graph remains.

    A_xu = Σ_g ŵ'_g(x) 1[u ∈ N_g(x)] / |N_g(x)|, ŵ'_g(x) = ŵ_g / Σ_{g': N_g'(x) ≠ ∅} ŵ_g' over the
    graphs in which x has a neighbour; rows of instances without any neighbour are 0 (their
    graph term is 0). Rows sum to 1 or 0. Cost O(edges).

    Parameters
    ----------
    adjacencies : list of sparse (m, m)
        Binary adjacency matrices on the same m instances (one source's S_i).
    graph_weights : array-like of shape (q,)
        ŵ, non-negative.

    Returns
    -------
    A : scipy.sparse.csr_array of shape (m, m)
    has_graph : ndarray of bool, shape (m,)
    """
    return NeighbourAverager(adjacencies)(graph_weights)
