"""Filter baselines of ADMM-MVFS spec §6.3: Fisher score, ANOVA F, ReliefF."""

import numpy as np
import pytest
from sklearn.feature_selection import f_classif

from multiview_lab.mvfs import (
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    ReliefFSelector,
    anova_f,
    fisher_score,
    relieff,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [20, 15, 25])
    X = rng.standard_normal((60, 7))
    X[:, 1] += 2.5 * y  # informative
    X[:, 4] += 1.0 * (y == 2)  # weakly informative
    X[:, 6] = 3.0  # constant
    return X, y


def test_fisher_score_matches_definition(data):
    X, y = data
    ref = np.zeros(X.shape[1])
    mu = X.mean(0)
    for r in range(X.shape[1]):
        num = sum((y == c).sum() * (X[y == c, r].mean() - mu[r]) ** 2 for c in range(3))
        den = sum((y == c).sum() * X[y == c, r].var() for c in range(3))
        ref[r] = num / den if den > 0 else 0.0
    np.testing.assert_allclose(fisher_score(X, y), ref, rtol=1e-12, atol=1e-15)
    assert fisher_score(X, y)[6] == 0.0


def test_anova_matches_sklearn(data):
    X, y = data
    F = anova_f(X, y)
    np.testing.assert_allclose(F[:6], f_classif(X[:, :6], y)[0], rtol=1e-12)
    assert F[6] == 0.0


def naive_relieff(X, y, k):
    X = (X - X.min(0)) / np.where(np.ptp(X, 0) > 0, np.ptp(X, 0), 1.0)
    n, d = X.shape
    classes, counts = np.unique(y, return_counts=True)
    prior = dict(zip(classes, counts / n, strict=True))
    w = np.zeros(d)
    for i in range(n):
        dist = np.linalg.norm(X - X[i], axis=1)
        dist[i] = np.inf
        for c in classes:
            idx = np.flatnonzero(y == c)
            near = idx[np.argsort(dist[idx], kind="stable")[: min(k, idx.size - 1)]]
            diff = np.abs(X[near] - X[i]).mean(0)
            w += -diff if c == y[i] else prior[c] / (1 - prior[y[i]]) * diff
    return w / n


def test_relieff_matches_loop_version(data):
    X, y = data
    np.testing.assert_allclose(relieff(X, y, 5, chunk_size=7), naive_relieff(X, y, 5), atol=1e-12)
    assert np.argmax(relieff(X, y)) == 1


@pytest.mark.parametrize("cls", [FisherScoreSelector, ANOVAFSelector, ReliefFSelector])
def test_selectors_rank_informative_first(cls, data):
    X, y = data
    sel = cls(n_features=2).fit([X[:, :3], X[:, 3:]], y)
    assert sel.ranking_[0] == 1 and set(sel.get_support(indices=True)) == {1, 4}
    assert sel.transform([X[:, :3], X[:, 3:]]).shape == (60, 2)
    per = [
        m.sum()
        for m in cls(n_features=3, ranking="per_view")
        .fit([X[:, :3], X[:, 3:]], y)
        .get_support(per_view=True)
    ]
    assert per == [1, 2]


@pytest.mark.parametrize("cls", [FisherScoreSelector, ANOVAFSelector, ReliefFSelector])
def test_filters_bad_input(cls, data):
    X, y = data
    with pytest.raises(ValueError, match="n_features=9 is larger"):
        cls(n_features=9).fit([X], y)
    with pytest.raises(ValueError, match="same number of samples"):
        cls().fit([X[:, :3], X[:-1, 3:]], y)
    with pytest.raises(ValueError, match=r"class 9 \(1 sample\)"):
        cls(n_features=2).fit([X], np.r_[y[:-1], 9])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls(n_features=2).fit([bad], y)


def test_all_features_selector_keeps_every_feature_in_order(data):
    X, y = data
    Xs = [X[:, :3], X[:, 3:]]
    sel = AllFeaturesSelector().fit(Xs, y)
    assert sel.ranking_.tolist() == list(range(7)) and (sel.scores_ == 0).all()
    np.testing.assert_array_equal(sel.transform(Xs), X)
    assert AllFeaturesSelector(n_features=2).fit(Xs, y).get_support(indices=True).tolist() == [0, 1]
