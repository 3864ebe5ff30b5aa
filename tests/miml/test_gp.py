"""MIML-GP spec tests (Sect. 7, items 1-11 and 13) for MIMLGPClassifier."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

from multiview_lab.miml._bags import bag_sum_kernel, check_bags, kernel_matrix
from multiview_lab.miml.gp import (
    MIMLGPClassifier,
    _AndersonEM,
    _b1_dense,
    _dense_newton_step,
    _grad_weights,
    _label_factor,
    _log_lik,
    _lowrank_newton_step,
    _m_step,
    _psd_factor,
    _select,
    _sym_expm,
    _sym_logm,
    _unvec,
    _vec,
    _weighted_grams,
    m_step_bound,
    median_instance_distance,
    select_rank,
)

DELTA = 1.5
# toy problems often need more EM loops than the tests allow; convergence is tested explicitly
pytestmark = pytest.mark.filterwarnings("ignore:MIMLGPClassifier reached max_em")


def _toy(n=14, Q=3, d=2, max_size=4, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, size=n)
    centres = rng.normal(size=(Q, d)) * 1.5
    Y = (rng.random((n, Q)) < 0.4).astype(int)
    Y[np.arange(Q), np.arange(Q)] = 1
    bags = []
    for i in range(n):
        B = rng.normal(size=(sizes[i], d))
        for s in np.flatnonzero(Y[i]):
            B[rng.integers(sizes[i])] += centres[s]
        bags.append(B)
    return bags, Y


def _spd(Q, seed=1):
    A = np.random.default_rng(seed).normal(size=(Q, Q))
    return A @ A.T / Q + 0.5 * np.eye(Q)


def _dense_setup(bags, Y, Kf, delta=DELTA):
    """Instance-level dense objects: K, E (N_I x n), C = Kf ⊗ K, c = 1/n_i, Y in ±1."""
    X, off = check_bags(bags)
    n = len(bags)
    E = np.zeros((X.shape[0], n))
    for i in range(n):
        E[off[i] : off[i + 1], i] = 1.0
    K = kernel_matrix(X, X, "rbf", delta)
    return X, off, E, K, np.kron(Kf, K), 1.0 / np.diff(off), np.where(Y > 0, 1.0, -1.0)


def _exact(**kw):
    """The literal algorithm: tight tolerances and the plain EM loop (no Anderson acceleration).

    The toy problems' K^f tends to a singular limit that EM approaches only sublinearly; on those
    paths the accelerator's least-squares step amplifies round-off, so tests comparing two
    computations of the same model loop by loop to 1e-10 use the plain loop (the accelerated
    loop is compared with it at a fixed point in test_anderson_em_reaches_the_plain_fixed_point).
    """
    base = dict(
        delta=DELTA,
        low_rank="none",
        eps0=1e-12,
        eps=1e-12,
        max_em=300,
        em_accel="none",
        random_state=0,
    )
    base.update(kw)
    return MIMLGPClassifier(**base)


# ---------------------------------------------------------------------------------- test 1
def test_reduces_to_binary_gpc():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    ell = 1.3
    gpc = GaussianProcessClassifier(
        kernel=ConstantKernel(1.0, "fixed") * RBF(ell, "fixed"), optimizer=None
    ).fit(X, y)
    base = gpc.base_estimator_
    est = MIMLGPClassifier(
        delta=np.sqrt(2) * ell, fix_Kf="identity", low_rank="none", eps0=1e-13,
        n_mc=200_000, random_state=0,
    ).fit([x[None] for x in X], y[:, None])  # fmt: skip
    np.testing.assert_allclose(est.Fsum_[:, 0], base.f_cached, atol=1e-8)
    assert abs(est.log_marginal_likelihood_ - base.log_marginal_likelihood_value_) < 1e-8
    Xt = rng.normal(size=(15, 2))
    mu, var = est.latent_mean_and_variance([x[None] for x in Xt])
    mu_ref, var_ref = base.latent_mean_and_variance(Xt)
    np.testing.assert_allclose(mu[:, 0], mu_ref, atol=1e-10)
    np.testing.assert_allclose(var[:, 0], var_ref, atol=1e-10)
    p = est.predict_proba([x[None] for x in Xt])[:, 0]
    np.testing.assert_allclose(p, gpc.predict_proba(Xt)[:, 1], atol=2e-3)


# ---------------------------------------------------------------------------------- test 2
def test_bag_level_newton_equals_dense_instance_newton():
    bags, Y = _toy(n=10, Q=3, seed=3)
    Kf = _spd(3)
    X, off, E, K, C, c, Ypm = _dense_setup(bags, Y, Kf)
    n, Q = Y.shape
    Ksum = E.T @ K @ E
    IE = np.kron(np.eye(Q), E)
    F = np.random.default_rng(0).normal(size=Q * X.shape[0])
    Fsum = _unvec(IE.T @ F, n, Q)
    Cinv = np.linalg.inv(C)
    for _ in range(5):
        d, w = _grad_weights(Fsum, Ypm, c)
        a, _ = _dense_newton_step(np.kron(Kf, Ksum), _vec(w * Fsum + d), _vec(w))
        Fsum = Ksum @ _unvec(a, n, Q) @ Kf
        W = IE @ np.diag(_vec(w)) @ IE.T  # (17)
        F = np.linalg.solve(W + Cinv, IE @ _vec(d) + W @ F)  # (19)
        np.testing.assert_allclose(_vec(Fsum), IE.T @ F, atol=1e-9)


def test_paper_a1_to_a5_equals_weight_space_newton():
    bags, Y = _toy(n=12, Q=3, seed=4)
    X, off = check_bags(bags)
    Ksum = bag_sum_kernel(X, off, X, off, "rbf", DELTA)
    lam, U = np.linalg.eigh(Ksum)
    P = U[:, -7:] * np.sqrt(lam[-7:])  # rank 7 < n
    Kf = _spd(3)
    L = np.linalg.cholesky(Kf)
    rng = np.random.default_rng(1)
    Fsum = rng.normal(size=Y.shape)
    d, w = _grad_weights(Fsum, np.where(Y > 0, 1.0, -1.0), 1.0 / np.diff(off))
    W0 = np.diag(_vec(w))
    Cs = np.kron(Kf, P @ P.T)
    LP = np.kron(L, P)
    B1 = _b1_dense(P, L, w)
    np.testing.assert_allclose(B1, np.eye(B1.shape[0]) + LP.T @ W0 @ LP, atol=1e-12)
    a1 = W0 @ _vec(Fsum) + _vec(d)  # (35)
    a2 = W0 @ Cs @ a1
    a3 = LP.T @ a2
    a4 = np.linalg.solve(B1, a3)
    a5 = a1 - a2 + W0 @ LP @ a4
    F35 = Cs @ a5
    Fm3 = LP @ np.linalg.solve(B1, LP.T @ a1)  # (M3)
    np.testing.assert_allclose(F35, Fm3, atol=1e-12)
    Fcg, _ = _lowrank_newton_step(P, L, w, d, Fsum, None)  # CG version
    np.testing.assert_allclose(_vec(Fcg), Fm3, atol=1e-9 * np.abs(Fm3).max())


# ---------------------------------------------------------------------------------- test 3 & 10
@pytest.mark.parametrize(
    "kw",
    [
        dict(low_rank="none"),
        dict(low_rank="eig", trace_frac=0.99, full_rank_above=None),
        dict(likelihood="standard"),
        dict(likelihood="standard", standard_max="softmax"),
    ],
)
def test_newton_objective_monotone_and_stopping_rules(kw):
    bags, Y = _toy(n=16, Q=3, seed=5)
    est = MIMLGPClassifier(delta=DELTA, max_em=15, eps=1e-300, random_state=0, **kw)
    with pytest.warns(UserWarning, match="max_em"):
        est.fit(bags, Y)
    for h in est.em_history_:
        objs = np.array(h["newton_objs"])
        assert objs.size >= 2
        assert np.all(np.diff(objs) >= -1e-10)  # psi never decreases (with halving)
        steps = np.abs(np.diff(objs))
        assert steps[-1] < est.eps0 and np.all(steps[:-1] >= est.eps0)  # first |dobj| < eps0


def test_em_stops_at_first_small_change_and_starts_at_identity_and_ones():
    bags, Y = _toy(n=16, Q=3, seed=6)
    est = MIMLGPClassifier(delta=DELTA, eps=1e-2, random_state=0).fit(bags, Y)
    # (a loop whose Anderson proposal the evidence safeguard rejected is not a stopping point)
    ch = np.array([h["kf_change"] for h in est.em_history_ if not h["rejected"]])
    assert ch[-1] < 1e-2 and np.all(ch[:-1] >= 1e-2)
    assert est.n_em_iter_ == len(est.em_history_)
    # one Newton step from F_sum = 1 with K^f = I, computed by hand
    one = _exact(fix_Kf="identity", max_newton=1, max_em=1).fit(bags, Y)
    X, off = check_bags(bags)
    Ksum = bag_sum_kernel(X, off, X, off, "rbf", DELTA)
    Ypm = np.where(Y > 0, 1.0, -1.0)
    F0 = np.ones(Y.shape)
    d, w = _grad_weights(F0, Ypm, 1.0 / np.diff(off))
    a, _ = _dense_newton_step(np.kron(np.eye(3), Ksum), _vec(w * F0 + d), _vec(w))
    np.testing.assert_allclose(one.Fsum_, Ksum @ _unvec(a, *Y.shape), atol=1e-12)
    np.testing.assert_array_equal(one.Kf_, np.eye(3))


# ---------------------------------------------------------------------------------- test 4 & 5
@pytest.mark.parametrize("path", ["none", "eig"])
def test_laplace_evidence_and_predictive_equal_dense(path):
    bags, Y = _toy(n=9, Q=2, seed=7)
    est = _exact(low_rank=path, trace_frac=1.0, full_rank_above=None, max_em=3)
    with pytest.warns(UserWarning, match="max_em"):
        est.fit(bags, Y)
    Kf = est.Kf_
    X, off, E, K, C, c, Ypm = _dense_setup(bags, Y, Kf)
    n, Q = Y.shape
    IE = np.kron(np.eye(Q), E)
    F = C @ IE @ _vec(est.d_)  # mode, paper Eq. (18)
    np.testing.assert_allclose(IE.T @ F, _vec(est.Fsum_), atol=1e-9)
    W = IE @ np.diag(_vec(est.W0_)) @ IE.T
    logp = _log_lik(est.Fsum_, Ypm, c)
    dense = (
        -0.5 * F @ np.linalg.solve(C, F)
        + logp
        - 0.5 * np.linalg.slogdet(np.eye(C.shape[0]) + C @ W)[1]
    )
    assert abs(est.log_marginal_likelihood_ - dense) < 1e-8
    # predictive (23)/(24) by brute-force conditioning (6) with A^{-1}
    rng = np.random.default_rng(2)
    test_bags = [rng.normal(size=(k, 2)) for k in (1, 3, 2)]
    Xt, offt = check_bags(test_bags)
    Ks = kernel_matrix(X, Xt, "rbf", DELTA)
    Kss = kernel_matrix(Xt, Xt, "rbf", DELTA)
    Kbar = np.kron(np.eye(Q), Ks.T @ np.linalg.inv(K))
    A = W + np.linalg.inv(C)
    mean = Kbar @ F
    cov = np.kron(Kf, Kss - Ks.T @ np.linalg.solve(K, Ks)) + Kbar @ np.linalg.solve(A, Kbar.T)
    Nt = Xt.shape[0]
    avg = np.zeros((3, Nt))
    for t in range(3):
        avg[t, offt[t] : offt[t + 1]] = 1.0 / (offt[t + 1] - offt[t])
    Avg = np.kron(np.eye(Q), avg)
    mu_ref = _unvec(Avg @ mean, 3, Q)
    var_ref = _unvec(np.diag(Avg @ cov @ Avg.T), 3, Q)
    mu, var = est.latent_mean_and_variance(test_bags)
    np.testing.assert_allclose(mu, mu_ref, atol=1e-9)
    np.testing.assert_allclose(var, var_ref, atol=1e-9)


# ---------------------------------------------------------------------------------- test 6
def test_m_step_matches_dense_bound_and_increases_it():
    bags, Y = _toy(n=10, Q=3, seed=8)
    Kf = _spd(3, seed=2)
    est = _exact(Kf_init=Kf, max_em=1, m_step_norm="instances")
    with pytest.warns(UserWarning, match="max_em"):
        est.fit(bags, Y)
    # Laplace statistics at K^f_old = Kf
    state = {"Fsum": np.ones(Y.shape), "U": None}
    stats = est._e_step(Kf, state)
    X, off, E, K, C, c, Ypm = _dense_setup(bags, Y, Kf)
    n, Q = Y.shape
    N = X.shape[0]
    IE = np.kron(np.eye(Q), E)
    F = C @ IE @ _vec(stats["d"])
    W = IE @ np.diag(_vec(stats["w"])) @ IE.T
    M = np.linalg.inv(W + np.linalg.inv(C)) + np.outer(F, F)
    Kinv = np.linalg.inv(K)
    Ht_dense = np.array(
        [
            [np.trace(Kinv @ M[p * N : (p + 1) * N, q * N : (q + 1) * N]) for q in range(Q)]
            for p in range(Q)
        ]
    )
    Ht = N * Kf - Kf @ stats["H"] @ Kf  # spec (32) with nu = N_I
    np.testing.assert_allclose(Ht, Ht_dense, rtol=1e-9, atol=1e-9)
    Knew = _m_step(Kf, stats["H"], N, False)
    np.testing.assert_array_equal(Knew, Knew.T)
    assert np.linalg.eigvalsh(Knew).min() >= -1e-12
    b_new, b_old = m_step_bound(Knew, Ht, N), m_step_bound(Kf, Ht, N)
    assert b_new >= b_old - 1e-10
    rng = np.random.default_rng(0)
    for _ in range(20):
        S = rng.normal(size=(Q, Q))
        S = 1e-3 * (S + S.T) / np.linalg.norm(S + S.T)
        assert m_step_bound(Knew + S, Ht, N) <= b_new + 1e-10
    np.testing.assert_allclose(_m_step(Kf, np.zeros((Q, Q)), N, False), Kf, atol=1e-12)
    # the "special" model: s I with s = tr(H~) / (Q nu) maximises the bound over multiples of I
    s_new = _m_step(Kf, stats["H"], N, True)
    np.testing.assert_allclose(s_new, np.eye(Q) * np.trace(Ht) / (Q * N))
    for f in (0.99, 1.01):
        assert m_step_bound(f * s_new, Ht, N) <= m_step_bound(s_new, Ht, N)


def test_learned_label_covariance_is_symmetric_psd():
    bags, Y = _toy(n=20, Q=3, seed=9)
    est = MIMLGPClassifier(delta=DELTA, max_em=40, eps=1e-300, random_state=0)
    with pytest.warns(UserWarning, match="max_em"):
        est.fit(bags, Y)
    np.testing.assert_array_equal(est.label_covariance_, est.label_covariance_.T)
    assert np.linalg.eigvalsh(est.label_covariance_).min() >= -1e-12


# ---------------------------------------------------------------------------------- test 7
@pytest.mark.filterwarnings("ignore:MIMLGPClassifier reached max_em")
def test_low_rank_full_rank_equivalence_and_rank_rule():
    bags, Y = _toy(n=15, Q=3, seed=10)
    m_eq_n = dict(low_rank="eig", trace_frac=1.0, full_rank_above=None)
    # one E-step (K^f = I)
    full = _exact(fix_Kf="identity").fit(bags, Y)
    low = _exact(fix_Kf="identity", **m_eq_n).fit(bags, Y)
    assert low.m_ == 15 and low.P_ is not None and full.P_ is None
    np.testing.assert_allclose(low.Fsum_, full.Fsum_, atol=1e-10)
    np.testing.assert_allclose(low.predict_proba(bags), full.predict_proba(bags), atol=1e-10)
    # 60 EM loops with K^f learned
    kw = dict(eps=1e-6, max_em=60)
    full = _exact(**kw).fit(bags, Y)
    low = _exact(**m_eq_n, **kw).fit(bags, Y)
    np.testing.assert_allclose(low.Fsum_, full.Fsum_, atol=1e-10)
    np.testing.assert_allclose(low.Kf_, full.Kf_, atol=1e-10)
    np.testing.assert_allclose(low.predict_proba(bags), full.predict_proba(bags), atol=1e-10)
    # approximate rank on toy data: bag latents close to exact
    approx = _exact(low_rank="eig", trace_frac=0.995, full_rank_above=None, **kw).fit(bags, Y)
    n_i = np.array([len(b) for b in bags])[:, None]
    assert approx.m_ < 15
    assert np.abs(approx.Fsum_ / n_i - full.Fsum_ / n_i).max() <= 0.05
    lam = np.array([5.0, 3.0, 1.0, 0.5, 0.3, 0.2])  # cumulative 0.5, 0.8, 0.9, 0.95, 0.98, 1
    assert select_rank(lam, 0.9) == 4  # strictly above 0.9
    assert select_rank(lam, 0.85) == 3
    assert select_rank(lam, 0.995) == 6 and select_rank(lam, 1.0) == 6


def test_conjugate_gradient_equals_direct_b1_solve():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(30, 6))
    L = np.linalg.cholesky(_spd(3))
    w = rng.random((30, 3)) * 0.25
    d = rng.normal(size=(30, 3))
    Fsum = rng.normal(size=(30, 3))
    F_cg, U = _lowrank_newton_step(P, L, w, d, Fsum, None)
    u = np.linalg.solve(_b1_dense(P, L, w), _vec(P.T @ (w * Fsum + d) @ L))
    np.testing.assert_allclose(_vec(U), u, atol=1e-10 * np.abs(u).max())
    # preconditioned by the Cholesky factor of a nearby B1 (the previous EM loop's, other
    # weights and other K^f) and warm-started: same solution
    L_old = np.linalg.cholesky(_spd(3, seed=4))
    w_old = w * rng.uniform(0.5, 2.0, size=w.shape)
    pre = np.linalg.cholesky(_b1_dense(P, L_old, w_old))
    F_pcg, U_pcg = _lowrank_newton_step(P, L, w, d, Fsum, U + 0.1, pre)
    np.testing.assert_allclose(_vec(U_pcg), u, atol=1e-10 * np.abs(u).max())
    np.testing.assert_allclose(F_pcg, P @ _unvec(u, 6, 3) @ L.T, atol=1e-10 * np.abs(F_pcg).max())


def test_weighted_grams_and_label_factor():
    rng = np.random.default_rng(1)
    P = rng.normal(size=(25, 7))
    w = rng.random((25, 3))
    G = _weighted_grams(P, w)
    for s in range(3):
        np.testing.assert_allclose(G[s], (P * w[:, [s]]).T @ P, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(G[s], G[s].T)
    Kf = _spd(4)
    L, is_chol = _label_factor(Kf)
    assert is_chol and np.allclose(L, np.tril(L))
    np.testing.assert_allclose(L @ L.T, Kf, atol=1e-12)
    v = np.array([[1.0, 2.0, 0.0, -1.0]])
    L, is_chol = _label_factor(v.T @ v)  # singular: eigenvalue factor
    assert not is_chol
    np.testing.assert_allclose(L @ L.T, v.T @ v, atol=1e-12)


def test_anderson_accelerates_a_linear_log_space_map():
    """Unit test of the accelerator: g(K) = exp(X* + R (log K - X*)) contracts slowly (rate
    0.99) to K* = exp(X*); Anderson reaches K* to 1e-10 in a few loops, plain needs ~2000."""
    rng = np.random.default_rng(2)
    Q = 3
    Xs = _sym_logm(_spd(Q, seed=5))
    iu = np.triu_indices(Q)
    A = rng.normal(size=(iu[0].size, iu[0].size))
    R = np.linalg.qr(A)[0] @ np.diag(np.linspace(0.3, 0.99, iu[0].size)) @ np.linalg.qr(A)[0].T

    def g(K):
        y = R @ (_sym_logm(K) - Xs)[iu]
        Y = np.zeros((Q, Q))
        Y[iu] = y
        return _sym_expm(Xs + Y + np.triu(Y, 1).T)

    K, acc, n_acc = np.eye(Q), _AndersonEM(depth=6), 0
    for _ in range(60):
        gK = g(K)
        if np.linalg.norm(gK - K) < 1e-10 * np.linalg.norm(gK):
            break
        K, accelerated = acc.propose(K, gK)
        n_acc += accelerated
    np.testing.assert_allclose(K, _sym_expm(Xs), rtol=1e-8)
    assert n_acc > 0


def test_anderson_em_reaches_the_plain_fixed_point():
    """Option em_accel: same fixed point and stopping rule as the plain EM loop, fewer loops;
    the final K^f is a plain M-step output; invariant under permutation of the bags."""
    bags, Y = _toy(n=12, Q=2, seed=11)  # "special" model: interior fixed point s = 1.8322...
    kw = dict(fix_Kf=True, eps=1e-9, max_em=2000)
    plain = _exact(**kw).fit(bags, Y)
    fast = _exact(em_accel="anderson", **kw).fit(bags, Y)
    assert not any(h["accelerated"] for h in plain.em_history_)
    assert any(h["accelerated"] for h in fast.em_history_)
    assert fast.n_em_iter_ < plain.n_em_iter_ / 3
    for est in (plain, fast):
        ch = [h["kf_change"] for h in est.em_history_ if not h["rejected"]]
        assert ch[-1] < 1e-9 and min(ch[:-1]) >= 1e-9
        assert not est.em_history_[-1]["rejected"]
    np.testing.assert_allclose(fast.Kf_, plain.Kf_, rtol=1e-6)
    np.testing.assert_allclose(fast.Fsum_, plain.Fsum_, rtol=1e-6, atol=1e-6)
    perm = np.random.default_rng(0).permutation(12)
    again = _exact(em_accel="anderson", **kw).fit([bags[i] for i in perm], Y[perm])
    np.testing.assert_allclose(again.Kf_, fast.Kf_, rtol=1e-6)


# ---------------------------------------------------------------------------------- test 8
@pytest.mark.parametrize("kw", [dict(fix_Kf="identity"), dict(m_step_norm="bags")])
def test_duplicating_instances_changes_nothing_collective(kw):
    bags, Y = _toy(n=12, Q=2, seed=11)
    test = _toy(n=4, Q=2, seed=12)[0]
    a = _exact(eps=1e-9, **kw).fit(bags, Y)
    b = _exact(eps=1e-9, **kw).fit([np.repeat(B, 2, axis=0) for B in bags], Y)
    n_i = np.array([len(B) for B in bags])[:, None]
    np.testing.assert_allclose(b.Fsum_ / (2 * n_i), a.Fsum_ / n_i, atol=1e-10)
    np.testing.assert_allclose(b.predict_proba(test), a.predict_proba(test), atol=1e-10)


def test_duplicating_an_instance_changes_nothing_standard():
    bags, Y = _toy(n=12, Q=2, seed=13)
    test = _toy(n=4, Q=2, seed=14)[0]
    kw = dict(likelihood="standard", delta=DELTA, max_em=60, random_state=0)
    a = MIMLGPClassifier(**kw).fit(bags, Y)
    dup = [np.vstack([B, B[:1]]) for B in bags]
    b = MIMLGPClassifier(**kw).fit(dup, Y)
    np.testing.assert_allclose(b.Fsum_, a.Fsum_, atol=1e-10)
    np.testing.assert_allclose(b.Kf_, a.Kf_, atol=1e-10)
    np.testing.assert_allclose(b.predict_proba(test), a.predict_proba(test), atol=1e-10)


def test_permutation_invariance():
    bags, Y = _toy(n=12, Q=2, seed=15)
    test = _toy(n=4, Q=2, seed=16)[0]
    a = _exact(eps=1e-9).fit(bags, Y)
    rng = np.random.default_rng(0)
    perm = rng.permutation(12)
    shuffled = [bags[i][rng.permutation(len(bags[i]))] for i in perm]
    b = _exact(eps=1e-9).fit(shuffled, Y[perm])
    np.testing.assert_allclose(b.Fsum_, a.Fsum_[perm], atol=1e-10)
    np.testing.assert_allclose(b.Kf_, a.Kf_, atol=1e-10)
    np.testing.assert_allclose(b.predict_proba(test), a.predict_proba(test), atol=1e-10)


def test_identity_label_covariance_equals_independent_fits():
    bags, Y = _toy(n=14, Q=3, seed=17)
    test = _toy(n=5, Q=3, seed=18)[0]
    joint = _exact(fix_Kf="identity").fit(bags, Y)
    for s in range(3):
        single = _exact(fix_Kf="identity").fit(bags, Y[:, [s]])
        np.testing.assert_allclose(joint.Fsum_[:, s], single.Fsum_[:, 0], atol=1e-10)
        mu, var = joint.latent_mean_and_variance(test)
        mu1, var1 = single.latent_mean_and_variance(test)
        np.testing.assert_allclose(mu[:, s], mu1[:, 0], atol=1e-10)
        np.testing.assert_allclose(var[:, s], var1[:, 0], atol=1e-10)


# ---------------------------------------------------------------------------------- test 9
def test_standard_equals_collective_with_single_instance_bags():
    rng = np.random.default_rng(0)
    bags = [rng.normal(size=(1, 2)) for _ in range(15)]
    Y = (np.stack([b[0] for b in bags]) > 0).astype(int)
    # the same EM map and the same (paper) stopping rule: em_stop="auto" would stop the
    # standard likelihood's EM on the evidence rule instead
    kw = dict(delta=DELTA, eps0=1e-12, eps=1e-9, max_em=300, em_stop="kf", random_state=0)
    col = MIMLGPClassifier(low_rank="none", **kw).fit(bags, Y)
    hard = MIMLGPClassifier(likelihood="standard", **kw).fit(bags, Y)
    soft = MIMLGPClassifier(likelihood="standard", standard_max="softmax", **kw).fit(bags, Y)
    for other in (hard, soft):
        np.testing.assert_allclose(other.Fsum_, col.Fsum_, atol=1e-10)
        np.testing.assert_allclose(other.Kf_, col.Kf_, atol=1e-10)


def test_softmax_bounds_the_max():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 8, size=20)
    off = np.concatenate([[0], np.cumsum(sizes)])
    F = rng.normal(size=(off[-1], 2)) * 3
    hard, Pi_h = _select(F, off, "hard", 10.0)
    soft, Pi_s = _select(F, off, "softmax", 10.0)
    gap = soft - hard
    assert np.all(gap >= 0) and np.all(gap <= np.log(sizes)[:, None] / 10.0 + 1e-12)
    ids = np.repeat(np.arange(20), sizes)
    np.testing.assert_allclose(np.add.reduceat(Pi_s, off[:-1]), 1.0)
    np.testing.assert_array_equal(np.add.reduceat(Pi_h, off[:-1]), 1.0)
    np.testing.assert_allclose((Pi_h * F).sum(0), hard.sum(0))
    assert np.all(F[Pi_h > 0] == hard[ids][Pi_h > 0])


# ---------------------------------------------------------------------------------- test 11
def test_monte_carlo_seeded_close_to_quadrature_and_strict_threshold():
    bags, Y = _toy(n=16, Q=3, seed=19)
    test = _toy(n=8, Q=3, seed=20)[0]
    est = MIMLGPClassifier(delta=DELTA, max_em=30, eps=1e-4, random_state=3).fit(bags, Y)
    p1 = est.predict_proba(test)
    np.testing.assert_array_equal(p1, est.predict_proba(test))
    again = MIMLGPClassifier(delta=DELTA, max_em=30, eps=1e-4, random_state=3).fit(bags, Y)
    np.testing.assert_array_equal(p1, again.predict_proba(test))
    pq = est.set_params(predict_method="quadrature").predict_proba(test)
    assert np.all(np.abs(p1 - pq) <= 4 * np.sqrt(pq * (1 - pq) / est.n_mc))
    pp = est.set_params(predict_method="probit").predict_proba(test)
    np.testing.assert_allclose(pp, pq, atol=0.02)
    est.set_params(predict_method="mc", threshold=float(p1[0, 0]))
    assert est.predict(test)[0, 0] == 0  # p == threshold is not predicted
    est.set_params(threshold=float(np.nextafter(p1[0, 0], -1)))
    assert est.predict(test)[0, 0] == 1
    mu = est.set_params(rank_scores="mean_latent").decision_function(test)
    np.testing.assert_allclose(mu, est.latent_mean_and_variance(test)[0])


# ---------------------------------------------------------------------------------- test 13
def test_numerics_large_latents_and_large_bags():
    Y = np.array([[1.0, -1.0], [-1.0, 1.0]])
    n_i = np.array([1.0, 100.0])
    F = np.array([[50.0, 50.0], [-5000.0, 5000.0]])
    d, w = _grad_weights(F, Y, 1 / n_i)
    assert (
        np.all(np.isfinite(d)) and np.all(np.isfinite(w)) and np.isfinite(_log_lik(F, Y, 1 / n_i))
    )
    rng = np.random.default_rng(0)
    bags = [rng.normal(size=(rng.integers(50, 101), 2)) for i in range(12)]
    Y2 = np.array([[i % 2, (i // 2) % 2] for i in range(12)])
    for kw in (dict(), dict(likelihood="standard")):
        est = MIMLGPClassifier(delta=0.5, max_em=20, random_state=0, **kw).fit(bags, Y2)
        assert np.all(np.isfinite(est.Fsum_)) and np.all(np.isfinite(est.predict_proba(bags)))


def test_psd_factor_reconstructs():
    Kf = _spd(4)
    L = _psd_factor(Kf)
    np.testing.assert_allclose(L @ L.T, Kf, atol=1e-12)


def test_nystrom_and_delta_selection_run_and_are_seeded():
    bags, Y = _toy(n=30, Q=2, seed=21)
    a = MIMLGPClassifier(
        delta=DELTA, low_rank="nystrom", n_nystrom=10, max_em=20, eps=1e-4, random_state=0
    )
    a.fit(bags, Y)
    assert a.m_ == 10 and a.P_.shape == (30, 10)
    b = MIMLGPClassifier(delta="cv", delta_grid=(0.5, 2.0), max_em=10, eps=1e-3, random_state=0)
    b.fit(bags, Y)
    assert len(b.cv_results_["one_minus_ap"]) == 2
    med = median_instance_distance(check_bags(bags)[0], random_state=np.random.RandomState(0))
    assert b.delta_ > 0 and len(b.cv_results_["delta_multiple"]) == 2
    del med


def test_delta_cv_with_one_label_ranks_the_bags_and_ignores_the_grid_order():
    """With one label the example-based AP is 1 - 0 for every bag (a bag has the label or not),
    so a CV scored by it ties at every delta and takes the first of the grid (20 Newsgroups:
    0.25 x the median, accuracy .55 against .84 at 30 x). The bags' ranking separates a
    near-diagonal kernel (delta = 0.01 x the median) from a sensible one, whatever the order."""
    rng = np.random.default_rng(3)
    bags, y = [], []
    for i in range(40):
        inst = rng.normal(size=(rng.integers(2, 6), 2))
        if i % 2:
            inst[0] = rng.normal(loc=2.5, scale=0.5, size=2)  # the positive instance
        bags.append(inst)
        y.append(i % 2)
    kw = dict(delta="cv", max_em=15, eps=1e-3, random_state=0)
    a = MIMLGPClassifier(delta_grid=(0.01, 1.0), **kw).fit(bags, y)
    b = MIMLGPClassifier(delta_grid=(1.0, 0.01), **kw).fit(bags, y)
    assert a.cv_results_["ap_over"] == "bags"
    small, sensible = a.cv_results_["one_minus_ap"]
    assert sensible < small - 0.1, a.cv_results_
    assert np.argmin(a.cv_results_["one_minus_ap"]) == 1
    assert np.argmin(b.cv_results_["one_minus_ap"]) == 0
    assert a.delta_ == pytest.approx(b.delta_)  # 1 x the same median


def test_delta_cv_with_several_labels_scores_the_papers_example_based_ap():
    bags, Y = _toy(n=30, Q=2, seed=21)
    est = MIMLGPClassifier(delta="cv", delta_grid=(0.5, 2.0), max_em=10, eps=1e-3, random_state=0)
    est.fit(bags, Y)
    assert est.cv_results_["ap_over"] == "labels"
    assert np.all(np.isfinite(est.cv_results_["one_minus_ap"]))


# ---------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("bags", "Y", "match"),
    [
        ([np.ones((2, 2)), np.ones((0, 2))], [[1], [0]], "bag 1 is empty"),
        ([np.ones((2, 2)), np.ones((2, 3))], [[1], [0]], "bag 1 has 3 features"),
        ([np.ones((2, 2)), np.array([[np.nan, 1.0]])], [[1], [0]], "NaN"),
        (
            [np.ones((2, 2)), np.ones((1, 2))],
            [[1, 0], [1, 0]],
            r"label column\(s\) \[1\] have no positive",
        ),
        ([np.ones((2, 2)), np.ones((1, 2))], [[1], [np.nan]], "NaN"),
        ([np.ones((2, 2)), np.ones((1, 2))], [[1], [0], [1]], "3 rows but there are 2 bags"),
        ([np.ones((2, 2)), np.ones((1, 2))], [[2], [0]], r"\{0, 1\}"),
        ([], [], "empty"),
    ],
)
def test_bad_input_raises(bags, Y, match):
    with pytest.raises(ValueError, match=match):
        MIMLGPClassifier(delta=1.0).fit(bags, Y)


@pytest.mark.parametrize(
    ("param", "value", "match"),
    [
        ("likelihood", "foo", "likelihood='foo' is not supported"),
        ("low_rank", "svd", "low_rank='svd'"),
        ("fix_Kf", "yes", "fix_Kf"),
        ("delta", -1.0, "delta must be positive"),
        ("max_em", 0, "max_em must be a positive integer"),
        ("em_accel", "squarem", "em_accel='squarem' is not supported"),
        ("em_accel_depth", 0, "em_accel_depth must be a positive integer"),
        ("Kf_init", np.ones((2, 2)), "positive definite"),
        ("Kf_init", np.eye(3), r"\(2, 2\)"),
    ],
)
def test_bad_options_raise(param, value, match):
    params = {"delta": 1.0, param: value}
    with pytest.raises(ValueError, match=match):
        MIMLGPClassifier(**params).fit([np.ones((1, 2)), np.zeros((2, 2))], [[1, 0], [0, 1]])


def test_predict_checks_feature_dimension():
    bags, Y = _toy(n=10, Q=2, seed=22)
    est = MIMLGPClassifier(delta=DELTA, max_em=5, eps=1e-2, random_state=0).fit(bags, Y)
    with pytest.raises(ValueError, match="3 features but 2 were seen in fit"):
        est.predict([np.ones((2, 3))])
    with pytest.raises(ValueError, match="predict_method"):
        MIMLGPClassifier(likelihood="standard", predict_method="probit", delta=1.0).fit(bags, Y)


def test_constructor_stores_only():
    est = MIMLGPClassifier(likelihood="nonsense", delta=-3)
    assert est.get_params()["likelihood"] == "nonsense"


# ------------------------------------------------------- issue 18: one-label MI defaults
def test_fit_label_thresholds_takes_the_middle_of_the_gap():
    from multiview_lab.miml.gp import fit_label_thresholds

    p = np.array([[0.6], [0.7], [0.8], [0.9]])
    Y = np.array([[False], [False], [True], [True]])
    np.testing.assert_allclose(fit_label_thresholds(p, Y), [0.75])


def test_auto_threshold_and_evidence_stop_on_one_label_standard_fits():
    rng = np.random.default_rng(3)
    y = np.repeat([1, 0], 15)
    # every bag holds near-origin instances; positives one shifted instance
    bags = [
        np.vstack([rng.normal(scale=0.05, size=(6, 2)), rng.normal(size=(1, 2)) + 3 * yi])
        for yi in y
    ]
    kw = dict(likelihood="standard", delta="median", random_state=0, max_em=60)
    est = MIMLGPClassifier(**kw).fit(bags, y)
    assert est.em_stopped_on_ in ("evidence", "kf") and est.n_em_iter_ < 60
    assert est.threshold_.shape == (1,) and est.threshold_[0] != 0.5
    lit = MIMLGPClassifier(threshold=0.5, **kw).fit(bags, y)
    np.testing.assert_allclose(lit.threshold_, [0.5])
    col = MIMLGPClassifier(delta="median", random_state=0).fit(bags, y)
    np.testing.assert_allclose(col.threshold_, [0.5])
    assert col.em_stopped_on_ == "kf"
