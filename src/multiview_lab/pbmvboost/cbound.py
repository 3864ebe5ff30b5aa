"""Multiview C-bound: the quantities of PB-MVBoost and the solvers of its step 8.

Everything here is a pure function of vote matrices, weights and labels, vectorised over views and
examples.

* View-specific Gibbs risk and disagreement under a distribution ``w`` (paper Eqs. (9), (10)) in
  the O(n t) form PB-MVBoost spec (B8), (B9): with ``M = H_v u`` and ``U = sum(u)``,
  ``r_v = (U - sum_i w_i y_i M_i) / 2`` and ``d_v = (U**2 - sum_i w_i M_i**2) / 2``.
* The objective ``F(rho) = (1 - 2 rho.r)**2 / (1 - 2 rho.d)`` of Algorithm 1 step 8 (spec (B5)),
  its gradient (B10), the multiview C-bound ``C_mv = 1 - F`` (paper Eq. (3)).
* Two maximisers of ``F`` over the simplex: SLSQP as in the paper (Sect. 5.2, with the equality
  constraint (B11)) and the exact vertex enumeration (B12b: ``F`` is convex where ``b > 0``).
* The PAC-Bayes quantities of a two-level majority vote on a labelled sample: empirical Gibbs
  risk and disagreement (Eqs. (13), (14)), margin moments, the classical C-bound ``1 - mu1**2/mu2``
  (Eq. (2)), the multiview C-bound (Eq. (3)) and the 0-1 risk of the vote with ties as errors.

References
----------
A. Goyal, E. Morvant, P. Germain, M.-R. Amini. Multiview Boosting by Controlling the Diversity and
the Accuracy of View-specific Voters. Neurocomputing 358 (2019) 81-92.
"""

from __future__ import annotations

import logging

import numpy as np
from scipy.optimize import minimize

logger = logging.getLogger(__name__)

#: Below this value the denominator ``b(rho)`` of ``F`` is treated as zero (paper mode guard).
B_GUARD = 1e-12
#: Objective value returned to the minimiser of ``-F`` where ``b(rho) <= B_GUARD`` (paper mode).
_GUARD_VALUE = 1e300
#: Largest move of the simplex projection accepted after SLSQP before falling back (paper mode).
_PROJECTION_TOL = 1e-6


def risk_disagreement_from_votes(M, U, w, y):
    """View-specific Gibbs risks and disagreements from the views' weighted votes.

    PB-MVBoost spec (B8), (B9): with ``M_v = H_v u_v`` and ``U_v = sum(u_v)``,
    ``r_v = (U_v - sum_i w_i y_i M_vi) / 2`` and ``d_v = (U_v**2 - sum_i w_i M_vi**2) / 2``
    (paper Eqs. (9), (10)).

    Parameters
    ----------
    M : ndarray of shape (n_views, n_samples) or (n_samples,)
        Weighted votes ``sum_s u_s h^s(x_i)`` of each view.
    U : float or ndarray of shape (n_views,)
        Sum of the voter weights of each view (1 for normalised weights).
    w : ndarray of shape (n_samples,)
        Distribution over the examples (sums to 1).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.

    Returns
    -------
    r, d : ndarray of shape (n_views,) (or floats for 1-D ``M``)
        Gibbs risks and disagreements.
    """
    M = np.asarray(M, dtype=float)
    U = np.asarray(U, dtype=float)
    r = 0.5 * (U - M @ (w * y))
    d = 0.5 * (U * U - (M * M) @ w)
    return r, d


def view_risk_disagreement(H, u, w, y):
    """Gibbs risk and disagreement of one view from its voter matrix (spec (B8), (B9)).

    Parameters
    ----------
    H : ndarray of shape (n_samples, n_voters)
        Voter outputs in {-1, +1}.
    u : ndarray of shape (n_voters,)
        Voter weights (normalised ``q`` or raw ``Q``).
    w : ndarray of shape (n_samples,)
        Distribution over the examples.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.

    Returns
    -------
    r, d : float
        ``sum_s u_s eps_s(w)`` and ``sum_{s,s'} u_s u_s' Delta_ss'(w)``.
    """
    u = np.asarray(u, dtype=float)
    return risk_disagreement_from_votes(H @ u, u.sum(), w, y)


def cbound_objective(rho, r, d, *, guard=True):
    """Objective of Algorithm 1 step 8, ``F(rho) = a**2 / b`` (PB-MVBoost spec (B5)).

    ``a = 1 - 2 rho.r`` and ``b = 1 - 2 rho.d``. With ``guard`` (paper mode), ``b <= 1e-12``
    gives ``-inf`` (the vote is identically 0 on the support of the distribution).
    """
    a = 1.0 - 2.0 * (rho @ r)
    b = 1.0 - 2.0 * (rho @ d)
    if guard and b <= B_GUARD:
        return -np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        return a * a / b


def cbound_gradient(rho, r, d, *, guard=True):
    """Gradient of ``F`` (PB-MVBoost spec (B10)): ``(-4 r_v a b + 2 d_v a**2) / b**2``."""
    a = 1.0 - 2.0 * (rho @ r)
    b = 1.0 - 2.0 * (rho @ d)
    if guard and b <= B_GUARD:
        return np.zeros_like(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (-4.0 * r * a * b + 2.0 * d * a * a) / (b * b)


def multiview_cbound(rho, r, d):
    """Multiview C-bound ``C_mv(rho) = 1 - (1 - 2 rho.r)**2 / (1 - 2 rho.d)`` (paper Eq. (3))."""
    return 1.0 - cbound_objective(rho, r, d, guard=False)


def project_simplex(x):
    """Euclidean projection of ``x`` onto the probability simplex (sort-based)."""
    x = np.asarray(x, dtype=float)
    s = np.sort(x)[::-1]
    css = np.cumsum(s) - 1.0
    k = np.arange(1, x.size + 1)
    last = np.nonzero(s - css / k > 0)[0][-1]
    return np.maximum(x - css[last] / (last + 1), 0.0)


def solve_rho_vertices(r, d):
    """Exact maximiser of ``F`` over the simplex by vertex enumeration (PB-MVBoost spec (B12b)).

    ``F(e_v) = (1 - 2 r_v)**2 / (1 - 2 d_v)``; returns ``e_{argmax_v F(e_v)}`` (first on ties).
    """
    r = np.asarray(r, dtype=float)
    d = np.asarray(d, dtype=float)
    b = 1.0 - 2.0 * d
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(b > B_GUARD, (1.0 - 2.0 * r) ** 2 / b, -np.inf)
    rho = np.zeros(r.size)
    rho[int(np.argmax(f))] = 1.0
    return rho


def solve_rho_slsqp(r, d, x0, *, constraint_jac="ones", policy="paper"):
    """Maximise ``F`` over the simplex with SciPy's SLSQP (paper Sect. 5.2; spec (B5), (B10), (B11)).

    Parameters
    ----------
    r, d : ndarray of shape (n_views,)
        View-specific Gibbs risks and disagreements.
    x0 : ndarray of shape (n_views,)
        Starting point.
    constraint_jac : {"ones", "reference_bug"}, default="ones"
        Jacobian of ``sum(rho) - 1``: the correct ``(1, ..., 1)`` (B11) or ``rho`` itself as in
        the authors' public code (reproduction only; the result can leave the simplex).
    policy : {"paper", "reference"}, default="paper"
        ``"paper"``: guarded objective, ``ftol=1e-10``, ``maxiter=500``; a NaN result or a failed
        run keeps the better of ``x0`` and the projected result, the result is projected on the
        simplex and a projection moving it by more than 1e-6 falls back the same way.
        ``"reference"``: unguarded objective, SciPy defaults, a NaN result returns ``x0``,
        no projection.

    Returns
    -------
    rho : ndarray of shape (n_views,)
    """
    r = np.asarray(r, dtype=float)
    d = np.asarray(d, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    paper = policy == "paper"

    def neg_f(x):
        a = 1.0 - 2.0 * (x @ r)
        b = 1.0 - 2.0 * (x @ d)
        if paper and b <= B_GUARD:
            return _GUARD_VALUE
        return -(a * a) / b

    def neg_grad(x):
        return -cbound_gradient(x, r, d, guard=paper)

    if constraint_jac == "ones":
        ones = np.ones_like(x0)

        def cons_jac(x):
            return ones
    else:  # "reference_bug": the Jacobian is rho itself

        def cons_jac(x):
            return x

    options = {"ftol": 1e-10, "maxiter": 500} if paper else {}
    with np.errstate(divide="ignore", invalid="ignore"):
        res = minimize(
            neg_f,
            x0,
            jac=neg_grad,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * x0.size,
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": cons_jac}],
            options=options,
        )
    x = res.x
    if not paper:
        return x0.copy() if np.any(np.isnan(x)) else x
    if np.any(np.isnan(x)):
        return x0.copy()
    p = project_simplex(x)
    if res.success and np.max(np.abs(p - x)) <= _PROJECTION_TOL:
        return p
    logger.debug("SLSQP fallback (success=%s, message=%s)", res.success, res.message)
    return p if cbound_objective(p, r, d) >= cbound_objective(x0, r, d) else x0.copy()


def pac_bayes_quantities(rho, votes, y, sample_weight=None):
    """PAC-Bayes quantities of a two-level majority vote on a labelled sample.

    Parameters
    ----------
    rho : ndarray of shape (n_views,)
        Distribution over the views.
    votes : ndarray of shape (n_views, n_samples)
        Normalised view votes ``m_v(x_i) = E_{h~Q_v} h(x_i^v)`` in [-1, 1].
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    sample_weight : ndarray of shape (n_samples,) or None
        Distribution over the examples (normalised here); uniform if None.

    Returns
    -------
    dict
        ``gibbs_risk`` R(G_rho) = (1 - mu1)/2 (paper Eq. (13)); ``disagreement`` d(rho) =
        (1 - mu2)/2 (Eq. (14)); ``mu1``, ``mu2``, ``margin_variance`` (Eq. (15));
        ``view_gibbs_risks`` and ``view_disagreements`` (Eq. (B1)); ``classical_cbound``
        1 - mu1**2/mu2 (Eq. (2)); ``multiview_cbound`` (Eq. (3)); ``majority_vote_risk`` (0-1
        risk of ``sign(sum_v rho_v m_v)``, ties counted as errors); ``cbound_valid`` (Gibbs risk
        below 1/2, i.e. the two bounds hold). On this measure: vote risk <= classical C-bound <=
        multiview C-bound whenever ``cbound_valid``.
    """
    rho = np.asarray(rho, dtype=float)
    votes = np.atleast_2d(np.asarray(votes, dtype=float))
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    w = np.full(n, 1.0 / n) if sample_weight is None else np.asarray(sample_weight, float)
    w = w / w.sum()
    r_v, d_v = risk_disagreement_from_votes(votes, 1.0, w, y)
    margin = y * (rho @ votes)
    mu1 = float(w @ margin)
    mu2 = float(w @ (margin * margin))
    with np.errstate(divide="ignore", invalid="ignore"):
        classical = 1.0 - mu1 * mu1 / mu2 if mu2 > 0 else np.nan
    return {
        "gibbs_risk": 0.5 * (1.0 - mu1),
        "disagreement": 0.5 * (1.0 - mu2),
        "mu1": mu1,
        "mu2": mu2,
        "margin_variance": mu2 - mu1 * mu1,
        "view_gibbs_risks": r_v,
        "view_disagreements": d_v,
        "classical_cbound": float(classical),
        "multiview_cbound": float(multiview_cbound(rho, r_v, d_v)),
        "majority_vote_risk": float(w @ (margin <= 0)),
        "cbound_valid": bool(mu1 > 0),
    }
