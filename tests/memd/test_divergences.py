"""MeMd spec tests 1-5: ME families, Jeffreys divergence and JS_GM against quadrature."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp

from multiview_lab.memd.divergences import (
    jeffreys,
    jeffreys_exponential,
    jeffreys_from_natural,
    jeffreys_gaussian,
    jeffreys_truncexp01,
    js_gm,
    js_gm_scores,
    natural_parameters,
    pairwise_jeffreys_scores,
    truncexp01_lambda,
    truncexp01_log_normaliser,
    truncexp01_mean,
)


def quad_jeffreys(logp, logq, a, b):
    """∫ (p - q)(log p - log q) on [a, b] from log-densities (spec Sect. 3.2: no plain pdf)."""

    def integrand(x):
        lp, lq = logp(x), logq(x)
        return (np.exp(lp) - np.exp(lq)) * (lp - lq)

    return integrate.quad(integrand, a, b, epsabs=1e-13, epsrel=1e-12, limit=500)[0]


GAUSSIAN_CASES = [((0.0, 1.0), (1.0, 2.0), 1.0), ((3.0, 0.5), (-1.0, 4.0), 21.0625)]
GAUSSIAN_CASES.append(((0.2, 0.01), (0.25, 0.02), 0.4375))


@pytest.mark.parametrize(("p", "q", "expected"), GAUSSIAN_CASES)
def test_gaussian_jeffreys_closed_form_natural_form_and_quadrature(p, q, expected):
    (m1, v1), (m2, v2) = p, q
    closed = jeffreys_gaussian(m1, v1, m2, v2)
    lam_p, lam_q = natural_parameters("gaussian", m1, v1), natural_parameters("gaussian", m2, v2)
    natural = jeffreys_from_natural(lam_p, [m1, v1 + m1**2], lam_q, [m2, v2 + m2**2])
    sp_, sq = np.sqrt(v1), np.sqrt(v2)
    lo, hi = min(m1 - 40 * sp_, m2 - 40 * sq), max(m1 + 40 * sp_, m2 + 40 * sq)
    quad = quad_jeffreys(
        lambda x: stats.norm.logpdf(x, m1, sp_), lambda x: stats.norm.logpdf(x, m2, sq), lo, hi
    )
    assert closed == pytest.approx(expected, rel=1e-10)
    assert natural == pytest.approx(closed, rel=1e-10)
    assert quad == pytest.approx(closed, rel=1e-7)


@pytest.mark.parametrize(("m1", "m2", "expected"), [(0.5, 2.0, 2.25), (1e-3, 5e-3, 3.2)])
def test_exponential_jeffreys(m1, m2, expected):
    assert jeffreys_exponential(m1, m2) == pytest.approx(expected, rel=1e-10)
    lam1, lam2 = natural_parameters("exponential", m1), natural_parameters("exponential", m2)
    assert jeffreys_from_natural(lam1, [m1], lam2, [m2]) == pytest.approx(expected, rel=1e-10)
    quad = quad_jeffreys(
        lambda x: stats.expon.logpdf(x, scale=m1),
        lambda x: stats.expon.logpdf(x, scale=m2),
        0.0,
        80 * max(m1, m2),
    )
    assert quad == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize(
    ("m1", "m2", "expected"), [(0.3, 0.6, 1.170611), (0.05, 0.1, 0.500228), (0.5, 0.52, 0.004805)]
)
def test_truncated_exponential_jeffreys(m1, m2, expected):
    J = jeffreys_truncexp01(m1, m2)
    assert J == pytest.approx(expected, abs=1e-6)
    lam = truncexp01_lambda(np.array([m1, m2]))
    lam0 = truncexp01_log_normaliser(lam)

    def logpdf(k):
        return lambda x: -lam0[k] - lam[k] * x

    assert quad_jeffreys(logpdf(0), logpdf(1), 0.0, 1.0) == pytest.approx(J, rel=1e-9)
    # the fitted density has the requested mean and integrates to 1
    for k, m in enumerate((m1, m2)):
        mass = integrate.quad(lambda x, k=k: np.exp(logpdf(k)(x)), 0, 1)[0]
        mean = integrate.quad(lambda x, k=k: x * np.exp(logpdf(k)(x)), 0, 1)[0]
        assert mass == pytest.approx(1.0, rel=1e-12)
        assert mean == pytest.approx(m, rel=1e-10)


def _high_precision_mean(lam: float) -> Decimal:
    with localcontext() as ctx:
        ctx.prec, ctx.Emax = 60, 10**9
        if lam == 0:
            return Decimal("0.5")
        L = Decimal(lam)
        return 1 / L - 1 / (L.exp() - 1)


def test_truncexp01_lambda_reproduces_the_mean_over_the_whole_range():
    # |λ| just below / above the 1e-2 series switch: m(λ) ≈ 1/2 - λ/12
    near_switch = 0.5 - np.array([0.99, 1.01]) * 1e-2 / 12
    means = np.r_[
        1e-8,
        1e-5,
        1e-3,
        0.05,
        0.3,
        0.4999,
        0.5,
        0.5001,
        0.7,
        0.99,
        1 - 1e-8,
        near_switch,
        1 - near_switch,
    ]
    lam = truncexp01_lambda(means)
    lam_near = np.abs(lam[-4:])
    assert (lam_near < 1e-2).sum() == 2 and (lam_near > 1e-2).sum() == 2
    for m, root in zip(means, lam, strict=True):
        exact = _high_precision_mean(float(root))
        assert abs(float((exact - Decimal(m)) / Decimal(m))) < 1e-12, (m, root)
    np.testing.assert_allclose(truncexp01_mean(lam), means, rtol=1e-12)
    # symmetry m(-λ) = 1 - m(λ) and no overflow of λ_0 for |λ| up to 1e12
    assert truncexp01_mean(-2.0) == pytest.approx(1 - truncexp01_mean(2.0), rel=1e-15)
    assert np.all(np.isfinite(truncexp01_log_normaliser(np.array([-1e12, 1e12, -700.0, 800.0]))))


@pytest.mark.parametrize("family", ["gaussian", "exponential", "truncexp01"])
def test_jeffreys_is_symmetric_nonnegative_and_zero_for_equal_parameters(family):
    rng = np.random.default_rng(0)
    m1, m2 = rng.uniform(0.05, 0.95, size=(2, 200))
    v1, v2 = rng.uniform(0.01, 3, size=(2, 200))
    p, q = {"mean": m1, "var": v1}, {"mean": m2, "var": v2}
    if family != "gaussian":
        p, q = {"mean": m1}, {"mean": m2}
    Jpq, Jqp = jeffreys(family, p, q), jeffreys(family, q, p)
    np.testing.assert_allclose(Jpq, Jqp, rtol=1e-12)
    assert np.all(Jpq > 0)
    assert np.all(jeffreys(family, p, p) == 0)


def test_gaussian_jeffreys_is_affine_invariant():
    rng = np.random.default_rng(1)
    m1, m2 = rng.normal(size=(2, 50))
    v1, v2 = rng.uniform(0.1, 2, size=(2, 50))
    for s, t in [(3.0, -2.0), (-0.5, 7.0), (1e3, 1e2)]:
        moved = jeffreys_gaussian(s * m1 + t, s * s * v1, s * m2 + t, s * s * v2)
        np.testing.assert_allclose(moved, jeffreys_gaussian(m1, v1, m2, v2), rtol=1e-12)


def test_jeffreys_is_additive_over_independent_features():
    """Spec test 4 / paper Eq. (15): J of a product density = J_1 + J_2 (2-D quadrature)."""
    p = [(0.0, 1.0), (1.0, 0.5)]
    q = [(0.5, 2.0), (-0.5, 1.0)]

    def log_product(params, x, z):
        (a, va), (b, vb) = params
        return stats.norm.logpdf(x, a, np.sqrt(va)) + stats.norm.logpdf(z, b, np.sqrt(vb))

    # tensor Gauss-Legendre rule (vectorised 2-D quadrature) on a box holding all the mass
    nodes, weights = np.polynomial.legendre.leggauss(300)
    x, wx = 14 * nodes, 14 * weights
    z, wz = 12 * nodes, 12 * weights
    X, Z = np.meshgrid(x, z, indexing="ij")
    u, w = log_product(p, X, Z), log_product(q, X, Z)
    quad = wx @ ((np.exp(u) - np.exp(w)) * (u - w)) @ wz
    parts = sum(jeffreys_gaussian(a, va, b, vb) for (a, va), (b, vb) in zip(p, q, strict=True))
    assert quad == pytest.approx(parts, rel=1e-6)


def test_js_gm_equals_pairwise_jeffreys_and_bounds_js():
    """Spec test 5: JS_GM (unnormalised GM) = Σ_{j<l} π_j π_l J_jl ≥ JS_π; normalising differs."""
    means, variances, pi = (
        np.array([0.0, 1.0, 2.5]),
        np.array([1.0, 0.5, 2.0]),
        np.array([0.5, 0.3, 0.2]),
    )
    sd = np.sqrt(variances)

    def logs(x):
        return stats.norm.logpdf(x, means[:, None], sd[:, None])  # (3, n)

    def js_gm_integrand(x):
        lp = logs(np.array([x]))[:, 0]
        return float(np.sum(pi * np.exp(lp) * (lp - pi @ lp)))

    def js_integrand(x):
        lp = logs(np.array([x]))[:, 0]
        log_mix = logsumexp(lp, b=pi)
        return float(np.sum(pi * np.exp(lp) * (lp - log_mix)))

    def gm_mass(x):
        return float(np.exp(pi @ logs(np.array([x]))[:, 0]))

    bounds = (-30.0, 30.0)
    quad_gm = integrate.quad(js_gm_integrand, *bounds, epsabs=1e-12, limit=400)[0]
    quad_js = integrate.quad(js_integrand, *bounds, epsabs=1e-12, limit=400)[0]
    log_z = np.log(integrate.quad(gm_mass, *bounds, epsabs=1e-14, limit=400)[0])
    normalised = quad_gm + log_z
    closed = js_gm("gaussian", {"mean": means, "var": variances}, pi)
    assert closed == pytest.approx(0.9925, abs=1e-4)
    assert quad_gm == pytest.approx(closed, abs=1e-4)
    assert quad_js == pytest.approx(0.33535, abs=1e-4)
    assert quad_js <= closed
    assert normalised == pytest.approx(0.62454, abs=1e-4)
    assert abs(normalised - closed) > 0.3


@pytest.mark.parametrize("family", ["gaussian", "exponential", "truncexp01"])
def test_covariance_form_of_js_gm_equals_the_pairwise_sum(family):
    """The O(M d) form used by the estimator = Σ_{j<l} π_j π_l J_jl (paper Eq. (24))."""
    rng = np.random.default_rng(3)
    n_classes, d = 6, 400
    pi = rng.dirichlet(np.ones(n_classes))
    mean = rng.uniform(0.01, 0.9, (n_classes, d))
    mean[:, 0] = 0.3  # equal in every class: exactly 0
    mean[:, 1] = 0.3 * (1 + 1e-9 * np.arange(n_classes))  # nearly equal
    params = {"mean": mean, "var": rng.uniform(0.1, 3, (n_classes, d))}
    params["var"][:, 0] = 1.0
    if family == "gaussian":
        params["mean"] = 1e3 * mean + 5e4  # large offsets: the form is shift invariant
    elif family == "exponential":
        params = {"mean": mean}
    else:
        params = {"mean": mean, "lam": truncexp01_lambda(mean)}
    fast, fast_per_class = js_gm_scores(family, params, pi)
    slow, slow_per_class = pairwise_jeffreys_scores(family, params, pi)
    assert fast[0] == 0 and slow[0] == 0
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12 * slow.max())
    np.testing.assert_allclose(fast_per_class, slow_per_class, rtol=1e-9, atol=1e-12 * slow.max())
    np.testing.assert_allclose(0.5 * pi @ fast_per_class, fast, rtol=1e-9)
