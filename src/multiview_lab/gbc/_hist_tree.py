"""Histogram regression trees on features binned once (the base learner of GBC).

docs/methods/gbc.md ("Speed"): one-vs-rest GBC on mfeat fits 5000 trees per model (10 classes ×
5 sources × N = 100 iterations), and scikit-learn's
exact ``DecisionTreeRegressor`` re-sorts every feature at every node. The features of a source are
therefore binned once (:class:`FeatureBinner`, at most ``max_bins`` bins per feature, lossless when a
feature has at most ``max_bins`` distinct values) and every tree is grown level-wise from per-node
histograms of the gradient (:class:`HistogramTree`), with scikit-learn's squared-error split
criterion. On binned data the trees equal ``DecisionTreeRegressor(criterion="squared_error")``
(checked in the tests); with row weights (GBC's ``split_weighting="terms"``, issue 18: an
unlabelled row counts with its λ) they equal that tree fitted with ``sample_weight``.

A hand-written learner is used because the well-kept histogram learners (scikit-learn's
``HistGradientBoosting*``, LightGBM, XGBoost) either hide the tree fit behind private API or split
on the Newton gain Σg²/Σh, while GBC fits a squared-error tree to the negative gradient z and only
then sets the leaf values (Algorithm 1 of Shi et al. 2012, steps 6–7: fit a regression tree to
the negative gradient, then choose the step).

Exact shortcut (issue 15): when many trees are grown on the same binned rows (every tree of one
source in one GBC fit), :class:`OneHotBins` precomputes, once, the sparse one-hot operator
``S`` (row ``j·n_bins + b`` has a 1 in column r iff row r of ``Xb`` falls in bin b of feature j,
columns in increasing r) and the root's count histogram with its left / right split counts. The
root's sum histogram is then one sparse matrix-vector product ``S @ z`` instead of a repeat of
the targets and a weighted ``bincount`` (and its counts are not recounted). Both add each bin's
targets one by one in increasing row order starting from 0.0 (``bincount``: ``out[key] += w``
over the row-major keys; SciPy's CSR product: ``sum += 1.0 * z[col]`` over the sorted columns
of each row), and counts are small integers, exact in float64, so the histograms, hence the
splits, are bit-identical to the ``bincount`` path (tests/gbc/test_gbc_speed.py). Deeper levels
keep the ``bincount`` path (measured: a full-length product per child is not cheaper there).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# scikit-learn treats a node whose impurity is below machine epsilon as a leaf.
_EPSILON = np.finfo(np.float64).eps


class FeatureBinner:
    """Map each feature to at most ``max_bins`` ordered integer bins.

    Bin ``b`` of feature ``j`` holds the values ``x`` with ``edges[j][b-1] < x <= edges[j][b]``,
    so the split "bin <= b" is the split "x <= edges[j][b]" on the raw values. A feature with at
    most ``max_bins`` distinct values gets one bin per value (edges at the midpoints, as
    scikit-learn's trees place thresholds); otherwise the edges are the midpoints between
    consecutive distinct quantiles.

    Parameters
    ----------
    max_bins : int, default=64
        Largest number of bins per feature (at most 256).
    """

    def __init__(self, max_bins: int = 64):
        self.max_bins = max_bins

    def fit(self, X: np.ndarray) -> FeatureBinner:
        if not 2 <= self.max_bins <= 256:
            raise ValueError(f"max_bins must be in [2, 256]; got {self.max_bins}.")
        X = np.asarray(X, dtype=np.float64)
        self.edges_ = []
        for j in range(X.shape[1]):
            values = np.unique(X[:, j])
            if values.shape[0] > self.max_bins:
                q = np.linspace(0.0, 1.0, self.max_bins)
                values = np.unique(np.quantile(X[:, j], q, method="linear"))
            self.edges_.append(0.5 * (values[:-1] + values[1:]))
        self.n_bins_ = max(2, max(e.shape[0] + 1 for e in self.edges_)) if self.edges_ else 2
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = np.empty(X.shape, dtype=np.uint8)
        for j, edges in enumerate(self.edges_):
            out[:, j] = np.searchsorted(edges, X[:, j], side="left")
        return out


class OneHotBins:
    """The binned rows of one source as a sparse one-hot operator, shared by many trees.

    Parameters
    ----------
    Xb : ndarray of shape (n, d), integer
        Binned rows (the rows every tree using this object is fitted on, in this order).
    n_bins : int
        Number of bins of the binned data (the trees' ``n_bins``).

    Attributes
    ----------
    onehot : scipy.sparse.csr_array of shape (d * n_bins, n)
        ``onehot[j * n_bins + b, r] = 1`` iff ``Xb[r, j] == b``; the columns of every row are
        increasing, so ``onehot @ z`` sums each bin's ``z`` in increasing row order.
    root_counts : ndarray of shape (d * n_bins,)
        Rows per (feature, bin) over all rows (the root's count histogram, the same for every
        tree fitted on these rows); read-only.
    root_left_counts, root_right_counts : ndarray of shape (1, d, n_bins - 1)
        Rows left / right of every candidate split of the root; read-only.
    """

    def __init__(self, Xb: np.ndarray, n_bins: int):
        Xb = np.asarray(Xb)
        n, d = Xb.shape
        self.shape = (n, d)
        self.n_bins = int(n_bins)
        keys = (Xb.astype(np.int64) + np.arange(d, dtype=np.int64) * self.n_bins).ravel()
        size = d * self.n_bins
        counts = np.bincount(keys, minlength=size)
        # Stable sort by key: within a key the row-major positions, hence the rows, increase.
        order = np.argsort(keys, kind="stable")
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        index_dtype = np.int32 if max(n, keys.shape[0]) < 2**31 else np.int64
        self.onehot = sp.csr_array(
            (
                np.ones(keys.shape[0]),
                (order // max(d, 1)).astype(index_dtype),
                indptr.astype(index_dtype),
            ),
            shape=(size, n),
        )
        self.root_counts = counts.astype(np.float64)
        hist_c = self.root_counts.reshape(1, d, self.n_bins)
        self.root_left_counts = np.cumsum(hist_c, axis=2)[:, :, :-1]
        self.root_right_counts = np.float64(n) - self.root_left_counts
        for a in (self.root_counts, self.root_left_counts, self.root_right_counts):
            a.flags.writeable = False

    def sums(self, z: np.ndarray) -> np.ndarray:
        """Per-(feature, bin) sums of ``z`` (length n) over all rows, shape (d * n_bins,)."""
        return self.onehot @ z


class HistogramTree:
    """A depth-limited squared-error regression tree grown from histograms of binned data.

    Nodes are stored in heap order (children of node ``k`` are ``2k + 1`` and ``2k + 2``); a node
    with ``feature_[k] == -1`` is a leaf. Leaf values are set by the caller (mean target, a Newton
    step, ...), see :meth:`set_leaf_values`.

    Parameters
    ----------
    max_depth : int
        Depth of the tree (number of split levels).
    n_bins : int
        Number of bins of the binned data.
    min_samples_leaf : int, default=1
        Smallest number of samples in a child.
    """

    def __init__(self, max_depth: int, n_bins: int, min_samples_leaf: int = 1):
        self.max_depth = max_depth
        self.n_bins = n_bins
        self.min_samples_leaf = min_samples_leaf

    def fit(
        self,
        Xb: np.ndarray,
        z: np.ndarray,
        base_key: np.ndarray | None = None,
        onehot: OneHotBins | None = None,
        weight: np.ndarray | None = None,
    ) -> np.ndarray:
        """Grow the tree on binned rows ``Xb`` with targets ``z``; return each row's leaf.

        Parameters
        ----------
        Xb : ndarray of shape (n, d), integer
            Binned rows.
        z : ndarray of shape (n,)
            Targets.
        base_key : ndarray of shape (n, d), int64, optional
            ``Xb + n_bins * arange(n_features)`` precomputed by the caller, which saves one pass
            per level when many trees share the same rows (``bincount`` histograms).
        onehot : OneHotBins, optional
            :class:`OneHotBins` of these very rows ``Xb`` with this ``n_bins``: the root's
            histograms by one sparse product and its cached counts (bit-identical to the
            ``bincount`` path, faster).
        weight : ndarray of shape (n,), optional
            Row weights of the split criterion: a split is scored by the weighted least-squares
            gain Σ_children (Σ z)² / (Σ weight) instead of (Σ z)² / count, i.e. the tree fits
            the targets ``z / weight`` with weights ``weight`` (rows of weight 0 add nothing).
            None: every row counts once (scikit-learn's squared-error criterion, bit-identical
            to the unweighted path). ``min_samples_leaf`` still counts rows.

        Returns
        -------
        leaves : ndarray of shape (n,)
            The leaf (heap index) of every row.
        """
        n, d = Xb.shape
        B = self.n_bins
        if onehot is not None and (onehot.shape != (n, d) or onehot.n_bins != B):
            raise ValueError("onehot does not describe these binned rows.")
        n_nodes = 2 ** (self.max_depth + 1) - 1
        self.feature_ = np.full(n_nodes, -1, dtype=np.int64)
        self.bin_ = np.zeros(n_nodes, dtype=np.int64)
        self.value_ = np.zeros(n_nodes)
        if base_key is None:
            base_key = Xb.astype(np.int64) + (np.arange(d, dtype=np.int64) * B)
        node = np.zeros(n, dtype=np.int64)
        z = np.asarray(z, dtype=np.float64)
        wt = None if weight is None else np.asarray(weight, dtype=np.float64)
        first = 0
        prev = None
        for depth in range(self.max_depth):
            width = 2**depth
            rows = np.flatnonzero(node >= first) if depth else np.arange(n)
            local = node[rows] - first
            zr = z[rows]
            cnt = np.bincount(local, minlength=width).astype(np.float64)
            tot = np.bincount(local, weights=zr, minlength=width)
            ss = np.bincount(local, weights=zr * zr, minlength=width)
            # Nodes that may split: enough samples and not pure (sklearn's leaf rules).
            mean_sq = np.divide(tot * tot, cnt, out=np.zeros(width), where=cnt > 0)
            impurity = ss - mean_sq
            can_split = (cnt >= 2 * self.min_samples_leaf) & (
                impurity > _EPSILON * np.maximum(ss, 1.0)
            )
            if not can_split.any():
                break
            wr = None if wt is None else wt[rows]
            if depth == 0 and onehot is not None:  # the root holds every row
                hist_s = onehot.sums(zr).reshape(1, d, B)
                hist_c = onehot.root_counts.reshape(1, d, B)
                hist_w = None if wr is None else onehot.sums(wr).reshape(1, d, B)
                left_c, right_c = onehot.root_left_counts, onehot.root_right_counts
            else:
                hist_s, hist_c, hist_w = self._histograms(
                    base_key, rows, local, zr, cnt, width, d, prev, wr
                )
                left_c = np.cumsum(hist_c, axis=2)[:, :, :-1]
                right_c = cnt[:, None, None] - left_c
            prev = (hist_s, hist_c, hist_w)
            left_s = np.cumsum(hist_s, axis=2)[:, :, :-1]
            right_s = tot[:, None, None] - left_s
            ok = (left_c >= self.min_samples_leaf) & (right_c >= self.min_samples_leaf)
            if wr is None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    proxy = np.where(ok, left_s**2 / left_c + right_s**2 / right_c, -np.inf)
            else:
                proxy = np.where(
                    ok, self._weighted_gain(hist_w, left_s, right_s, wr, local, width), -np.inf
                )
            flat = proxy.reshape(width, -1)
            best = np.argmax(flat, axis=1)
            split = can_split & np.isfinite(flat[np.arange(width), best])
            nodes = first + np.flatnonzero(split)
            self.feature_[nodes] = best[split] // (B - 1)
            self.bin_[nodes] = best[split] % (B - 1)
            # Move the rows of split nodes to their children.
            f_row = self.feature_[node[rows]]
            moving = f_row >= 0
            go_right = Xb[rows, np.maximum(f_row, 0)] > self.bin_[node[rows]]
            node[rows] = np.where(moving, 2 * node[rows] + 1 + go_right, node[rows])
            first = 2 * first + 1
        return node

    @staticmethod
    def _weighted_gain(hist_w, left_s, right_s, wr, local, width):
        """Σ_children (Σ z)² / (Σ weight) of every candidate split; a child whose weight is
        (to rounding) 0 holds only rows without a term and adds 0."""
        wcnt = np.bincount(local, weights=wr, minlength=width)
        left_w = np.cumsum(hist_w, axis=2)[:, :, :-1]
        right_w = wcnt[:, None, None] - left_w
        tiny = 1e-12 * np.maximum(wcnt, 1e-300)[:, None, None]
        gain_l = np.divide(left_s**2, left_w, out=np.zeros_like(left_s), where=left_w > tiny)
        gain_r = np.divide(right_s**2, right_w, out=np.zeros_like(right_s), where=right_w > tiny)
        return gain_l + gain_r

    def _histograms(self, base_key, rows, local, zr, cnt, width, d, prev, wr=None):
        """Per-node (sum of z, count, sum of weights) histograms, shape (width, d, n_bins)
        each (the last None without weights).

        Below the root only the smaller child of each parent is histogrammed; its sibling is
        the parent's histogram minus it (the usual subtraction trick, ~halving the work).
        """
        B = self.n_bins
        if prev is None:
            keys = base_key[rows] if rows.shape[0] != base_key.shape[0] else base_key
            size = d * B
            hs = np.bincount(keys.ravel(), weights=np.repeat(zr, d), minlength=size)
            hc = np.bincount(keys.ravel(), minlength=size).astype(np.float64)
            hw = None
            if wr is not None:
                hw = np.bincount(keys.ravel(), weights=np.repeat(wr, d), minlength=size)
                hw = hw.reshape(1, d, B)
            return hs.reshape(1, d, B), hc.reshape(1, d, B), hw
        half = width // 2
        left_small = cnt[0::2] <= cnt[1::2]
        small_node = np.empty(width, dtype=bool)
        small_node[0::2], small_node[1::2] = left_small, ~left_small
        sel = small_node[local]
        keys = np.take(base_key, rows[sel], axis=0)
        keys += ((local[sel] // 2) * (d * B))[:, None]
        size = half * d * B
        hs = np.bincount(keys.ravel(), weights=np.repeat(zr[sel], d), minlength=size)
        hc = np.bincount(keys.ravel(), minlength=size).astype(np.float64)
        hs, hc = hs.reshape(half, d, B), hc.reshape(half, d, B)
        ls = left_small[:, None, None]

        def children(small, parent):
            out = np.empty((width, d, B))
            out[0::2] = np.where(ls, small, parent - small)
            out[1::2] = np.where(ls, parent - small, small)
            return out

        out_w = None
        if wr is not None:
            hw = np.bincount(keys.ravel(), weights=np.repeat(wr[sel], d), minlength=size)
            out_w = children(hw.reshape(half, d, B), prev[2])
        return children(hs, prev[0]), children(hc, prev[1]), out_w

    def apply_binned(self, Xb: np.ndarray) -> np.ndarray:
        """Leaf index of each binned row."""
        node = np.zeros(Xb.shape[0], dtype=np.int64)
        rows = np.arange(Xb.shape[0])
        for _ in range(self.max_depth):
            f = self.feature_[node]
            inner = f >= 0
            if not inner.any():
                break
            right = Xb[rows, np.maximum(f, 0)] > self.bin_[node]
            node = np.where(inner, 2 * node + 1 + right, node)
        return node

    def set_leaf_values(self, leaves: np.ndarray, num: np.ndarray, den: np.ndarray | None = None):
        """Set leaf ``k`` to ``Σ num / Σ den`` over the rows in ``k`` (``den`` = 1: the mean)."""
        n_nodes = self.feature_.shape[0]
        s = np.bincount(leaves, weights=num, minlength=n_nodes)
        if den is None:
            c = np.bincount(leaves, minlength=n_nodes).astype(np.float64)
            self.value_ = np.divide(s, c, out=np.zeros(n_nodes), where=c > 0)
        else:
            self.value_ = s / (np.bincount(leaves, weights=den, minlength=n_nodes) + 1e-12)
        return self

    def predict_binned(self, Xb: np.ndarray) -> np.ndarray:
        return self.value_[self.apply_binned(Xb)]
