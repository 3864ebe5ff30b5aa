"""Variance shrinkage of the Gaussian MeMd family and its joint selection with K (issue 18)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import f_classif

from multiview_lab.memd import MeMdClassifier
from multiview_lab.memd import memd as memd_module
from multiview_lab.memd.memd import class_sums, fit_memd_model, ranking_from_scores

LITERAL = {"k_selection": "val", "var_shrinkage": 0.0}


def heteroscedastic_data(n=80, d=300, seed=0, row_seed=None):
    """Five Gaussian mean shifts among heavy-tailed noise genes (gene-expression-like data).

    The noise genes have the same distribution in both classes (Student t, 2 degrees of
    freedom, a per-gene scale fixed by ``seed``), so their class variances differ only by the
    chance of a few outlying rows, as raw intensities do; ``row_seed`` draws fresh rows.
    """
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    scale = np.exp(rng.normal(0, 1.5, size=d))
    if row_seed is not None:
        rng = np.random.default_rng(row_seed)
    X = rng.standard_t(2, size=(n, d)) * scale
    X[:, :5] = rng.normal(size=(n, 5)) + 1.5 * y[:, None]
    return X, y


def test_pooled_variance_is_the_within_class_variance():
    X, y = heteroscedastic_data(d=20)
    sums = class_sums(X, y, 2)
    expected = sum(((X[y == c] - X[y == c].mean(0)) ** 2).sum(0) for c in (0, 1)) / len(y)
    np.testing.assert_allclose(sums.pooled_variance(), expected, rtol=1e-10)


def test_zero_shrinkage_is_the_literal_model():
    X, y = heteroscedastic_data(d=40)
    sums = class_sums(X, y, 2)
    priors = sums.counts / sums.counts.sum()
    a = fit_memd_model(sums, priors, criterion="J", epsilon=1e-6)
    b = fit_memd_model(sums, priors, criterion="J", epsilon=1e-6, var_shrinkage=0.0)
    np.testing.assert_array_equal(a.lam, b.lam)
    np.testing.assert_array_equal(a.scores, b.scores)


@pytest.mark.parametrize("criterion", ["J", "JS"])
def test_full_shrinkage_ranks_binary_genes_like_the_anova_f(criterion):
    # one shared variance per gene: J = (m1 - m2)^2 / v_pooled, the same order as F
    X, y = heteroscedastic_data(d=60, seed=1)
    clf = MeMdClassifier(criterion, var_shrinkage=1.0, k=60, var_smoothing=1e-12).fit(X, y)
    np.testing.assert_allclose(clf.lambda_[0, :, 2], clf.lambda_[1, :, 2], rtol=1e-6)
    F, _ = f_classif(X, y)
    np.testing.assert_array_equal(clf.ranking_[:20], ranking_from_scores(F)[:20])


def test_shrinkage_applies_to_the_complement_class_of_memd_j():
    X = np.random.default_rng(2).normal(size=(90, 10)) * np.array([1.0, 5.0, 0.2])[
        np.arange(90) % 3
    ].reshape(-1, 1)
    y = np.arange(90) % 3
    sums = class_sums(X, y, 3)
    priors = sums.counts / sums.counts.sum()
    full = fit_memd_model(sums, priors, criterion="J", epsilon=1e-12, var_shrinkage=1.0)
    # every class and every complement share v_pooled: J_ij = (m_j - m'_j)^2 / v_pooled
    rest = sums.rest()
    dm = sums.s1 / sums.counts[:, None] - rest.s1 / rest.counts[:, None]
    expected = dm * dm / (sums.pooled_variance() + 1e-12)
    np.testing.assert_allclose(full.divergences, expected, rtol=1e-8)


def test_shrinkage_val_picks_the_best_pair_and_refits_with_it():
    X, y = heteroscedastic_data(seed=3)
    clf = MeMdClassifier("J", var_shrinkage="val", k_grid=[1, 2, 5, 10, 20, 50, 300]).fit(X, y)
    curve = clf.val_curve_
    assert curve["accuracy"].shape == (3, 7)
    np.testing.assert_array_equal(curve["shrinkage"], [0.0, 0.5, 1.0])
    best = np.argwhere(curve["accuracy"] == curve["accuracy"].max())
    row, col = min(best, key=lambda rk: (curve["shrinkage"][rk[0]], rk[1]))  # smallest α, then K
    assert clf.shrinkage_ == curve["shrinkage"][row]
    assert clf.k_ == curve["k"][col]
    fixed = MeMdClassifier("J", var_shrinkage=clf.shrinkage_, k=clf.k_).fit(X, y)
    np.testing.assert_array_equal(fixed.lambda_, clf.lambda_)
    np.testing.assert_array_equal(fixed.predict(X), clf.predict(X))


def test_shrinkage_beats_the_literal_model_on_heteroscedastic_noise():
    # issue 18 in miniature: chance differences of class spread on heavy-tailed genes dominate
    # the literal J; the 80/20 rule and the literal model do worse than the new defaults
    X, y = heteroscedastic_data(n=60, seed=4)
    X_test, y_test = heteroscedastic_data(n=1000, seed=4, row_seed=5)  # fresh rows
    literal = MeMdClassifier("J", **LITERAL).fit(X, y)
    default = MeMdClassifier("J").fit(X, y)
    assert default.k_selection == "inner_cv" and default.var_shrinkage == "val"
    assert default.shrinkage_ > 0
    unshrunk = MeMdClassifier("J", var_shrinkage=0.0).fit(X, y)  # inner CV alone
    assert default.score(X_test, y_test) > 0.9
    assert max(literal.score(X_test, y_test), unshrunk.score(X_test, y_test)) < 0.7


def test_one_moment_families_ignore_shrinkage():
    X = sp.random(60, 30, density=0.3, format="csr", random_state=0)
    y = np.arange(60) % 2
    clf = MeMdClassifier(family="exponential", var_shrinkage="val", k=10).fit(X, y)
    assert clf.shrinkage_ == 0.0
    assert clf.val_curve_ is None  # nothing to search with k given


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"var_shrinkage": 1.5}, "var_shrinkage"),
        ({"var_shrinkage": -0.1}, "var_shrinkage"),
        ({"var_shrinkage": "cv"}, "var_shrinkage"),
        ({"var_shrinkage": "val", "shrinkage_grid": [0.0, 2.0]}, "shrinkage_grid"),
        ({"var_shrinkage": "val", "shrinkage_grid": []}, "shrinkage_grid"),
    ],
)
def test_bad_shrinkage_raises(params, match):
    X, y = heteroscedastic_data(d=10)
    with pytest.raises(ValueError, match=match):
        MeMdClassifier(**params).fit(X, y)


def test_ties_go_to_the_smallest_shrinkage_then_the_smallest_k(monkeypatch):
    # designed validation curves, one per shrinkage value (called in grid order per fold):
    # alpha = 0.5 reaches the maximum at a smaller K than alpha = 0, which must still win
    curves = {0: [0.5, 0.9, 1.0, 1.0], 1: [0.5, 1.0, 1.0, 1.0], 2: [0.5, 0.8, 0.9, 1.0]}
    calls = []

    def fake_curve(model, X_val, y_val, grid):
        calls.append(None)
        return np.array(curves[(len(calls) - 1) % 3])

    monkeypatch.setattr(memd_module, "validation_curve", fake_curve)
    X, y = heteroscedastic_data(d=10)
    clf = MeMdClassifier("J", k_grid=[1, 2, 3, 4]).fit(X, y)
    assert len(calls) == 5 * 3  # 5 inner folds x 3 shrinkage values
    assert (clf.shrinkage_, clf.k_) == (0.0, 3)
