"""CqBoost and the Fusion_Cq^all late-fusion baseline of PB-MVBoost's Table 1.

CqBoost (Roy, Marchand & Laviolette, AISTATS 2016) learns a distribution ``q`` over a (large) set of
voters by column generation: a restricted master QP minimises the empirical second moment of the
margin (a C-bound surrogate) over the columns chosen so far, and its dual values price the columns
that are not yet in the model (PB-MVBoost spec §5.3, pseudo-code under "CqBoost").

Restricted master (PB-MVBoost spec §5.3), for the chosen columns ``J`` of ``H_ij = y_i h_j(x_i)``::

    minimise (1/m) γᵀγ  s.t.  γ = H[:, J] q  (α ∈ R^m),  1ᵀq = 1 (ν),  q ≥ 0,  (1/m) 1ᵀγ ≥ μ  (β)

The QP is solved by :func:`solve_master_qp`, a primal active-set method written for this problem:
every restricted master starts from the previous optimum with a zero appended (feasible, as the spec
asks), so one or two equality-constrained KKT solves per column are enough; the solutions are
vertices/faces solved to machine precision, the multipliers come out of the same KKT systems, and
the method needs no extra dependency. (Interior-point solvers such as cvxopt or Clarabel cannot be
warm-started and stop at ~1e-8 accuracy; Fusion_Cq^all runs ~200 column generations per fit, each
with up to 100 restricted masters.) Eliminating γ, the KKT conditions give the duals the pricing
step uses: ``α = (β 1 − 2γ) / m`` and the column rule ``Σ_i α_i H_ij ≤ ν`` for every ``j``.

:class:`FusionCqAllClassifier` is Fusion_Cq^all (Goyal et al., ECML-PKDD 2017), as read by the spec:
per-view linear SVMs over a grid of ``C`` (level 1, cross-fitted), standardised outputs, and CqBoost
with self-complemented RBF kernel voters on them (level 2), ``γ`` and ``μ`` chosen by cross-validation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from multiview_lab.pbmvboost._boosting import (
    SPARSE_FORMATS,
    check_binary_target,
)
from multiview_lab.utils.convergence import CountConvergence
from multiview_lab.utils.multiview import MultiviewMixin, is_list_of_views
from multiview_lab.utils.validation import (
    check_binary_labels,
    check_option,
    n_stratified_folds,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CqBoostClassifier",
    "CqBoostInfeasibleError",
    "CqBoostConvergenceError",
    "CqBoostResult",
    "FusionCqAllClassifier",
    "cqboost_column_generation",
    "solve_master_qp",
]

_VOTERS = ("rbf", "precomputed")
_LEVEL1_OUTPUTS = ("decision", "sign")
_LEVEL1_FITS = ("cross_fit", "in_sample")
_EPSILON_MODES = ("absolute", "relative")
_QP_TOL_MODES = ("absolute", "relative")


class CqBoostInfeasibleError(ValueError):
    """Raised when no distribution over the voters reaches the required mean margin ``mu``."""


class CqBoostConvergenceError(RuntimeError):
    """Raised when the active-set solver of the restricted master QP does not converge."""


def _check_positive(name: str, value, *, integer: bool = False, allow_zero: bool = False) -> None:
    kind = Integral if integer else Real
    ok = isinstance(value, kind) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        sign = "non-negative" if allow_zero else "positive"
        what = "integer" if integer else "number"
        raise ValueError(f"{name} must be a {sign} {what}; got {value!r}.")


def _check_grid(name: str, grid) -> np.ndarray:
    values = np.asarray(grid, dtype=float).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"{name} must be a non-empty sequence of positive numbers; got {grid!r}.")
    return values


# --------------------------------------------------------------------------------------------
# Restricted master QP
# --------------------------------------------------------------------------------------------


def _solve_kkt(K: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve a (possibly singular but consistent) KKT system."""
    try:
        sol = np.linalg.solve(K, rhs)
        if np.all(np.isfinite(sol)) and np.max(np.abs(K @ sol - rhs)) <= 1e-9:
            return sol
    except np.linalg.LinAlgError:
        pass
    # Rank-deficient Gram block (e.g. nearly collinear voters): the system stays consistent because
    # the objective is a sum of squares, and the minimum-norm solution is one of its solutions.
    return np.linalg.lstsq(K, rhs, rcond=None)[0]


def solve_master_qp(
    G, c, mu, q0, *, margin_active=None, warm=False, tol=1e-10, tol_mode="absolute", max_iter=None
):
    """Solve the restricted master QP of CqBoost by a primal active-set method.

    Solves ``min_q qᵀ G q`` subject to ``1ᵀq = 1``, ``q ≥ 0`` and ``cᵀq ≥ μ``: the restricted
    master of PB-MVBoost spec §5.3 with ``G = H_Jᵀ H_J / m`` and ``c = H_Jᵀ 1 / m`` (γ eliminated).
    Each iteration solves the equality-constrained QP on the current face (free coordinates, plus
    the margin constraint if it is in the working set) through its KKT system, steps towards it
    until a constraint blocks, and, once on a face optimum, frees the constraint with the most
    negative multiplier. The objective never increases.

    ``tol_mode="absolute"`` (default) compares the multipliers with ``tol``. They scale with
    ``μ`` (the optimum is about ``μ²``), so for a small ``μ`` this stops before the optimum,
    as an interior-point solver's absolute tolerance would. ``tol_mode="relative"`` solves to
    the optimum: multipliers are compared with ``tol`` times the largest entry of the gradient
    ``2 G q``, never with less than the rounding error of that gradient, and a constraint freed
    since the objective last decreased is not freed again (anti-cycling: on a degenerate vertex
    a multiplier at the rounding level could otherwise be freed and re-blocked for ever).
    Measured on the paper's Fusion_Cq^all units (docs/methods/pbmvboost.md): ``"relative"`` mends the few units
    where the absolute rule stops at a poor vote (μ = 1e-7: objective 6.6e-12 against the
    optimum 1.0e-14, training accuracy 53 % against 99 %), but on average it is worse, since
    the exact optimum at a tiny μ equalises the training margins near μ and generalises poorly.

    Parameters
    ----------
    G : ndarray of shape (k, k)
        Positive semi-definite Gram matrix of the chosen columns, divided by ``m``.
    c : ndarray of shape (k,)
        Mean margin of each chosen column.
    mu : float
        Required mean margin.
    q0 : ndarray of shape (k,)
        Feasible starting point (column generation: the previous optimum with a zero appended).
    margin_active : bool or None, default=None
        Whether the margin constraint starts in the working set; ``None`` = when it is tight.
    warm : bool, default=False
        ``q0`` is already optimal on its face (true for the previous optimum with a zero
        appended), so the first KKT solve can be skipped.
    tol : float, default=1e-10
        Tolerance on the Lagrange multipliers (optimality; see ``tol_mode``) and on the
        tightness of the margin constraint.
    tol_mode : {"absolute", "relative"}, default="absolute"
        How the multipliers are compared with ``tol`` (see above).
    max_iter : int or None, default=None
        Largest number of active-set iterations (default ``10 k + 50``).

    Returns
    -------
    q : ndarray of shape (k,)
        Optimal weights.
    nu : float
        Dual value of ``1ᵀq = 1`` in the spec's sign convention (the pricing threshold ``ν``).
    beta : float
        Dual value (≥ 0) of the margin constraint.
    margin_active : bool
        Whether the margin constraint is in the final working set.
    """
    check_option("tol_mode", tol_mode, _QP_TOL_MODES)
    G = np.asarray(G, dtype=float)
    c = np.asarray(c, dtype=float)
    q = np.array(q0, dtype=float)
    k = q.shape[0]
    free = q > 0
    if margin_active is None:
        margin_active = bool(c @ q - mu <= tol)
    max_iter = 10 * k + 50 if max_iter is None else max_iter
    g = 2.0 * (G @ q)
    relative = tol_mode == "relative"
    if relative:
        # Rounding error of g = 2 G q (k products of entries <= max |G|, weights summing to 1).
        noise = 8.0 * max(k, 1) * np.finfo(float).eps * max(float(np.abs(G).max()), 1e-300)
        f_best = 0.5 * (q @ g)
    # Anti-cycling (relative mode): bounds and margin freed since the objective last decreased.
    freed = np.zeros(k, dtype=bool)
    margin_freed = False
    stationary, lam = warm, None
    for _ in range(max_iter):
        F = np.flatnonzero(free)
        nF = F.size
        cF = c[F]
        # The margin row adds a constraint only if c is not constant on the free set; otherwise
        # 1ᵀp = 0 already implies cᵀp = 0 and the row would make the KKT matrix singular.
        use_margin = margin_active and nF >= 2 and cF.max() - cF.min() > tol
        r = 2 if use_margin else 1  # rows of B = [1ᵀ; c_Fᵀ] (or [1ᵀ])
        if not stationary:
            G_FF = G[F[:, None], F]
            K = np.zeros((nF + r, nF + r))
            K[:nF, :nF] = 2.0 * G_FF
            K[:nF, nF] = -1.0  # -Bᵀ
            K[nF, :nF] = 1.0  # B
            rhs = np.zeros(nF + r)
            rhs[nF] = 1.0
            if use_margin:
                K[:nF, nF + 1] = -cF
                K[nF + 1, :nF] = cF
                rhs[nF + 1] = mu
            sol = _solve_kkt(K, rhs)
            qF = q[F]
            p = sol[:nF] - qF
            f = 0.5 * (q @ g)
            if -(g[F] @ p + p @ G_FF @ p) > 1e-15 * max(f, 1e-300):
                step, block = 1.0, None
                neg = p < 0
                if neg.any():
                    ratios = qF[neg] / -p[neg]
                    i = int(np.argmin(ratios))
                    if ratios[i] < step:
                        step, block = float(ratios[i]), int(F[neg][i])
                if not margin_active:
                    cp = cF @ p
                    if cp < 0:
                        ratio = max(c @ q - mu, 0.0) / -cp
                        if ratio < step:
                            step, block = ratio, "margin"
                q[F] = qF + step * p
                g = 2.0 * (G @ q)
                if relative and 0.5 * (q @ g) < f_best:
                    f_best = 0.5 * (q @ g)
                    freed[:], margin_freed = False, False
                if block is None:
                    lam = sol[nF:]  # full step: q is the face optimum and sol holds its multipliers
                else:
                    if block == "margin":
                        margin_active = True
                    else:
                        q[block] = 0.0
                        free[block] = False
                    continue
            stationary = True
        # On a face optimum: 2 G q = ν 1 + β c + λ, λ ≥ 0 on the bounded coordinates.
        if lam is None:
            B = np.ones((r, nF))
            if use_margin:
                B[1] = cF
            lam = np.linalg.lstsq(B.T, g[F], rcond=None)[0]
        nu_m = float(lam[0])
        beta = float(lam[1]) if use_margin else 0.0
        lam_bounds = g - nu_m - beta * c
        lam_bounds[free | freed] = np.inf
        j = int(np.argmin(lam_bounds))
        stationary, lam = False, None
        threshold = max(tol * float(np.abs(g).max()), noise) if relative else tol
        release = use_margin and not margin_freed and beta < -threshold
        if release and beta <= lam_bounds[j]:
            margin_active = False
            margin_freed = relative
            continue
        if lam_bounds[j] < -threshold:
            free[j] = True
            freed[j] = relative
            continue
        q = np.maximum(q, 0.0)
        q /= q.sum()
        return q, -nu_m, max(beta, 0.0), bool(margin_active)
    raise CqBoostConvergenceError(
        f"The CqBoost master QP did not converge in {max_iter} active-set iterations."
    )


# --------------------------------------------------------------------------------------------
# Column generation
# --------------------------------------------------------------------------------------------


@dataclass
class CqBoostResult:
    """Outcome of :func:`cqboost_column_generation`.

    Attributes
    ----------
    columns : ndarray of int
        Chosen columns ``J`` in order of entry; with self-complement, ``j ≥ n_base`` is the
        negation of column ``j − n_base``.
    q : ndarray
        Weights of the chosen columns (a distribution).
    objective_history : ndarray
        Restricted-master objective ``(1/m) γᵀγ`` after each column generation iteration.
    entering_scores : ndarray
        ``Σ_i α_i H_ij`` of the column that entered at each iteration.
    nu_history : ndarray
        The threshold ``ν`` each entering column was compared with.
    alpha, nu, beta : ndarray, float, float
        Final dual values.
    stop_reason : str
        ``"converged"`` (no column prices above ``ν + ε``), ``"max_iterations"`` or ``"all_columns"``.
    margins : ndarray
        Final ``γ = H[:, J] q`` (margins of the vote on the training rows).
    """

    columns: np.ndarray
    q: np.ndarray
    objective_history: np.ndarray
    entering_scores: np.ndarray
    nu_history: np.ndarray
    alpha: np.ndarray
    nu: float
    beta: float
    stop_reason: str
    margins: np.ndarray


def cqboost_column_generation(
    H,
    mu,
    *,
    self_complement=True,
    n_max_iterations=100,
    epsilon=1e-6,
    epsilon_mode="absolute",
    tol=1e-10,
    qp_tol_mode="absolute",
) -> CqBoostResult:
    """Run CqBoost's column generation on a margin matrix (PB-MVBoost spec §5.3).

    Parameters
    ----------
    H : ndarray of shape (m, n_base)
        ``H_ij = y_i h_j(x_i)`` with voter outputs in ``[-1, 1]``.
    mu : float
        Required mean margin ``(1/m) 1ᵀγ ≥ μ``.
    self_complement : bool, default=True
        Also offer the negation of every voter (columns ``n_base .. 2 n_base − 1``); they are priced
        without being stored (their score is the negated score).
    n_max_iterations : int, default=100
        Largest number of columns.
    epsilon : float, default=1e-6
        Stop when the best column's score is ``≤ ν + ε`` (spec ``ε_cg``).
    epsilon_mode : {"absolute", "relative"}, default="absolute"
        ``"absolute"``: the spec's rule, ``score ≤ ν + ε``. ``"relative"``: ``score ≤ ν + ε F``
        with ``F`` the current master objective. ``score − ν`` bounds the duality gap of the full
        master (``F(q) − F* ≤ max_j score_j − ν``), and ``F ≥ μ²`` scales as ``μ²``, so the
        absolute rule stops arbitrarily far from the optimum for small ``μ`` (for ``μ ≤ 1e-3``
        ``ε = 1e-6`` exceeds the objective itself); the relative rule bounds the relative gap.
    tol : float, default=1e-10
        Tolerance of the master QP solver.
    qp_tol_mode : {"absolute", "relative"}, default="absolute"
        How the master QP compares its multipliers with ``tol`` (:func:`solve_master_qp`).

    Returns
    -------
    CqBoostResult

    Raises
    ------
    CqBoostInfeasibleError
        If even the voter with the largest mean margin has a mean margin below ``mu``
        (then no distribution over the voters is feasible).
    """
    check_option("epsilon_mode", epsilon_mode, _EPSILON_MODES)
    check_option("qp_tol_mode", qp_tol_mode, _QP_TOL_MODES)
    H = np.asarray(H, dtype=float)
    m, n_base = H.shape
    n_columns = 2 * n_base if self_complement else n_base
    max_columns = min(n_max_iterations, n_columns)
    cols = np.empty((m, max_columns))
    G = np.empty((max_columns, max_columns))
    c = np.empty(max_columns)
    chosen = np.zeros(n_columns, dtype=bool)
    J: list[int] = []
    q = np.empty(0)
    alpha = np.full(m, 1.0 / m)
    nu, beta, margin_active = 0.0, 0.0, None
    objective, scores_in, nus = [], [], []
    while True:
        s = alpha @ H
        scores = np.concatenate([s, -s]) if self_complement else s
        scores[chosen] = -np.inf
        j = int(np.argmax(scores))
        threshold = epsilon * objective[-1] if J and epsilon_mode == "relative" else epsilon
        if J and scores[j] <= nu + threshold:
            stop_reason = "converged"
            break
        if len(J) == n_columns:
            stop_reason = "all_columns"
            break
        if len(J) == max_columns:
            stop_reason = "max_iterations"
            break
        h = H[:, j] if j < n_base else -H[:, j - n_base]
        k = len(J)
        cols[:, k] = h
        G[k, : k + 1] = G[: k + 1, k] = cols[:, : k + 1].T @ h / m
        c[k] = h.sum() / m
        if k == 0:
            if c[0] < mu - tol:
                raise CqBoostInfeasibleError(
                    f"mu={mu:g} is infeasible: the voter with the largest mean margin has mean "
                    f"margin {c[0]:.3g} < mu, so no distribution over the voters reaches mu."
                )
            q0 = np.ones(1)
        else:
            q0 = np.append(q, 0.0)
        J.append(j)
        chosen[j] = True
        scores_in.append(scores[j])
        nus.append(nu)
        q, nu, beta, margin_active = solve_master_qp(
            G[: k + 1, : k + 1],
            c[: k + 1],
            mu,
            q0,
            margin_active=margin_active,
            warm=k > 0,
            tol=tol,
            tol_mode=qp_tol_mode,
        )
        gamma = cols[:, : k + 1] @ q
        alpha = (beta - 2.0 * gamma) / m
        objective.append(float(gamma @ gamma) / m)
    logger.debug("CqBoost: %d columns, stop=%s, objective=%.3g", len(J), stop_reason, objective[-1])
    return CqBoostResult(
        columns=np.asarray(J, dtype=int),
        q=q,
        objective_history=np.asarray(objective),
        entering_scores=np.asarray(scores_in),
        nu_history=np.asarray(nus),
        alpha=alpha,
        nu=float(nu),
        beta=float(beta),
        stop_reason=stop_reason,
        margins=gamma,
    )


def _rbf_margin_matrix(D2, gamma, y_pm):
    """``H_ij = y_i y_j exp(−γ ||x_i − x_j||²)``: margins of the RBF voters ``h_j = y_j k(x_j, ·)``."""
    return y_pm[:, None] * np.exp(-gamma * D2) * y_pm[None, :]


def _column_coefficients(columns, q, n_base, y_pm=None):
    """Fold the chosen (possibly complemented) columns into one signed weight per base voter."""
    sign = np.where(columns < n_base, 1.0, -1.0)
    base = np.where(columns < n_base, columns, columns - n_base)
    coef = np.zeros(n_base)
    np.add.at(coef, base, sign * q)
    if y_pm is not None:
        coef *= y_pm
    return coef


# --------------------------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------------------------


class CqBoostClassifier(ClassifierMixin, BaseEstimator):
    """CqBoost: column generation over kernel (or given) voters minimising the margin's second moment.

    Parameters
    ----------
    mu : float, default=1e-3
        Required mean margin of the majority vote (PB-MVBoost spec §5.3, restricted master).
    voters : {"rbf", "precomputed"}, default="rbf"
        ``"rbf"``: one voter per training example ``j``, ``h_j(x) = y_j exp(−γ ||x_j − x||²)``
        (Fusion_Cq^all's level 2, spec §5.3). ``"precomputed"``: the columns of ``X`` are the
        outputs, in ``[-1, 1]``, of the voters on each example (at fit and at predict time).
    gamma : float, default=1.0
        RBF kernel parameter (``voters="rbf"`` only).
    self_complement : bool, default=True
        Add the negation of every voter.
    n_max_iterations : int, default=100
        Largest number of column generation iterations (= columns).
    epsilon : float, default=1e-6
        Column generation stops when no column prices above ``ν + ε`` (spec ``ε_cg``).
    epsilon_mode : {"absolute", "relative"}, default="absolute"
        ``"relative"``: stop when no column prices above ``ν + ε F``, ``F`` the current master
        objective (a relative duality gap; see :func:`cqboost_column_generation`).
    tol : float, default=1e-10
        Tolerance of the master QP (multipliers, tightness).
    qp_tol_mode : {"absolute", "relative"}, default="absolute"
        ``"relative"`` solves each master QP to its optimum however small ``μ`` is;
        ``"absolute"`` compares the multipliers with ``tol`` (see :func:`solve_master_qp`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Original labels; ``classes_[1]`` is the positive class (+1).
    n_features_in_ : int
        Number of columns of ``X`` seen in fit.
    columns_ : ndarray of int
        Chosen columns in order of entry (``j ≥ n_base`` = negated voter ``j − n_base``).
    q_ : ndarray
        Weights of the chosen columns (``q ≥ 0``, ``Σ q = 1``).
    objective_history_ : ndarray
        Restricted-master objective ``(1/m) γᵀγ`` after each iteration (non-increasing).
    entering_scores_, nu_history_ : ndarray
        Pricing score of each entering column and the threshold ``ν`` it beat.
    alpha_, nu_, beta_ : ndarray, float, float
        Final dual values (``α = (β 1 − 2γ) / m``).
    stop_reason_ : str
        ``"converged"``, ``"max_iterations"`` or ``"all_columns"``.
    train_margins_ : ndarray of shape (n_samples,)
        ``γ = H[:, J] q`` on the training set.

    Notes
    -----
    CqBoost is a single-view learner: it takes one 2-D ``X`` (Fusion_Cq^all feeds it the stacked
    level-1 outputs); a list of views is refused with a message that says so. With
    ``voters="rbf"``, ``X`` may be sparse (CSR / CSC): only its pairwise distances are used.
    With ``voters="precomputed"`` it must be dense, as the column generation works on the
    dense margin matrix ``H = y X``. It is deterministic (ties in pricing go to the lowest column index), hence
    no ``random_state``. The stopping threshold ``ε`` is absolute, as in the spec; the dual values
    scale with ``μ``, so for very small ``μ`` column generation stops after a few columns.

    References
    ----------
    J.-F. Roy, M. Marchand, F. Laviolette, "A column generation bound minimization approach with
    PAC-Bayesian generalization guarantees", AISTATS 2016. PB-MVBoost spec §5.3 ("CqBoost").

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = CqBoostClassifier(mu=0.05, gamma=0.5).fit(X, y)
    >>> bool(abs(clf.q_.sum() - 1) < 1e-8)
    True
    """

    _parameter_constraints: dict = {
        "mu": [Interval(Real, 0, 1, closed="both")],
        "voters": [StrOptions(set(_VOTERS))],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "self_complement": ["boolean"],
        "n_max_iterations": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "epsilon_mode": [StrOptions(set(_EPSILON_MODES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "qp_tol_mode": [StrOptions(set(_QP_TOL_MODES))],
    }

    def __init__(
        self,
        mu=1e-3,
        *,
        voters="rbf",
        gamma=1.0,
        self_complement=True,
        n_max_iterations=100,
        epsilon=1e-6,
        epsilon_mode="absolute",
        tol=1e-10,
        qp_tol_mode="absolute",
    ):
        self.mu = mu
        self.voters = voters
        self.gamma = gamma
        self.self_complement = self_complement
        self.n_max_iterations = n_max_iterations
        self.epsilon = epsilon
        self.epsilon_mode = epsilon_mode
        self.tol = tol
        self.qp_tol_mode = qp_tol_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = self.voters == "rbf"  # the RBF voters read only distances
        return tags

    def _check_params(self):
        """The checks ``_parameter_constraints`` cannot express: finite values."""
        _check_positive("mu", self.mu, allow_zero=True)
        _check_positive("gamma", self.gamma)
        _check_positive("epsilon", self.epsilon, allow_zero=True)
        _check_positive("tol", self.tol)

    def _check_X(self, X, *, reset, y="no_validation"):
        if isinstance(X, list | tuple) and len(X) == 0:
            raise ValueError(f"{type(self).__name__} got an empty list as X: no samples.")
        if is_list_of_views(X):
            raise ValueError(
                f"{type(self).__name__} is a single-view estimator: it takes one 2-D X, not a "
                f"list of {len(X)} views. Stack the views (multiview_lab.utils.stack_views) or "
                "use FusionCqAllClassifier for multiview data."
            )
        if sp.issparse(X) and self.voters == "precomputed":
            raise TypeError(
                "With voters='precomputed', X (the voters' outputs) must be dense: the column "
                "generation works on the dense margin matrix H = y X. Sparse X is supported "
                "with voters='rbf'."
            )
        accept_sparse = SPARSE_FORMATS if self.voters == "rbf" else False
        if isinstance(y, str) and y == "no_validation":
            return validate_data(self, X, reset=reset, accept_sparse=accept_sparse)
        return validate_data(self, X, y, reset=reset, accept_sparse=accept_sparse)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit CqBoost on ``X`` (features, or voter outputs if ``voters="precomputed"``) and ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse matrix with ``voters="rbf"``
            Features (``voters="rbf"``) or the voters' outputs in ``[-1, 1]``.
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        self._check_params()
        X, y = self._check_X(X, reset=True, y=y)
        check_binary_target(self, y)
        y_pm, self.classes_ = check_binary_labels(y)
        if self.voters == "precomputed":
            if np.abs(X).max() > 1.0 + 1e-12:
                raise ValueError(
                    "With voters='precomputed', X must hold voter outputs in [-1, 1]; got values "
                    f"up to {np.abs(X).max():.3g} in absolute value."
                )
            H = y_pm[:, None] * X
        else:
            H = _rbf_margin_matrix(euclidean_distances(X, squared=True), self.gamma, y_pm)
        res = cqboost_column_generation(
            H,
            self.mu,
            self_complement=self.self_complement,
            n_max_iterations=self.n_max_iterations,
            epsilon=self.epsilon,
            epsilon_mode=self.epsilon_mode,
            tol=self.tol,
            qp_tol_mode=self.qp_tol_mode,
        )
        self.columns_ = res.columns
        self.q_ = res.q
        self.objective_history_ = res.objective_history
        self.entering_scores_ = res.entering_scores
        self.nu_history_ = res.nu_history
        self.alpha_, self.nu_, self.beta_ = res.alpha, res.nu, res.beta
        self.stop_reason_ = res.stop_reason
        self.train_margins_ = res.margins
        n_base = H.shape[1]
        if self.voters == "rbf":
            coef = _column_coefficients(res.columns, res.q, n_base, y_pm)
            keep = np.flatnonzero(coef)
            self.support_vectors_ = X[keep]  # sparse X gives sparse support vectors
            self.dual_coef_ = coef[keep]
        else:
            self.dual_coef_ = _column_coefficients(res.columns, res.q, n_base)
        return self

    def decision_function(self, X):
        """Weighted vote ``Σ_{j∈J} q_j h_j(x)`` (positive = ``classes_[1]``)."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        if self.voters == "precomputed":
            return X @ self.dual_coef_
        K = np.exp(-self.gamma * euclidean_distances(X, self.support_vectors_, squared=True))
        return K @ self.dual_coef_

    def predict(self, X):
        """``classes_[1]`` where the vote is positive, ``classes_[0]`` otherwise (ties → −1)."""
        score = self.decision_function(X)  # checks the fit first
        return self.classes_[(score > 0).astype(int)]


class FusionCqAllClassifier(MultiviewMixin, ClassifierMixin, BaseEstimator):
    """Fusion_Cq^all: per-view linear SVMs, then CqBoost with RBF kernel voters (late fusion).

    Level 1 (PB-MVBoost spec §5.3, [paper]): for each view, one linear SVM per value of ``C`` in
    ``Cs`` (default ``10^k, k = −8..3``). Their decision values on the training set are
    *cross-fitted* (``cv_level1`` folds, so level 2 never sees outputs of an SVM trained on the same
    row), standardised with the training mean and standard deviation, and form ``z ∈ R^{|Cs| V}``.
    Level 2 [derived reading, spec §5.3]: :class:`CqBoostClassifier` with self-complemented RBF
    voters ``h_j(z) = y_j exp(−γ ||z_j − z||²)``; ``γ ∈ gammas`` and ``μ ∈ mus`` are chosen by
    stratified ``cv_level2``-fold cross-validation accuracy on the level-2 training set (a zero vote
    counts as an error; ties go to the smallest ``γ``, then the smallest ``μ``; a ``μ`` that no voter
    reaches on a fold is skipped). Column generation stops on a relative duality gap
    (``epsilon_mode="relative"``): the spec's absolute ``ε_cg`` is larger than the master objective
    (``≥ μ²``) for ``μ ≤ 1e-3`` and stopped CqBoost on degenerate votes.
    At predict time ``z`` comes from SVMs refitted on the whole training set.

    The estimator expects features already scaled to a unit range (the PB-MVBoost pipeline divides
    MNIST pixels by 255 before calling it, spec §5.2); it does not rescale them itself.

    Parameters
    ----------
    Cs : sequence of float, default=(1e-8, 1e-7, ..., 1e3)
        Level-1 SVM regularisation values (12 values [paper]).
    gammas : sequence of float, default=(1e-6, ..., 1e2)
        RBF parameters tried at level 2 (9 values [paper]).
    mus : sequence of float, default=(1e-8, ..., 1e-1)
        CqBoost mean margins tried at level 2 (8 values [paper]).
    level1_output : {"decision", "sign"}, default="decision"
        Level-1 features: SVM decision values, or their signs (±1).
    level1_fit : {"cross_fit", "in_sample"}, default="cross_fit"
        Level-2 training features: ``cv_level1``-fold cross-fitted SVM outputs (spec §5.3, no
        stacking leakage), or the literal reading of the paper, the outputs on the training rows of
        the SVMs fitted on those same rows.
    standardize : bool, default=True
        Standardise level-1 outputs with the training mean / standard deviation.
    cv_level1 : int, default=5
        Folds of the level-1 cross-fitting.
    cv_level2 : int, default=3
        Folds of the (γ, μ) selection.
    svm_max_iter : int, default=10000
        ``max_iter`` of :class:`~sklearn.svm.LinearSVC`; remaining convergence warnings are counted
        in ``n_svm_convergence_warnings_`` and logged instead of being emitted.
    svm_dual : bool or "auto", default="auto"
        ``dual`` of :class:`~sklearn.svm.LinearSVC` (primal when there are more samples than features).
    n_max_iterations, epsilon, tol :
        Passed to :class:`CqBoostClassifier`.
    epsilon_mode : {"relative", "absolute"}, default="relative"
        Passed to :class:`CqBoostClassifier`; ``"absolute"`` is the spec's literal rule.
    qp_tol_mode : {"absolute", "relative"}, default="absolute"
        Passed to :class:`CqBoostClassifier`: ``"relative"`` solves every master QP to its
        optimum, which for μ ≤ 1e-5 lowers accuracy on MNIST on average (docs/methods/pbmvboost.md).
    random_state : int, RandomState or None, default=None
        Seeds the cross-validation splits and the SVMs.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view. The views may be sparse (CSR / CSC):
        level 1 is linear SVMs, which take sparse input.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        Number of columns of all the views together.
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    svms_ : list of list of LinearSVC
        ``svms_[v][k]``: the SVM of view ``v`` with ``C = Cs[k]``, fitted on all training rows.
    z_mean_, z_scale_ : ndarray of shape (|Cs| V,)
        Standardisation of the level-1 outputs.
    z_train_ : ndarray of shape (n_samples, |Cs| V)
        Standardised cross-fitted level-1 outputs (level 2's training set); column
        ``v |Cs| + k`` is view ``v`` with ``C = Cs[k]``.
    level1_fold_ : ndarray of int of shape (n_samples,)
        Level-1 fold of each training row: its ``z`` comes from SVMs fitted on the other folds
        (``-1`` everywhere with ``level1_fit="in_sample"``).
    cv_scores_ : ndarray of shape (len(gammas), len(mus))
        Mean level-2 cross-validation accuracy (NaN where ``μ`` was infeasible on a fold).
    best_gamma_, best_mu_ : float
        The best candidate by CV accuracy that can be fitted on all training rows.
    level2_rejected_ : list of (gamma, mu, reason)
        Better candidates by CV accuracy whose fit on all training rows failed (``μ`` infeasible
        there, or the master QP did not converge); usually empty.
    cqboost_ : CqBoostClassifier
        Level-2 model fitted on all (cross-fitted) level-1 outputs.
    n_svm_convergence_warnings_ : int

    References
    ----------
    A. Goyal, E. Morvant, P. Germain, M.-R. Amini, "PAC-Bayesian analysis for a two-step
    hierarchical multiview learning approach", ECML-PKDD 2017; PB-MVBoost paper Sect. 5.2 and
    spec §5.3 ("Fusion_Cq^all").

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 90)
    >>> Xs = [rng.normal(size=(90, 5)) + y[:, None] for _ in range(2)]
    >>> clf = FusionCqAllClassifier(Cs=(0.01, 1.0), gammas=(0.1,), mus=(0.01,), random_state=0)
    >>> clf.fit(Xs, y).score(Xs, y) > 0.8
    True
    """

    def __init__(
        self,
        *,
        Cs=tuple(10.0**k for k in range(-8, 4)),
        gammas=tuple(10.0**k for k in range(-6, 3)),
        mus=tuple(10.0**k for k in range(-8, 0)),
        level1_output="decision",
        level1_fit="cross_fit",
        standardize=True,
        cv_level1=5,
        cv_level2=3,
        svm_max_iter=10000,
        svm_dual="auto",
        n_max_iterations=100,
        epsilon=1e-6,
        epsilon_mode="relative",
        tol=1e-10,
        qp_tol_mode="absolute",
        random_state=None,
        views_ind=None,
    ):
        self.Cs = Cs
        self.gammas = gammas
        self.mus = mus
        self.level1_output = level1_output
        self.level1_fit = level1_fit
        self.standardize = standardize
        self.cv_level1 = cv_level1
        self.cv_level2 = cv_level2
        self.svm_max_iter = svm_max_iter
        self.svm_dual = svm_dual
        self.n_max_iterations = n_max_iterations
        self.epsilon = epsilon
        self.epsilon_mode = epsilon_mode
        self.tol = tol
        self.qp_tol_mode = qp_tol_mode
        self.random_state = random_state
        self.views_ind = views_ind

    _parameter_constraints: dict = {
        "Cs": ["array-like"],
        "gammas": ["array-like"],
        "mus": ["array-like"],
        "level1_output": [StrOptions(set(_LEVEL1_OUTPUTS))],
        "level1_fit": [StrOptions(set(_LEVEL1_FITS))],
        "standardize": ["boolean"],
        "cv_level1": [Interval(Integral, 2, None, closed="left")],
        "cv_level2": [Interval(Integral, 2, None, closed="left")],
        "svm_max_iter": [Interval(Integral, 1, None, closed="left")],
        "svm_dual": [StrOptions({"auto"}), "boolean"],
        "n_max_iterations": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "epsilon_mode": [StrOptions(set(_EPSILON_MODES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "qp_tol_mode": [StrOptions(set(_QP_TOL_MODES))],
        "random_state": ["random_state"],
        "views_ind": ["array-like", Interval(Integral, 1, None, closed="left"), None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True  # level 1 is linear SVMs; level 2 sees their outputs
        return tags

    def _check_params(self):
        """The grids (``_parameter_constraints`` only checks that they are array-like)."""
        Cs = _check_grid("Cs", self.Cs)
        gammas = _check_grid("gammas", self.gammas)
        mus = np.asarray(self.mus, dtype=float).ravel()
        if mus.size == 0 or not np.all(np.isfinite(mus)) or np.any(mus < 0) or np.any(mus > 1):
            raise ValueError(
                f"mus must be a non-empty sequence of numbers in [0, 1]; got {self.mus!r}."
            )
        return Cs, gammas, mus

    def _make_svm(self, C, seed):
        return LinearSVC(C=C, dual=self.svm_dual, max_iter=self.svm_max_iter, random_state=seed)

    def _fit_svms(self, Xs, y, Cs, seed):
        return [[self._make_svm(C, seed).fit(X, y) for C in Cs] for X in Xs]

    def _svm_outputs(self, svms, Xs):
        z = np.column_stack(
            [svm.decision_function(X) for X, row in zip(Xs, svms, strict=True) for svm in row]
        )
        return np.sign(z) if self.level1_output == "sign" else z

    def _level1(self, Xs, y_pm, Cs, rng):
        """Level-1 outputs on the training rows and the SVMs fitted on all rows."""
        n = y_pm.shape[0]
        z = np.empty((n, len(Xs) * Cs.size))
        fold_of = np.full(n, -1)
        seed = rng.randint(np.iinfo(np.int32).max)
        k = n_stratified_folds(y_pm, self.cv_level1, "Fusion_Cq^all level-1 cross-fitting")
        folds = StratifiedKFold(k, shuffle=True, random_state=seed)
        # The views (finite) and the SVM options were validated once in fit: the 12 V (k + 1)
        # LinearSVC fits skip scikit-learn's per-fit parameter and finiteness checks.
        with (
            CountConvergence() as counted,
            config_context(skip_parameter_validation=True, assume_finite=True),
        ):
            if self.level1_fit == "cross_fit":
                for k, (train, test) in enumerate(folds.split(Xs[0], y_pm)):
                    fold_of[test] = k
                    svms = self._fit_svms([X[train] for X in Xs], y_pm[train], Cs, seed)
                    z[test] = self._svm_outputs(svms, [X[test] for X in Xs])
            svms = self._fit_svms(Xs, y_pm, Cs, seed)
            if self.level1_fit == "in_sample":
                z = self._svm_outputs(svms, Xs)
        n_warn = counted.n
        if n_warn:
            logger.info(
                "Fusion_Cq^all: %d LinearSVC fits hit svm_max_iter without converging.", n_warn
            )
        return z, fold_of, svms, n_warn

    def _select_gamma_mu(self, z, y_pm, gammas, mus, rng):
        """Mean accuracy of every (γ, μ) over stratified folds.

        A zero vote on a held-out row counts as an error. A candidate is NaN (excluded from the
        choice) if μ is infeasible on a fold or if the
        master QP's active-set solver does not converge on a fold (logged as a warning): a
        candidate that cannot be solved on the training folds is not selected.
        """
        scores = np.zeros((gammas.size, mus.size))
        k = n_stratified_folds(y_pm, self.cv_level2, "Fusion_Cq^all level-2 (gamma, mu) selection")
        folds = StratifiedKFold(k, shuffle=True, random_state=rng.randint(2**31 - 1))
        for train, test in folds.split(z, y_pm):
            D2_train = euclidean_distances(z[train], squared=True)
            D2_test = euclidean_distances(z[test], z[train], squared=True)
            y_tr = y_pm[train]
            for a, gamma in enumerate(gammas):
                H = _rbf_margin_matrix(D2_train, gamma, y_tr)
                K_test = np.exp(-gamma * D2_test)
                for b, mu in enumerate(mus):
                    try:
                        res = cqboost_column_generation(
                            H,
                            mu,
                            n_max_iterations=self.n_max_iterations,
                            epsilon=self.epsilon,
                            epsilon_mode=self.epsilon_mode,
                            tol=self.tol,
                            qp_tol_mode=self.qp_tol_mode,
                        )
                    except CqBoostInfeasibleError:
                        scores[a, b] = np.nan
                        continue
                    except CqBoostConvergenceError as exc:
                        logger.warning(
                            "Fusion_Cq^all: (gamma=%g, mu=%g) excluded from the level-2 "
                            "selection: %s",
                            gamma,
                            mu,
                            exc,
                        )
                        scores[a, b] = np.nan
                        continue
                    coef = _column_coefficients(res.columns, res.q, train.size, y_tr)
                    # A zero vote is a wrong prediction, as in the evaluation (tie_policy="error"):
                    # with a large gamma the RBF votes underflow to exactly 0 away from the
                    # chosen voters, and counting those ties as the negative (majority) class
                    # let such a candidate win the selection and tie on most test points.
                    pred = np.sign(K_test @ coef)
                    scores[a, b] += np.mean(pred == y_pm[test]) / k
        return scores

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit both levels on the views (scaled features) and labels ``y``.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self
        """
        Cs, gammas, mus = self._check_params()
        Xs, y = self._validate_views(X, y, reset=True, accept_sparse=SPARSE_FORMATS)
        check_binary_target(self, y)
        y_pm, self.classes_ = check_binary_labels(y)
        n_stratified_folds(
            y_pm, 2, "Fusion_Cq^all"
        )  # at least 2 examples per class, else a clear error
        rng = check_random_state(self.random_state)
        z, self.level1_fold_, self.svms_, self.n_svm_convergence_warnings_ = self._level1(
            Xs, y_pm, Cs, rng
        )
        if self.standardize:
            self.z_mean_ = z.mean(axis=0)
            scale = z.std(axis=0)
            # Constant columns (up to rounding) are left unscaled, as StandardScaler does.
            constant = scale <= 10 * np.finfo(float).eps * np.maximum(np.abs(self.z_mean_), 1.0)
            self.z_scale_ = np.where(constant, 1.0, scale)
        else:
            self.z_mean_, self.z_scale_ = np.zeros(z.shape[1]), np.ones(z.shape[1])
        self.z_train_ = z = (z - self.z_mean_) / self.z_scale_
        # Level 2 is thousands of tiny (<= 100 variables) KKT solves: BLAS threads only add overhead.
        with threadpool_limits(limits=1, user_api="blas"):
            self.cv_scores_ = self._select_gamma_mu(z, y_pm, gammas, mus, rng)
        if np.all(np.isnan(self.cv_scores_)):
            raise ValueError(
                f"Every mu in {mus.tolist()} is infeasible for every gamma: no RBF voter reaches the "
                "required mean margin. Use smaller mus."
            )
        # Candidates by CV accuracy, ties to the smallest gamma, then the smallest mu. A mu
        # feasible on every training fold can be infeasible on all rows (a voter's mean margin
        # changes with m), and the master QP can fail to converge: the next candidate is fitted.
        scores = self.cv_scores_.ravel()
        order = [i for i in np.lexsort((np.arange(scores.size), -scores)) if np.isfinite(scores[i])]
        self.level2_rejected_ = []
        for i in order:
            a, b = np.unravel_index(i, self.cv_scores_.shape)
            level2 = CqBoostClassifier(
                float(mus[b]),
                gamma=float(gammas[a]),
                n_max_iterations=self.n_max_iterations,
                epsilon=self.epsilon,
                epsilon_mode=self.epsilon_mode,
                tol=self.tol,
                qp_tol_mode=self.qp_tol_mode,
            )
            try:
                with threadpool_limits(limits=1, user_api="blas"):
                    self.cqboost_ = level2.fit(z, y_pm)
            except (CqBoostInfeasibleError, CqBoostConvergenceError) as exc:
                logger.warning(
                    "Fusion_Cq^all: (gamma=%g, mu=%g) fails on all training rows (%s); "
                    "fitting the next candidate by CV accuracy.",
                    gammas[a],
                    mus[b],
                    exc,
                )
                self.level2_rejected_.append((float(gammas[a]), float(mus[b]), str(exc)))
                continue
            break
        else:
            raise CqBoostConvergenceError(
                "Fusion_Cq^all: no (gamma, mu) candidate can be fitted on all training rows: "
                + "; ".join(f"({g:g}, {m:g}): {e}" for g, m, e in self.level2_rejected_)
            )
        self.best_gamma_, self.best_mu_ = float(gammas[a]), float(mus[b])
        logger.info(
            "Fusion_Cq^all: gamma=%g, mu=%g (CV accuracy %.4f)",
            self.best_gamma_,
            self.best_mu_,
            self.cv_scores_[a, b],
        )
        return self

    def transform_level1(self, X):
        """Standardised level-1 outputs ``z`` of the SVMs fitted on all training rows.

        Parameters
        ----------
        X : list of array-like or sparse matrix of shape (n_samples, n_features_v), or array-like or sparse matrix of shape (n_samples, n_features)
            The views, or the views side by side (split at ``views_ind``).

        Returns
        -------
        z : ndarray of shape (n_samples, len(Cs) * n_views_)
        """
        check_is_fitted(self)
        Xs = self._validate_views(X, reset=False, accept_sparse=SPARSE_FORMATS)
        with config_context(assume_finite=True):  # checked once above, not once per SVM
            z = self._svm_outputs(self.svms_, Xs)
        return (z - self.z_mean_) / self.z_scale_

    def decision_function(self, X):
        """CqBoost vote on the level-1 outputs (positive = ``classes_[1]``)."""
        z = self.transform_level1(X)  # checks the fit first
        return self.cqboost_.decision_function(z)

    def predict(self, X):
        """``classes_[1]`` where the vote is positive, ``classes_[0]`` otherwise (ties → −1)."""
        score = self.decision_function(X)  # checks the fit first
        return self.classes_[(score > 0).astype(int)]
