"""Gradient Boosting Consensus (Shi, Paiement, Grangier, Yu; SDM 2012).

One boosted tree model f_i per vector source, fitted jointly: every iteration fits, for each
source in turn, a squared-error regression tree to the negative gradient of

    J = Σ_i w_i [ Σ_{T∩S_i} L(f_i, y) + λ0 Σ_{U_i} L(f_i, E) + λ1 Σ_{U_i} L(f_i, Ẽ_i) ]   (G4)

(task loss, consensus with the weighted average prediction E of the other sources, smoothness
over q graphs), then updates the source weights w (G8) and graph weights ŵ (G9). The shared
boosting loop is :func:`_boost`; :class:`GBCRegressor` (L2 loss) and :class:`GBCClassifier`
(logistic loss, one-against-others for K > 2) only differ in the loss and the label mapping.

Equation labels (G1)–(G12b) are those of docs/methods/gbc.md, which ties each one to the paper
(whose extracted text lost its equation numbers) and explains the ones the project derived;
(G4) above is the paper's objective with its two constraints weighted by λ0 and λ1.

Input layout. Two forms, the second the one of docs/methods/gbc.md ("Estimator API and
options"):

* **scikit-learn's semi-supervised form**, ``fit(X, y)``: ``X`` a list of views (one per
  vector source, each with n rows) or one stacked 2-D array cut into sources by ``views_ind``
  (:mod:`multiview_lab.utils.multiview`); unlabelled rows are marked in ``y`` as
  scikit-learn's semi-supervised estimators mark them: -1 for :class:`GBCClassifier` (as
  :class:`sklearn.semi_supervised.SelfTrainingClassifier`), NaN for :class:`GBCRegressor` (a
  regression target has no spare value, and NaN survives the row indexing of
  cross-validation, which a separate mask would not); a ``labeled_mask`` keyword overrides
  the marks (then -1 can be a class). ``graphs``, a constructor parameter, are symmetric
  n × n ``scipy.sparse`` adjacency matrices over the rows of that X. A source may miss
  instances only when asked: with ``partial_sources=True`` a row of a source that is entirely
  NaN is an instance missing from that source (any other NaN still raises); by default every
  source holds every row. Sparse views raise a ``TypeError``: every feature is binned into a
  dense array of bin codes (n × d), which a sparse view would have to be densified for.
* **the source form**, ``fit(sources, graphs, y, labeled_mask=None)``: instances live on a
  global index 0..n−1 (n = ``len(y)``); ``sources[i]`` is either a 2-D array holding every
  instance (row r = instance r; a shorter array is an error, not a partial source) or a pair
  ``(X_i, ids_i)`` whose row r describes global instance ``ids_i[r]`` (a partial source);
  ``graphs`` are symmetric n × n adjacency matrices (or None: the ``graphs`` parameter);
  ``labeled_mask`` says which entries of ``y`` are labels (default: the non-NaN entries of a
  float ``y``, else all).

Unlabelled instances take part in the consensus and graph terms (transductive use);
:meth:`predict_transductive` scores them, :meth:`predict` scores new instances (either form,
a source-form list holding pairs over 0..m−1) from the trees and the learned weights alone.

Saved work (issue 15; none of it can change a result, tests/gbc/test_gbc_speed.py checks
bit-identical fits with the savings switched off):

* **Binning cache.** A source's :class:`FeatureBinner` (bin edges), its binned codes and the
  :class:`~multiview_lab.gbc._hist_tree.OneHotBins` operator of the rows its trees are fitted
  on are kept in a small per-process LRU cache (:data:`_CACHE`, ``_CACHE_SIZE`` entries) keyed
  by a BLAKE2 digest of the source's values (shape, dtype and bytes), ``max_bins`` and, for the
  operator, a digest of those rows. They are deterministic functions of exactly these inputs —
  never of ``y``, the labelled mask, λ0, λ1 or the iteration — so every fit of an inner
  cross-validation (76 fits of one paper unit on the same sources) reuses them and gets the
  very arrays it would have computed. Cached arrays are read-only. ``USE_CACHE = False``
  switches the cache off, :func:`clear_cache` empties it.
* **Root histograms by a sparse product.** With ``subsample=1`` every tree of a source is grown
  on the same rows, so the trees take their root histogram from the source's ``OneHotBins``
  (one sparse product instead of a repeat and two ``bincount`` passes, the root counts cached;
  the same additions in the same order, see :mod:`multiview_lab.gbc._hist_tree`).
  ``USE_ONEHOT = False`` restores the ``bincount`` path.
* **Leaves reused.** When a source's trees are fitted on all its rows, the new tree's
  predictions on those rows are read from the leaves its fit returned instead of a second
  descent of the tree (the same leaf for every row, hence the same values).
"""

from __future__ import annotations

import hashlib
import logging
import numbers
from collections import OrderedDict
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from multiview_lab.gbc._hist_tree import FeatureBinner, HistogramTree, OneHotBins
from multiview_lab.gbc._objective import GBCProblem, loss_value, source_graph_parts
from multiview_lab.gbc.graphs import as_adjacency
from multiview_lab.utils.multiview import MultiviewMixin
from multiview_lab.utils.validation import check_n_classes

logger = logging.getLogger(__name__)

_OPTIONS = {
    "coupling_loss": ("l2", "task"),
    "step": ("newton", "line_search"),
    "consensus_on": ("unlabeled", "all"),
    "weight_loss_reduction": ("sum", "mean"),
    "gradient": ("paper", "exact"),
    "update_order": ("gauss_seidel", "jacobi"),
    "split_weighting": ("terms", "uniform"),
    "weight_loss_on": ("train", "validation"),
}


#: Reuse binning and one-hot operators across fits (see the module docstring).
USE_CACHE = True
#: Grow trees with sparse-product histograms when every tree of a source has the same rows.
USE_ONEHOT = True
#: The per-process LRU cache of binned sources and one-hot operators (key -> value).
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 32


def clear_cache():
    """Empty the per-process cache of binned sources and one-hot operators."""
    _CACHE.clear()


def _digest(a):
    """BLAKE2 digest of an array's shape, dtype and values."""
    a = np.ascontiguousarray(a)
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((a.shape, a.dtype.str)).encode())
    h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def _cached(key, build):
    """``build()``, memoised in :data:`_CACHE` under ``key`` when :data:`USE_CACHE` is set."""
    if not USE_CACHE:
        return build()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    value = build()
    _CACHE[key] = value
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return value


def _bin_source(X, max_bins):
    """``(digest, binner, Xb)`` of one source: its bin edges and binned codes (cached)."""
    digest = _digest(X)

    def build():
        binner = FeatureBinner(max_bins).fit(X)
        Xb = binner.transform(X)
        Xb.flags.writeable = False
        return binner, Xb

    binner, Xb = _cached(("bins", digest, max_bins), build)
    return digest, binner, Xb


def _onehot_bins(digest, max_bins, Xb_rows, rows, n_bins):
    """:class:`OneHotBins` of the binned rows ``Xb_rows`` (= ``Xb[rows]`` of the source with
    this digest), cached."""
    key = ("onehot", digest, max_bins, _digest(rows))
    return _cached(key, lambda: OneHotBins(Xb_rows, n_bins))


# --------------------------------------------------------------------------------- input checks
def check_sources(sources, n_instances=None, n_features=None):
    """Validate GBC sources; return ``(Xs, ids, n_instances)``.

    Each entry of ``sources`` is a 2-D array holding every instance (row r = global instance r)
    or a pair ``(X, ids)`` (a partial source: row r of ``X`` is instance ``ids[r]``). Every bare
    array must have ``n_instances`` rows (with ``n_instances=None``: as many rows as the other
    bare arrays, which then fix ``n_instances``; without bare arrays it is max id + 1); a
    shorter array is an error, never a partial source. Ids must be unique integers in
    ``[0, n_instances)``. ``n_features`` (the widths seen in fit) checks the number of sources
    and their widths. Raises ``ValueError`` naming the source and the problem (``TypeError``
    for a sparse source).
    """
    if isinstance(sources, np.ndarray) or not isinstance(sources, list | tuple) or not sources:
        raise ValueError(
            "sources must be a non-empty list; each entry a 2-D array or a pair (X, instance_ids)."
        )
    if n_features is not None and len(sources) != len(n_features):
        raise ValueError(f"got {len(sources)} sources but {len(n_features)} were seen in fit.")
    Xs, ids, bare = [], [], []
    for i, src in enumerate(sources):
        if isinstance(src, tuple):
            if len(src) != 2:
                raise ValueError(
                    f"source {i}: expected a pair (X, instance_ids); got {len(src)} items."
                )
            X, idx = src
        else:
            X, idx = src, None
        if sp.issparse(X):
            raise TypeError(
                f"source {i}: sparse feature matrices are not supported (GBC bins every feature "
                "into a dense array of bin codes); pass a dense array."
            )
        try:
            X = check_array(X, dtype=np.float64, input_name=f"source {i}")
        except ValueError as exc:
            raise ValueError(f"source {i}: {exc}") from exc
        if n_features is not None and X.shape[1] != n_features[i]:
            raise ValueError(
                f"source {i} has {X.shape[1]} features but {n_features[i]} were seen in fit."
            )
        if idx is None:
            bare.append(i)
            idx = np.arange(X.shape[0])
        idx = np.asarray(idx)
        if idx.ndim != 1 or idx.shape[0] != X.shape[0]:
            raise ValueError(
                f"source {i}: instance_ids must be 1-D with one id per row ({X.shape[0]}); "
                f"got shape {idx.shape}."
            )
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"source {i}: instance_ids must be integers; got dtype {idx.dtype}.")
        Xs.append(X)
        ids.append(idx.astype(np.int64))
    for i in bare:  # a bare array holds every instance: a shorter one is not a partial source
        rows = Xs[i].shape[0]
        if n_instances is not None and rows != n_instances:
            raise ValueError(
                f"source {i} has {rows} rows but there are {n_instances} instances (the length "
                "of y): a source given as an array holds every instance (row r = instance r); "
                "give a partial source explicitly as a pair (X_i, instance_ids_i)."
            )
        if rows != Xs[bare[0]].shape[0]:
            raise ValueError(
                f"source {i} has {rows} rows but source {bare[0]} has {Xs[bare[0]].shape[0]}: "
                "a source given as an array holds every instance (row r = instance r); give a "
                "partial source explicitly as a pair (X_i, instance_ids_i)."
            )
    if n_instances is None:
        if bare:
            n_instances = int(Xs[bare[0]].shape[0])
        else:
            n_instances = int(max(int(s.max()) + 1 if s.size else 0 for s in ids))
    for i, idx in enumerate(ids):
        if idx.size and (idx.min() < 0 or idx.max() >= n_instances):
            raise ValueError(
                f"source {i}: instance ids must lie in [0, {n_instances}); "
                f"got range [{idx.min()}, {idx.max()}]."
            )
        if np.unique(idx).shape[0] != idx.shape[0]:
            raise ValueError(f"source {i}: instance_ids contain duplicates.")
    covered = np.zeros(n_instances, dtype=bool)
    for s in ids:
        covered[s] = True
    if not covered.all():
        missing = np.flatnonzero(~covered)
        raise ValueError(
            f"{missing.shape[0]} instance(s) are held by no source (first: {missing[:5].tolist()}); "
            "GBC predicts from the sources that hold an instance."
        )
    return Xs, ids, n_instances


def is_source_form(X) -> bool:
    """Whether ``X`` is a list of GBC sources with at least one ``(X_i, ids_i)`` pair (the
    source form), rather than a list of views or a stacked 2-D array."""
    return isinstance(X, list | tuple) and any(isinstance(src, tuple) for src in X)


def views_to_sources(Xs, partial_sources):
    """GBC sources from equal-length views: with ``partial_sources``, the rows of a view that
    are entirely NaN are the instances missing from that source (the view becomes a pair
    ``(X_i[present], present)``); a row with NaN in only some columns raises."""
    if not partial_sources:
        return list(Xs)
    sources = []
    for i, V in enumerate(Xs):
        nan = np.isnan(V)
        absent = nan.all(axis=1)
        part = np.flatnonzero(nan.any(axis=1) & ~absent)
        if part.size:
            raise ValueError(
                f"source {i}: row {int(part[0])} has NaN in some but not all of its columns; with "
                "partial_sources=True a row of a source is either complete or entirely NaN (the "
                "instance is missing from that source)."
            )
        if absent.any():
            present = np.flatnonzero(~absent)
            sources.append((V[present], present))
        else:
            sources.append(V)
    return sources


def unlabelled_as_minus_one(y) -> np.ndarray:
    """Where ``y`` holds the integer -1: scikit-learn's mark of unlabelled samples (as
    :class:`sklearn.semi_supervised.SelfTrainingClassifier`); string labels are never -1."""
    y = np.asarray(y)
    if y.dtype.kind in "iuf":
        return y == -1
    if y.dtype.kind == "O":
        return np.array(
            [isinstance(v, numbers.Real) and not isinstance(v, bool) and v == -1 for v in y],
            dtype=bool,
        )
    return np.zeros(y.shape[0], dtype=bool)


def _check_graphs(graphs, n):
    if graphs is None:
        return []
    if sp.issparse(graphs) or isinstance(graphs, np.ndarray):
        raise ValueError(
            "graphs must be a list of adjacency matrices (wrap a single graph as [G])."
        )
    return [as_adjacency(G, n, name=f"graph {g}") for g, G in enumerate(graphs)]


def _check_labels(y, labeled_mask, n_sources_ids):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D over the global instance index; got shape {y.shape}.")
    if labeled_mask is None:
        labeled = ~np.isnan(y) if y.dtype.kind == "f" else np.ones(y.shape[0], dtype=bool)
    else:
        labeled = np.asarray(labeled_mask)
        if labeled.dtype != bool or labeled.shape != y.shape:
            raise ValueError(
                f"labeled_mask must be a boolean array of shape {y.shape}; got dtype "
                f"{labeled.dtype} and shape {labeled.shape}."
            )
    if not labeled.any():
        raise ValueError(
            "no labelled instance: labeled_mask (or the non-NaN entries of y) is empty."
        )
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y[labeled])):
        raise ValueError("y contains NaN or infinity at labelled instances.")
    for i, s in enumerate(n_sources_ids):
        if not labeled[s].any():
            raise ValueError(
                f"source {i} holds no labelled instance; its task loss (G1) and weight (G8) "
                "are undefined."
            )
    return y, labeled


# --------------------------------------------------------------------------------- fitted model
@dataclass
class _BinaryModel:
    """One fitted GBC score model (a regression model or one binary classifier)."""

    init: float
    trees: list  # trees[i] = list of (HistogramTree, coefficient) of source i
    scores: list  # final f_i over S_i (training instances)
    source_weights: np.ndarray
    source_weights_history: np.ndarray
    graph_weights_history: np.ndarray
    objective_history: np.ndarray
    objective_updates: np.ndarray | None
    step_sizes: np.ndarray
    n_iter: int
    validation_loss: list = field(default_factory=list)

    def source_scores(self, i, Xb):
        f = np.full(Xb.shape[0], self.init)
        for tree, coef in self.trees[i]:
            f += coef * tree.predict_binned(Xb)
        return f


def combine_scores(scores, ids, n, w):
    """H's score (G11, the paper's prediction H(x) = P(·) of "Model training of GBC"):
    Σ_{i: x∈S_i} w_i f_i(x) / Σ_{i: x∈S_i} w_i over the global index.

    Where every source holding x has weight 0 (softmax underflow) the available sources are
    averaged uniformly.
    """
    num, den, cnt, tot = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    for i, (f, s) in enumerate(zip(scores, ids, strict=True)):
        num[s] += w[i] * f
        den[s] += w[i]
        cnt[s] += 1.0
        tot[s] += f
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), tot / np.maximum(cnt, 1.0))


def _init_score(y, loss):
    """ρ0 = argmin_ρ Σ_T L(ρ, y) (Algorithm 1 of Shi et al. 2012, step 1): mean(y) or
    log(n₊ / n₋)."""
    if loss == "l2":
        return float(np.mean(y))
    n_pos, n_neg = np.sum(y > 0), np.sum(y < 0)
    return float(np.log(n_pos / n_neg))


def _line_search(problem, F, i, d, w, rho_max):
    """ρ* = argmin_ρ J(f_i + ρ d) with E, Ẽ recomputed (G12: the line search of Algorithm 1,
    step 7)."""

    def J(rho):
        Fr = list(F)
        Fr[i] = F[i] + rho * d
        return problem.objective(Fr, w)

    if problem.loss == "l2" and problem.closs == "l2":
        # J is an exact quadratic in ρ: three-point formula.
        jm, j0, jp = J(-1.0), J(0.0), J(1.0)
        den = 2.0 * (jp + jm - 2.0 * j0)
        if den <= 1e-15 * abs(j0):
            return 0.0
        return float(np.clip((jm - jp) / den, -rho_max, rho_max))
    res = minimize_scalar(J, bounds=(-rho_max, rho_max), method="bounded", options={"xatol": 1e-10})
    return float(res.x) if res.fun <= J(0.0) else 0.0


def _boost(est, problem, Xb, base_keys, n_bins, rng, valid=None, digests=None):
    """The GBC loop (Algorithm 1 of Shi et al. 2012) on one score model; returns a
    :class:`_BinaryModel`.

    ``base_keys[i]`` may be None (computed here when needed); ``digests[i]`` (the
    :func:`_digest` of source i's values) keys the cached :class:`OneHotBins`.
    """
    p, q = problem.p, problem.q
    step, nu = est.step, est._shrinkage()
    yT = problem.y[problem.labeled]
    rho0 = _init_score(yT, problem.loss)
    F = [np.full(s.shape[0], rho0) for s in problem.ids]
    w = np.full(p, 1.0 / p)
    gw = np.full(q, 1.0 / q) if q else np.zeros(0)
    problem.set_graph_weights(gw)
    trees = [[] for _ in range(p)]
    w_hist, gw_hist, J_hist, J_upd, rho_hist, val_hist = [w], [gw], [], [], [], []
    active = [np.flatnonzero(a) for a in problem.active]
    everyone = [a.shape[0] == X.shape[0] for X, a in zip(Xb, active, strict=True)]
    # Rows the trees are fitted on (no copy when every instance of the source is active).
    Xb_act = [X if e else X[a] for X, a, e in zip(Xb, active, everyone, strict=True)]
    onehot = [None] * p
    if USE_ONEHOT and est.subsample >= 1.0:  # every tree of source i on the rows Xb_act[i]
        for i in range(p):
            if digests is None:
                onehot[i] = OneHotBins(Xb_act[i], n_bins[i])
            else:
                onehot[i] = _onehot_bins(digests[i], est.max_bins, Xb_act[i], active[i], n_bins[i])
    key_act = []
    for i in range(p):
        k = None if base_keys is None else base_keys[i]
        if k is None:
            k = Xb[i].astype(np.int64) + np.arange(Xb[i].shape[1], dtype=np.int64) * n_bins[i]
        key_act.append(k if everyone[i] else k[active[i]])
    best_val, since_best = np.inf, 0
    log_every = max(1, est.n_iter // 10)
    for t in range(est.n_iter):
        # Gradients from the current state (Gauss-Seidel) or from the iteration start (Jacobi).
        updates, rhos, Js = [], [], []
        for i in range(p):
            g, h = problem.gradient(i, F, w, kind=est.gradient)
            X_fit, key_fit, local = Xb_act[i], key_act[i], active[i]
            if est.subsample < 1.0:  # stochastic gradient boosting: a fraction s of the rows
                m = max(1, int(est.subsample * local.shape[0]))
                rows = np.sort(rng.choice(local.shape[0], size=m, replace=False))
                X_fit, key_fit, local = X_fit[rows], key_fit[rows], local[rows]
            tree = HistogramTree(est.max_depth, n_bins[i], est.min_samples_leaf)
            z = -g[local]
            sw = problem.split_weights(i) if est.split_weighting == "terms" else None
            leaves = tree.fit(
                X_fit, z, key_fit, onehot=onehot[i], weight=None if sw is None else sw[local]
            )
            if step == "newton":
                tree.set_leaf_values(leaves, z, h[local])  # γ = −Σg / (Σh + 1e-12)
                rho = 1.0
            else:
                tree.set_leaf_values(leaves, z)
            # The fit's leaves are the rows' leaves: no second descent when it used every row.
            d = tree.value_[leaves] if X_fit is Xb[i] else tree.predict_binned(Xb[i])
            if step != "newton":
                rho = _line_search(problem, F, i, d, w, est.rho_max)
            coef = nu * rho
            trees[i].append((tree, coef))
            rhos.append(rho)
            if est.update_order == "gauss_seidel":
                F[i] = F[i] + coef * d
                if step == "line_search":  # J after every source update (descent check, G12)
                    Js.append(problem.objective(F, w))
            else:
                updates.append(coef * d)
        if est.update_order == "jacobi":
            for i in range(p):
                F[i] = F[i] + updates[i]
                if step == "line_search":
                    Js.append(problem.objective(F, w))
        J_hist.append(Js[-1] if Js else problem.objective(F, w))
        J_upd.append(Js)
        rho_hist.append(rhos)
        if est.weight_learning:
            held = valid if est.weight_loss_on == "validation" else None
            w_new = problem.source_weights(
                F, est.weight_loss_reduction, est.weight_temperature, held_out=held
            )
            if w_new is None:  # a source holds no held-out instance: the paper's training loss
                w_new = problem.source_weights(F, est.weight_loss_reduction, est.weight_temperature)
            w = w_new
            if q:
                gw = problem.graph_weights_update(F, w)
                problem.set_graph_weights(gw)
        w_hist.append(w)
        gw_hist.append(gw)
        if (t + 1) % log_every == 0:
            logger.info(
                "GBC iteration %d/%d: J=%.6g, w=%s", t + 1, est.n_iter, J_hist[-1], np.round(w, 3)
            )
        if valid is not None:
            vidx, vy = valid
            H = combine_scores(F, problem.ids, problem.n, w)[vidx]
            vloss = float(np.mean(loss_value(H, vy, problem.loss)))
            val_hist.append(vloss)
            if not np.isfinite(best_val) or vloss < best_val - 1e-7 * max(abs(best_val), 1.0):
                best_val, since_best = vloss, 0
            else:
                since_best += 1
                if since_best >= est.n_iter_no_change:
                    logger.info(
                        "GBC early stop at iteration %d (validation loss %.6g)", t + 1, vloss
                    )
                    break
    return _BinaryModel(
        init=rho0,
        trees=trees,
        scores=F,
        source_weights=w,
        source_weights_history=np.array(w_hist),
        graph_weights_history=np.array(gw_hist).reshape(len(gw_hist), q),
        objective_history=np.array(J_hist),
        objective_updates=np.array(J_upd) if step == "line_search" else None,
        step_sizes=np.array(rho_hist),
        n_iter=len(J_hist),
        validation_loss=val_hist,
    )


# --------------------------------------------------------------------------------- estimators
def _check_not_empty(X):
    if isinstance(X, list | tuple) and len(X) == 0:
        raise ValueError(
            "X is an empty list: no source (view) was given; pass a list of views or a 2-D X."
        )


class _SourcesInputMixin(MultiviewMixin):
    """The two input forms of the GBC estimators and baselines: ``fit(X, y)`` (a list of views
    or a stacked X split by ``views_ind``; ``graphs`` and ``partial_sources`` parameters) and
    the source form ``fit(sources, graphs, y, labeled_mask)``."""

    def _fit_input(self, X, y, sources_form, labeled_mask, *, minus_one_unlabelled):
        """``(Xs, ids, n, graphs, y, labeled)`` of ``fit(X, y)`` or of the source form
        ``fit(sources, graphs, y, labeled_mask)`` (``sources_form`` holds the positional
        arguments after the second)."""
        if sources_form:
            return self._source_form_input(X, y, sources_form, labeled_mask)
        _check_not_empty(X)
        if is_source_form(X):
            raise ValueError(
                "sources given as (X_i, instance_ids_i) pairs take the source form "
                "fit(sources, graphs, y, labeled_mask=None); fit(X, y) takes a list of views "
                "or a stacked 2-D X (mark missing instances as NaN rows with "
                "partial_sources=True)."
            )
        Xs = self._validate_views(
            X,
            None if y is None else "no_validation",
            reset=True,
            ensure_all_finite="allow-nan" if self.partial_sources else True,
            ensure_min_samples=2 if minus_one_unlabelled else 1,
        )
        n = Xs[0].shape[0]
        y = column_or_1d(y, warn=True)
        if y.shape[0] != n:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: [{n}, "
                f"{y.shape[0]}] (X has {n} rows, y has {y.shape[0]} values)."
            )
        if y.dtype.kind == "c":
            raise ValueError("Complex data not supported in y.")
        if labeled_mask is None:
            if minus_one_unlabelled:
                labeled_mask = ~unlabelled_as_minus_one(y)
            else:
                if y.dtype.kind not in "iuf":
                    try:
                        y = y.astype(np.float64)
                    except (TypeError, ValueError) as exc:
                        raise ValueError(
                            f"y must be numeric for {type(self).__name__}; got dtype {y.dtype}."
                        ) from exc
                labeled_mask = ~np.isnan(y)
        Xs, ids, n = check_sources(views_to_sources(Xs, self.partial_sources), n_instances=n)
        for g, G in enumerate(self.graphs or []):
            if getattr(G, "shape", None) != (n, n):
                raise ValueError(
                    f"graph {g} has shape {getattr(G, 'shape', None)} but X has {n} rows: the "
                    "graphs parameter holds adjacency matrices over the rows of the X given to "
                    "fit (so they cannot follow a cross-validation split)."
                )
        graphs = _check_graphs(self.graphs, n)
        y, labeled = _check_labels(y, labeled_mask, ids)
        return Xs, ids, n, graphs, y, labeled

    def _source_form_input(self, sources, graphs, rest, labeled_mask):
        """The source form ``fit(sources, graphs, y, labeled_mask=None)`` (docs/methods/gbc.md,
        "Estimator API and options")."""
        if len(rest) > 2 or (len(rest) == 2 and labeled_mask is not None):
            raise TypeError(
                "fit takes fit(X, y, labeled_mask=None) or the source form fit(sources, graphs, "
                f"y, labeled_mask=None); got {2 + len(rest)} positional arguments"
                + (" and labeled_mask" if labeled_mask is not None else "")
                + "."
            )
        y = rest[0]
        if len(rest) == 2:
            labeled_mask = rest[1]
        if y is None:  # in scikit-learn's wording, as _validate_views words it for fit(X, y)
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, but the target "
                "y is None."
            )
        if graphs is not None and self.graphs is not None:
            raise ValueError(
                "graphs given twice: as the graphs parameter and as fit's second argument."
            )
        graphs = self.graphs if graphs is None else graphs
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(
                f"y must be 1-D over the global instance index; got shape {y_arr.shape}."
            )
        Xs, ids, n = check_sources(sources, n_instances=y_arr.shape[0])
        graphs = _check_graphs(graphs, n)
        y, labeled = _check_labels(y_arr, labeled_mask, ids)
        widths = [int(X.shape[1]) for X in Xs]
        self.n_features_in_ = int(sum(widths))
        self.n_features_per_view_ = widths
        self.n_views_ = len(widths)
        self.views_ind_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.intp)
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return Xs, ids, n, graphs, y, labeled

    def _predict_input(self, X):
        """``(Xs, ids, m)`` of new instances in either input form, checked against the fit."""
        _check_not_empty(X)
        if is_source_form(X):
            return check_sources(X, n_features=self.n_features_per_source_)
        Xs = self._validate_views(
            X, reset=False, ensure_all_finite="allow-nan" if self.partial_sources else True
        )
        return check_sources(
            views_to_sources(Xs, self.partial_sources),
            n_instances=Xs[0].shape[0],
            n_features=self.n_features_per_source_,
        )


class _BaseGBC(_SourcesInputMixin, BaseEstimator):
    """Shared fit/predict machinery of :class:`GBCRegressor` and :class:`GBCClassifier`."""

    _loss = "l2"

    _parameter_constraints: dict = {
        "lambda0": [Interval(Real, 0, None, closed="left")],
        "lambda1": [Interval(Real, 0, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "shrinkage": [Interval(Real, 0, None, closed="neither"), None],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "step": [StrOptions(set(_OPTIONS["step"]))],
        "rho_max": [Interval(Real, 0, None, closed="neither")],
        "coupling_loss": [StrOptions(set(_OPTIONS["coupling_loss"]))],
        "consensus_on": [StrOptions(set(_OPTIONS["consensus_on"]))],
        "normalize_expectation": ["boolean"],
        "graph_c": [StrOptions({"n_edges"}), Interval(Real, 0, None, closed="neither")],
        "weight_loss_reduction": [StrOptions(set(_OPTIONS["weight_loss_reduction"]))],
        "weight_temperature": [Interval(Real, 0, None, closed="neither")],
        "gradient": [StrOptions(set(_OPTIONS["gradient"]))],
        "weight_learning": ["boolean"],
        "update_order": [StrOptions(set(_OPTIONS["update_order"]))],
        "split_weighting": [StrOptions(set(_OPTIONS["split_weighting"]))],
        "weight_loss_on": [StrOptions(set(_OPTIONS["weight_loss_on"]))],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 256, closed="both")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "views_ind": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
        "graphs": [None, list, tuple],
        "partial_sources": ["boolean"],
    }

    def __init__(
        self,
        *,
        lambda0=0.01,
        lambda1=0.01,
        n_iter=300,
        max_depth=3,
        shrinkage=None,
        subsample=1.0,
        step="newton",
        rho_max=10.0,
        coupling_loss="l2",
        consensus_on="unlabeled",
        normalize_expectation=True,
        graph_c="n_edges",
        weight_loss_reduction="sum",
        weight_temperature=1.0,
        gradient="paper",
        weight_learning=True,
        update_order="gauss_seidel",
        split_weighting="terms",
        weight_loss_on="validation",
        early_stopping=True,
        validation_fraction=0.1,
        n_iter_no_change=10,
        max_bins=64,
        min_samples_leaf=1,
        random_state=None,
        views_ind=None,
        graphs=None,
        partial_sources=False,
    ):
        self.lambda0 = lambda0
        self.lambda1 = lambda1
        self.n_iter = n_iter
        self.max_depth = max_depth
        self.shrinkage = shrinkage
        self.subsample = subsample
        self.step = step
        self.rho_max = rho_max
        self.coupling_loss = coupling_loss
        self.consensus_on = consensus_on
        self.normalize_expectation = normalize_expectation
        self.graph_c = graph_c
        self.weight_loss_reduction = weight_loss_reduction
        self.weight_temperature = weight_temperature
        self.gradient = gradient
        self.weight_learning = weight_learning
        self.update_order = update_order
        self.split_weighting = split_weighting
        self.weight_loss_on = weight_loss_on
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.max_bins = max_bins
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.views_ind = views_ind
        self.graphs = graphs
        self.partial_sources = partial_sources

    # ------------------------------------------------------------------------- checks
    def _shrinkage(self):
        if self.shrinkage is None:
            return 0.1 if self.step == "newton" else 1.0
        return float(self.shrinkage)

    # ------------------------------------------------------------------------- fitting
    def _fit_scores(self, Xs, ids, n, graphs, targets, labeled, rng):
        """Bin the sources once (or take them from the cache) and fit one score model per
        target vector."""
        binned = [_bin_source(X, self.max_bins) for X in Xs]
        digests = [b[0] for b in binned]
        self.binners_ = [b[1] for b in binned]
        Xb = [b[2] for b in binned]
        n_bins = [b.n_bins_ for b in self.binners_]
        base_keys = [None] * len(Xb)  # built by _boost if a tree needs them
        graph_parts = source_graph_parts(ids, graphs)
        models = []
        for y_t in targets:
            fit_labeled, valid = labeled, None
            if self.early_stopping:
                fit_labeled, valid = self._validation_split(y_t, labeled, ids, rng)
            problem = GBCProblem(
                ids,
                graphs,
                y_t,
                fit_labeled,
                loss=self._loss,
                coupling_loss=self.coupling_loss,
                lambda0=self.lambda0,
                lambda1=self.lambda1,
                consensus_on=self.consensus_on,
                normalize_expectation=self.normalize_expectation,
                graph_c=self.graph_c,
                graph_parts=graph_parts,
            )
            models.append(_boost(self, problem, Xb, base_keys, n_bins, rng, valid, digests))
        self.ids_ = ids
        self.n_instances_ = n
        self.n_features_per_source_ = [X.shape[1] for X in Xs]
        self.n_sources_ = len(Xs)
        self.n_graphs_ = len(graphs)
        return models

    def _validation_split(self, y_t, labeled, ids, rng):
        """Hold out ``validation_fraction`` of T (stratified by sign for classification)."""
        lab = np.flatnonzero(labeled)
        groups = [lab] if self._loss == "l2" else [lab[y_t[lab] > 0], lab[y_t[lab] < 0]]
        held = []
        for grp in groups:
            k = int(np.floor(self.validation_fraction * grp.shape[0]))
            if k:
                held.append(rng.choice(grp, size=k, replace=False))
        held = np.concatenate(held) if held else np.zeros(0, dtype=np.int64)
        fit_labeled = labeled.copy()
        fit_labeled[held] = False
        if held.size == 0 or any(not fit_labeled[s].any() for s in ids):
            logger.warning("early stopping disabled: too few labelled instances to hold out")
            return labeled, None
        if self._loss == "logistic" and len(np.unique(y_t[fit_labeled])) < 2:
            return labeled, None
        return fit_labeled, (np.sort(held), y_t[np.sort(held)])

    def _expose(self, models):
        """Copy the per-model histories to fitted attributes (one model: unwrapped)."""
        one = len(models) == 1

        def pick(attr):
            vals = [getattr(m, attr) for m in models]
            return vals[0] if one else vals

        self.models_ = models
        self.estimators_ = pick("trees")
        self.init_ = pick("init")
        self.source_weights_ = pick("source_weights")
        self.source_weights_history_ = pick("source_weights_history")
        self.graph_weights_history_ = pick("graph_weights_history")
        self.objective_history_ = pick("objective_history")
        self.objective_updates_ = pick("objective_updates")
        self.step_sizes_ = pick("step_sizes")
        self.n_iter_ = pick("n_iter")
        self.validation_loss_ = pick("validation_loss")

    # ------------------------------------------------------------------------- scoring
    def _scores_new(self, X):
        """Inductive scores (n_new, n_models) of new instances from the trees and w (G11)."""
        check_is_fitted(self)
        Xs, ids, n = self._predict_input(X)
        Xb = [b.transform(X) for b, X in zip(self.binners_, Xs, strict=True)]
        out = np.empty((n, len(self.models_)))
        for k, m in enumerate(self.models_):
            f = [m.source_scores(i, X) for i, X in enumerate(Xb)]
            out[:, k] = combine_scores(f, ids, n, m.source_weights)
        return out

    def _scores_transductive(self):
        check_is_fitted(self)
        out = np.empty((self.n_instances_, len(self.models_)))
        for k, m in enumerate(self.models_):
            out[:, k] = combine_scores(m.scores, self.ids_, self.n_instances_, m.source_weights)
        return out


_PARAMS_DOC = """
    Parameters
    ----------
    lambda0 : float, default=0.01
        λ0, weight of the consensus term C (G2, G4). The paper chooses it by cross-validation
        (spec grid {0, 0.01, 0.1, 1, 10}); the default is the best of {0, 0.01, 0.1} measured on
        mfeat (10 % and 50 % labelled, ``benchmarks/bench_gbc.py --accuracy``). With Newton
        steps the coupling curvature λ0 + λ1 of every unlabelled instance enters the leaf
        denominators, so large λ with few labels slows learning.
    lambda1 : float, default=0.01
        λ1, weight of the graph term G (G3, G4); same grid.
    n_iter : int, default=300
        N, the number of boosting iterations (each fits one tree per source).
    max_depth : int, default=3
        Depth of every regression tree (spec: CV over {2, 3, 4}).
    shrinkage : float or None, default=None
        ν. None = 0.1 with ``step="newton"`` and 1.0 with ``step="line_search"`` (spec §4).
    subsample : float, default=1.0
        s: each tree is fitted on a random fraction s of the source's instances (stochastic
        gradient boosting, Algorithm 1 step 5).
    step : {"newton", "line_search"}, default="newton"
        Per-leaf Newton values −Σg/(Σh + 1e-12) (G12b), or the paper's line search on the full J
        (G12: three-point formula for L2, bounded Brent otherwise).
    rho_max : float, default=10.0
        Bound on |ρ| of the line search (G12).
    coupling_loss : {"l2", "task"}, default="l2"
        Loss of the consensus and graph terms: ½(f − target)² (G5b) or the task loss with
        real-valued targets (the literal reading, G5).
    consensus_on : {"unlabeled", "all"}, default="unlabeled"
        U_i = S_i \\ T (paper Table 1) or U_i = S_i.
    normalize_expectation : bool, default=True
        E(x) as a weighted average (G2a) or the literal weighted sum.
    graph_c : "n_edges" or float, default="n_edges"
        c_g of (G9): the (source-weighted) number of edges counted, making the exponent a mean
        pairwise loss, or a constant (1.0 = the literal sum).
    weight_loss_reduction : {"sum", "mean"}, default="sum"
        ℓ_i of (G8): sum (literal) or mean of the task loss over T ∩ S_i.
    weight_temperature : float, default=1.0
        τ of (G8): w = softmax(−ℓ/τ).
    gradient : {"paper", "exact"}, default="paper"
        Frozen-target gradient (G6) or the exact gradient of J (G7).
    weight_learning : bool, default=True
        Update w (G8) and ŵ (G9) after every iteration; False keeps them uniform (the paper's
        "GBC without weight learning").
    update_order : {"gauss_seidel", "jacobi"}, default="gauss_seidel"
        E, Ẽ recomputed after each source's update, or every source's gradient taken from the
        iteration-start state.
    split_weighting : {"terms", "uniform"}, default="terms"
        How each row counts in a tree's split criterion. ``"uniform"``: every row of the fit
        counts once (the literal reading of Algorithm 1, step 6, a squared-error tree on the
        negative gradient). ``"terms"`` (issue 18): with the coefficient of its terms in J
        (G4), 1 for a labelled instance's task term, λ0 for a consensus term, λ1 for a graph
        term (summed where several apply), i.e. the weighted least-squares tree of the
        per-term targets, a split's gain Σ_children (Σ z)² / (Σ weight). Both give the same
        trees without unlabelled rows (λ0 = λ1 = 0, or every row labelled) and the same leaf
        values (G12b). Why: an unlabelled row's gradient is λ(f − E) ≈ 0, so counted once it
        dilutes every split whose child also holds unlabelled instances, and the trees prefer
        features seen on labelled rows only (the transductive fit of 3sources fell 16 points
        below the inductive one). It is the default together with
        ``weight_loss_on="validation"``; alone it makes the weights (G8) favour a source that
        overfits the labelled rows (terrorist, 10 %: 16.3 → 46.0 % error in the base run).
        Measurements: docs/methods/gbc.md ("Departures").
    weight_loss_on : {"validation", "train"}, default="validation"
        Rows whose task loss ℓ_i sets the source weights (G8). ``"train"``: the labelled rows
        of the fit, T ∩ S_i (the paper's literal reading). ``"validation"`` (issue 18): the
        labelled rows held out for early stopping, an estimate of each source's loss on rows
        its trees were not fitted to, so that a source able to fit the labelled rows exactly
        (the terrorist data's noisy copy of the features, continuous where the clean features
        tie) does not take the weight. Falls back to ``"train"`` without early stopping or
        when a source holds none of the held-out rows. Literal reading of both options:
        ``split_weighting="uniform", weight_loss_on="train"``.
    early_stopping : bool, default=True
        Hold out ``validation_fraction`` of the labelled instances (they stay in the fit as
        unlabelled instances) and stop when the validation task loss of H has not improved for
        ``n_iter_no_change`` iterations (G12b: "N up to 300 with early stopping").
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
    max_bins : int, default=64
        Features are binned once per source into at most this many quantile bins (spec §3,
        "Speed"); lossless for features with at most ``max_bins`` distinct values.
    min_samples_leaf : int, default=1
        Smallest leaf of a tree.
    random_state : int, RandomState or None
        Seeds subsampling and the validation split (the trees themselves are deterministic).
    views_ind : None, int or array-like of int, default=None
        Source boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked X (or an int number of
        near-equal column blocks; None: one source), see :mod:`multiview_lab.utils.multiview`.
        Ignored for a list of views and the source form.
    graphs : list of sparse matrices of shape (n, n) or None, default=None
        Symmetric adjacency matrices over the rows of the X given to ``fit(X, y)`` (a nonzero
        entry is an edge). They describe the fitted rows, so they cannot follow a
        cross-validation split: an X with another number of rows raises.
    partial_sources : bool, default=False
        Whether a row of a source that is entirely NaN marks an instance missing from that
        source (the paper's non-overlapping setting, in ``fit(X, y)`` and ``predict``); every
        instance must be held by at least one source. False: any NaN raises.
"""

_ATTRS_DOC = """
    Attributes
    ----------
    estimators_ : list of list of (HistogramTree, float)
        ``estimators_[i]`` = the trees of source i with their coefficients ν·ρ.
    init_ : float
        ρ0, the constant initial score (Algorithm 1, step 1).
    source_weights_ : ndarray of shape (p,)
        Final w (G8).
    source_weights_history_ : ndarray of shape (n_iter_ + 1, p)
        w at t = 0 (uniform) and after every iteration.
    graph_weights_history_ : ndarray of shape (n_iter_ + 1, q)
        ŵ at t = 0 (uniform) and after every iteration.
    objective_history_ : ndarray of shape (n_iter_,)
        J (G4) at the end of each iteration, with that iteration's w and ŵ (before their update).
    objective_updates_ : ndarray of shape (n_iter_, p) or None
        With ``step="line_search"``: J after each source update (the line search's descent
        guarantee, GBC spec test 5); None with Newton steps (not computed, to save p objective
        evaluations per iteration).
    step_sizes_ : ndarray of shape (n_iter_, p)
        ρ_i per iteration (1.0 with Newton steps, whose size is in the leaf values).
    n_iter_ : int
        Iterations run (fewer than ``n_iter`` after early stopping).
    validation_loss_ : list of float
        Validation task loss per iteration (empty without early stopping).
    binners_ : list of FeatureBinner
    n_sources_, n_graphs_, n_instances_ : int
    n_features_per_source_ : list of int
    n_features_in_ : int
        Columns of the stacked X (the sum of the sources' widths).
    n_features_per_view_ : list of int
        The sources' widths (as ``n_features_per_source_``).
    n_views_ : int
    views_ind_ : ndarray of shape (n_views_ + 1,)
        The source boundaries of a stacked X.
"""

_REFS_DOC = """
    References
    ----------
    X. Shi, J.-F. Paiement, D. Grangier, P. S. Yu. Learning from Heterogeneous Sources via
    Gradient Boosting Consensus. SIAM SDM 2012 (Algorithm 1; equations as labelled in the GBC spec,
    (G1)–(G12b)).
"""


class GBCRegressor(RegressorMixin, _BaseGBC):
    __doc__ = (
        """Gradient Boosting Consensus for regression (L2 loss, GBC spec G5).

    One additive tree model per vector source, trained jointly with consensus (λ0) and graph
    (λ1) regularisers and learned source / graph weights; see the module docstring for the input
    layout.
"""
        + _PARAMS_DOC
        + _ATTRS_DOC
        + _REFS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.estimators import GBCRegressor
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(60, 3)), rng.normal(size=(60, 2))
    >>> y = X1[:, 0] + X2[:, 0]
    >>> y_obs = np.where(np.arange(60) < 40, y, np.nan)          # last 20 unlabelled
    >>> model = GBCRegressor(n_iter=20, early_stopping=False).fit([X1, X2], y_obs)
    >>> model.predict_transductive().shape
    (60,)
    >>> from multiview_lab.utils.multiview import stack_views
    >>> X, views_ind = stack_views([X1, X2])                     # one 2-D X, two sources
    >>> stacked = GBCRegressor(n_iter=20, early_stopping=False, views_ind=views_ind)
    >>> bool(np.all(stacked.fit(X, y_obs).predict(X) == model.predict([X1, X2])))
    True
"""
    )

    _loss = "l2"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *sources_form, labeled_mask=None):
        """Fit on the rows of ``X`` (semi-supervised: NaN in ``y`` marks unlabelled rows).

        Parameters
        ----------
        X : list of array-like of shape (n, d_i), or array-like of shape (n, d)
            The sources as a list of views, or stacked side by side and split by
            ``views_ind``. With ``partial_sources=True``, a row of a source that is entirely
            NaN is an instance missing from that source.
        y : array-like of shape (n,)
            Targets; NaN marks the unlabelled rows (they take part in the consensus and graph
            terms), unless ``labeled_mask`` is given.
        *sources_form
            The source form ``fit(sources, graphs, y, labeled_mask=None)``: ``sources`` a
            list of 2-D arrays (every instance) or pairs ``(X_i, instance_ids_i)`` over the
            global index ``0..len(y)−1``, ``graphs`` a list of symmetric sparse (n, n)
            adjacency matrices or None (then the ``graphs`` parameter is used).
        labeled_mask : array-like of bool of shape (n,), optional
            True where ``y`` is a label (overrides the NaN marks).

        Returns
        -------
        self
        """
        Xs, ids, n, graphs, y, labeled = self._fit_input(
            X, y, sources_form, labeled_mask, minus_one_unlabelled=False
        )
        if y.dtype.kind not in "iuf":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"y must be numeric for GBCRegressor; got dtype {y.dtype}."
                ) from exc
        y = np.where(labeled, y.astype(np.float64), 0.0)
        rng = check_random_state(self.random_state)
        self._expose(self._fit_scores(Xs, ids, n, graphs, [y], labeled, rng))
        return self

    def predict(self, X):
        """Predictions for new instances (inductive: trees and w only, G11).

        Parameters
        ----------
        X : list of array-like, array-like of shape (m, d), or list of sources
            As in :meth:`fit` (a list holding ``(X_i, instance_ids_i)`` pairs over 0..m−1 is
            the source form).

        Returns
        -------
        ndarray of shape (m,)
        """
        return self._scores_new(X)[:, 0]

    def predict_transductive(self):
        """Predictions H (G11) for every training instance of the global index (length n)."""
        return self._scores_transductive()[:, 0]


class GBCClassifier(ClassifierMixin, _BaseGBC):
    __doc__ = (
        """Gradient Boosting Consensus for classification (logistic loss, GBC spec G5).

    Binary labels are mapped to ±1 (``classes_[1]`` → +1); with K > 2 classes one binary GBC is
    trained per class (one-against-others) and the class with the largest normalised weighted
    score Σ_i w_i^(k) f_i^(k) / Σ_i w_i^(k) wins (spec §3). See the module docstring for the
    input layout.
"""
        + _PARAMS_DOC
        + _ATTRS_DOC.replace(
            "    n_features_per_source_ : list of int\n",
            "    n_features_per_source_ : list of int\n    classes_ : ndarray\n"
            "        With K > 2, the per-model attributes are lists with one entry per class.\n",
        )
        + _REFS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.estimators import GBCClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> X1 = rng.normal(size=(60, 2)) + y[:, None]
    >>> X2 = rng.normal(size=(60, 2)) + y[:, None]
    >>> y_obs = np.where(np.arange(60) % 3 == 0, -1, y)         # a third unlabelled
    >>> clf = GBCClassifier(n_iter=20, early_stopping=False).fit([X1, X2], y_obs)
    >>> clf.classes_.tolist(), clf.predict([X1, X2]).shape
    ([0, 1], (60,))
"""
    )

    _loss = "logistic"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *sources_form, labeled_mask=None):
        """Fit on the rows of ``X`` (semi-supervised: -1 in ``y`` marks unlabelled rows).

        Parameters
        ----------
        X : list of array-like of shape (n, d_i), or array-like of shape (n, d)
            The sources as a list of views, or stacked side by side and split by
            ``views_ind``. With ``partial_sources=True``, a row of a source that is entirely
            NaN is an instance missing from that source.
        y : array-like of shape (n,)
            Class labels; -1 marks the unlabelled rows, as in scikit-learn's semi-supervised
            estimators (they take part in the consensus and graph terms), unless
            ``labeled_mask`` is given (then -1 can be a class).
        *sources_form
            The source form ``fit(sources, graphs, y, labeled_mask=None)``: ``sources`` a
            list of 2-D arrays (every instance) or pairs ``(X_i, instance_ids_i)`` over the
            global index ``0..len(y)−1``, ``graphs`` a list of symmetric sparse (n, n)
            adjacency matrices or None (then the ``graphs`` parameter is used); there, with a
            float ``y`` and no mask, NaN marks the unlabelled instances.
        labeled_mask : array-like of bool of shape (n,), optional
            True where ``y`` is a label.

        Returns
        -------
        self
        """
        Xs, ids, n, graphs, y, labeled = self._fit_input(
            X, y, sources_form, labeled_mask, minus_one_unlabelled=not sources_form
        )
        check_classification_targets(y[labeled])
        self.classes_ = check_n_classes(y[labeled], 2)
        rng = check_random_state(self.random_state)
        if self.classes_.shape[0] == 2:
            targets = [np.where(labeled & (y == self.classes_[1]), 1.0, -1.0)]
        else:
            targets = [np.where(labeled & (y == c), 1.0, -1.0) for c in self.classes_]
        self._expose(self._fit_scores(Xs, ids, n, graphs, targets, labeled, rng))
        return self

    def _to_output(self, scores):
        if scores.shape[1] == 1:
            return scores[:, 0]
        return scores

    def decision_function(self, X):
        """Scores of new instances: (n,) for binary (> 0 means ``classes_[1]``), else (n, K).

        ``X`` as in :meth:`fit` (a list holding ``(X_i, instance_ids_i)`` pairs over 0..m−1 is
        the source form).
        """
        return self._to_output(self._scores_new(X))

    def _label(self, scores):
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(int)]  # P(0) = −1 (G11)
        return self.classes_[np.argmax(scores, axis=1)]

    def _proba(self, scores):
        s = expit(scores)
        if scores.shape[1] == 1:
            return np.column_stack([1.0 - s[:, 0], s[:, 0]])
        return s / s.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Class labels of new instances (inductive: trees and w only, G11).

        ``X`` as in :meth:`fit` (a list holding ``(X_i, instance_ids_i)`` pairs over 0..m−1 is
        the source form).
        """
        return self._label(self._scores_new(X))

    def predict_proba(self, X):
        """σ of the scores (one-against-others: normalised over the K classes).

        ``X`` as in :meth:`fit` (a list holding ``(X_i, instance_ids_i)`` pairs over 0..m−1 is
        the source form).
        """
        return self._proba(self._scores_new(X))

    def predict_transductive(self):
        """Class labels for every training instance of the global index (length n)."""
        return self._label(self._scores_transductive())

    def decision_function_transductive(self):
        """Scores of every training instance of the global index."""
        return self._to_output(self._scores_transductive())
