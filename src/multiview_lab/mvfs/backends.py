"""Execution backends of the view- and class-partitioned ADMM (ADMM-MVFS spec §3.5).

The ADMM driver (:mod:`multiview_lab.mvfs.admm`) only talks to a backend through six calls:
``setup`` (prepare every view where its data lives), ``init`` (the ridge start of the views),
``init_classes`` (``Z̄ = M̄``, ``P̄ = 0``, F), ``view_step`` (the per-view W-update, paper
Eq. (20); returns ``X_v W_v`` and the residual scalars), ``class_step`` (the per-class Z̄/P̄/F
update, paper Eqs. (21)–(23)) and ``get_W``. The work itself is done by the pure functions of this
module (:func:`prepare_view`, :func:`view_init`, :func:`view_step`, :func:`class_init`,
:func:`class_update`), which every backend runs unchanged, so all backends produce the same
iterates (the reduction ``M̄ = (1/V) Σ_v X_v W_v`` happens on the driver in a fixed view order).

* :class:`LocalBackend` — in-process numpy, views one after the other (``backend="local"``);
  with ``threads=True`` the views run in a joblib thread pool (``backend="joblib"``).
* :class:`DaskBackend` — a ``dask.distributed`` cluster. Each view is scattered once to one worker
  (round-robin, pinned with ``workers=``) and never moves again: the standardised view, its Gram
  matrix and the per-view ADMM state (``W_v``, ``X_v W_v``) stay on that worker as futures; the
  per-class state (``P̄_i``, ``F_i``, ``Z̄_i − M̄_i``) stays on a class worker (contiguous blocks
  of classes, one block per worker). Each iteration the driver submits one view task per view
  (it fetches the class blocks ``[Z̄_i − M̄_i, P̄_i]`` worker-to-worker), gathers ``X_v W_v``
  (n×C per view) and the class blocks' residual scalars in one round trip, reduces ``M̄`` and
  submits one class task per block with its rows of ``M̄``. Bytes per iteration: O(V·n·C),
  independent of ``d_v``.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

from multiview_lab.mvfs._base import apply_scaler, fit_scaler
from multiview_lab.mvfs.solvers import (
    class_step,
    fista_l21_ls,
    irls_l21_ls,
    l21_norm,
    lipschitz,
    one_hot,
    reweight,
)

logger = logging.getLogger(__name__)

GRAM_MAX = 2000  # largest d_v for which X_vᵀX_v is kept (and the default W-solver is IRLS)


@dataclass
class ViewData:
    """What a view worker keeps resident: the standardised, class-sorted view and its constants."""

    X: np.ndarray  # (n, d_v), rows sorted by class, standardised (sparse: StandardizedSparse)
    codes: np.ndarray  # (n,) class index of every row
    n_classes: int
    solver: str  # "irls" or "fista"
    gram: np.ndarray | None  # X_vᵀX_v when used
    L: float | None  # ||X_v||₂² for FISTA
    XtY: np.ndarray  # X_vᵀY (d_v, C)
    loc: np.ndarray
    scale: np.ndarray


@dataclass
class ViewState:
    """Per-view ADMM state after an iteration (lives next to its :class:`ViewData`)."""

    W: np.ndarray  # W_v^k
    W_prev: np.ndarray | None  # W_v^{k-1}
    H: np.ndarray  # X_v W_v^k (n, C)
    XtZ_prev: np.ndarray | None  # X_vᵀ Z_v^{k-1}, for the dual residual
    msg: dict = field(
        default_factory=dict
    )  # what the driver gathers: H, scalars (no d_v-sized array)


def resolve_solver(wsolver: str, d_v: int) -> str:
    """Default W-solver of spec (A5): IRLS when ``d_v ≤ 2000``, else FISTA."""
    if wsolver == "auto":
        return "irls" if d_v <= GRAM_MAX else "fista"
    return wsolver


def check_view(X, v: int, n_samples: int) -> None:
    """Validate a view where it lives (used for views given as Dask futures)."""
    if not sp.issparse(X):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"View {v} must be a 2-D array; got shape {X.shape}.")
    if X.shape[0] != n_samples:
        raise ValueError(
            f"All views must have the same number of samples; view {v} has {X.shape[0]} "
            f"but y has {n_samples}."
        )
    if not np.all(np.isfinite(X.data if sp.issparse(X) else X)):
        raise ValueError(f"View {v} contains NaN or infinity.")


def prepare_view(X, order, codes, n_classes, standardize, wsolver, seed, check_as=None):
    """Standardise and class-sort one view, precompute ``X_vᵀX_v`` or ``L_v`` and ``X_vᵀY``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d_v)
        The raw view (training rows). A sparse view is standardised implicitly
        (:class:`~multiview_lab.mvfs._linalg.StandardizedSparse`): it is never densified.
    order : ndarray of shape (n,)
        Permutation sorting the rows by class (stable).
    codes : ndarray of shape (n,)
        Class index of every *sorted* row.
    standardize : {"zscore", "minmax", "none"}
        Per-feature scaling fitted on these rows.
    wsolver : {"auto", "irls", "fista"}
        W-subproblem solver (spec (A5)).
    seed : int
        Seed of the power iteration estimating ``L_v`` when no Gram matrix is kept.
    check_as : int or None
        View index: validate the view here first (remote data).
    """
    if check_as is not None:
        check_view(X, check_as, order.shape[0])
    X = sp.csr_array(X, dtype=float)[order] if sp.issparse(X) else np.asarray(X, dtype=float)[order]
    loc, scale = fit_scaler(X, standardize)
    X = apply_scaler(X, loc, scale)
    n, d = X.shape
    solver = resolve_solver(wsolver, d)
    keep_gram = (solver == "irls" and d <= n) or (solver == "fista" and d <= GRAM_MAX)
    gram = X.T @ X if keep_gram else None
    L = lipschitz(gram=gram, X=X, seed=seed) if solver == "fista" else None
    XtY = X.T @ one_hot(codes, n_classes)
    return ViewData(X, codes, n_classes, solver, gram, L, XtY, loc, scale)


def view_info(data: ViewData) -> dict:
    """Small per-view facts for the driver (sizes, scaling, ``||X[:, r]ᵀY||`` for λ_max (A6))."""
    return {
        "d": data.X.shape[1],
        "solver": data.solver,
        "loc": data.loc,
        "scale": data.scale,
        "xty_norms": np.sqrt(np.einsum("ij,ij->i", data.XtY, data.XtY)),
    }


def view_init(data: ViewData, lam: float, n_views: int) -> ViewState:
    """Ridge start ``W_v = argmin ||X_v W − Y/V||² + λ||W||²`` (spec §3.5; not 0, see there)."""
    X, n, d = data.X, data.X.shape[0], data.X.shape[1]
    if d <= n:
        gram = data.gram if data.gram is not None else X.T @ X
        K = gram + lam * np.eye(d)
        W = np.linalg.solve(K, data.XtY / n_views)
    else:
        K = X @ X.T + lam * np.eye(n)
        W = X.T @ np.linalg.solve(K, one_hot(data.codes, data.n_classes) / n_views)
    H = X @ W
    msg = {"H": H, "norm21": l21_norm(W), "h_sq": float(np.sum(H * H))}
    return ViewState(W=W, W_prev=None, H=H, XtZ_prev=None, msg=msg)


def view_step(data: ViewData, state: ViewState, E, rho, lam, inner_iters, update=True):
    """One view-partitioned W-update (paper Eq. (20) = (42)) and the view's dual-residual terms.

    Parameters
    ----------
    E : ndarray of shape (n, 2C)
        ``[Z̄^k − M̄^k, P̄^k]`` (class-sorted rows), the same for every view.
    rho : float
        Penalty of this iteration.
    update : bool
        If False, only the dual residual of iterate k is computed (used after the last iteration).

    Returns
    -------
    state : ViewState
        ``W_v^{k+1}``, ``X_v W_v^{k+1}`` and ``msg`` with ``H`` (``X_v W_v^{k+1}``), ``norm21``,
        ``h_sq``, and the dual terms of iterate k: ``dual_sq = ||X_vᵀ(Z_v^k − Z_v^{k−1})||²``
        (spec §3.5 ``s_v`` without the factor ρ) and ``scale_sq = ||X_vᵀP̄^k||²``.

    Notes
    -----
    ``T_v = X_v W_v^k + Z̄^k − M̄^k + P̄^k/ρ`` (Eq. (20)); with the Gram matrix, ``X_vᵀT_v`` is
    ``G_v W_v^k + X_vᵀ(Z̄ − M̄) + X_vᵀP̄/ρ``, so one product ``X_vᵀE`` serves the W-step and both
    dual terms (``Z_v^k = X_v W_v^k + Z̄^k − M̄^k``, spec §3.3).
    """
    C = state.W.shape[1]
    X = data.X
    if data.gram is not None:
        A = X.T @ E
        XtH = data.gram @ state.W
    else:
        A = X.T @ np.hstack([E, state.H])
        XtH = A[:, 2 * C :]
    XtD, XtP = A[:, :C], A[:, C : 2 * C]
    XtZ = XtH + XtD
    msg = {
        "dual_sq": np.nan if state.XtZ_prev is None else float(np.sum((XtZ - state.XtZ_prev) ** 2)),
        "scale_sq": float(np.sum(XtP * XtP)),
    }
    if not update:
        return ViewState(state.W, state.W_prev, state.H, state.XtZ_prev, msg)
    c = lam / rho
    if data.gram is not None:
        B = XtZ + XtP / rho
        kw = {"gram": data.gram, "B": B}
    else:
        kw = {"X": X, "T": state.H + E[:, :C] + E[:, C:] / rho}
    if data.solver == "irls":
        W = irls_l21_ls(state.W, c, n_iter=inner_iters, **kw)
    else:
        W = fista_l21_ls(state.W, c, data.L, n_iter=inner_iters, **kw)
    H = X @ W
    msg.update(H=H, norm21=l21_norm(W), h_sq=float(np.sum(H * H)))
    return ViewState(W=W, W_prev=state.W, H=H, XtZ_prev=XtZ, msg=msg)


def view_weights(state: ViewState, which: str) -> np.ndarray:
    """``W_v`` of the current (``"cur"``) or previous (``"prev"``) iterate."""
    return state.W if which == "cur" else state.W_prev


@dataclass
class ClassState:
    """Per-class-block ADMM state (lives on a class worker): ``P̄``, ``F``, ``D = Z̄ − M̄``."""

    P: np.ndarray  # P̄ rows of the block (n_b, C)
    f: np.ndarray  # diagonal of F (n_b,)
    D: np.ndarray  # Z̄ − M̄ (n_b, C), the block's primal residual
    codes: np.ndarray  # class index of every row of the block
    d_sq: float = 0.0  # ||D||²
    md: float = 0.0  # <M̄, D>, for ||{Z_iv}|| in the primal stopping scale


def class_init(Mbar, codes, n_classes, n_views, loss) -> ClassState:
    """Start of spec §3.5: ``Z̄ = M̄``, ``P̄ = 0`` and F from the initial residual ``V M̄ − Y`` (22)."""
    zeros = np.zeros_like(Mbar)
    R = n_views * Mbar - one_hot(codes, n_classes)
    f = reweight(R) if loss == "l21" else np.ones(codes.shape[0])
    return ClassState(P=zeros, f=f, D=zeros.copy(), codes=codes)


def class_update(Mbar, state: ClassState, n_classes, n_views, rho, loss, zstep) -> ClassState:
    """Paper Eqs. (21)–(23) on one block of classes (see :func:`~.solvers.class_step`)."""
    _, P, f, D = class_step(
        Mbar, state.P, state.f, state.codes, n_classes, n_views, rho, loss=loss, zstep=zstep
    )
    return ClassState(P, f, D, state.codes, float(np.sum(D * D)), float(np.sum(Mbar * D)))


def class_scalars(state: ClassState) -> tuple[float, float]:
    """``(||D||², <M̄, D>)`` of a block: all the driver needs from the class workers."""
    return state.d_sq, state.md


def stack_E(states) -> np.ndarray:
    """``E = [Z̄ − M̄, P̄]`` (n, 2C) from the class blocks, in class order."""
    return np.vstack([np.hstack([st.D, st.P]) for st in states])


def _nbytes(obj) -> int:
    """Bytes of the numpy arrays in a message (what crosses the network)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if sp.issparse(obj):
        return sum(getattr(obj, a).nbytes for a in ("data", "indices", "indptr") if hasattr(obj, a))
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return sum(_nbytes(v) for v in obj)
    return 8 if isinstance(obj, float | int) else 0


class LocalBackend:
    """In-process execution (``backend="local"``), or views in a joblib thread pool (``"joblib"``)."""

    def __init__(self, *, threads: bool = False, n_jobs=None):
        self.threads = threads
        self.n_jobs = n_jobs
        self.bytes_sent = 0
        self.bytes_received = 0
        self.bytes_peer = 0
        self.n_workers = 1

    def _map(self, fn, *iterables):
        if self.threads:
            return Parallel(n_jobs=self.n_jobs or -1, prefer="threads")(
                delayed(fn)(*args) for args in zip(*iterables, strict=True)
            )
        return [fn(*args) for args in zip(*iterables, strict=True)]

    def setup(self, Xs, order, codes, n_classes, standardize, wsolvers, seeds):
        self._data = self._map(
            lambda X, s, sd: prepare_view(X, order, codes, n_classes, standardize, s, sd),
            Xs,
            wsolvers,
            seeds,
        )
        self.codes, self.n_classes = codes, n_classes
        return [view_info(data) for data in self._data]

    def init(self, lam, n_views):
        self._states = self._map(lambda data: view_init(data, lam, n_views), self._data)
        return [s.msg for s in self._states]

    def init_classes(self, Mbar, n_views, loss):
        self._cls = class_init(Mbar, self.codes, self.n_classes, n_views, loss)

    def view_step(self, rho, lam, inner_iters, update=True):
        E = stack_E([self._cls])
        self._states = self._map(
            lambda data, st: view_step(data, st, E, rho, lam, inner_iters, update),
            self._data,
            self._states,
        )
        return [s.msg for s in self._states], [class_scalars(self._cls)]

    def class_step(self, Mbar, rho, n_views, loss, zstep):
        self._cls = class_update(Mbar, self._cls, self.n_classes, n_views, rho, loss, zstep)

    def get_W(self, which="cur"):
        return [view_weights(s, which) for s in self._states]

    def close(self):
        self._data = self._states = self._cls = None


class DaskBackend:
    """Views resident on ``dask.distributed`` workers; per-view and per-class updates as tasks.

    Parameters
    ----------
    client : distributed.Client or None
        Use this client (not closed at the end).
    scheduler_address : str or None
        Connect to this scheduler if no client is given; empty or None starts a
        ``LocalCluster`` bound to 127.0.0.1 with the dashboard off (closed by :meth:`close`).
    n_workers : int or None
        Workers of the LocalCluster started here (default: number of views, at most the CPU count).
    """

    def __init__(self, *, client=None, scheduler_address=None, n_workers=None, n_views=1):
        from distributed import Client, LocalCluster

        self._cluster = None
        self._own_client = client is None
        if client is not None:
            self.client = client
        elif scheduler_address:
            self.client = Client(scheduler_address)
        else:
            import os

            n = n_workers or max(1, min(n_views, os.cpu_count() or 1))
            self._cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            )
            self.client = Client(self._cluster)
        self.workers = sorted(self.client.scheduler_info()["workers"])
        if not self.workers:
            raise ValueError("The Dask cluster has no workers.")
        self.n_workers = len(self.workers)
        self.bytes_sent = 0
        self.bytes_received = 0
        self.bytes_peer = 0

    # -- helpers ---------------------------------------------------------------------------
    def _submit(self, fn, *args, worker):
        self.bytes_sent += _nbytes(args)
        return self.client.submit(
            fn, *args, workers=[worker], allow_other_workers=False, pure=False
        )

    def _gather(self, futures):
        out = self.client.gather(futures)
        self.bytes_received += _nbytes(out)
        return out

    # -- protocol --------------------------------------------------------------------------
    def setup(self, Xs, order, codes, n_classes, standardize, wsolvers, seeds):
        from distributed import Future

        self.codes, self.n_classes = codes, n_classes
        self._view_workers, self._data = [], []
        for v, X in enumerate(Xs):
            if isinstance(X, Future):  # data already on a worker: pin the view there
                holders = self.client.who_has([X])[X.key]
                worker = holders[0] if holders else self.workers[v % self.n_workers]
                fut, check_as = X, v
            else:  # scatter once; the raw copy is dropped after preparation
                worker = self.workers[v % self.n_workers]
                self.bytes_sent += _nbytes(X)
                fut = self.client.scatter([X], workers=[worker], hash=False)[0]
                check_as = None
            args = (fut, order, codes, n_classes, standardize, wsolvers[v], seeds[v], check_as)
            self._data.append(self._submit(prepare_view, *args, worker=worker))
            self._view_workers.append(worker)
        infos = self._gather(
            [
                self._submit(view_info, d, worker=w)
                for d, w in zip(self._data, self._view_workers, strict=True)
            ]
        )
        # class blocks: contiguous groups of classes, one task per worker
        groups = np.array_split(np.arange(n_classes), min(self.n_workers, n_classes))
        bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_classes))])
        self._blocks = [slice(bounds[g[0]], bounds[g[-1] + 1]) for g in groups]
        self._class_workers = [self.workers[j % self.n_workers] for j in range(len(groups))]
        # worker-to-worker bytes per iteration: every view worker fetches the class blocks held
        # elsewhere (D, P̄, f, codes); each dependency crosses once per worker
        C = n_classes
        self._peer_bytes = sum(
            (b.stop - b.start) * (2 * C + 2) * 8
            for w in dict.fromkeys(self._view_workers)
            for b, cw in zip(self._blocks, self._class_workers, strict=True)
            if cw != w
        )
        logger.info(
            "Dask backend: %d views on workers %s; %d class blocks",
            len(Xs),
            self._view_workers,
            len(self._blocks),
        )
        return infos

    def init(self, lam, n_views):
        self._token = uuid.uuid4().hex
        self._keys = [(self._token, "view", v) for v in range(len(self._data))]
        return self._gather(
            [
                self._submit(_remote_view_init, d, key, lam, n_views, worker=w)
                for d, key, w in zip(self._data, self._keys, self._view_workers, strict=True)
            ]
        )

    def init_classes(self, Mbar, n_views, loss):
        self._ckeys = [(self._token, "class", j) for j in range(len(self._blocks))]
        self._cls = [
            self._submit(
                _remote_class_init,
                key,
                Mbar[b],
                self.codes[b],
                self.n_classes,
                n_views,
                loss,
                worker=w,
            )
            for key, b, w in zip(self._ckeys, self._blocks, self._class_workers, strict=True)
        ]

    def view_step(self, rho, lam, inner_iters, update=True):
        """View tasks fetch the class blocks worker-to-worker; one gather per iteration returns
        ``X_v W_v`` of every view and the scalars of the previous class step."""
        msgs = [
            self._submit(
                _remote_view_step, d, key, rho, lam, inner_iters, update, *self._cls, worker=w
            )
            for d, key, w in zip(self._data, self._keys, self._view_workers, strict=True)
        ]
        scalars = [
            self._submit(class_scalars, c, worker=w)
            for c, w in zip(self._cls, self._class_workers, strict=True)
        ]
        out = self._gather(msgs + scalars)
        self.bytes_peer += self._peer_bytes
        return out[: len(msgs)], out[len(msgs) :]

    def _to_worker(self, array, worker):
        """Send an array straight to a worker (not inside a task through the scheduler, which
        would keep the message buffer: the scheduler's memory would grow with every iteration)."""
        self.bytes_sent += array.nbytes
        return self.client.scatter([array], workers=[worker], direct=True, hash=False)[0]

    def class_step(self, Mbar, rho, n_views, loss, zstep):
        blocks = [
            self._to_worker(Mbar[b], w)
            for b, w in zip(self._blocks, self._class_workers, strict=True)
        ]
        self._cls = [
            self._submit(
                _remote_class_update,
                key,
                blocks[j],
                self.n_classes,
                n_views,
                rho,
                loss,
                zstep,
                worker=w,
            )
            for j, (key, w) in enumerate(zip(self._ckeys, self._class_workers, strict=True))
        ]

    def get_W(self, which="cur"):
        futs = [
            self._submit(_remote_weights, key, which, worker=w)
            for key, w in zip(self._keys, self._view_workers, strict=True)
        ]
        return self._gather(futs)

    def close(self):
        self._data = self._cls = None
        if getattr(self, "_token", None) is not None:
            self.client.run(_forget_state, self._token)
        if self._own_client:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()


# -- worker-resident ADMM state ----------------------------------------------------------------
# A task chain ``state_k = step(state_{k-1})`` makes the scheduler keep the whole lineage (every
# iteration's task and its arguments) for recomputation, so driver memory grows with the number of
# iterations. The per-view and per-class states therefore live in this per-process store on the
# worker that owns them (tasks are pinned there); every task of an iteration depends only on
# data of that iteration, and the driver orders the iterations. ``close`` clears the store.
_STATE: dict = {}


def _remote_view_init(data, key, lam, n_views):
    _STATE[key] = state = view_init(data, lam, n_views)
    return state.msg


def _remote_view_step(data, key, rho, lam, inner_iters, update, *class_states):
    state = view_step(data, _STATE[key], stack_E(class_states), rho, lam, inner_iters, update)
    _STATE[key] = state
    return state.msg


def _remote_weights(key, which):
    return view_weights(_STATE[key], which)


def _remote_class_init(key, Mbar, codes, n_classes, n_views, loss):
    _STATE[key] = state = class_init(Mbar, codes, n_classes, n_views, loss)
    return state


def _remote_class_update(key, Mbar, n_classes, n_views, rho, loss, zstep):
    _STATE[key] = state = class_update(Mbar, _STATE[key], n_classes, n_views, rho, loss, zstep)
    return state


def _forget_state(token):
    for key in [k for k in _STATE if k[0] == token]:
        del _STATE[key]
