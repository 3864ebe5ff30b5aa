"""ADMM-MVFS spec §7 tests T1–T7, T9–T11 on small synthetic data (backends: test_backends.py)."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from multiview_lab.mvfs import ADMMMultiviewFeatureSelector, RFSSelector, mvfs_objective
from multiview_lab.mvfs.solvers import (
    class_step,
    fista_l21_ls,
    irls_l21_ls,
    l21_ls_objective,
    lipschitz,
    one_hot,
    reweight,
    row_norms,
    shrink_rows,
    zstep_prox,
    zstep_reweight,
)

# run to high precision: only the residual test with tiny tolerances stops
TIGHT = {"eps_abs": 1e-10, "eps_rel": 0.0, "tol": 0.0, "max_iter": 20000}
FIXED = {"eps_abs": 0.0, "eps_rel": 0.0, "tol": 0.0, "residual_balancing": False}


def make_views(n=160, sizes=(25, 25, 25), n_classes=4, n_informative=3, shift=1.0, seed=0):
    """Class-sorted views; the first ``n_informative`` features of each view carry class means."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) * n_classes // n
    Xs = []
    for d in sizes:
        X = rng.standard_normal((n, d))
        X[:, :n_informative] += shift * rng.standard_normal((n_classes, n_informative))[y]
        Xs.append(X)
    return Xs, y


def stacked(sel):
    return np.vstack(sel.W_)


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.fixture(scope="module")
def problem():
    Xs, y = make_views()
    rfs = RFSSelector(lam_frac=0.1, n_features=9, tol=1e-13).fit(Xs, y)
    admm = ADMMMultiviewFeatureSelector(lam_frac=0.1, n_features=9, **TIGHT).fit(Xs, y)
    return Xs, y, rfs, admm


# -- T1 Theorem 2: un-reduced (16)-(19) == reduced (20)-(23) ---------------------------------------
def unreduced_admm(Xs, codes, lam, rho, n_iter):
    """Explicit Z_iv, P_iv updates of paper Eqs. (16)-(19); the Z-step solves the joint system."""
    V, n = len(Xs), Xs[0].shape[0]
    C = codes.max() + 1
    Y = one_hot(codes, C)
    grams = [X.T @ X for X in Xs]
    W = [
        np.linalg.solve(G + lam * np.eye(G.shape[0]), X.T @ Y / V)
        for X, G in zip(Xs, grams, strict=True)
    ]
    Z = [X @ Wv for X, Wv in zip(Xs, W, strict=True)]
    P = [np.zeros((n, C)) for _ in Xs]
    f = reweight(sum(Z) - Y)
    iterates = []
    for _ in range(n_iter):
        # (16): W_v = argmin λ||W||_{2,1} + ρ/2 ||X_v W − Z_v − P_v/ρ||² (same inner IRLS step)
        W = [
            irls_l21_ls(Wv, lam / rho, gram=G, B=X.T @ (Zv + Pv / rho))
            for X, G, Wv, Zv, Pv in zip(Xs, grams, W, Z, P, strict=True)
        ]
        H = [X @ Wv for X, Wv in zip(Xs, W, strict=True)]
        # (17): 2F(Σ_u Z_u − Y) + ρ(Z_v − H_v + P_v/ρ) = 0 for every v, solved as one linear system
        # System matrix M = ρI + 2 (11ᵀ ⊗ F) inverted exactly (Woodbury) rather than by an LU
        # solve, whose rounding grows with max f_j = 1/(2||r_j||).
        M = 2.0 * np.kron(np.ones((V, V)), np.diag(f)) + rho * np.eye(V * n)
        M_inv = (np.eye(V * n) - np.kron(np.ones((V, V)), np.diag(2 * f / (rho + 2 * V * f)))) / rho
        rhs = np.vstack([2.0 * f[:, None] * Y + rho * Hv - Pv for Hv, Pv in zip(H, P, strict=True)])
        Zs = M_inv @ rhs
        np.testing.assert_allclose(M @ Zs, rhs, rtol=0, atol=1e-9 * np.abs(rhs).max())
        Z = np.split(Zs, V)
        # (19) and (18)
        P = [Pv + rho * (Zv - Hv) for Pv, Zv, Hv in zip(P, Z, H, strict=True)]
        f = reweight(sum(Z) - Y)
        iterates.append((W, Z, P, H, f))
    return iterates


def test_t1_theorem2_unreduced_equals_reduced():
    Xs, y = make_views(n=40, sizes=(4, 5, 6), n_classes=3, seed=1)
    rho = 1.0
    base = ADMMMultiviewFeatureSelector(lam=2.0, rho=rho, standardize="none", **FIXED)
    iterates = unreduced_admm(Xs, y, 2.0, rho, 10)
    for k, (W, Z, P, H, f) in enumerate(iterates, start=1):
        sel = clone(base).set_params(max_iter=k).fit(Xs, y)
        np.testing.assert_allclose(stacked(sel), np.vstack(W), rtol=0, atol=1e-10)
        # (17) multiplies residual rows by f_j = 1/(2 sqrt(||r_j||² + ε)) ≤ 5e4: rows fitted exactly
        # by the L2,1 loss lose log10(f_j) digits in the explicit Z_iv, hence the f-scaled tolerance
        atol = max(1e-12, 4 * np.finfo(float).eps * f.max())
        for Pv in P[1:]:  # (40): all P_iv equal P̄_i for k ≥ 1
            np.testing.assert_allclose(Pv, P[0], rtol=0, atol=atol)
        Zbar, Mbar = sum(Z) / 3, sum(H) / 3
        for Zv, Hv in zip(Z, H, strict=True):  # (37): Z_iv = X_iv W_v + Z̄_i − M̄_i
            np.testing.assert_allclose(Zv, Hv + Zbar - Mbar, rtol=0, atol=atol)


# -- T2 oracle ---------------------------------------------------------------------------------------
def test_t2_admm_reaches_rfs_optimum(problem):
    _, _, rfs, admm = problem
    J_rfs, J_admm = rfs.history_["objective"][-1], admm.history_["objective"][-1]
    assert admm.converged_ and admm.stop_reason_ == "residuals"
    assert (J_admm - J_rfs) / J_rfs <= 1e-6
    assert rel(stacked(admm), stacked(rfs)) <= 1e-2
    assert set(admm.get_support(indices=True)) == set(rfs.get_support(indices=True))
    assert np.allclose(admm.lam_max_, rfs.lam_max_, rtol=1e-12)


def test_rfs_objective_monotone(problem):
    _, _, rfs, _ = problem
    assert np.all(np.diff(rfs.history_["objective"]) <= 1e-12 * rfs.history_["objective"][0])


# -- T3 residuals and independence of ρ ---------------------------------------------------------------
def test_t3_residuals_vanish_for_every_rho(problem):
    Xs, y, _, admm = problem
    Ws = {}
    for rho in (0.5, 1.0, 5.0):
        sel = ADMMMultiviewFeatureSelector(
            lam_frac=0.1,
            rho=rho,
            eps_abs=1e-9,
            eps_rel=0.0,
            tol=0.0,
            max_iter=20000,
            residual_balancing=False,
        ).fit(Xs, y)
        assert sel.history_["primal_residual"][-1] < 1e-6
        assert sel.history_["dual_residual"][-1] < 1e-6
        assert np.all(sel.history_["rho"] == rho)
        Ws[rho] = stacked(sel)
    assert rel(Ws[0.5], Ws[1.0]) <= 1e-4 and rel(Ws[5.0], Ws[1.0]) <= 1e-4
    # the default (residual balancing) reaches the same point
    assert rel(stacked(admm), Ws[1.0]) <= 1e-4


# -- T4 reductions -----------------------------------------------------------------------------------
def test_t4_single_view_equals_rfs():
    Xs, y = make_views(sizes=(20,), seed=2)
    admm = ADMMMultiviewFeatureSelector(lam_frac=0.1, **TIGHT).fit(Xs, y)
    rfs = RFSSelector(lam_frac=0.1, tol=1e-13).fit(Xs, y)
    assert rel(stacked(admm), stacked(rfs)) <= 1e-4


def test_t4_class_blocks_equal_single_block():
    rng = np.random.default_rng(3)
    codes = np.repeat(np.arange(4), 7)
    M, P = rng.standard_normal((28, 4)), rng.standard_normal((28, 4))
    f = rng.uniform(0.1, 2.0, 28)
    for zstep in ("reweight", "prox"):
        whole = class_step(M, P, f, codes, 4, 3, 1.3, zstep=zstep)
        parts = [
            class_step(M[b], P[b], f[b], codes[b], 4, 3, 1.3, zstep=zstep)
            for b in (slice(0, 7), slice(7, 21), slice(21, 28))
        ]
        for i in range(4):
            np.testing.assert_allclose(
                np.concatenate([p[i] for p in parts]), whole[i], rtol=0, atol=1e-12
            )


def test_t4_sample_and_class_permutations(problem):
    Xs, y, _, admm = problem
    rng = np.random.default_rng(4)
    perm = rng.permutation(y.shape[0])  # shuffles samples, within classes too
    relabel = np.array([2, 0, 3, 1])  # class c becomes 10 * relabel[c]: a new class order
    y2 = 10 * relabel[y[perm]]
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.1, n_features=9, **TIGHT).fit(
        [X[perm] for X in Xs], y2
    )
    W = stacked(admm)
    W2 = stacked(sel)[:, relabel]  # column of class c in the relabelled fit
    np.testing.assert_allclose(W2, W, rtol=0, atol=1e-8 * np.abs(W).max())
    np.testing.assert_array_equal(sel.ranking_[:9], admm.ranking_[:9])


def test_t4_view_permutation_permutes_blocks():
    Xs, y = make_views(sizes=(6, 9, 12), seed=5)
    kw = dict(lam_frac=0.2, max_iter=200, **FIXED)
    a = ADMMMultiviewFeatureSelector(**kw).fit(Xs, y)
    b = ADMMMultiviewFeatureSelector(**kw).fit([Xs[2], Xs[0], Xs[1]], y)
    for Wa, Wb in zip([a.W_[2], a.W_[0], a.W_[1]], b.W_, strict=True):
        np.testing.assert_allclose(Wb, Wa, rtol=0, atol=1e-10)


# -- T5 subproblems ----------------------------------------------------------------------------------
def test_t5_zstep_reweight_and_prox():
    rng = np.random.default_rng(6)
    V, rho = 3, 0.7
    Y = one_hot(np.repeat(np.arange(3), 5), 3)
    u = rng.standard_normal((15, 3))
    u /= row_norms(u)[:, None]
    a = Y / V + 2.0 * u  # ||ρ(Va − Y)/V|| = 2ρ > 1: the prox residual row is not 0
    a[:4] = Y[:4] / V + 1e-3 * u[:4]  # rows whose prox residual is 0
    f = rng.uniform(0.2, 3.0, 15)
    Z = zstep_reweight(a, Y, f, V, rho)
    grad = 2 * V * f[:, None] * (V * Z - Y) + rho * V * (Z - a)
    assert np.abs(grad).max() <= 1e-12
    # (A4) satisfies the subgradient condition of min ||U||_{2,1} + ρ/(2V)||U − (Va − Y)||²
    Zp = zstep_prox(a, Y, V, rho)
    U, B = V * Zp - Y, V * a - Y
    nz = row_norms(U) > 0
    np.testing.assert_array_equal(nz, np.arange(15) >= 4)
    stat = U[nz] / row_norms(U[nz])[:, None] + rho / V * (U[nz] - B[nz])
    assert np.abs(stat).max() <= 1e-12
    assert np.all(row_norms(rho / V * B[~nz]) <= 1 + 1e-12)
    # iterating (A3) with re-computed F converges to (A4)
    Zr = Z
    for _ in range(5000):
        Zr = zstep_reweight(a, Y, reweight(V * Zr - Y), V, rho)
    assert np.abs(Zr - Zp).max() <= 1e-6


def test_t5_wsolvers():
    rng = np.random.default_rng(7)
    X, T = rng.standard_normal((50, 12)), rng.standard_normal((50, 3))
    G, B, tt, c = X.T @ X, X.T @ T, float(np.sum(T * T)), 4.0
    W = np.linalg.lstsq(X, T, rcond=None)[0]
    objs = [l21_ls_objective(X, T, W, c)]
    for _ in range(300):
        W = irls_l21_ls(W, c, gram=G, B=B)
        objs.append(l21_ls_objective(X, T, W, c, gram=G, B=B, tt=tt))
    assert np.all(np.diff(objs) <= 1e-12 * objs[0])  # IRLS inner objective non-increasing
    Wf = fista_l21_ls(np.zeros_like(W), c, lipschitz(gram=G), n_iter=5000, gram=G, B=B)
    assert np.all(np.any(W != 0, axis=1))  # no zero row: IRLS converges linearly here
    J_irls, J_fista = objs[-1], l21_ls_objective(X, T, Wf, c)
    assert abs(J_irls - J_fista) / J_fista <= 1e-8
    # FISTA from X (power iteration) = FISTA from the Gram matrix
    Wx = fista_l21_ls(np.zeros_like(W), c, lipschitz(X=X), n_iter=5000, X=X, T=T)
    assert abs(l21_ls_objective(X, T, Wx, c) - J_fista) / J_fista <= 1e-8
    # with a larger weight FISTA gives exact zero rows
    Wz = fista_l21_ls(
        np.zeros_like(W), 0.7 * row_norms(B).max(), lipschitz(gram=G), n_iter=2000, gram=G, B=B
    )
    assert np.any(np.all(Wz == 0, axis=1)) and np.any(Wz != 0)
    # shrink_rows is the prox: zero rows below the threshold, shrunk norms above
    S = shrink_rows(T, 1.5)
    norms = row_norms(T)
    np.testing.assert_allclose(row_norms(S), np.maximum(norms - 1.5, 0.0), atol=1e-12)


def test_t5_push_through_equals_primal():
    rng = np.random.default_rng(8)
    X, T = rng.standard_normal((15, 40)), rng.standard_normal((15, 3))  # d_v > n
    W0 = rng.standard_normal((40, 3))
    primal = irls_l21_ls(W0, 0.3, gram=X.T @ X, B=X.T @ T, n_iter=3)
    push = irls_l21_ls(W0, 0.3, X=X, T=T, n_iter=3)
    np.testing.assert_allclose(push, primal, rtol=0, atol=1e-10)
    # and the whole ADMM on a view wider than n matches RFS (augmented form)
    Xs, y = make_views(n=24, sizes=(30, 20), n_classes=3, seed=9)
    admm = ADMMMultiviewFeatureSelector(lam_frac=0.2, **TIGHT).fit(Xs, y)
    assert admm.n_features_per_view_.tolist() == [30, 20]
    rfs = RFSSelector(lam_frac=0.2, tol=1e-13).fit(Xs, y)
    J_r, J_a = rfs.history_["objective"][-1], admm.history_["objective"][-1]
    assert (J_a - J_r) / J_r <= 1e-6


# -- T6 recovery -------------------------------------------------------------------------------------
def test_t6_recovers_informative_features():
    rng = np.random.default_rng(10)
    n, C = 90, 3
    y = np.repeat(np.arange(C), n // C)
    Xs = []
    for _ in range(3):
        X = rng.standard_normal((n, 33))
        X[:, :3] += 3.0 * np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])[y]  # shifts of ≥ 3σ
        Xs.append(X)
    Xs.append(rng.standard_normal((n, 33)))  # an all-noise view
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.3, n_features=9).fit(Xs, y)
    informative = {v * 33 + j for v in range(3) for j in range(3)}
    assert len(informative & set(sel.get_support(indices=True))) >= 8
    norms = [np.linalg.norm(W) for W in sel.W_]
    assert int(np.argmin(norms)) == 3


# -- T7 λ_max ----------------------------------------------------------------------------------------
def test_t7_lambda_max():
    Xs, y = make_views(n=60, sizes=(8, 8), n_classes=3, seed=11)
    kw = dict(zstep="prox", wsolver="fista", max_iter=3000)
    zero = ADMMMultiviewFeatureSelector(lam_frac=1.02, **kw).fit(Xs, y)
    assert np.all(stacked(zero) == 0.0)
    counts = []
    for frac in (0.9, 0.7, 0.5, 0.3, 0.1):
        W = stacked(ADMMMultiviewFeatureSelector(lam_frac=frac, **kw).fit(Xs, y))
        counts.append(int(np.count_nonzero(np.any(W != 0, axis=1))))
    assert counts[0] >= 1
    drops = [b - a for a, b in zip(counts[:-1], counts[1:], strict=True) if b < a]
    assert len(drops) <= 1 and all(d >= -1 for d in drops)


# -- T9 bookkeeping ------------------------------------------------------------------------------------
def test_t9_objective_and_history(problem):
    Xs, y, _, admm = problem
    rng = np.random.default_rng(12)
    W = [rng.standard_normal((X.shape[1], 4)) for X in Xs]
    Y = one_hot(y, 4)
    R = sum(X @ Wv for X, Wv in zip(Xs, W, strict=True)) - Y
    n21 = sum(row_norms(Wv).sum() for Wv in W)
    per_class = sum(mvfs_objective(R[y == i], 0.0, 0.0) for i in range(4)) + 0.3 * n21
    assert abs(per_class - mvfs_objective(R, n21, 0.3)) <= 1e-12 * per_class
    assert all(len(h) == admm.n_iter_ for h in admm.history_.values())
    assert np.all(np.diff(admm.history_["time"]) >= 0)
    assert np.all(admm.history_["bytes_sent"] == 0)  # in-process: nothing crosses a network
    # the history's objective is J of the returned W on the standardised data
    Z = [(X - X.mean(0)) / X.std(0) for X in Xs]
    R = sum(Zv @ Wv for Zv, Wv in zip(Z, admm.W_, strict=True)) - Y
    J = mvfs_objective(R, sum(row_norms(Wv).sum() for Wv in admm.W_), admm.lam_)
    assert abs(J - admm.history_["objective"][-1]) <= 1e-9 * J


def test_default_stopping_is_residual_or_objective(problem):
    Xs, y, _, _ = problem
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.1).fit(Xs, y)
    assert sel.converged_ and sel.n_iter_ < 5000
    h = sel.history_
    if sel.stop_reason_ == "residuals":
        assert h["primal_residual"][-1] <= h["eps_primal"][-1]
        assert h["dual_residual"][-1] <= h["eps_dual"][-1]


# -- T10 selection plumbing ----------------------------------------------------------------------------
def test_t10_selection_plumbing(problem):
    Xs, y, _, admm = problem
    fm = admm.feature_map_
    for g in (0, 24, 25, 74):
        assert admm.global_index(*fm[g]) == g
    np.testing.assert_array_equal(admm.get_support(indices=True), admm.ranking_[:9])
    Xt = admm.transform(Xs)
    g = admm.ranking_[0]
    np.testing.assert_array_equal(Xt[:, 0], Xs[fm[g, 0]][:, fm[g, 1]])
    per = clone(admm).set_params(ranking="per_view", n_features=10)
    per.__dict__.update({k: v for k, v in admm.__dict__.items() if k.endswith("_")})
    masks = per.get_support(per_view=True)
    assert [int(m.sum()) for m in masks] == [4, 3, 3]  # 10·25/75 = 3.33 each, largest remainder
    assert per.transform(Xs).shape == (80 * 2, 10)


def test_t10_scaler_fitted_on_training_rows_only(problem):
    Xs, y, _, _ = problem
    train = np.arange(0, 160, 2)
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.1, max_iter=20).fit(
        [X[train] for X in Xs], y[train]
    )
    np.testing.assert_allclose(sel.loc_[1], Xs[1][train].mean(0), atol=1e-12)
    np.testing.assert_allclose(sel.scale_[1], Xs[1][train].std(0), atol=1e-12)
    test_rows = [X[1::2] + 100.0 for X in Xs]  # transform neither refits nor rescales
    out = sel.transform(test_rows)
    g = sel.ranking_[0]
    np.testing.assert_array_equal(
        out[:, 0], test_rows[sel.feature_map_[g, 0]][:, sel.feature_map_[g, 1]]
    )


def test_constant_column_gets_zero_score():
    Xs, y = make_views(n=60, sizes=(5, 5), n_classes=3, seed=13)
    Xs[0][:, 2] = 7.0
    for sel in (
        ADMMMultiviewFeatureSelector(lam_frac=0.1, max_iter=300),
        RFSSelector(lam_frac=0.1),
    ):
        assert sel.fit(Xs, y).scores_[2] == 0.0


# -- T11 squared loss ----------------------------------------------------------------------------------
def test_t11_fro_loss_matches_centralised_fista():
    Xs, y = make_views(n=80, sizes=(10, 12), n_classes=3, seed=14)
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.1, loss="fro", **TIGHT).fit(Xs, y)
    X = np.hstack([(X - X.mean(0)) / X.std(0) for X in Xs])
    Y = one_hot(y, 3)
    G, B = X.T @ X, X.T @ Y
    # ||XW − Y||² + λ||W||_{2,1} = 2 (½||XW − Y||² + (λ/2)||W||_{2,1})
    W = fista_l21_ls(np.zeros((22, 3)), sel.lam_ / 2, lipschitz(gram=G), n_iter=20000, gram=G, B=B)
    J_ref = mvfs_objective(X @ W - Y, row_norms(W).sum(), sel.lam_, "fro")
    assert (sel.history_["objective"][-1] - J_ref) / J_ref <= 1e-6
    rfs = RFSSelector(lam_frac=0.1, loss="fro", tol=1e-13).fit(Xs, y)
    assert abs(rfs.history_["objective"][-1] - J_ref) / J_ref <= 1e-6


# -- sklearn conventions -------------------------------------------------------------------------------
def test_clone_pickle_and_determinism(problem):
    Xs, y, _, _ = problem
    sel = ADMMMultiviewFeatureSelector(lam_frac=0.1, wsolver="fista", max_iter=50, random_state=0)
    a = clone(sel).fit(Xs, y)
    b = pickle.loads(pickle.dumps(clone(sel).fit(Xs, y)))
    np.testing.assert_array_equal(stacked(a), stacked(b))
    assert a.get_params() == sel.get_params()


# -- bad input -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [ADMMMultiviewFeatureSelector, RFSSelector])
def test_bad_input(cls):
    Xs, y = make_views(n=40, sizes=(5, 6), n_classes=2, seed=15)
    with pytest.raises(ValueError, match="same number of samples"):
        cls(lam=1.0).fit([Xs[0], Xs[1][:-1]], y)
    y1 = y.copy()
    y1[0] = 7
    with pytest.raises(ValueError, match=r"class 7 \(1 sample\)"):
        cls(lam=1.0).fit(Xs, y1)
    with pytest.raises(ValueError, match="n_features=12 is larger than the number of features"):
        cls(lam=1.0, n_features=12).fit(Xs, y)
    bad = [Xs[0].copy(), Xs[1]]
    bad[0][3, 1] = np.nan
    with pytest.raises(ValueError, match="View 0.*NaN"):
        cls(lam=1.0).fit(bad, y)
    with pytest.raises(ValueError, match="loss='foo' is not supported"):
        cls(lam=1.0, loss="foo").fit(Xs, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls(lam=1.0).fit(Xs, np.zeros(40))
    with pytest.raises(ValueError, match="lam must be"):
        cls(lam=0.0).fit(Xs, y)


def test_bad_admm_options():
    Xs, y = make_views(n=40, sizes=(5, 6), n_classes=2, seed=16)
    for params, msg in [
        ({"backend": "ray"}, "backend='ray' is not supported"),
        ({"zstep": "exact"}, "zstep='exact'"),
        ({"wsolver": "cg"}, "wsolver='cg'"),
        ({"inner_iters": 0}, "inner_iters must be a positive int"),
        ({"rho": -1.0}, "rho must be positive"),
        ({"ranking": "local"}, "ranking='local'"),
    ]:
        with pytest.raises(ValueError, match=msg):
            ADMMMultiviewFeatureSelector(**params).fit(Xs, y)
    sel = ADMMMultiviewFeatureSelector(lam=1.0, max_iter=5).fit(Xs, y)
    with pytest.raises(ValueError, match="2 were expected"):
        sel.transform(Xs[:1])
    with pytest.raises(ValueError, match="View 1 has 5 features but 6"):
        sel.transform([Xs[0], Xs[1][:, :5]])
