"""The GBC objective of Shi et al. (SDM 2012) on fixed instance sets: values, gradients, weights.

Equation labels: the paper's extracted text lost its equation numbers, so (G1)–(G12b) are the
labels defined in docs/methods/gbc.md, which ties each one to the paper's text (the subsections
"The GBC framework", "Model training of GBC", "Weight learning" and Algorithm 1) and explains
the ones the project derived.

:class:`GBCProblem` holds the bookkeeping of one fit — which global instances each source holds,
which are labelled, the consensus sets U_i and the graphs restricted to each source — and
evaluates, for per-source score vectors ``F = [f_1, ..., f_p]`` (``f_i`` over the instances S_i of
source i, in the source's row order), the objective J (G4: the paper's objective with its
consensus and graph constraints weighted by λ0, λ1), the gradients (G6: the paper's, with the
targets held fixed / G7: exact), the Newton curvatures (G12b) and the weight updates (G8, G9:
the paper's "Weight learning"). It knows nothing about trees.

All per-source gradients are returned *per unit source weight* (the factor ``w_i`` of (G6) and
(G7) divided out), as docs/methods/gbc.md explains for the tree targets; ``w_i * g_i`` is
∂J/∂f_i.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logsumexp

from multiview_lab.gbc.graphs import NeighbourAverager, restrict_graph


def loss_value(a, b, loss):
    """L(a, b) of (G5), the paper's L-2 and logistic losses: ½(a − b)² or log(1 + exp(−ab))
    (stable form)."""
    if loss == "l2":
        return 0.5 * (a - b) ** 2
    t = a * b
    return np.maximum(-t, 0.0) + np.log1p(np.exp(-np.abs(t)))


def loss_d1(a, b, loss):
    """∂L/∂a (G5): a − b, or −b σ(−ab)."""
    if loss == "l2":
        return a - b
    return -b * expit(-a * b)


def loss_d2(a, b, loss):
    """∂L/∂b (G5): −(a − b), or −a σ(−ab)."""
    if loss == "l2":
        return b - a
    return -a * expit(-a * b)


def loss_d11(a, b, loss):
    """∂²L/∂a² (G12b): 1, or b² σ(ab) σ(−ab)."""
    if loss == "l2":
        return np.ones_like(a)
    s = expit(a * b)
    return b * b * s * (1.0 - s)


def softmax_neg(losses):
    """exp(−ℓ) / Σ exp(−ℓ) computed with log-sum-exp (G10)."""
    z = -np.asarray(losses, dtype=np.float64)
    return np.exp(z - logsumexp(z))


def source_graph_parts(ids, graphs):
    """Per source: the graphs restricted to S_i, their :class:`NeighbourAverager`, edge lists."""
    adj, averagers, edges = [], [], []
    for i, s in enumerate(ids):
        # Sources holding the same instances (the uniform setting) share one restriction.
        same = next((j for j in range(i) if np.array_equal(ids[j], s)), None)
        if same is not None:
            adj.append(adj[same])
            averagers.append(averagers[same])
            edges.append(edges[same])
            continue
        per_source = [restrict_graph(G, s) for G in graphs]
        adj.append(per_source)
        averagers.append(NeighbourAverager(per_source) if per_source else None)
        upper = [sp.triu(A, k=0, format="coo") for A in per_source]
        edges.append([(e.row.astype(np.int64), e.col.astype(np.int64)) for e in upper])
    return adj, averagers, edges


class GBCProblem:
    """Bookkeeping and calculus of GBC on a global instance index 0..n−1.

    Parameters
    ----------
    ids : list of ndarray of int
        ``ids[i]`` = the global indices S_i of the rows of source i.
    graphs : list of sparse (n, n)
        Symmetric adjacency matrices over the global index (nonzero = edge).
    y : ndarray of shape (n,)
        Targets (±1 for the logistic loss); ignored where ``labeled`` is False.
    labeled : ndarray of bool, shape (n,)
        The labelled set T.
    loss, coupling_loss, lambda0, lambda1, consensus_on, normalize_expectation, graph_c
        As in :class:`multiview_lab.gbc.GBCRegressor`.
    graph_parts : tuple, optional
        :func:`source_graph_parts` of ``(ids, graphs)``, shared by the K one-against-others
        problems of one fit (it does not depend on labels).
    """

    def __init__(
        self,
        ids,
        graphs,
        y,
        labeled,
        *,
        loss,
        coupling_loss,
        lambda0,
        lambda1,
        consensus_on,
        normalize_expectation,
        graph_c,
        graph_parts=None,
    ):
        self.n = y.shape[0]
        self.p = len(ids)
        self.q = len(graphs)
        self.ids = ids
        self.y = np.where(labeled, y, 0.0)
        self.labeled = labeled
        self.loss = loss
        self.closs = loss if coupling_loss == "task" else "l2"
        self.lambda0 = float(lambda0)
        self.lambda1 = float(lambda1)
        self.normalize_expectation = normalize_expectation
        self.graph_c = graph_c
        self.T = [labeled[s] for s in ids]
        self.U = [
            np.ones(s.shape[0], bool) if consensus_on == "all" else ~t
            for s, t in zip(ids, self.T, strict=True)
        ]
        self.y_local = [self.y[s] for s in ids]
        self._wm_cache = None
        # Global membership of the consensus sets: Umask[x, j] = x ∈ U_j.
        self.Umask = np.zeros((self.n, self.p), dtype=bool)
        for j, (s, u) in enumerate(zip(ids, self.U, strict=True)):
            self.Umask[s[u], j] = True
        # Graphs restricted to each source (N_g^i, G3a), their A^i builders and edge lists (G9).
        parts = graph_parts if graph_parts is not None else source_graph_parts(ids, graphs)
        self.adj, self.averagers, self.edges = parts
        self.set_graph_weights(np.full(self.q, 1.0 / self.q) if self.q else np.zeros(0))
        self.active = [
            t | (u if (self.lambda0 > 0 or self.lambda1 > 0) else np.zeros_like(u))
            for t, u in zip(self.T, self.U, strict=True)
        ]

    # ----------------------------------------------------------------------------- graph state
    def set_graph_weights(self, graph_weights):
        """Rebuild A^i (G3a) for new graph weights ŵ; rows without neighbours are masked."""
        self.graph_weights = np.asarray(graph_weights, dtype=np.float64)
        self.A = []
        self.has_graph = []
        done = {}
        for averager in self.averagers:
            if averager is None:
                self.A.append(None)
                self.has_graph.append(np.zeros(0, bool))
                continue
            if id(averager) not in done:  # shared by sources with the same instances
                done[id(averager)] = averager(self.graph_weights)
            A, has = done[id(averager)]
            self.A.append(A)
            self.has_graph.append(has)

    def graph_mask(self, i):
        """x ∈ U_i with at least one graph neighbour in S_i: where the graph term of (G3), the
        paper's connectivity constraint, lives."""
        if self.A[i] is None or self.lambda1 == 0:
            return np.zeros_like(self.U[i])
        return self.U[i] & self.has_graph[i]

    def split_weights(self, i):
        """Row weights of source i's split criterion (``split_weighting="terms"``): the
        coefficient of each instance's terms in J, 1 for a task term (x ∈ T), λ0 for a
        consensus term (x ∈ U_i), λ1 for a graph term; None when every active row weighs 1
        (then the trees are scikit-learn's unweighted squared-error trees)."""
        weight = self.T[i].astype(np.float64)
        if self.lambda0:
            weight = weight + self.lambda0 * self.U[i]
        weight = weight + self.lambda1 * self.graph_mask(i)
        if np.all(weight[self.active[i]] == 1.0):
            return None
        return weight

    # ----------------------------------------------------------------------------- consensus
    def dense_scores(self, F):
        M = np.zeros((self.n, self.p))
        for j, (s, f) in enumerate(zip(self.ids, F, strict=True)):
            M[s, j] = f
        return M

    def expectation_weights(self, w):
        """w_j 1[x ∈ U_j] per (x, j), with a uniform fall-back where all these w_j underflow to 0."""
        key = w.tobytes()
        if self._wm_cache is None or self._wm_cache[0] != key:  # w is fixed within an iteration
            Wm = self.Umask * w[None, :]
            dead = (Wm.sum(axis=1) <= 0) & self.Umask.any(axis=1)
            Wm[dead] = self.Umask[dead]
            self._wm_cache = (key, Wm)
        return self._wm_cache[1]

    def expectation(self, F, w):
        """E(x) of (G2a), the paper's expected prediction: weighted average (or literal weighted
        sum) over the sources with x ∈ U_j.

        Returns ``E`` (n,) and ``W`` (n,), the normaliser (1 for the literal sum); both 0 where no
        source has x in its consensus set.
        """
        Wm = self.expectation_weights(w)
        num = (Wm * self.dense_scores(F)).sum(axis=1)
        W = Wm.sum(axis=1)
        if not self.normalize_expectation:
            return num, np.where(W > 0, 1.0, 0.0)
        return np.divide(num, W, out=np.zeros(self.n), where=W > 0), W

    # ----------------------------------------------------------------------------- objective
    def source_terms(self, i, f, E):
        """The bracket of source i in (G4): task + λ0 consensus + λ1 graph terms (no w_i)."""
        T, U = self.T[i], self.U[i]
        val = loss_value(f[T], self.y_local[i][T], self.loss).sum()
        if self.lambda0:
            val += self.lambda0 * loss_value(f[U], E[self.ids[i]][U], self.closs).sum()
        gm = self.graph_mask(i)
        if gm.any():
            Et = self.A[i] @ f
            val += self.lambda1 * loss_value(f[gm], Et[gm], self.closs).sum()
        return val

    def objective(self, F, w):
        """J(f; w, ŵ) of (G4), the paper's Lagrangian objective, with the current graph weights."""
        E = self.expectation(F, w)[0] if self.lambda0 else None
        return float(sum(w[i] * self.source_terms(i, F[i], E) for i in range(self.p)))

    def gradient(self, i, F, w, kind="paper", E=None, W=None):
        """Per-unit-weight gradient g = (∂J/∂f_i)/w_i and frozen-target curvature h of source i.

        ``kind="paper"`` is (G6), the paper's negative gradient of Algorithm 1, step 5 (targets
        E, Ẽ_i held constant); ``kind="exact"`` is (G7), the exact gradient of J.
        ``h`` is the diagonal second derivative with the targets frozen (G12b).
        """
        f = F[i]
        s, T, U = self.ids[i], self.T[i], self.U[i]
        yl = self.y_local[i]
        g = np.zeros_like(f)
        h = np.zeros_like(f)
        g[T] = loss_d1(f[T], yl[T], self.loss)
        h[T] = loss_d11(f[T], yl[T], self.loss)
        if self.lambda0:
            if E is None:
                E, W = self.expectation(F, w)
            Ei = E[s]
            g[U] += self.lambda0 * loss_d1(f[U], Ei[U], self.closs)
            h[U] += self.lambda0 * loss_d11(f[U], Ei[U], self.closs)
            if kind == "exact":
                # (w_i / W(u)) Σ_{j ∈ S(u)} w_j ∂₂L(f_j(u), E(u)), divided by w_i.
                Wm = self.expectation_weights(w)
                M = self.dense_scores(F)
                cross = (Wm * loss_d2(M, E[:, None], self.closs)).sum(axis=1)
                Wn = W if self.normalize_expectation else np.ones(self.n)
                cross = np.divide(cross, Wn, out=np.zeros(self.n), where=Wn > 0)
                g[U] += self.lambda0 * cross[s][U]
        gm = self.graph_mask(i)
        if gm.any():
            Et = self.A[i] @ f
            g[gm] += self.lambda1 * loss_d1(f[gm], Et[gm], self.closs)
            h[gm] += self.lambda1 * loss_d11(f[gm], Et[gm], self.closs)
            if kind == "exact":
                v = np.where(gm, loss_d2(f, Et, self.closs), 0.0)
                g += self.lambda1 * (self.A[i].T @ v)
        return g, h

    # ----------------------------------------------------------------------------- weights
    def source_weights(self, F, reduction="sum", temperature=1.0, held_out=None):
        """w of (G8), the paper's source weights ("Weight learning"): softmax of −ℓ_i/τ, ℓ_i the
        task loss of source i on T ∩ S_i.

        ``held_out = (rows, y_rows)``: ℓ_i on the held-out labelled instances ``rows`` ∩ S_i
        instead (global ids, sorted; their labels, which the problem does not hold). Returns
        None when a source holds none of them (the caller keeps the training loss).
        """
        if held_out is None:
            parts = [(f[T], yl[T]) for f, T, yl in zip(F, self.T, self.y_local, strict=True)]
        else:
            rows, y_rows = held_out
            parts = []
            for f, s in zip(F, self.ids, strict=True):
                pos = np.minimum(np.searchsorted(s, rows), s.shape[0] - 1)
                inside = s[pos] == rows
                if not inside.any():
                    return None
                parts.append((f[pos[inside]], y_rows[inside]))
        ell = np.array([loss_value(a, b, self.loss).sum() for a, b in parts])
        if reduction == "mean":
            ell = ell / np.array([max(a.shape[0], 1) for a, _ in parts])
        return softmax_neg(ell / temperature)

    def graph_weights_update(self, F, w):
        """ŵ of (G9), the paper's graph weights ("Weight learning"): softmax over graphs of
        −(1/c_g) Σ_i w_i Σ_{(a,b) ∈ E_g^i} L(f_i(a), f_i(b)).

        E_g^i = edges of G_g with both ends in S_i; L = the task loss. ``graph_c="n_edges"``:
        c_g = Σ_i w_i |E_g^i| (the number of edges counted, weighted like the losses, so the
        exponent is a weighted mean pairwise loss; = |E_g| when every source holds every node).
        """
        total = np.zeros(self.q)
        counted = np.zeros(self.q)
        for i in range(self.p):
            for g, (a, b) in enumerate(self.edges[i]):
                total[g] += w[i] * loss_value(F[i][a], F[i][b], self.loss).sum()
                counted[g] += w[i] * a.shape[0]
        c = counted if self.graph_c == "n_edges" else np.full(self.q, float(self.graph_c))
        mean = np.divide(total, c, out=np.zeros(self.q), where=c > 0)
        return softmax_neg(mean)
