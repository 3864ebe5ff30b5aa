"""Spec tests 16 (rBoost.SH) and 17 (MV-AdaBoost part)."""

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from multiview_lab.pbmvboost import MVAdaBoostClassifier, RBoostSHClassifier
from multiview_lab.pbmvboost.mv_adaboost import samme_decision_function


@pytest.fixture(scope="module")
def data(make_views):
    Xs, y = make_views(n=300, seed=0)
    rng = np.random.RandomState(5)
    return Xs, y, [X + rng.normal(scale=0.3, size=X.shape) for X in Xs]


def _adaboost(X, y, n_estimators=30):
    return AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=2), n_estimators=n_estimators, learning_rate=1.0
    ).fit(X, y)


# -- rBoost.SH --------------------------------------------------------------------------------
def test_rboost_arm_probabilities(data):
    """Test 16: q sums to 1 (1e-12), q_j >= gamma/M, and follows the EXP3.P log-weight recursion."""
    Xs, y, _ = data
    T, M, gamma, sigma = 40, 4, 0.3, 0.15
    clf = RBoostSHClassifier(T, random_state=0).fit(Xs, y)
    q = clf.arm_probabilities_
    assert np.max(np.abs(q.sum(axis=1) - 1)) <= 1e-12
    assert q.min() >= gamma / M - 1e-15
    log_p = np.full(M, sigma * gamma / 3 * np.sqrt(T / M))
    for t in range(T):
        expected_q = (1 - gamma) * softmax(log_p) + gamma / M
        np.testing.assert_allclose(q[t], expected_q, rtol=1e-12)
        delta = clf.edges_[t]
        r_hat = np.zeros(M)
        r_hat[clf.selected_views_[t]] = (1 - np.sqrt(1 - delta**2)) / q[t, clf.selected_views_[t]]
        log_p = log_p + gamma / (3 * M) * (r_hat + sigma / (q[t] * np.sqrt(T * M)))
    np.testing.assert_allclose(clf.log_arm_weights_, log_p, rtol=1e-12)
    assert len(set(clf.selected_views_)) > 1


def test_rboost_one_view_is_adaboost(data):
    """Test 16: V = 1 equals AdaBoost (alpha = AdaBoost weight / 2, same predictions)."""
    Xs, y, Xs_test = data
    clf = RBoostSHClassifier(30, random_state=0).fit(Xs[:1], y)
    ada = _adaboost(Xs[0], y)
    assert len(ada.estimators_) == 30
    np.testing.assert_allclose(ada.estimator_weights_, 2 * clf.estimator_weights_, rtol=1e-9)
    np.testing.assert_array_equal(clf.predict(Xs_test[:1]), ada.predict(Xs_test[0]))


def test_rboost_seeded_view_sequence(data):
    """Test 16: fixed seed, same view sequence; another seed, another sequence."""
    Xs, y, _ = data
    a = RBoostSHClassifier(30, random_state=7).fit(Xs, y)
    b = RBoostSHClassifier(30, random_state=7).fit(Xs, y)
    c = RBoostSHClassifier(30, random_state=8).fit(Xs, y)
    np.testing.assert_array_equal(a.selected_views_, b.selected_views_)
    assert not np.array_equal(a.selected_views_, c.selected_views_)


def test_rboost_update_uses_selected_view(make_views):
    """Test 16: D_{t+1} ∝ D_t exp(-alpha_t y h_t(x^{j_t})) with the selected view's predictions
    (one informative view, one constant view)."""
    Xs, y = make_views(n=200, n_views=1, seed=3)
    Xs = [Xs[0], np.zeros((200, 3))]
    y_pm = np.where(y == 1, 1.0, -1.0)
    clf = RBoostSHClassifier(30, random_state=1).fit(Xs, y)
    assert set(clf.selected_views_) == {0, 1}
    D = clf.distribution_history_
    for t, (tree, j) in enumerate(zip(clf.estimators_, clf.selected_views_, strict=True)):
        h = tree.predict(Xs[j].astype(np.float32))
        unnorm = D[t] * np.exp(-clf.estimator_weights_[t] * y_pm * h)
        np.testing.assert_allclose(D[t + 1], unnorm / unnorm.sum(), rtol=1e-12)
        if j == 1:  # a constant view votes one label for everyone
            assert np.ptp(h) == 0
    # a constant tree has edge |sum_i D y_i| and no weight when it predicts the lighter class
    const = clf.selected_views_ == 1
    assert np.all(clf.estimator_weights_[const & (clf.edges_ <= 0)] == 0)


def test_rboost_staged(data):
    Xs, y, Xs_test = data
    clf = RBoostSHClassifier(20, random_state=0).fit(Xs, y)
    stages = list(clf.staged_decision_function(Xs_test))
    assert len(stages) == 20
    np.testing.assert_allclose(stages[-1], clf.decision_function(Xs_test), rtol=0, atol=1e-12)
    expected = sum(
        a * t.predict(Xs_test[j])
        for a, t, j in zip(
            clf.estimator_weights_, clf.estimators_, clf.selected_views_, strict=True
        )
    )
    np.testing.assert_allclose(clf.decision_function(Xs_test), expected, rtol=0, atol=1e-12)


# -- MV-AdaBoost -------------------------------------------------------------------------------
def test_mv_adaboost_one_view_is_adaboost(data):
    """Test 17: V = 1 reduces to AdaBoost (SAMME, lr 1, same trees)."""
    Xs, y, Xs_test = data
    clf = MVAdaBoostClassifier(30, random_state=0).fit(Xs[:1], y)
    ada = _adaboost(Xs[0], y)
    np.testing.assert_allclose(clf.estimators_[0].estimator_weights_, ada.estimator_weights_)
    np.testing.assert_array_equal(clf.predict(Xs_test[:1]), ada.predict(Xs_test[0]))


def test_mv_adaboost_vote_and_ties(data):
    """Test 17: uniform majority vote of the per-view AdaBoosts; ties by the summed decision
    functions, then -1."""
    Xs, y, Xs_test = data
    clf = MVAdaBoostClassifier(20, random_state=0).fit(Xs, y)
    votes = sum(
        np.where(e.predict(X) == 1, 1, -1) for e, X in zip(clf.estimators_, Xs_test, strict=True)
    )
    f = sum(e.decision_function(X) for e, X in zip(clf.estimators_, Xs_test, strict=True))
    assert np.any(votes == 0)  # even V: the tie rule is exercised
    expected = np.where(votes != 0, votes > 0, f > 0)
    np.testing.assert_array_equal(clf.predict(Xs_test), clf.classes_[expected.astype(int)])
    # exact ties on both levels give -1 (tie_label); +1 with tie_label=1
    f_tie = np.array([[0.3, -0.2, 0.1, 0.0], [-0.1, -0.5, -0.1, 0.0]])
    score = clf._combine(f_tie)
    np.testing.assert_array_equal(clf._labels_from_scores(score), clf.classes_[[1, 0, 0, 0]])
    clf.set_params(tie_label=1)
    assert clf._labels_from_scores(score)[2] == clf.classes_[1]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_samme_decision_function_is_adaboost_decision_function(data, n_classes):
    """The leaf-based SAMME score is bit-identical to AdaBoostClassifier.decision_function."""
    Xs, y, Xs_test = data
    y = y if n_classes == 2 else np.arange(y.shape[0]) % 3
    ada = _adaboost(Xs[1], np.where(y == 1, 1.0, -1.0) if n_classes == 2 else y, 25)
    for X in (Xs_test[1], np.asfortranarray(Xs_test[1])):
        X32 = X.astype(np.float32)
        np.testing.assert_array_equal(samme_decision_function(ada, X32), ada.decision_function(X32))


def test_mv_adaboost_decision_is_the_sklearn_combination(data):
    Xs, y, Xs_test = data
    clf = MVAdaBoostClassifier(20, random_state=0).fit(Xs, y)
    f = [e.decision_function(X) for e, X in zip(clf.estimators_, Xs_test, strict=True)]
    np.testing.assert_array_equal(clf.decision_function(Xs_test), clf._combine(f))


def test_mv_adaboost_staged_and_seed(data):
    Xs, y, Xs_test = data
    a = MVAdaBoostClassifier(15, splitter="random", random_state=3).fit(Xs, y)
    b = MVAdaBoostClassifier(15, splitter="random", random_state=3).fit(Xs, y)
    np.testing.assert_array_equal(a.decision_function(Xs_test), b.decision_function(Xs_test))
    stages = list(a.staged_decision_function(Xs_test))
    np.testing.assert_allclose(stages[-1], a.decision_function(Xs_test), rtol=0, atol=1e-12)


def test_baselines_multiclass(make_views):
    rng = np.random.RandomState(0)
    y = rng.randint(3, size=240)
    Xs = [np.eye(3)[y] * 2 + rng.normal(size=(240, 3)) for _ in range(2)]
    for cls in (MVAdaBoostClassifier, RBoostSHClassifier):
        clf = cls(10, random_state=0).fit(Xs, y)
        assert clf.decision_function(Xs).shape == (240, 3)
        assert clf.score(Xs, y) > 0.8
