"""PAC-Bayes generalisation bounds of a fitted PB-MVBoost / MVBoost majority vote.

The two bounds of Goyal et al. (2019), Sect. 3, evaluated for the two-level posterior of a fitted
model on its training sample ``S`` (``n`` examples):

* Corollary 1 (Catoni-type, proof in Appendix D) bounds the true Gibbs risk ``R_D(G_rho)``:
  ``R_D(G_rho) <= (1 - exp(-(C R_S(G_rho) + [E_rho KL(Q_v||P_v) + KL(rho||pi) + ln(1/delta)]/n)))
  / (1 - exp(-C))``, for a constant ``C > 0`` fixed before seeing ``S``
  (:func:`catoni_gibbs_bound`).
* Theorem 2 bounds the true risk of the majority vote ``R_D(B_rho)`` by the multiview C-bound
  (Lemma 1, Eq. (3)) in which every view-specific Gibbs risk is replaced by the largest value
  allowed by the set (7) and every view-specific disagreement by the smallest value allowed by
  the set (8) (:func:`mv_cbound_generalisation`).

Both sets are kl balls, ``{r : kl(q || r) <= budget}``; :func:`kl_inverse_upper` and
:func:`kl_inverse_lower` give their end points by bisection.

The paper's setting, for a fitted model (:func:`pac_bayes_bounds`):

* ``pi`` is uniform over the ``V`` views and ``P_v`` uniform over the voters of view ``v``. The
  voters of view ``v`` are the ``T = n_iter_`` trees ``h_v^1, ..., h_v^T`` fitted on that view
  (``estimators_[:, v]``; a tree of weight 0 is still a voter, of posterior mass 0).
* The posterior ``Q_v`` and hyper-posterior ``rho`` are those of the vote the model actually
  predicts with, written as ``sign(sum_v rho_v sum_t Q_v(h_v^t) h_v^t(x^v))`` (paper Eq. (1)),
  see :meth:`~multiview_lab.pbmvboost.PBMVBoostClassifier.pac_bayes_quantities`: for the
  per-iteration vote (spec (B7b), the default) ``Q_v(h_v^t) ∝ rho_v^t Q_v^t`` (the normalised
  boosting weights ``rho_v^t Q_v^t`` of the view's voters) and ``rho_v ∝ sum_t rho_v^t Q_v^t``;
  for the final-``rho`` vote (B7) ``Q_v(h_v^t) ∝ Q_v^t`` and ``rho_v ∝ rho_v^T sum_t Q_v^t`` (raw
  weights) or ``rho = rho^T`` (normalised weights). So the bounds are about the classifier that
  is scored, not about the ``rho^T`` of the last iteration.
* MVBoost is the same model with ``rho^t`` uniform during training; its vote still weights view
  ``v`` by ``sum_t Q_v^t``, so its ``rho`` (and ``KL(rho||pi)``) is in general not uniform.
* ``KL(Q_v||P_v) = sum_t Q_v(h_v^t) ln(T Q_v(h_v^t))`` and ``KL(rho||pi) = sum_v rho_v ln(V rho_v)``.

Caveat. PAC-Bayes bounds need priors chosen before seeing ``S``. The voters of a boosting model
are fitted on ``S``, so a prior uniform over them is data-dependent: the values computed here are
the paper's bounds evaluated as the paper sets them up (Sect. 3, uniform priors), not a certified
guarantee for trees learned on ``S`` (which would need a data-independent voter set, e.g. stumps
on fixed thresholds, or a sample-compression argument).

Choices beyond the paper (documented on each function):

* ``C`` of Corollary 1 is taken on a fixed grid ``c_grid`` (default :data:`C_GRID`, the 9 values
  ``2**-4, ..., 2**4``) with a union bound: each grid point is used at confidence ``delta / k``
  (``k`` grid points) and the smallest bound is returned, which keeps the minimum valid.
* Theorem 2's sets (7), (8) are written with ``ln(4 sqrt(m) / delta)`` where ``m`` is the sample
  size ``n`` (``2 sqrt(n)`` bounds Maurer's ``xi(n)`` for ``n >= 8``; the ``4`` is ``2 / (delta/2)``,
  half of ``delta`` for each set). The paper's statement uses one kl ball per view at that
  confidence; for the ``V`` balls to hold together, ``union_over_views=True`` (default) uses
  ``delta / V`` per view (``ln(4 V sqrt(n) / delta)``); ``False`` gives the paper's literal
  constant.

References
----------
A. Goyal, E. Morvant, P. Germain, M.-R. Amini. Multiview Boosting by Controlling the Diversity and
the Accuracy of View-specific Voters. Neurocomputing 358 (2019) 81-92, Lemma 1, Corollary 1,
Theorem 2, Eqs. (3), (7), (8), Appendix D.
P. Germain, A. Lacasse, F. Laviolette, M. Marchand, J.-F. Roy. Risk bounds for the majority vote:
from a PAC-Bayesian analysis to a learning algorithm. JMLR 16 (2015), Eqs. (23), (24).
A. Maurer. A note on the PAC Bayesian theorem. arXiv cs/0411099 (2004).
"""

from __future__ import annotations

import numpy as np
from scipy.special import rel_entr

from multiview_lab.pbmvboost.cbound import pac_bayes_quantities
from multiview_lab.pbmvboost.pbmvboost import PBMVBoostClassifier

#: Default grid of Catoni constants ``C`` for Corollary 1 (union bound over its 9 values).
C_GRID = 2.0 ** np.arange(-4, 5)

#: Bisection steps of the kl inversions: the bracket [0, 1] shrinks to 2**-100.
_BISECTION_STEPS = 100


def kl_bernoulli(q, p):
    """Binary relative entropy ``kl(q || p) = q ln(q/p) + (1-q) ln((1-q)/(1-p))``.

    Vectorised (broadcasts ``q`` and ``p``), with ``0 ln 0 = 0``: ``kl(0 || p) = -ln(1 - p)``,
    ``kl(1 || p) = -ln(p)``, and ``+inf`` where ``p`` is 0 or 1 and ``q`` differs from it.

    Parameters
    ----------
    q, p : float or array-like of floats in [0, 1]

    Returns
    -------
    kl : float or ndarray
        Non-negative (rounding below 0 is clipped).
    """
    q, p = np.broadcast_arrays(_probabilities(q, "q"), _probabilities(p, "p"))
    out = _kl(q, p)
    return out if out.ndim else float(out)


def kl_inverse_upper(q, bound):
    """``sup {r in [0, 1] : kl(q || r) <= bound}``, the upper end of a kl ball (set (7)).

    ``kl(q || .)`` increases on ``[q, 1]``, so the supremum is found by bisection of ``[q, 1]``
    (vectorised, 100 halvings: accurate to far below 1e-10). The returned value is the upper
    end of the final bracket, so it is not below the supremum (up to the rounding of kl). Closed forms: at
    ``q = 0`` the result is ``1 - exp(-bound)``; ``bound = inf`` or ``q = 1`` give 1.

    Parameters
    ----------
    q : float or array-like of floats in [0, 1]
        Empirical risk.
    bound : float or array-like of floats >= 0
        The budget (right-hand side of the kl inequality).

    Returns
    -------
    r : float or ndarray
    """
    q, b = _inversion_args(q, bound)
    lo, hi = q.copy(), np.ones_like(q)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        inside = _kl(q, mid) <= b
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return hi if hi.ndim else float(hi)


def kl_inverse_lower(q, bound):
    """``inf {d in [0, 1] : kl(q || d) <= bound}``, the lower end of a kl ball (set (8)).

    ``kl(q || .)`` decreases on ``[0, q]``; bisection of ``[0, q]`` as in
    :func:`kl_inverse_upper`, returning the lower end of the final bracket (not above the
    infimum, up to the rounding of kl). Closed forms: at ``q = 1`` the result is ``exp(-bound)``; ``q = 0`` gives 0.

    Parameters
    ----------
    q : float or array-like of floats in [0, 1]
    bound : float or array-like of floats >= 0

    Returns
    -------
    d : float or ndarray
    """
    q, b = _inversion_args(q, bound)
    lo, hi = np.zeros_like(q), q.copy()
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        inside = _kl(q, mid) <= b
        lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    return lo if lo.ndim else float(lo)


def kl_uniform(weights, axis=-1):
    """``KL(Q || U_k) = sum_i Q_i ln(k Q_i)``: KL divergence of a distribution to the uniform one.

    Parameters
    ----------
    weights : array-like
        Distributions along ``axis`` (non-negative, summing to 1 within 1e-9).
    axis : int, default=-1

    Returns
    -------
    kl : float or ndarray
        In ``[0, ln k]``.
    """
    w = np.asarray(weights, dtype=float)
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative.")
    if not np.allclose(w.sum(axis=axis), 1.0, rtol=0.0, atol=1e-9):
        raise ValueError(f"weights must sum to 1 along axis {axis}.")
    k = w.shape[axis]
    out = np.maximum(rel_entr(w, 1.0 / k).sum(axis=axis), 0.0)
    return out if np.ndim(out) else float(out)


def catoni_gibbs_bound(gibbs_risk, n, kl, delta=0.05, *, c_grid=C_GRID, return_constant=False):
    """Corollary 1: upper bound on the true Gibbs risk ``R_D(G_rho)`` (Catoni-type).

    For one constant ``C > 0`` chosen before seeing the sample, with probability at least
    ``1 - delta``, ``R_D(G_rho) <= (1 - exp(-(C R_S(G_rho) + [KL + ln(1/delta)] / n))) /
    (1 - exp(-C))`` with ``KL = E_{v~rho} KL(Q_v||P_v) + KL(rho||pi)`` (paper Corollary 1,
    proof in Appendix D). ``C`` is a free constant of the corollary and the best one depends on
    ``R_S``; choosing it after seeing ``S`` would void the bound. Here every ``C`` of the fixed
    grid ``c_grid`` (``k`` values) is used at confidence ``delta / k`` (a union bound, i.e.
    ``ln(k / delta)`` in place of ``ln(1 / delta)``) and the smallest bound is returned: the
    minimum then holds with probability at least ``1 - delta``. A grid of one value is the
    corollary for that ``C``.

    Parameters
    ----------
    gibbs_risk : float in [0, 1]
        Empirical Gibbs risk ``R_S(G_rho)`` (rounding within 1e-12 outside [0, 1] is clipped).
    n : int
        Size of the sample ``S`` the risk was measured on (the training sample).
    kl : float >= 0
        ``E_{v~rho} KL(Q_v||P_v) + KL(rho||pi)``.
    delta : float in (0, 1], default=0.05
    c_grid : float or array-like of floats > 0, default=C_GRID
        Candidate constants (fixed in advance; default ``2**-4, ..., 2**4``).
    return_constant : bool, default=False
        Also return the ``C`` of the grid that gives the bound.

    Returns
    -------
    bound : float
        In ``[gibbs_risk, 1]`` (values above 1 are clipped: the bound is then vacuous).
    C : float
        Only with ``return_constant``.
    """
    r = _probability_scalar(gibbs_risk, "gibbs_risk")
    n, delta = _sample_size(n), _confidence(delta)
    kl = float(kl)
    if not (np.isfinite(kl) and kl >= 0):
        raise ValueError(f"kl must be a finite value >= 0; got {kl!r}.")
    c = np.atleast_1d(np.asarray(c_grid, dtype=float))
    if c.ndim != 1 or c.size == 0 or np.any(~np.isfinite(c)) or np.any(c <= 0):
        raise ValueError(f"c_grid must hold finite values > 0; got {c_grid!r}.")
    budget = (kl + np.log(c.size / delta)) / n
    values = np.expm1(-(c * r + budget)) / np.expm1(-c)  # (1 - e^{-x}) / (1 - e^{-C})
    best = int(np.argmin(values))
    bound = float(min(values[best], 1.0))
    return (bound, float(c[best])) if return_constant else bound


def mv_cbound_sets(
    view_gibbs_risks, view_disagreements, view_kl, n, delta=0.05, *, union_over_views=True
):
    """End points of Theorem 2's sets (7) and (8) for every view.

    ``sup r_v = sup {r : kl(R_S(Q_v) || r) <= [KL(Q_v||P_v) + ln(4 sqrt(n) / delta')] / n}`` and
    ``inf d_v = inf {d : kl(d_S(Q_v) || d) <= [2 KL(Q_v||P_v) + ln(4 sqrt(n) / delta')] / n}``
    (the paper writes ``ln(4 sqrt(m) / delta)``; ``m`` is the sample size ``n``). The factor 2 of
    (8) is the KL of the pair posterior ``Q_v x Q_v`` to ``P_v x P_v``. ``delta' = delta / V``
    with ``union_over_views`` (default: the ``V`` kl balls then hold together with probability
    at least ``1 - delta``), ``delta' = delta`` for the paper's literal constant.

    The constraint ``r <= 1/2`` of (7) is not applied per view: a capped value would no longer
    bound ``R_D(G_{Q_v})`` from above. Lemma 1 needs the ``rho``-average below 1/2, which
    :func:`mv_cbound_generalisation` checks.

    Parameters
    ----------
    view_gibbs_risks : array-like of shape (n_views,)
        Empirical ``R_S(Q_v)`` on ``S`` (uniform weights).
    view_disagreements : array-like of shape (n_views,)
        Empirical ``d_S(Q_v)`` on ``S``.
    view_kl : array-like of shape (n_views,)
        ``KL(Q_v||P_v)``.
    n : int
        Size of ``S`` (at least 8, where ``xi(n) <= 2 sqrt(n)`` holds).
    delta : float in (0, 1], default=0.05
    union_over_views : bool, default=True

    Returns
    -------
    sup_r, inf_d : ndarray of shape (n_views,)
    """
    r = np.clip(np.asarray(view_gibbs_risks, dtype=float), 0.0, 1.0)
    d = np.clip(np.asarray(view_disagreements, dtype=float), 0.0, 1.0)
    kl = np.asarray(view_kl, dtype=float)
    if not (r.ndim == 1 and r.shape == d.shape == kl.shape):
        raise ValueError(
            "view_gibbs_risks, view_disagreements and view_kl must be 1-D, one per view."
        )
    if np.any(~np.isfinite(kl)) or np.any(kl < 0):
        raise ValueError("view_kl must be finite and >= 0.")
    n, delta = _sample_size(n), _confidence(delta)
    if n < 8:
        raise ValueError(f"Theorem 2 uses xi(n) <= 2 sqrt(n), shown for n >= 8; got n = {n}.")
    delta_view = delta / r.size if union_over_views else delta
    log_term = np.log(4.0 * np.sqrt(n) / delta_view)
    sup_r = kl_inverse_upper(r, (kl + log_term) / n)
    inf_d = kl_inverse_lower(d, (2.0 * kl + log_term) / n)
    return np.atleast_1d(sup_r), np.atleast_1d(inf_d)


def mv_cbound_generalisation(
    rho, view_gibbs_risks, view_disagreements, view_kl, n, delta=0.05, *, union_over_views=True
):
    """Theorem 2: upper bound on the true risk ``R_D(B_rho)`` of the multiview majority vote.

    ``R_D(B_rho) <= 1 - (1 - 2 E_rho sup r_v)**2 / (1 - 2 E_rho inf d_v)`` with ``sup r_v`` and
    ``inf d_v`` the end points of the sets (7) and (8) (:func:`mv_cbound_sets`): the multiview
    C-bound of Lemma 1, Eq. (3), with each true view-specific Gibbs risk replaced by an upper
    bound and each true disagreement by a lower bound (the C-bound increases with the former
    and decreases with the latter where ``E_rho r < 1/2``). Holds with probability at least
    ``1 - delta`` (with ``union_over_views``; see :func:`mv_cbound_sets`).

    Returns 1 (vacuous) where Lemma 1 does not apply: ``E_rho sup r_v >= 1/2`` (the condition
    ``R_D(G_rho) < 1/2`` is not guaranteed) or ``1 - 2 E_rho inf d_v <= 0``. Values are clipped
    to ``[0, 1]``.

    Parameters
    ----------
    rho : array-like of shape (n_views,)
        Distribution over the views.
    view_gibbs_risks, view_disagreements, view_kl, n, delta, union_over_views
        As in :func:`mv_cbound_sets`.

    Returns
    -------
    bound : float
    """
    rho = np.asarray(rho, dtype=float)
    if rho.ndim != 1 or np.any(rho < -1e-12) or abs(rho.sum() - 1.0) > 1e-9:
        raise ValueError("rho must be a distribution over the views.")
    sup_r, inf_d = mv_cbound_sets(
        view_gibbs_risks, view_disagreements, view_kl, n, delta, union_over_views=union_over_views
    )
    if rho.shape != sup_r.shape:
        raise ValueError(f"rho has {rho.size} views, the view quantities {sup_r.size}.")
    a = 1.0 - 2.0 * float(rho @ sup_r)
    b = 1.0 - 2.0 * float(rho @ inf_d)
    if a <= 0.0 or b <= 0.0:
        return 1.0
    return float(np.clip(1.0 - a * a / b, 0.0, 1.0))


def has_bounds(model):
    """Whether :func:`pac_bayes_bounds` applies to ``model``: a fitted binary PB-MVBoost / MVBoost."""
    return (
        isinstance(model, PBMVBoostClassifier)
        and hasattr(model, "estimator_weights_")
        and getattr(model, "ovr_estimators_", None) is None
    )


def voter_posteriors(model):
    """Posterior ``Q_v`` over each view's voters of a fitted binary PB-MVBoost / MVBoost model.

    ``Q_v(h_v^t) ∝ rho_v^t Q_v^t`` for the per-iteration vote (spec (B7b)) and ``∝ Q_v^t`` for the
    final-``rho`` vote (B7), the boosting weights normalised over the view's ``T`` voters; a
    view whose weights are all 0 gets the uniform distribution (its vote in the model is the
    voters' mean). These are the weights of ``m_v`` in
    :meth:`~multiview_lab.pbmvboost.PBMVBoostClassifier.pac_bayes_quantities`.

    Parameters
    ----------
    model : PBMVBoostClassifier or MVBoostClassifier
        Fitted, binary.

    Returns
    -------
    Q : ndarray of shape (n_iter_, n_views_)
        Column ``v`` is ``Q_v`` (sums to 1).
    """
    _check_model(model)
    vote, _ = model._vote_options()
    Q = np.asarray(model.estimator_weights_, dtype=float)
    c = np.asarray(model.rho_history_, dtype=float) * Q if vote == "per_iteration" else Q
    W = c.sum(axis=0)
    return np.where(W > 0, c / np.where(W > 0, W, 1.0), 1.0 / c.shape[0])


def pac_bayes_bounds(model, Xs, y, *, delta=0.05, c_grid=C_GRID, union_over_views=True):
    """Corollary 1 and Theorem 2 for a fitted PB-MVBoost / MVBoost model on its training sample.

    The posterior is the one of the vote the model predicts with (see the module docstring);
    the empirical quantities are those of
    :meth:`~multiview_lab.pbmvboost.PBMVBoostClassifier.pac_bayes_quantities` (uniform weights
    over the sample). The sample must be the one the model was fitted on: it is the ``S`` of
    the bounds.

    Parameters
    ----------
    model : PBMVBoostClassifier or MVBoostClassifier
        Fitted, binary (for a one-vs-all model use ``ovr_estimators_[k]``).
    Xs : list of array-like of shape (n_samples, n_features_v)
        The training views.
    y : array-like of shape (n_samples,)
        The training labels (among ``classes_``).
    delta : float in (0, 1], default=0.05
        Confidence parameter of each bound.
    c_grid : float or array-like, default=C_GRID
        Catoni constants of Corollary 1 (see :func:`catoni_gibbs_bound`).
    union_over_views : bool, default=True
        Theorem 2's per-view confidence ``delta / V`` (see :func:`mv_cbound_sets`).

    Returns
    -------
    dict
        ``n_samples``, ``delta``; ``rho`` (n_views,), ``view_kl`` ``KL(Q_v||P_v)`` (n_views,),
        ``kl_views`` ``E_rho KL(Q_v||P_v)``, ``kl_rho`` ``KL(rho||pi)``; ``gibbs_risk``
        ``R_S(G_rho)``, ``view_gibbs_risks`` ``R_S(Q_v)``, ``view_disagreements`` ``d_S(Q_v)``,
        ``multiview_cbound`` (Eq. (3) on ``S``), ``majority_vote_risk`` (training 0-1 risk, ties as
        errors); ``bound_gibbs_cor1`` and ``catoni_C`` (Corollary 1); ``view_gibbs_risk_sup``,
        ``view_disagreement_inf`` (sets (7), (8)) and ``bound_mv_thm2`` (Theorem 2).
    """
    _check_model(model)
    Xs_checked, y_pm = model._check_labelled(Xs, y)
    P = model._voter_predictions(Xs_checked)
    rho, m, _ = model._final_vote(P)
    Q = voter_posteriors(model)
    if not np.allclose(np.einsum("tv,tvn->vn", Q, P), m, rtol=0.0, atol=1e-9):
        raise RuntimeError(
            f"{type(model).__name__}: the voter weights of voter_posteriors do not reproduce the "
            "model's vote; update multiview_lab.pbmvboost.bounds.voter_posteriors."
        )
    n = y_pm.shape[0]
    pac = pac_bayes_quantities(rho, m, y_pm)
    view_kl = np.atleast_1d(kl_uniform(Q, axis=0))
    kl_views = float(rho @ view_kl)
    kl_rho = kl_uniform(rho)
    cor1, c_best = catoni_gibbs_bound(
        pac["gibbs_risk"], n, kl_views + kl_rho, delta, c_grid=c_grid, return_constant=True
    )
    sup_r, inf_d = mv_cbound_sets(
        pac["view_gibbs_risks"],
        pac["view_disagreements"],
        view_kl,
        n,
        delta,
        union_over_views=union_over_views,
    )
    thm2 = mv_cbound_generalisation(
        rho,
        pac["view_gibbs_risks"],
        pac["view_disagreements"],
        view_kl,
        n,
        delta,
        union_over_views=union_over_views,
    )
    return {
        "n_samples": int(n),
        "delta": float(delta),
        "rho": rho,
        "view_kl": view_kl,
        "kl_views": kl_views,
        "kl_rho": float(kl_rho),
        "gibbs_risk": pac["gibbs_risk"],
        "view_gibbs_risks": pac["view_gibbs_risks"],
        "view_disagreements": pac["view_disagreements"],
        "multiview_cbound": pac["multiview_cbound"],
        "majority_vote_risk": pac["majority_vote_risk"],
        "bound_gibbs_cor1": cor1,
        "catoni_C": c_best,
        "view_gibbs_risk_sup": sup_r,
        "view_disagreement_inf": inf_d,
        "bound_mv_thm2": thm2,
    }


# -- helpers ---------------------------------------------------------------------------------
def _kl(q, p):
    """kl(q || p) with ``log1p`` of relative differences: accurate where ``p`` is close to ``q``
    (the bisections probe there) and at the edges (``0 ln 0 = 0``, ``+inf`` off the support)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        head = np.where(q > 0, q * np.log1p((q - p) / p), 0.0)
        tail = np.where(q < 1, (1.0 - q) * np.log1p((p - q) / (1.0 - p)), 0.0)
    return np.maximum(head + tail, 0.0)


def _probabilities(x, name):
    x = np.asarray(x, dtype=float)
    if np.any(~(x >= 0.0)) or np.any(x > 1.0):  # ~(x >= 0) also catches NaN
        raise ValueError(f"{name} must lie in [0, 1].")
    return x


def _probability_scalar(x, name, tol=1e-12):
    """A float in [0, 1]; values within ``tol`` outside (summation rounding) are clipped."""
    x = float(x)
    if not -tol <= x <= 1.0 + tol:
        raise ValueError(f"{name} must lie in [0, 1]; got {x!r}.")
    return min(max(x, 0.0), 1.0)


def _inversion_args(q, bound):
    q = _probabilities(q, "q")
    b = np.asarray(bound, dtype=float)
    if np.any(~(b >= 0.0)):
        raise ValueError("bound must be >= 0 (and not NaN).")
    q, b = np.broadcast_arrays(q, b)
    return q.astype(float, copy=True), b


def _sample_size(n):
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}.")
    return int(n)


def _confidence(delta):
    delta = float(delta)
    if not 0.0 < delta <= 1.0:
        raise ValueError(f"delta must lie in (0, 1]; got {delta!r}.")
    return delta


def _check_model(model):
    if not isinstance(model, PBMVBoostClassifier):
        raise TypeError(
            f"PAC-Bayes bounds are defined for PBMVBoostClassifier / MVBoostClassifier; got "
            f"{type(model).__name__}."
        )
    if not hasattr(model, "classes_"):
        raise ValueError(f"{type(model).__name__} is not fitted.")
    if model.ovr_estimators_ is not None:
        raise ValueError(
            "PAC-Bayes bounds are defined per binary model; use ovr_estimators_[k] with labels "
            "y == classes_[k]."
        )
