"""CqBoost and Fusion_Cq^all (PB-MVBoost spec §5.3, test 19)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.svm import LinearSVC

from multiview_lab.pbmvboost.cqboost import (
    CqBoostClassifier,
    FusionCqAllClassifier,
    _rbf_margin_matrix,
    cqboost_column_generation,
    solve_master_qp,
)


def voter_problem(m=40, n_voters=10, seed=0):
    """Labels in {0, 1} and the outputs in [-1, 1] of ``n_voters`` weak, noisy voters."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    y_pm = 2.0 * y - 1
    outputs = np.tanh(
        rng.normal(size=(m, n_voters)) + rng.uniform(0, 0.8, n_voters) * y_pm[:, None]
    )
    return outputs, y


def dense_qp_objective(H, mu, n_starts=4, seed=0):
    """Independent reference: the full QP over all columns by SLSQP from several starts."""
    m, n = H.shape
    G, c = H.T @ H / m, H.mean(axis=0)
    rng = np.random.default_rng(seed)
    best = np.inf
    for _ in range(n_starts):
        res = minimize(
            lambda q: q @ G @ q,
            rng.dirichlet(np.ones(n)),
            jac=lambda q: 2 * G @ q,
            method="SLSQP",
            bounds=[(0, 1)] * n,
            constraints=[
                {"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones(n)},
                {"type": "ineq", "fun": lambda q: c @ q - mu, "jac": lambda q: c},
            ],
            options={"ftol": 1e-15, "maxiter": 500},
        )
        q = res.x
        if abs(q.sum() - 1) < 1e-9 and c @ q >= mu - 1e-9 and q.min() >= -1e-9:
            best = min(best, res.fun)
    return best


def rbf_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, "b", "a")
    return X, y


# --- test 19 --------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [1e-3, 0.05, 0.15])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_invariants_and_full_qp_equality(mu, seed):
    outputs, y = voter_problem(seed=seed)  # 10 voters + 10 complements = 20 columns
    clf = CqBoostClassifier(mu, voters="precomputed").fit(outputs, y)
    q = clf.q_
    assert q.min() >= -1e-10
    assert abs(q.sum() - 1) <= 1e-8
    y_pm = 2.0 * y - 1
    H = np.hstack([y_pm[:, None] * outputs, -y_pm[:, None] * outputs])
    margins = H[:, clf.columns_] @ q
    assert margins.mean() >= mu - 1e-8
    np.testing.assert_allclose(margins, clf.train_margins_, atol=1e-12)
    assert np.all(np.diff(clf.objective_history_) <= 1e-10)
    assert clf.stop_reason_ == "converged"
    reference = dense_qp_objective(H, mu, seed=seed)
    assert abs(clf.objective_history_[-1] - reference) <= 1e-6
    assert clf.objective_history_[-1] >= reference - 1e-9  # nothing beats the full optimum


def test_without_self_complement_matches_full_qp():
    outputs, y = voter_problem(m=50, n_voters=15, seed=3)
    clf = CqBoostClassifier(0.05, voters="precomputed", self_complement=False).fit(outputs, y)
    H = (2.0 * y - 1)[:, None] * outputs
    assert clf.columns_.max() < 15
    assert abs(clf.objective_history_[-1] - dense_qp_objective(H, 0.05)) <= 1e-6


def test_stopping_rule_and_duals():
    outputs, y = voter_problem(m=60, n_voters=10, seed=4)
    y_pm = 2.0 * y - 1
    H = np.hstack([y_pm[:, None] * outputs, -y_pm[:, None] * outputs])
    clf = CqBoostClassifier(0.05, voters="precomputed", epsilon=1e-6).fit(outputs, y)
    # every entering column priced above the threshold of its iteration ...
    assert np.all(clf.entering_scores_[1:] > clf.nu_history_[1:] + 1e-6)
    # ... and at the stop no column prices above nu + epsilon (alpha from the duals)
    np.testing.assert_allclose(clf.alpha_, (clf.beta_ - 2 * clf.train_margins_) / 60, atol=1e-14)
    assert clf.stop_reason_ == "converged"
    assert (clf.alpha_ @ H).max() <= clf.nu_ + 1e-6
    # the duals certify optimality on the chosen columns: score_j = nu where q_j > 0
    active = clf.columns_[clf.q_ > 1e-9]
    np.testing.assert_allclose(clf.alpha_ @ H[:, active], clf.nu_, atol=1e-9)
    # the iteration cap and the number of columns are both respected
    capped = CqBoostClassifier(0.05, voters="precomputed", n_max_iterations=3).fit(outputs, y)
    assert capped.stop_reason_ == "max_iterations" and capped.columns_.size == 3
    tiny = CqBoostClassifier(0.0, voters="precomputed", epsilon=0.0).fit(outputs[:, :1], y)
    assert tiny.columns_.size <= 2


def test_relative_epsilon_reaches_the_optimum_for_small_mu():
    # With self-complement the master is scale-invariant below the largest feasible mu: the
    # optimum at mu is (mu / mu0)^2 times the optimum at mu0. The spec's absolute epsilon is
    # larger than the objective (>= mu^2) for small mu and stops early; the relative rule does not.
    outputs, y = voter_problem(m=60, n_voters=10, seed=1)
    big = CqBoostClassifier(1e-3, voters="precomputed").fit(outputs, y).objective_history_[-1]
    target = big * (1e-5 / 1e-3) ** 2
    rel = CqBoostClassifier(1e-5, voters="precomputed", epsilon_mode="relative").fit(outputs, y)
    assert rel.stop_reason_ == "converged"
    assert abs(rel.objective_history_[-1] / target - 1) <= 1e-6
    absolute = CqBoostClassifier(1e-5, voters="precomputed").fit(outputs, y)
    assert absolute.objective_history_[-1] / target - 1 > 1e-3
    with pytest.raises(ValueError, match="epsilon_mode"):
        CqBoostClassifier(1e-3, voters="precomputed", epsilon_mode="gap").fit(outputs, y)


def test_first_column_is_best_mean_margin_and_infeasible_mu():
    outputs, y = voter_problem(seed=5)
    H = (2.0 * y - 1)[:, None] * outputs
    res = cqboost_column_generation(H, 1e-3)
    c = np.concatenate([H.mean(0), -H.mean(0)])
    assert res.columns[0] == np.argmax(c)
    with pytest.raises(ValueError, match="infeasible"):
        cqboost_column_generation(H, c.max() + 0.01)


def test_master_qp_solver_against_slsqp():
    rng = np.random.default_rng(0)
    for _ in range(5):
        H = rng.normal(size=(30, 8)) * 0.5 + 0.2
        G, c = H.T @ H / 30, H.mean(0)
        mu = 0.5 * c.max()
        q0 = np.eye(8)[np.argmax(c)]
        q, nu, beta, _ = solve_master_qp(G, c, mu, q0)
        assert q.min() >= 0 and abs(q.sum() - 1) < 1e-12 and c @ q >= mu - 1e-12
        assert beta >= 0
        # KKT: 2 G q = -nu 1 + beta c + lambda, lambda >= 0 and zero on the support
        lam = 2 * G @ q + nu - beta * c
        assert lam.min() >= -1e-9 and np.abs(lam[q > 1e-9]).max() <= 1e-9
        assert abs(q @ G @ q - dense_qp_objective(H, mu, n_starts=4)) <= 1e-8


def test_rbf_decision_function_is_the_weighted_vote():
    X, y = rbf_data()
    clf = CqBoostClassifier(0.05, gamma=0.5).fit(X, y)
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    Xt, _ = rbf_data(n=50, seed=1)
    n = X.shape[0]
    score = np.zeros(50)
    for j, w in zip(clf.columns_, clf.q_, strict=True):
        sign, base = (1.0, j) if j < n else (-1.0, j - n)
        score += w * sign * y_pm[base] * np.exp(-0.5 * ((Xt - X[base]) ** 2).sum(axis=1))
    np.testing.assert_allclose(clf.decision_function(Xt), score, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xt), clf.classes_[(score > 0).astype(int)])
    assert clf.score(X, y) > 0.75


def test_cqboost_bad_input():
    X, y = rbf_data(n=30)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        CqBoostClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        CqBoostClassifier().fit(X[:, 0], y)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[30, 29\]"):
        CqBoostClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        CqBoostClassifier().fit(X, np.ones(30))
    with pytest.raises(ValueError, match="exactly 2 distinct labels"):
        CqBoostClassifier().fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="'voters' parameter.*Got 'linear'"):
        CqBoostClassifier(voters="linear").fit(X, y)
    with pytest.raises(ValueError, match="in \\[-1, 1\\]"):
        CqBoostClassifier(voters="precomputed").fit(3 * X, y)
    with pytest.raises(ValueError, match="'mu' parameter.*Got -0.1"):
        CqBoostClassifier(mu=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="'gamma' parameter.*Got 0"):
        CqBoostClassifier(gamma=0).fit(X, y)
    clf = CqBoostClassifier(0.01).fit(X, y)
    with pytest.raises(ValueError, match="expecting 3 features"):
        clf.predict(X[:, :2])


# --- Fusion_Cq^all --------------------------------------------------------------------------


def fusion_views(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    Xs = [rng.random((n, 6)) + 0.5 * y[:, None] * (np.arange(6) < 2) for _ in range(3)]
    return Xs, np.array([3, 8])[y]


SMALL = dict(Cs=(1e-2, 1.0, 100.0), gammas=(1e-2, 1e-1, 1.0), mus=(1e-4, 1e-2, 1e-1))


def test_fusion_level1_is_cross_fitted_and_standardised():
    Xs, y = fusion_views()
    clf = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    z = clf.z_train_
    assert z.shape == (150, 9)
    np.testing.assert_allclose(z.mean(0), 0, atol=1e-10)
    np.testing.assert_allclose(z.std(0), 1, atol=1e-10)
    y_pm = np.where(y == 8, 1.0, -1.0)
    assert set(np.unique(clf.level1_fold_)) == set(range(5))
    # row i's level-1 output comes from an SVM that never saw row i (primal liblinear: deterministic)
    for k in (0, 3):
        test = clf.level1_fold_ == k
        for v, (ci, C) in [(0, (1, 1.0)), (2, (2, 100.0))]:
            svm = LinearSVC(C=C, dual="auto", max_iter=10000).fit(Xs[v][~test], y_pm[~test])
            col = 3 * v + ci
            expected = (svm.decision_function(Xs[v][test]) - clf.z_mean_[col]) / clf.z_scale_[col]
            np.testing.assert_allclose(z[test, col], expected, rtol=1e-6, atol=1e-6)
    # at predict time the SVMs refitted on all rows are used
    svm = LinearSVC(C=1.0, dual="auto", max_iter=10000).fit(Xs[1], y_pm)
    np.testing.assert_allclose(
        clf.transform_level1(Xs)[:, 4],
        (svm.decision_function(Xs[1]) - clf.z_mean_[4]) / clf.z_scale_[4],
        rtol=1e-6,
        atol=1e-6,
    )


def test_fusion_in_sample_level1_uses_the_full_svms():
    Xs, y = fusion_views()
    clf = FusionCqAllClassifier(**SMALL, level1_fit="in_sample", random_state=0).fit(Xs, y)
    assert np.all(clf.level1_fold_ == -1)
    np.testing.assert_allclose(clf.z_train_, clf.transform_level1(Xs), atol=1e-12)
    cross = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    assert np.abs(cross.z_train_ - cross.transform_level1(Xs)).max() > 1e-3


def test_fusion_selects_gamma_mu_by_cv_and_predicts_with_cqboost():
    Xs, y = fusion_views()
    clf = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    assert clf.cv_scores_.shape == (3, 3)
    a, b = np.unravel_index(np.nanargmax(clf.cv_scores_), (3, 3))
    assert (clf.best_gamma_, clf.best_mu_) == (SMALL["gammas"][a], SMALL["mus"][b])
    assert clf.cqboost_.gamma == clf.best_gamma_ and clf.cqboost_.mu == clf.best_mu_
    Xt, yt = fusion_views(n=200, seed=1)
    score = clf.cqboost_.decision_function(clf.transform_level1(Xt))
    np.testing.assert_allclose(clf.decision_function(Xt), score)
    np.testing.assert_array_equal(clf.predict(Xt), np.where(score > 0, 8, 3))
    assert clf.score(Xt, yt) > 0.9  # the majority class alone scores about 0.7
    again = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(again.predict(Xt), clf.predict(Xt))


def test_fusion_cv_counts_a_zero_vote_as_an_error():
    """With gamma = 1e6 the RBF votes underflow to exactly 0 on held-out rows: the candidate
    must score 0 (every prediction a tie, hence wrong, as the evaluation counts it), not the
    share of the majority class it would get if a zero vote meant the negative class."""
    Xs, y = fusion_views()
    grid = dict(Cs=(1e-2, 1.0), gammas=(1e-1, 1e6), mus=(1e-4,))
    clf = FusionCqAllClassifier(**grid, random_state=0).fit(Xs, y)
    assert clf.cv_scores_[1, 0] == 0.0
    assert clf.cv_scores_[0, 0] > 0.8 and clf.best_gamma_ == 0.1


def test_fusion_sign_outputs_and_default_grids():
    Xs, y = fusion_views()
    clf = FusionCqAllClassifier(**SMALL, level1_output="sign", standardize=False, random_state=0)
    clf.fit(Xs, y)
    assert set(np.unique(clf.z_train_)) <= {-1.0, 0.0, 1.0}
    default = FusionCqAllClassifier()
    np.testing.assert_allclose(default.Cs, 10.0 ** np.arange(-8, 4))
    np.testing.assert_allclose(default.gammas, 10.0 ** np.arange(-6, 3))
    np.testing.assert_allclose(default.mus, 10.0 ** np.arange(-8, 0))


def test_fusion_bad_input():
    Xs, y = fusion_views(n=60)
    bad = [X.copy() for X in Xs]
    bad[2][5, 1] = np.nan
    with pytest.raises(ValueError, match="View 2.*NaN"):
        FusionCqAllClassifier(**SMALL).fit(bad, y)
    with pytest.raises(ValueError, match="same number of samples"):
        FusionCqAllClassifier(**SMALL).fit([Xs[0], Xs[1][:50]], y)
    with pytest.raises(ValueError, match="2-D"):
        FusionCqAllClassifier(**SMALL).fit([Xs[0], Xs[1][:, 0]], y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        FusionCqAllClassifier(**SMALL).fit(Xs, np.zeros(60))
    with pytest.raises(ValueError, match="exactly 2 distinct labels"):
        FusionCqAllClassifier(**SMALL).fit(Xs, np.arange(60) % 3)
    with pytest.raises(ValueError, match="'level1_output' parameter.*Got 'proba'"):
        FusionCqAllClassifier(level1_output="proba").fit(Xs, y)
    with pytest.raises(ValueError, match="'level1_fit' parameter.*Got 'oof'"):
        FusionCqAllClassifier(level1_fit="oof").fit(Xs, y)
    with pytest.raises(ValueError, match="Cs must be"):
        FusionCqAllClassifier(Cs=(-1.0,)).fit(Xs, y)
    with pytest.raises(ValueError, match="mus must be"):
        FusionCqAllClassifier(mus=()).fit(Xs, y)
    with pytest.raises(ValueError, match="'cv_level2' parameter.*range \\[2, inf\\)"):
        FusionCqAllClassifier(cv_level2=1).fit(Xs, y)
    with pytest.raises(ValueError, match="smallest class has 1"):
        FusionCqAllClassifier(**SMALL).fit(Xs, np.array([1] * 1 + [0] * 59))
    with pytest.raises(ValueError, match="infeasible for every gamma"):
        FusionCqAllClassifier(Cs=(1.0,), gammas=(1e3,), mus=(0.9,)).fit(Xs, y)


def test_a_gamma_mu_whose_master_qp_does_not_converge_is_excluded(monkeypatch, caplog):
    """Seen on a paper-protocol draw (n = 150): the active-set master QP cycled on one (γ, μ)
    of the level-2 CV. That candidate is excluded (NaN) with a warning, the others compete."""
    from multiview_lab.pbmvboost import cqboost

    Xs, y = fusion_views()
    real = cqboost.cqboost_column_generation
    bad_mu = SMALL["mus"][1]

    def flaky(H, mu, **kwargs):
        if mu == bad_mu:
            raise cqboost.CqBoostConvergenceError("did not converge in 250 iterations")
        return real(H, mu, **kwargs)

    plain = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    monkeypatch.setattr(cqboost, "cqboost_column_generation", flaky)
    with caplog.at_level("WARNING", logger="multiview_lab.pbmvboost.cqboost"):
        clf = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    assert np.isnan(clf.cv_scores_[:, 1]).all() and np.isfinite(plain.cv_scores_[:, 1]).all()
    np.testing.assert_array_equal(clf.cv_scores_[:, [0, 2]], plain.cv_scores_[:, [0, 2]])
    assert clf.best_mu_ != bad_mu
    assert "excluded from the level-2 selection" in caplog.text
    assert issubclass(cqboost.CqBoostConvergenceError, RuntimeError)


def test_a_candidate_that_fails_on_all_rows_gives_way_to_the_next_by_cv(monkeypatch, caplog):
    """Seen on a paper-protocol draw (n = 200): the chosen mu was feasible on every CV training
    fold but not on all rows (a voter's mean margin changes with m). The next candidate by CV
    accuracy is fitted instead, with a warning; if none can be fitted, the error names them."""
    from multiview_lab.pbmvboost import cqboost

    Xs, y = fusion_views()
    plain = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    assert plain.level2_rejected_ == []
    best = (plain.best_gamma_, plain.best_mu_)
    scores = plain.cv_scores_.ravel()
    second = np.lexsort((np.arange(scores.size), -scores))[1]
    a, b = np.unravel_index(second, plain.cv_scores_.shape)
    real_fit = cqboost.CqBoostClassifier.fit

    def fails_on_best(self, X, y_):
        if (self.gamma, self.mu) == best and X.shape[0] == 150:
            raise cqboost.CqBoostInfeasibleError(f"mu={self.mu} is infeasible")
        return real_fit(self, X, y_)

    monkeypatch.setattr(cqboost.CqBoostClassifier, "fit", fails_on_best)
    with caplog.at_level("WARNING", logger="multiview_lab.pbmvboost.cqboost"):
        clf = FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(clf.cv_scores_, plain.cv_scores_)
    assert (clf.best_gamma_, clf.best_mu_) == (SMALL["gammas"][a], SMALL["mus"][b])
    assert [r[:2] for r in clf.level2_rejected_] == [best]
    assert "fitting the next candidate" in caplog.text

    def always_fails(self, X, y_):
        if X.shape[0] == 150:
            raise cqboost.CqBoostConvergenceError("did not converge")
        return real_fit(self, X, y_)

    monkeypatch.setattr(cqboost.CqBoostClassifier, "fit", always_fails)
    with pytest.raises(cqboost.CqBoostConvergenceError, match="no .gamma, mu. candidate"):
        FusionCqAllClassifier(**SMALL, random_state=0).fit(Xs, y)


def test_relative_qp_tolerance_is_invariant_to_the_scale_of_the_objective():
    # Scaling G leaves the optimal q unchanged and scales the multipliers: the relative rule
    # finds the same q at any scale, the absolute one stops early once they fall below tol.
    rng = np.random.default_rng(1)
    H = rng.normal(size=(30, 8)) * 0.5 + 0.2
    G, c = H.T @ H / 30, H.mean(0)
    mu = 0.5 * c.max()
    q0 = np.eye(8)[np.argmax(c)]
    q_ref = solve_master_qp(G, c, mu, q0)[0]
    for scale in (1.0, 1e-6, 1e-12):
        q = solve_master_qp(scale * G, c, mu, q0, tol_mode="relative")[0]
        np.testing.assert_allclose(q, q_ref, atol=1e-7)
    q_abs = solve_master_qp(1e-12 * G, c, mu, q0, tol_mode="absolute")[0]
    assert q_abs @ G @ q_abs > 1.01 * (q_ref @ G @ q_ref)
    with pytest.raises(ValueError, match="tol_mode"):
        solve_master_qp(G, c, mu, q0, tol_mode="exact")


def test_relative_qp_tolerance_terminates_where_freeing_would_cycle():
    # Wide RBF voters (gamma = 1e-4) make the columns nearly collinear and the vertices
    # degenerate: on this problem the relative rule without its anti-cycling step frees and
    # re-blocks the same bound until CqBoostConvergenceError (found by search, kept as is).
    rng = np.random.default_rng(20)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + rng.normal(size=60) > 0, 1, -1)
    H = _rbf_margin_matrix(euclidean_distances(X, squared=True), 1e-4, y)
    res = cqboost_column_generation(
        H, 1e-5, epsilon_mode="relative", qp_tol_mode="relative", n_max_iterations=30
    )
    assert res.q.min() >= 0 and abs(res.q.sum() - 1) < 1e-12
    assert np.all(np.diff(res.objective_history) <= 1e-18)  # never increases
    assert res.margins.mean() >= 1e-5 - 1e-12


def test_fusion_passes_the_qp_tolerance_mode():
    Xs, y = fusion_views()
    grids = {"Cs": (0.01, 1.0), "gammas": (0.1,), "mus": (1e-7,), "random_state": 0}
    relative = FusionCqAllClassifier(qp_tol_mode="relative", **grids).fit(Xs, y)
    assert relative.cqboost_.qp_tol_mode == "relative"
    with pytest.raises(ValueError, match="qp_tol_mode"):
        FusionCqAllClassifier(qp_tol_mode="exact", **grids).fit(Xs, y)
