"""Distributed ADMM for supervised multiview feature selection (ADMM-MVFS).

The model (ADMM-MVFS spec (A1)) is ``min_W Σ_i ||Σ_v X_iv W_v − Y_i||_{2,1} + λ Σ_v ||W_v||_{2,1}``,
i.e. RFS on the concatenated views (spec (A2)); the paper's contribution is the solver: an ADMM in
"sharing" form partitioned by class (samples) and by view (features), paper Eqs. (16)–(23), whose
reduced updates (20)–(23) are proved in the appendix, Eqs. (34)–(42). Per iteration:

* view workers, in parallel over v — the W-update (20): an L2,1 least squares solved by one warm-started
  IRLS (spec (A5a)) or FISTA (spec (A5b)) step;
* the driver — the reduction ``M̄_i = (1/V) Σ_v X_iv W_v`` in fixed view order;
* class workers, in parallel over i — the Z̄-update (21) (reweighted closed form (A3) or exact prox
  (A4)), the multiplier update (23) and the reweighting F_i (22).

The execution backends live in :mod:`multiview_lab.mvfs.backends`; the subproblem solvers in
:mod:`multiview_lab.mvfs.solvers`.
"""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from multiview_lab.mvfs._base import (
    SELECTION_CONSTRAINTS,
    SPARSE_FORMATS,
    STANDARDIZE,
    MultiviewSelectorMixin,
    encode_labels,
)
from multiview_lab.mvfs.backends import DaskBackend, LocalBackend, check_view
from multiview_lab.mvfs.solvers import one_hot, row_norms
from multiview_lab.utils.validation import check_option, check_Xs

logger = logging.getLogger(__name__)

BACKENDS = ("local", "serial", "joblib", "dask")


def mvfs_objective(R: np.ndarray, norm21_W: float, lam: float, loss: str = "l21") -> float:
    """``J(W)`` of spec (A1): loss of the stacked residual ``R = Σ_v X_v W_v − Y`` plus ``λ||W||_{2,1}``.

    Because the L2,1 norm is a sum over rows, the per-class sum ``Σ_i ||R_i||_{2,1}`` equals the
    stacked ``||R||_{2,1}`` (spec (A2)). ``loss="fro"`` uses ``||R||_F²``.
    """
    data = float(np.sum(R * R)) if loss == "fro" else float(row_norms(R).sum())
    return data + lam * norm21_W


def _is_future(X) -> bool:
    try:
        from distributed import Future
    except ImportError:  # pragma: no cover - distributed is a dependency
        return False
    return isinstance(X, Future)


class ADMMMultiviewFeatureSelector(MultiviewSelectorMixin, BaseEstimator):
    """Supervised multiview feature selection by class- and view-partitioned ADMM.

    Solves ``min_W Σ_{i=1..C} ||Σ_v X_iv W_v − Y_i||_{2,1} + λ Σ_v ||W_v||_{2,1}`` (ADMM-MVFS spec
    (A1)) with the reduced ("sharing") ADMM of paper Eqs. (20)–(23), and ranks the features by the
    row norms of ``W = [W_1; …; W_V]``.

    Parameters
    ----------
    lam : float, default=1.0
        λ, the weight of ``Σ_v ||W_v||_{2,1}`` (on standardised features). The spec's protocol picks
        it by 5-fold CV over 10^{-3..3}: wrap the selector (with ``views_ind``) and a classifier in
        a scikit-learn ``Pipeline`` on the stacked views and grid-search ``selector__lam`` (see
        the example below), or use :class:`~multiview_lab.mvfs.LamSearchCV`.
    lam_frac : float or None, default=None
        If set, λ = ``lam_frac`` · λ_max with ``λ_max = max_r ||X[:, r]ᵀY||₂`` (spec (A6)); overrides
        ``lam``. ``W = 0`` is optimal iff ``lam_frac ≥ 1``.
    rho : float, default=1.0
        Initial ADMM penalty ρ.
    loss : {"l21", "fro"}, default="l21"
        ``"l21"``: the L2,1 loss with the reweighting F_i of paper Eq. (22); ``"fro"``: squared loss
        ``Σ_i ||Σ_v X_iv W_v − Y_i||_F²`` (F_i ≡ I).
    zstep : {"reweight", "prox"}, default="reweight"
        Z̄-update (paper Eq. (21)): the paper's reweighted trace form, closed form (A3), or the exact
        prox of the L2,1 loss (A4) (plain two-block ADMM; use near λ_max).
    wsolver : {"auto", "irls", "fista"}, default="auto"
        W-update (paper Eq. (20)) solver, spec (A5): IRLS (A5a) or FISTA (A5b); ``"auto"`` = IRLS for
        views with ``d_v ≤ 2000``, else FISTA. IRLS with ``d_v > n_samples`` uses the push-through
        form.
    inner_iters : int, default=1
        Warm-started inner solver steps per W-update.
    ranking : {"global", "per_view"}, default="global"
        ``"global"``: the top ``n_features`` rows of W overall; ``"per_view"``: the top ``k_v`` in each
        view, ``k_v ∝ d_v`` (largest remainder).
    n_features : int or None, default=10
        Number of features kept by ``transform`` (None: all).
    max_iter : int, default=5000
        Maximum number of ADMM iterations.
    tol : float, default=1e-8
        Stop when the relative objective change stays below ``tol`` for ``tol_window`` iterations.
    tol_window : int, default=10
        Consecutive iterations for the ``tol`` test (spec §3.5).
    eps_abs, eps_rel : float, default=1e-4, 1e-3
        Primal / dual residual stopping test (Boyd et al. 2011 §3.3, spec §3.5).
    residual_balancing : bool, default=True
        Adapt ρ (Boyd §3.4.1): ρ ← τρ if ``||r|| > μ||s||``, ρ ← ρ/τ if ``||s|| > μ||r||``. The
        multiplier P̄ is kept unscaled, which is the rescaling of the scaled dual ``P̄/ρ``.
    mu, tau : float, default=10.0, 2.0
        Residual balancing constants μ and τ.
    backend : {"local", "joblib", "dask"}, default="local"
        ``"local"`` (alias ``"serial"``): in-process numpy; ``"joblib"``: views in threads; ``"dask"``:
        views resident on ``dask.distributed`` workers (see :class:`~multiview_lab.mvfs.backends.DaskBackend`).
        All backends give the same iterates (driver reductions in fixed order).
    client : distributed.Client or None, default=None
        Dask client to use (``backend="dask"``). It is not pickled with the estimator.
    scheduler_address : str or None, default=None
        Scheduler to connect to when ``client`` is None; None or "" starts a 127.0.0.1 LocalCluster
        (dashboard off) for the duration of ``fit``.
    n_jobs : int or None, default=None
        Threads (``"joblib"``) or LocalCluster workers (``"dask"``); None: one per view, at most the
        number of CPUs.
    standardize : {"zscore", "minmax", "none"}, default="zscore"
        Per-feature scaling fitted on the training rows (constant columns become zero columns and get
        score 0). Sparse (CSR / CSC) views are scaled implicitly: the centred view is never formed,
        and every solver path (IRLS primal and push-through, FISTA with or without the Gram
        matrix, the ridge start) works on its products, at ``O(nnz)`` per product.
    random_state : int, RandomState or None, default=None
        Seeds the power iteration estimating ``||X_v||₂²`` for FISTA without a Gram matrix.
    verbose : int, default=0
        Log progress at INFO level every ``max(1, max_iter // 20)`` iterations when > 0.
    views_ind : array-like of int, int or None, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked ``X``, or an int number of
        near-equal column blocks, or None (one view); ignored for a list of views (see
        :mod:`multiview_lab.utils.multiview`).

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
    W_ : list of ndarray of shape (d_v, C)
        ``W_v`` on the standardised features.
    scores_ : ndarray of shape (d,)
        ``||w^r||₂`` for every row of the stacked W.
    ranking_ : ndarray of shape (d,)
        Global feature indices, best first (stable on ties).
    feature_map_ : ndarray of shape (d, 2)
        ``(view, local index)`` of every global index.
    n_features_per_view_ : ndarray of shape (V,)
    lam_, lam_max_ : float
        λ used and λ_max (spec (A6)).
    history_ : dict of ndarray
        Per iteration: ``objective`` J(W^k), ``primal_residual`` ||r^k||, ``dual_residual`` ||s^k||,
        ``eps_primal``, ``eps_dual``, ``rho``, ``time`` (s since the start of ``fit``),
        ``bytes_sent`` and ``bytes_received`` (driver ↔ Dask workers, measured as the nbytes of
        what is submitted / gathered) and ``bytes_peer`` (worker ↔ worker: the class blocks the
        view workers fetch, from their sizes); all 0 in-process.
    n_iter_ : int
    converged_ : bool
    stop_reason_ : {"residuals", "objective", "max_iter"}
    loc_, scale_ : list of ndarray
        The per-view scaling fitted on the training rows.

    References
    ----------
    Distributed learning for supervised multiview feature selection, Applied Intelligence, 2020,
    doi:10.1007/s10489-020-01683-7 — Eqs. (16)–(23) and Theorem 2, Eqs. (34)–(42).
    S. Boyd et al., Distributed optimization and statistical learning via the alternating direction
    method of multipliers, 2011, §3.3, §3.4.1, §7.3.
    F. Nie, H. Huang, X. Cai, C. Ding, Efficient and robust feature selection via joint
    ℓ2,1-norms minimization (RFS), NIPS 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.mvfs import ADMMMultiviewFeatureSelector
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> Xs = [rng.standard_normal((60, 8)) for _ in range(2)]
    >>> Xs[0][:, 0] += 3.0 * y
    >>> sel = ADMMMultiviewFeatureSelector(lam_frac=0.3, n_features=2).fit(Xs, y)
    >>> int(sel.ranking_[0])
    0
    >>> sel.transform(Xs).shape
    (60, 2)

    λ by grid search, on the stacked views:

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.svm import LinearSVC
    >>> from multiview_lab.utils.multiview import stack_views
    >>> X, views_ind = stack_views(Xs)
    >>> pipe = make_pipeline(
    ...     ADMMMultiviewFeatureSelector(n_features=2, max_iter=50, views_ind=views_ind),
    ...     LinearSVC(),
    ... )
    >>> search = GridSearchCV(pipe, {"admmmultiviewfeatureselector__lam": [0.1, 10.0]}, cv=3)
    >>> search.fit(X, y).best_params_["admmmultiviewfeatureselector__lam"] in (0.1, 10.0)
    True
    """

    _parameter_constraints: dict = {
        **SELECTION_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam_frac": [Interval(Real, 0, None, closed="neither"), None],
        "rho": [Interval(Real, 0, None, closed="neither")],
        "loss": [StrOptions({"l21", "fro"})],
        "zstep": [StrOptions({"reweight", "prox"})],
        "wsolver": [StrOptions({"auto", "irls", "fista"})],
        "inner_iters": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "tol_window": [Interval(Integral, 1, None, closed="left")],
        "eps_abs": [Interval(Real, 0, None, closed="left")],
        "eps_rel": [Interval(Real, 0, None, closed="left")],
        "residual_balancing": ["boolean"],
        "mu": [Interval(Real, 0, None, closed="neither")],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "backend": [StrOptions(set(BACKENDS))],
        "client": "no_validation",  # a live distributed.Client
        "scheduler_address": [str, None],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), None],
        "standardize": [StrOptions(set(STANDARDIZE))],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        lam=1.0,
        *,
        lam_frac=None,
        rho=1.0,
        loss="l21",
        zstep="reweight",
        wsolver="auto",
        inner_iters=1,
        ranking="global",
        n_features=10,
        max_iter=5000,
        tol=1e-8,
        tol_window=10,
        eps_abs=1e-4,
        eps_rel=1e-3,
        residual_balancing=True,
        mu=10.0,
        tau=2.0,
        backend="local",
        client=None,
        scheduler_address=None,
        n_jobs=None,
        standardize="zscore",
        random_state=None,
        verbose=0,
        views_ind=None,
    ):
        self.lam = lam
        self.lam_frac = lam_frac
        self.rho = rho
        self.loss = loss
        self.zstep = zstep
        self.wsolver = wsolver
        self.inner_iters = inner_iters
        self.ranking = ranking
        self.n_features = n_features
        self.max_iter = max_iter
        self.tol = tol
        self.tol_window = tol_window
        self.eps_abs = eps_abs
        self.eps_rel = eps_rel
        self.residual_balancing = residual_balancing
        self.mu = mu
        self.tau = tau
        self.backend = backend
        self.client = client
        self.scheduler_address = scheduler_address
        self.n_jobs = n_jobs
        self.standardize = standardize
        self.random_state = random_state
        self.verbose = verbose
        self.views_ind = views_ind

    # -- pickling / cloning: the Dask client is a live connection, not a parameter value ---------
    def __getstate__(self):
        state = super().__getstate__()
        state["client"] = None
        return state

    def __sklearn_clone__(self):
        client, self.client = self.client, None
        try:
            new = super().__sklearn_clone__()
        finally:
            self.client = client
        new.client = client
        return new

    # -- validation -------------------------------------------------------------------------------
    def _check_params(self) -> None:
        super()._check_params()
        check_option("loss", self.loss, ("l21", "fro"))
        check_option("zstep", self.zstep, ("reweight", "prox"))
        check_option("wsolver", self.wsolver, ("auto", "irls", "fista"))
        check_option("backend", self.backend, BACKENDS)
        check_option("standardize", self.standardize, STANDARDIZE)
        if self.lam_frac is None and not (np.isscalar(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be a positive float; got {self.lam!r}.")
        if self.lam_frac is not None and not self.lam_frac > 0:
            raise ValueError(f"lam_frac must be positive; got {self.lam_frac!r}.")
        for name in ("rho", "mu", "tau"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive; got {getattr(self, name)!r}.")
        for name in ("inner_iters", "max_iter", "tol_window"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}.")

    def _validate_admm_input(self, X, y):
        """Views, labels and view sizes (None for views held remotely as Dask futures)."""
        remote = (
            self.backend == "dask" and isinstance(X, list | tuple) and any(_is_future(V) for V in X)
        )
        if not remote:
            Xs, y = self._validate_fit_input(X, y)  # also refuses an empty list
            return Xs, y, [V.shape[1] for V in Xs]
        if y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, but the "
                "target y is None."
            )
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (n_samples,); got shape {y.shape}.")
        check_classification_targets(y)
        Xs = list(X)
        for v, V in enumerate(Xs):
            if not _is_future(V):
                Xs[v] = check_Xs([V], accept_sparse=SPARSE_FORMATS)[0]
                check_view(Xs[v], v, y.shape[0])
        return Xs, y, None

    # -- fit --------------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the ADMM on views and labels ``y``.

        Parameters
        ----------
        X : list of array-like of shape (n_samples, d_v), or array-like / sparse matrix of \
shape (n_samples, n_features)
            One array per view (dense or CSR / CSC), or the stacked views cut by ``views_ind``.
            With ``backend="dask"`` an entry of a list may be a ``distributed.Future`` holding the
            view on a worker (it is validated and kept there).
        y : array-like of shape (n_samples,)
            Class labels (any hashable; classes sorted; every class at least 2 samples).

        Returns
        -------
        self
        """
        t0 = time.perf_counter()
        Xs, y, sizes = self._validate_admm_input(X, y)
        if sizes is not None:
            self._check_selection_params(sizes)
        self.classes_, codes = encode_labels(y)
        C, V = self.classes_.shape[0], len(Xs)
        order = np.argsort(codes, kind="stable")  # class-sorted rows: X_v = [X_1v; …; X_Cv]
        codes = codes[order]
        Y = one_hot(codes, C)
        seeds = check_random_state(self.random_state).randint(0, 2**31 - 1, size=V)

        backend = self._make_backend(V)
        try:
            infos = backend.setup(Xs, order, codes, C, self.standardize, [self.wsolver] * V, seeds)
            sizes = [info["d"] for info in infos]
            self._check_selection_params(sizes)
            self.loc_ = [info["loc"] for info in infos]
            self.scale_ = [info["scale"] for info in infos]
            self.wsolvers_ = [info["solver"] for info in infos]
            self.lam_max_ = float(max(info["xty_norms"].max() for info in infos))
            self.lam_ = float(self.lam) if self.lam_frac is None else self.lam_frac * self.lam_max_
            W = self._solve(backend, Y, V, t0)
        finally:
            backend.close()
        self.W_ = [np.asarray(Wv) for Wv in W]
        self._set_ranking(row_norms(np.vstack(self.W_)), sizes)
        return self

    def _make_backend(self, n_views):
        if self.backend in ("local", "serial"):
            return LocalBackend()
        if self.backend == "joblib":
            return LocalBackend(threads=True, n_jobs=self.n_jobs)
        return DaskBackend(
            client=self.client,
            scheduler_address=self.scheduler_address,
            n_workers=self.n_jobs,
            n_views=n_views,
        )

    def _solve(self, backend, Y, V, t0):
        """The ADMM loop of spec §3.5 on a prepared backend; returns the list of ``W_v``.

        The dual residual of iterate k needs ``X_vᵀ(Z̄^k − M̄^k)``, which the view workers compute in
        the W-update of iteration k+1 from the same product, and the class workers' residual
        scalars of iterate k arrive with the same gather; the stopping test of iterate k is
        therefore made then, and a stop returns ``W^k`` (the workers keep the previous iterate).
        """
        lam, loss = self.lam_, self.loss
        n, C = Y.shape
        d = sum(s.shape[0] for s in self.scale_)
        msgs = backend.init(lam, V)
        Mbar = _reduce(msgs, V)
        backend.init_classes(Mbar, V, loss)  # Z̄ = M̄, P̄ = 0, F from the initial residual
        J_prev = mvfs_objective(V * Mbar - Y, sum(m["norm21"] for m in msgs), lam, loss)
        rho = float(self.rho)
        rows, small_changes = [], 0
        sqrt_pri, sqrt_dual = np.sqrt(V * n * C), np.sqrt(d * C)
        log_every = max(1, self.max_iter // 20)
        self.converged_, self.stop_reason_ = False, "max_iter"

        def finish(row, msgs, cls):
            """Complete iterate ``row`` with its residuals; True if the residual test passes."""
            d_sq, md = sum(c[0] for c in cls), sum(c[1] for c in cls)
            z_sq = row.pop("h_sq") + 2.0 * V * md + V * d_sq  # ||{Z_iv}||², Z_iv = X_iv W_v + D_i
            row["primal_residual"] = np.sqrt(V * d_sq)
            row["eps_primal"] = sqrt_pri * self.eps_abs + self.eps_rel * np.sqrt(
                max(row.pop("h_sq_view"), z_sq, 0.0)
            )
            row["dual_residual"] = row["rho"] * np.sqrt(sum(m["dual_sq"] for m in msgs))
            row["eps_dual"] = sqrt_dual * self.eps_abs + self.eps_rel * np.sqrt(
                sum(m["scale_sq"] for m in msgs)
            )
            return (
                row["primal_residual"] <= row["eps_primal"]
                and row["dual_residual"] <= row["eps_dual"]
            )

        for k in range(1, self.max_iter + 1):
            sent, received, peer = backend.bytes_sent, backend.bytes_received, backend.bytes_peer
            msgs, cls = backend.view_step(rho, lam, self.inner_iters)
            rho_next = rho
            if k >= 2:
                residual_ok = finish(rows[-1], msgs, cls)
                if residual_ok or small_changes >= self.tol_window:
                    self.converged_ = True
                    self.stop_reason_ = "residuals" if residual_ok else "objective"
                    W = backend.get_W("prev")
                    break
                if self.residual_balancing and rows[-1]["rho"] == rho:
                    r, s = rows[-1]["primal_residual"], rows[-1]["dual_residual"]
                    if r > self.mu * s:
                        rho_next = rho * self.tau
                    elif s > self.mu * r:
                        rho_next = rho / self.tau
            Mbar = _reduce(msgs, V)
            J = mvfs_objective(V * Mbar - Y, sum(m["norm21"] for m in msgs), lam, loss)
            backend.class_step(Mbar, rho, V, loss, self.zstep)
            h_sq = sum(m["h_sq"] for m in msgs)
            rows.append(
                {
                    "objective": J,
                    "rho": rho,
                    "time": time.perf_counter() - t0,
                    "bytes_sent": backend.bytes_sent - sent,
                    "bytes_received": backend.bytes_received - received,
                    "bytes_peer": backend.bytes_peer - peer,
                    "h_sq": h_sq,
                    "h_sq_view": h_sq,
                }
            )
            change = abs(J - J_prev) / max(abs(J_prev), np.finfo(float).tiny)
            small_changes = small_changes + 1 if change < self.tol else 0
            J_prev, rho = J, rho_next
            if self.verbose and k % log_every == 0:
                logger.info("ADMM-MVFS iteration %d: J=%.10g rho=%g", k, J, rho)
        else:
            msgs, cls = backend.view_step(rho, lam, self.inner_iters, update=False)
            residual_ok = finish(rows[-1], msgs, cls)
            if residual_ok or small_changes >= self.tol_window:
                self.converged_ = True
                self.stop_reason_ = "residuals" if residual_ok else "objective"
            W = backend.get_W("cur")
        self.n_iter_ = len(rows)
        self.history_ = {key: np.array([row[key] for row in rows]) for key in rows[0]}
        logger.info(
            "ADMM-MVFS stopped after %d iterations (%s): J=%.10g",
            self.n_iter_,
            self.stop_reason_,
            rows[-1]["objective"],
        )
        return W


def _reduce(msgs, n_views) -> np.ndarray:
    """``M̄ = (1/V) Σ_v X_v W_v``, summed in fixed view order (identical bits on every backend)."""
    total = msgs[0]["H"].copy()
    for m in msgs[1:]:
        total += m["H"]
    return total / n_views
