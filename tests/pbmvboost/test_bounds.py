"""PAC-Bayes bounds of multiview_lab.pbmvboost.bounds: kl and its inversions, Corollary 1,
Theorem 2 (sets (7), (8)), the posterior of a fitted model, and the bounds holding on
simulated multiview data."""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from multiview_lab.pbmvboost import MVAdaBoostClassifier, MVBoostClassifier, PBMVBoostClassifier
from multiview_lab.pbmvboost.bounds import (
    C_GRID,
    catoni_gibbs_bound,
    has_bounds,
    kl_bernoulli,
    kl_inverse_lower,
    kl_inverse_upper,
    kl_uniform,
    mv_cbound_generalisation,
    mv_cbound_sets,
    pac_bayes_bounds,
    voter_posteriors,
)

# -- kl and its inversions ---------------------------------------------------------------------


def _kl_by_hand(q, p):
    return q * math.log(q / p) + (1 - q) * math.log((1 - q) / (1 - p))


def test_kl_closed_forms_and_edges():
    p = np.array([1e-9, 0.1, 0.5, 0.9, 1 - 1e-9])
    np.testing.assert_allclose(kl_bernoulli(0.0, p), -np.log1p(-p), rtol=1e-12)
    np.testing.assert_allclose(kl_bernoulli(1.0, p), -np.log(p), rtol=1e-12)
    assert kl_bernoulli(0.0, 0.0) == 0.0 and kl_bernoulli(1.0, 1.0) == 0.0
    assert kl_bernoulli(0.3, 0.3) == 0.0
    assert kl_bernoulli(0.2, 0.0) == np.inf and kl_bernoulli(0.2, 1.0) == np.inf
    assert kl_bernoulli(0.0, 1.0) == np.inf and kl_bernoulli(1.0, 0.0) == np.inf
    for q, r in [(0.1, 0.3), (0.35, 0.2), (0.5, 0.999), (0.02, 0.5)]:
        assert kl_bernoulli(q, r) == pytest.approx(_kl_by_hand(q, r), rel=1e-12)
        assert kl_bernoulli(q, r) == pytest.approx(kl_bernoulli(1 - q, 1 - r), rel=1e-12)
    grid = kl_bernoulli(np.array([[0.1], [0.4]]), np.array([0.2, 0.3, 0.5]))  # broadcasts
    assert grid.shape == (2, 3) and np.all(grid >= 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        kl_bernoulli(1.2, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        kl_bernoulli(0.5, np.nan)


def test_kl_inversions_closed_forms():
    """kl(0||r) = -ln(1 - r) gives sup = 1 - exp(-b); kl(1||d) = -ln d gives inf = exp(-b)."""
    b = np.array([0.0, 1e-6, 0.01, 0.1, 0.7, 3.0, 20.0])
    np.testing.assert_allclose(kl_inverse_upper(np.zeros_like(b), b), -np.expm1(-b), atol=1e-14)
    np.testing.assert_allclose(kl_inverse_lower(np.ones_like(b), b), np.exp(-b), atol=1e-14)
    # no room: the ball is the point itself; an infinite budget gives the whole interval
    assert kl_inverse_upper(0.3, 0.0) == pytest.approx(0.3, abs=1e-12)
    assert kl_inverse_lower(0.3, 0.0) == pytest.approx(0.3, abs=1e-12)
    assert kl_inverse_upper(0.3, np.inf) == 1.0 and kl_inverse_lower(0.3, np.inf) == 0.0
    assert kl_inverse_upper(1.0, 0.5) == 1.0 and kl_inverse_lower(0.0, 0.5) == 0.0
    with pytest.raises(ValueError, match="bound must be >= 0"):
        kl_inverse_upper(0.3, -0.1)


def _decimal_kl(q, p):
    one = Decimal(1)
    head = q * (q / p).ln() if q > 0 else Decimal(0)
    tail = (one - q) * ((one - q) / (one - p)).ln() if q < 1 else Decimal(0)
    return head + tail


def _brute_force_sup(q, b, rounds=8, points=100):
    """sup{r : kl(q||r) <= b} by refining a grid of [q, 1] in 50-digit arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 50
        q, b = Decimal(q), Decimal(b)
        lo, hi = q, Decimal(1) - Decimal(10) ** -40
        for _ in range(rounds):
            step = (hi - lo) / points
            grid = [lo + k * step for k in range(points + 1)]
            inside = [r for r in grid if _decimal_kl(q, r) <= b]
            lo = inside[-1]
            hi = min(lo + step, hi)
        return float(lo)


def _brute_force_inf(q, b, rounds=8, points=100):
    with localcontext() as ctx:
        ctx.prec = 50
        q, b = Decimal(q), Decimal(b)
        lo, hi = Decimal(10) ** -40, q
        for _ in range(rounds):
            step = (hi - lo) / points
            grid = [hi - k * step for k in range(points + 1)]
            inside = [d for d in grid if _decimal_kl(q, d) <= b]
            hi = inside[-1]
            lo = max(hi - step, lo)
        return float(hi)


@pytest.mark.parametrize(("q", "b"), [(0.1, 0.05), (0.37, 0.01), (0.02, 0.2), (0.45, 0.003)])
def test_kl_inversions_match_a_high_precision_grid(q, b):
    assert kl_inverse_upper(q, b) == pytest.approx(_brute_force_sup(q, b), abs=1e-12)
    assert kl_inverse_lower(q, b) == pytest.approx(_brute_force_inf(q, b), abs=1e-12)


def test_kl_inversion_is_the_exact_boundary():
    rng = np.random.RandomState(0)
    q = rng.uniform(0.01, 0.9, 200)
    b = rng.uniform(1e-4, 0.3, 200)
    up, low = kl_inverse_upper(q, b), kl_inverse_lower(q, b)
    assert up.shape == low.shape == (200,)
    assert np.all(up >= q) and np.all(low <= q)
    # kl at the result equals the budget (where the result is inside (0, 1))
    inner = up < 1 - 1e-6
    np.testing.assert_allclose(kl_bernoulli(q[inner], up[inner]), b[inner], rtol=1e-9)
    inner = low > 1e-6
    np.testing.assert_allclose(kl_bernoulli(q[inner], low[inner]), b[inner], rtol=1e-9)
    # and just beyond it the ball is left: the result is the sup / inf, not any member
    assert np.all(kl_bernoulli(q, np.minimum(up + 1e-7, 1.0))[up < 1 - 1e-7] > b[up < 1 - 1e-7])
    assert np.all(kl_bernoulli(q, np.maximum(low - 1e-7, 0.0))[low > 1e-7] > b[low > 1e-7])


# -- Corollary 1 ---------------------------------------------------------------------------------


def _catoni_by_hand(r, n, kl, delta, C):
    return (1 - math.exp(-(C * r + (kl + math.log(1 / delta)) / n))) / (1 - math.exp(-C))


def test_catoni_single_constant_is_corollary_1():
    for r, n, kl, delta, C in [(0.3, 500, 4.0, 0.05, 1.0), (0.05, 200, 0.5, 0.1, 3.0)]:
        got = catoni_gibbs_bound(r, n, kl, delta, c_grid=C)
        assert got == pytest.approx(_catoni_by_hand(r, n, kl, delta, C), rel=1e-12)


def test_catoni_grid_is_a_union_bound_over_its_constants():
    r, n, kl, delta = 0.3, 500, 4.0, 0.05
    k = len(C_GRID)
    expected = min(_catoni_by_hand(r, n, kl, delta / k, C) for C in C_GRID)
    bound, C = catoni_gibbs_bound(r, n, kl, delta, return_constant=True)
    assert bound == pytest.approx(expected, rel=1e-12)
    assert C in C_GRID and catoni_gibbs_bound(r, n, kl, delta / k, c_grid=C) == pytest.approx(bound)
    # the union costs: each constant alone at delta is tighter than the grid's bound at its C
    assert catoni_gibbs_bound(r, n, kl, delta, c_grid=C) < bound


def test_catoni_monotonicity_and_range():
    r, n, kl = 0.25, 500, 3.0
    deltas = [0.5, 0.1, 0.05, 0.01, 0.001]
    by_delta = [catoni_gibbs_bound(r, n, kl, d) for d in deltas]
    assert np.all(np.diff(by_delta) > 0)  # more confidence, larger bound
    by_n = [catoni_gibbs_bound(r, m, kl) for m in (50, 100, 500, 5000, 50000)]
    assert np.all(np.diff(by_n) < 0)  # more data, smaller bound
    by_kl = [catoni_gibbs_bound(r, n, k) for k in (0.0, 1.0, 10.0)]
    assert np.all(np.diff(by_kl) > 0)
    assert all(r < b <= 1 for b in by_delta + by_n)
    assert by_n[-1] < r + 0.02  # tends to the empirical risk
    assert catoni_gibbs_bound(0.9, 10, 50.0) == 1.0  # vacuous values are clipped
    # a perfect fit's Gibbs risk may round below 0: clipped, not rejected
    assert catoni_gibbs_bound(-1e-16, n, kl) == catoni_gibbs_bound(0.0, n, kl) > 0
    with pytest.raises(ValueError, match="gibbs_risk"):
        catoni_gibbs_bound(-0.01, n, kl)
    with pytest.raises(ValueError, match="delta"):
        catoni_gibbs_bound(r, n, kl, 0.0)
    with pytest.raises(ValueError, match="c_grid"):
        catoni_gibbs_bound(r, n, kl, c_grid=[1.0, -1.0])


# -- Theorem 2 -----------------------------------------------------------------------------------


def test_theorem2_sets_use_the_paper_budgets():
    r, d, kl, n, delta = (
        np.array([0.2, 0.3]),
        np.array([0.1, 0.25]),
        np.array([1.0, 2.0]),
        400,
        0.05,
    )
    for union, delta_v in ((False, delta), (True, delta / 2)):
        sup_r, inf_d = mv_cbound_sets(r, d, kl, n, delta, union_over_views=union)
        log_term = math.log(4 * math.sqrt(n) / delta_v)  # ln(4 sqrt(m) / delta), m = n
        np.testing.assert_allclose(kl_bernoulli(r, sup_r), (kl + log_term) / n, rtol=1e-9)
        np.testing.assert_allclose(kl_bernoulli(d, inf_d), (2 * kl + log_term) / n, rtol=1e-9)
        assert np.all(sup_r > r) and np.all(inf_d < d)
    with pytest.raises(ValueError, match="n >= 8"):
        mv_cbound_sets(r, d, kl, 5)


def test_theorem2_is_the_cbound_of_the_set_end_points():
    rho = np.array([0.25, 0.75])
    r, d, kl, n = np.array([0.1, 0.15]), np.array([0.2, 0.25]), np.array([0.5, 1.5]), 1000
    sup_r, inf_d = mv_cbound_sets(r, d, kl, n, 0.05)
    a, b = rho @ sup_r, rho @ inf_d
    expected = 1 - (1 - 2 * a) ** 2 / (1 - 2 * b)
    got = mv_cbound_generalisation(rho, r, d, kl, n, 0.05)
    assert got == pytest.approx(expected, rel=1e-12)
    empirical = 1 - (1 - 2 * rho @ r) ** 2 / (1 - 2 * rho @ d)  # Eq. (3) on S
    assert empirical < got < 1


def test_theorem2_vacuous_and_monotone():
    rho = np.array([0.5, 0.5])
    kl = np.zeros(2)
    # E_rho sup r >= 1/2: Lemma 1 does not apply -> 1
    assert mv_cbound_generalisation(rho, [0.45, 0.48], [0.3, 0.3], kl, 100, 0.05) == 1.0
    r, d = np.array([0.1, 0.2]), np.array([0.15, 0.3])
    by_delta = [mv_cbound_generalisation(rho, r, d, kl, 500, dl) for dl in (0.5, 0.05, 0.005)]
    assert np.all(np.diff(by_delta) > 0)
    by_n = [mv_cbound_generalisation(rho, r, d, kl, m) for m in (200, 1000, 10**4, 10**5, 10**7)]
    assert np.all(np.diff(by_n) < 0)
    assert by_n[-1] == pytest.approx(1 - (1 - 2 * rho @ r) ** 2 / (1 - 2 * rho @ d), abs=0.01)
    with pytest.raises(ValueError, match="distribution"):
        mv_cbound_generalisation([0.7, 0.7], r, d, kl, 500)


# -- the posterior of a fitted model ------------------------------------------------------------


def test_kl_uniform():
    q = np.array([0.5, 0.25, 0.25, 0.0])
    assert kl_uniform(q) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(1))
    assert kl_uniform(np.full(7, 1 / 7)) == pytest.approx(0.0, abs=1e-15)
    assert kl_uniform(np.eye(5)[2]) == pytest.approx(math.log(5))
    np.testing.assert_allclose(
        kl_uniform(np.array([[1.0, 0.5], [0.0, 0.5]]), axis=0), [math.log(2), 0]
    )
    with pytest.raises(ValueError, match="sum to 1"):
        kl_uniform([0.5, 0.2])


@pytest.fixture(scope="module")
def models(make_views):
    Xs, y = make_views(n=200, n_views=3, seed=1)
    fitted = {
        "pb": PBMVBoostClassifier(15, random_state=0).fit(Xs, y),
        "mv": MVBoostClassifier(15, random_state=0).fit(Xs, y),
        "ref": PBMVBoostClassifier(15, compat="reference", random_state=0).fit(Xs, y),
    }
    return Xs, y, fitted


def test_posterior_is_the_one_of_the_vote_the_model_predicts_with(models):
    Xs, y, fitted = models
    for key, clf in fitted.items():
        b = pac_bayes_bounds(clf, Xs, y)
        Q = voter_posteriors(clf)
        T, V = clf.estimator_weights_.shape
        np.testing.assert_allclose(Q.sum(axis=0), 1.0)
        P = np.stack(
            [[tree.predict(X) for tree, X in zip(row, Xs, strict=True)] for row in clf.estimators_]
        )
        score = np.einsum("v,tv,tvn->n", b["rho"], Q, P)
        # the two-level vote (Eq. (1)) with these distributions is the model's classifier
        np.testing.assert_array_equal(np.sign(score), np.sign(clf.decision_function(Xs)))
        np.testing.assert_allclose(
            b["view_kl"], np.sum(Q * np.log(np.where(Q > 0, Q * T, 1)), axis=0)
        )
        rho = b["rho"][b["rho"] > 0]
        assert b["kl_rho"] == pytest.approx(np.sum(rho * np.log(V * rho)))
        assert b["kl_views"] == pytest.approx(b["rho"] @ b["view_kl"])
        for name in ("gibbs_risk", "multiview_cbound", "majority_vote_risk"):
            assert b[name] == clf.pac_bayes_[name], (key, name)  # the S of the bounds is S
    # MVBoost: rho^t is uniform, but its vote weights view v by sum_t Q_v^t
    W = fitted["mv"].estimator_weights_.sum(axis=0)
    np.testing.assert_allclose(pac_bayes_bounds(fitted["mv"], Xs, y)["rho"], W / W.sum())
    # PB-MVBoost, per-iteration vote: rho_v ∝ sum_t rho_v^t Q_v^t
    pb = fitted["pb"]
    W = (pb.rho_history_ * pb.estimator_weights_).sum(axis=0)
    np.testing.assert_allclose(pac_bayes_bounds(pb, Xs, y)["rho"], W / W.sum())


def test_bounds_dominate_the_empirical_quantities(models):
    Xs, y, fitted = models
    for clf in fitted.values():
        b = pac_bayes_bounds(clf, Xs, y)
        assert b["gibbs_risk"] < b["bound_gibbs_cor1"] <= 1
        assert np.all(b["view_gibbs_risk_sup"] > b["view_gibbs_risks"])
        assert np.all(b["view_disagreement_inf"] <= np.maximum(b["view_disagreements"], 0))
        assert np.all(b["view_disagreement_inf"][b["view_disagreements"] > 0.01] > 0)
        assert b["majority_vote_risk"] <= b["multiview_cbound"] <= b["bound_mv_thm2"] <= 1
        assert b["catoni_C"] in C_GRID and b["n_samples"] == 200
        looser = pac_bayes_bounds(clf, Xs, y, delta=0.001)
        assert looser["bound_gibbs_cor1"] > b["bound_gibbs_cor1"]
        assert np.all(looser["view_gibbs_risk_sup"] > b["view_gibbs_risk_sup"])


def test_bounds_of_a_perfect_fit():
    """Separable views: every voter is right on S, the empirical risks are 0 (up to rounding)."""
    rng = np.random.RandomState(0)
    y = rng.choice([-1, 1], 100)
    Xs = [np.column_stack([y + 0.1 * rng.normal(size=100), rng.normal(size=100)]) for _ in range(3)]
    clf = PBMVBoostClassifier(5, random_state=0).fit(Xs, y)
    b = pac_bayes_bounds(clf, Xs, y)
    assert b["gibbs_risk"] == pytest.approx(0.0, abs=1e-12)
    assert 0 < b["bound_gibbs_cor1"] < 0.2 and 0 < b["bound_mv_thm2"] < 1


def test_bounds_reject_other_models(models):
    Xs, y, _ = models
    other = MVAdaBoostClassifier(3).fit(Xs, y)
    assert not has_bounds(other) and not has_bounds(PBMVBoostClassifier())
    with pytest.raises(TypeError, match="PBMVBoostClassifier"):
        pac_bayes_bounds(other, Xs, y)
    with pytest.raises(ValueError, match="not fitted"):
        pac_bayes_bounds(PBMVBoostClassifier(), Xs, y)
    y3 = np.arange(len(y)) % 3
    ovr = PBMVBoostClassifier(3, random_state=0).fit(Xs, y3)
    assert not has_bounds(ovr)
    with pytest.raises(ValueError, match="per binary model"):
        pac_bayes_bounds(ovr, Xs, y3)


# -- the bounds hold on simulated multiview data -------------------------------------------------


def _simulate(n, seed):
    """Three views of 4 features, ``z * mean + N(0, 1)``; labels ``z`` with 2 % flipped."""
    rng = np.random.RandomState(seed)
    z = rng.choice([-1, 1], n)
    y = np.where(rng.rand(n) < 0.02, -z, z)
    means = ([3.0, 2.0, 0.0, 0.0], [3.0, 1.0, 0.5, 0.0], [2.5, 2.0, 1.0, 0.0])
    return [z[:, None] * np.array(mu) + rng.normal(size=(n, 4)) for mu in means], y


def test_bounds_hold_on_held_out_data():
    """Over 10 training samples (n = 300, delta = 0.05) the bounds hold against a 20,000-example
    held-out estimate of the true quantities: Corollary 1 against the Gibbs risk, each set (7)
    end point against the view's Gibbs risk, each set (8) end point against its disagreement,
    and Theorem 2 against the multiview C-bound (3) and the vote's risk. The plug-in values
    (the same quantities on S) fail in some of these samples, so the check has teeth."""
    delta, n_seeds = 0.05, 10
    Xs_test, y_test = _simulate(20_000, seed=999)
    violations, plug_in_misses = 0, 0
    for seed in range(n_seeds):
        Xs, y = _simulate(300, seed)
        clf = PBMVBoostClassifier(10, random_state=seed).fit(Xs, y)
        b = pac_bayes_bounds(clf, Xs, y, delta=delta)
        true = clf.pac_bayes_quantities(Xs_test, y_test)  # same posterior, held-out sample
        vote_risk = np.mean(clf.predict(Xs_test) != y_test)
        held = [
            b["bound_gibbs_cor1"] >= true["gibbs_risk"],
            np.all(b["view_gibbs_risk_sup"] >= true["view_gibbs_risks"]),
            np.all(b["view_disagreement_inf"] <= true["view_disagreements"] + 1e-12),
            b["bound_mv_thm2"] >= true["multiview_cbound"] >= vote_risk,
        ]
        violations += not all(held)
        plug_in_misses += (
            b["gibbs_risk"] < true["gibbs_risk"] or b["multiview_cbound"] < true["multiview_cbound"]
        )
        assert b["bound_gibbs_cor1"] < 1 and b["bound_mv_thm2"] < 1  # not vacuous here
    assert violations <= delta * n_seeds  # i.e. none in 10 samples
    assert plug_in_misses >= 3
