"""Maximum-entropy marginals and their Jeffreys / JS_GM divergences (MeMd spec Sect. 2).

Every function works element-wise on arrays of moments, so one call handles all
(class, feature) pairs at once. The three maximum-entropy (ME) families of MeMd spec (E2) are

* ``"gaussian"``: 2-moment ME density on R, N(m, v);
* ``"exponential"``: 1-moment ME density on [0, inf), Exp(mean m);
* ``"truncexp01"``: 1-moment ME density on [0, 1], p(x) ∝ exp(-λ x).

An ME density is written ``p(x) = exp(-λ_0 - Σ_k λ_k φ_k(x))`` with φ_1 = x, φ_2 = x²
(paper Eq. (16)); natural parameters are stacked as ``[λ_0, λ_1(, λ_2)]`` along the last axis.
The Jeffreys divergence is the **sum** of the two Kullback-Leibler divergences (paper Eq. (19)).
"""

from __future__ import annotations

import numpy as np

FAMILIES = ("gaussian", "exponential", "truncexp01")
_SERIES_SWITCH = 1e-2


def class_average(weights, values):
    """``Σ_j w_j values[j]`` over the leading (class) axis.

    ``einsum`` rather than ``weights @ values``: a BLAS matrix-vector product over the long
    feature axis is multi-threaded and stalls on a busy machine (measured 20x slower).
    """
    return np.einsum("j,j...->...", weights, values)


def check_family(family: str) -> str:
    """Return ``family`` or raise ``ValueError`` naming the allowed values."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}.")
    return family


def n_natural_parameters(family: str) -> int:
    """Number L of natural parameters ``[λ_0, λ_1(, λ_2)]`` of ``family``."""
    return 3 if check_family(family) == "gaussian" else 2


# --------------------------------------------------------------------------- truncated exponential
def truncexp01_mean(lam):
    """Mean of the truncated exponential density ∝ exp(-λ x) on [0, 1] (MeMd spec (E2)).

    ``m(λ) = 1/λ - 1/(e^λ - 1)``, with the series ``1/2 - λ/12 + λ³/720 - λ⁵/30240`` for
    ``|λ| < 1e-2`` (MeMd spec Sect. 3.2) and ``m(-λ) = 1 - m(λ)``.
    """
    lam = np.asarray(lam, dtype=float)
    a = np.abs(lam)
    small = a < _SERIES_SWITCH
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # 1/(e^a - 1) = e^-a / (1 - e^-a): no overflow for large a.
        direct = 1.0 / a - np.exp(-a) / -np.expm1(-a)
    a2 = a * a
    series = 0.5 - a / 12.0 + a * a2 / 720.0 - a * a2 * a2 / 30240.0
    m_pos = np.where(small, series, direct)
    return np.where(lam >= 0, m_pos, 1.0 - m_pos)


def _truncexp01_mean_derivative_pos(a):
    """m'(a) for a >= 0: 1/(4 sinh²(a/2)) - 1/a², series -1/12 + a²/240 - a⁴/6048 near 0."""
    small = a < _SERIES_SWITCH
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.exp(-a)
        direct = e / np.expm1(-a) ** 2 - 1.0 / (a * a)
    a2 = a * a
    series = -1.0 / 12.0 + a2 / 240.0 - a2 * a2 / 6048.0
    return np.where(small, series, direct)


def truncexp01_lambda(m, *, max_iter: int = 100):
    """Solve ``m(λ) = m`` for the truncated exponential on [0, 1] (MeMd spec (E2), Sect. 3.2).

    Reduces to ``m <= 1/2`` by symmetry, then runs a vectorised Newton iteration on the
    bracket ``[0, 1/m]`` started at ``λ = 1/m``, with a bisection step whenever an iterate
    leaves the bracket.

    Parameters
    ----------
    m : array-like
        Means strictly inside (0, 1).
    max_iter : int, default=100
        Iteration cap (convergence takes a handful of steps).

    Returns
    -------
    lam : ndarray
        λ with the shape of ``m``.
    """
    m = np.asarray(m, dtype=float)
    shape = m.shape
    m = m.ravel()
    if np.any((m <= 0) | (m >= 1)):
        raise ValueError("truncexp01 means must lie strictly inside (0, 1); floor them first.")
    flip = m > 0.5
    target = np.where(flip, 1.0 - m, m)  # reduced to (0, 1/2]
    lo = np.zeros_like(target)
    hi = 1.0 / target
    lam = hi.copy()
    active = target < 0.5
    lam[~active] = 0.0
    for _ in range(max_iter):
        if not active.any():
            break
        lam_a, t_a = lam[active], target[active]
        f = truncexp01_mean(lam_a) - t_a  # m(λ) is decreasing: f > 0 means the root is right
        lo_a = np.where(f > 0, lam_a, lo[active])
        hi_a = np.where(f > 0, hi[active], lam_a)
        new = lam_a - f / _truncexp01_mean_derivative_pos(lam_a)
        outside = ~np.isfinite(new) | (new < lo_a) | (new > hi_a)
        new = np.where(outside, 0.5 * (lo_a + hi_a), new)
        done = (np.abs(new - lam_a) <= 4 * np.finfo(float).eps * np.abs(new)) | (f == 0)
        lam[active], lo[active], hi[active] = new, lo_a, hi_a
        idx = np.flatnonzero(active)
        active[idx[done]] = False
    return np.where(flip, -lam, lam).reshape(shape)


def truncexp01_log_normaliser(lam):
    """λ_0 = log((1 - e^{-λ}) / λ) of the truncated exponential, overflow-free (MeMd spec Sect. 3.2)."""
    lam = np.asarray(lam, dtype=float)
    a = np.abs(lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.log(-np.expm1(-a)) - np.log(a)  # value for +a
    # λ0(-a) = λ0(a) + a, since (e^{a} - 1)/a = e^{a} (1 - e^{-a})/a.
    out = np.where(lam >= 0, pos, pos + a)
    return np.where(lam == 0, 0.0, out)


# --------------------------------------------------------------------------- natural parameters
def natural_parameters(family: str, mean, var=None):
    """Natural parameters ``[λ_0, λ_1(, λ_2)]`` of the ME density with given moments (MeMd spec (E2)).

    Parameters
    ----------
    family : {"gaussian", "exponential", "truncexp01"}
    mean : array-like
        First moments m (already floored for the 1-moment families).
    var : array-like or None
        Variances v = μ_2 - m² (already floored); ``"gaussian"`` only.

    Returns
    -------
    lam : ndarray of shape mean.shape + (L,)
        L = 3 for ``"gaussian"``, 2 otherwise.
    """
    check_family(family)
    m = np.asarray(mean, dtype=float)
    if family == "gaussian":
        v = np.asarray(var, dtype=float)
        lam2 = 0.5 / v
        return np.stack([0.5 * np.log(2 * np.pi * v) + m * m * lam2, -m / v, lam2], axis=-1)
    if family == "exponential":
        return np.stack([np.log(m), 1.0 / m], axis=-1)
    lam = truncexp01_lambda(m)
    return np.stack([truncexp01_log_normaliser(lam), lam], axis=-1)


def jeffreys_from_natural(lam_p, mu_p, lam_q, mu_q):
    """Jeffreys divergence of two ME densities of one family from (λ, μ) (paper Eq. (19)).

    ``J(P, Q) = Σ_k (λ_k^Q - λ_k^P)(μ_k^P - μ_k^Q)``; λ_0 cancels.

    Parameters
    ----------
    lam_p, lam_q : ndarray of shape (..., L)
        Natural parameters ``[λ_0, λ_1, ...]``.
    mu_p, mu_q : ndarray of shape (..., L - 1)
        Moments ``[μ_1, μ_2, ...]`` that the densities match.
    """
    lam_p, lam_q = np.asarray(lam_p, float), np.asarray(lam_q, float)
    diff_mu = np.asarray(mu_p, float) - np.asarray(mu_q, float)
    return np.sum((lam_q[..., 1:] - lam_p[..., 1:]) * diff_mu, axis=-1)


def jeffreys_gaussian(m1, v1, m2, v2):
    """Closed-form Jeffreys divergence of two Gaussians (MeMd spec (E3)).

    ``J = [(v1 - v2)² + (v1 + v2)(m1 - m2)²] / (2 v1 v2)``.
    """
    dm = np.subtract(m1, m2)
    dv = np.subtract(v1, v2)
    return (dv * dv + np.add(v1, v2) * dm * dm) / (2.0 * np.multiply(v1, v2))


def jeffreys_exponential(m1, m2):
    """Closed-form Jeffreys divergence of two exponentials with means m1, m2 (MeMd spec (E3))."""
    dm = np.subtract(m1, m2)
    return dm * dm / np.multiply(m1, m2)


def jeffreys_truncexp01(m1, m2, lam1=None, lam2=None):
    """Jeffreys divergence of two truncated exponentials on [0, 1] (MeMd spec (E3)).

    ``J = (λ^{(2)} - λ^{(1)})(m1 - m2)``; pass the λ's when already solved.
    """
    lam1 = truncexp01_lambda(m1) if lam1 is None else lam1
    lam2 = truncexp01_lambda(m2) if lam2 is None else lam2
    return (np.asarray(lam2) - np.asarray(lam1)) * np.subtract(m1, m2)


def jeffreys(family: str, p, q):
    """Jeffreys divergence J = KL(P‖Q) + KL(Q‖P) of two ME densities of ``family``.

    Parameters
    ----------
    family : {"gaussian", "exponential", "truncexp01"}
    p, q : dict
        Moments of each density: ``{"mean": m, "var": v}`` (gaussian) or ``{"mean": m}``;
        ``"truncexp01"`` may also carry ``"lam"`` (its solved λ_1). Arrays broadcast.

    Returns
    -------
    J : ndarray
        MeMd spec (E3) / paper Eq. (19).
    """
    check_family(family)
    if family == "gaussian":
        return jeffreys_gaussian(p["mean"], p["var"], q["mean"], q["var"])
    if family == "exponential":
        return jeffreys_exponential(p["mean"], q["mean"])
    return jeffreys_truncexp01(p["mean"], q["mean"], p.get("lam"), q.get("lam"))


def pairwise_jeffreys_scores(family: str, params: dict, weights):
    """MeMd-JS scores Σ_{j<l} π_j π_l J(P_j, P_l) and per-class weighted J (MeMd spec (E5), (24)).

    The literal pairwise loop, O(M² d); the estimator uses the equal O(M d) :func:`js_gm_scores`.

    Parameters
    ----------
    family : str
        ME family.
    params : dict of ndarray of shape (M, d)
        Per-class moments, as in :func:`jeffreys`.
    weights : ndarray of shape (M,)
        π (class priors).

    Returns
    -------
    score : ndarray of shape (d,)
        JS_GM per feature, paper Eq. (24).
    per_class : ndarray of shape (M, d)
        ``Σ_{l≠j} π_l J(P_j, P_l)``: the weighted average of the J's between class j and the
        others that replaces J(P_j, P_{j'}) (paper, Sect. IV-B); ``score = ½ π · per_class``.
    """
    weights = np.asarray(weights, dtype=float)
    n_classes = weights.shape[0]
    first = next(iter(params.values()))
    score = np.zeros(first.shape[1:])
    per_class = np.zeros(first.shape)
    for j in range(n_classes - 1):
        rest = slice(j + 1, None)
        pj = {key: value[j][None] for key, value in params.items()}
        pl = {key: value[rest] for key, value in params.items()}
        J = jeffreys(family, pj, pl)  # (M - j - 1, d)
        score += weights[j] * class_average(weights[rest], J)
        per_class[j] += class_average(weights[rest], J)
        per_class[rest] += weights[j] * J
    return score, per_class


def js_gm(family: str, params: dict, weights):
    """JS divergence with the unnormalised weighted geometric mean, paper Eq. (23)-(24).

    The literal pairwise sum Σ_{j<l} π_j π_l J_jl (:func:`pairwise_jeffreys_scores`); parameter
    arrays may have shape (M,) (a single feature) or (M, d).
    """
    squeeze = np.ndim(next(iter(params.values()))) == 1
    params = {k: np.asarray(v, float).reshape(len(v), -1) for k, v in params.items()}
    score, _ = pairwise_jeffreys_scores(family, params, weights)
    return score[0] if squeeze else score


def _centred(a, weights):
    """``a - Σ_j π_j a_j`` over the class axis, computed from differences to class 0.

    Subtracting class 0 first keeps the rounding error relative to the spread of ``a`` (exact
    zeros for a feature equal in every class) rather than to its magnitude.
    """
    diff = a - a[:1]
    return diff - class_average(weights, diff)


def js_gm_scores(family: str, params: dict, weights):
    """MeMd-JS scores in O(M d): the class-weighted covariance form of paper Eq. (24).

    With J_jl = -Σ_k (λ_k^j - λ_k^l)(μ_k^j - μ_k^l) (paper Eq. (19)), the pairwise sum
    Σ_{j<l} π_j π_l J_jl (MeMd spec (E5)) equals -Σ_k Cov_π(λ_k, μ_k), the covariance over the
    classes weighted by π (Σ π = 1) [derived]. Per family, with centred a~ = a - Σ π a:

    * exponential: -Cov_π(1/m, m); truncated exponential: -Cov_π(λ, m);
    * gaussian, from (E3) written as ½(v_j - v_l)(1/v_l - 1/v_j) + ½(1/v_j + 1/v_l)(m_j - m_l)²:
      -½ Cov_π(v, 1/v) + ½ Σ_j π_j (m~_j² + Var_π(m)) / v_j (positive terms, shift invariant).

    Equal to :func:`pairwise_jeffreys_scores` up to rounding (tested), without its O(M² d) loop.

    Parameters
    ----------
    family : str
    params : dict of ndarray of shape (M, d)
        Floored moments per class, as in :func:`jeffreys`.
    weights : ndarray of shape (M,)
        π, summing to 1.

    Returns
    -------
    score : ndarray of shape (d,)
    per_class : ndarray of shape (M, d)
        ``Σ_l π_l J_jl`` (so that ``score = ½ π · per_class``).
    """
    weights = np.asarray(weights, dtype=float)
    mean = np.asarray(params["mean"], dtype=float)
    m = _centred(mean, weights)
    if family == "gaussian":
        var = np.asarray(params["var"], dtype=float)
        inv = 1.0 / var
        vw = _centred(var, weights)
        vw *= _centred(inv, weights)
        cov_vw = class_average(weights, vw)
        m2 = m * m
        var_m = class_average(weights, m2)
        inv_m2 = inv * m2
        mean_term = inv_m2 + inv * var_m  # (m~_j² + Var_π(m)) / v_j
        score = 0.5 * (class_average(weights, mean_term) - cov_vw)
        # Σ_l π_l J_jl: the mean part ½ Σ_l π_l (1/v_j + 1/v_l)(m_j - m_l)², expanded around m̄
        per_class = mean_term + class_average(weights, inv) * m2 + class_average(weights, inv_m2)
        per_class -= 2.0 * m * class_average(weights, inv * m)
        per_class -= vw + cov_vw
        per_class *= 0.5
        return score, per_class
    lam = 1.0 / mean if family == "exponential" else np.asarray(params["lam"], dtype=float)
    lam = _centred(lam, weights)
    cov = class_average(weights, lam * m)
    return -cov, -(lam * m + cov)
