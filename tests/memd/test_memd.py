"""MeMd spec tests 6-13 and bad input for MeMdClassifier / MeMdSelector."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import check_estimator

from multiview_lab.memd import MeMdClassifier, MeMdSelector
from multiview_lab.memd import memd as memd_module
from multiview_lab.memd.divergences import jeffreys
from multiview_lab.memd.memd import (
    ClassSums,
    auto_k_grid,
    class_sums,
    fit_memd_model,
    floored_moments,
    joint_log_likelihood,
    ranking_from_scores,
    validation_curve,
)

FAMILIES = ("gaussian", "exponential", "truncexp01")
#: the literal reading of the paper (80/20 rule for K, unshrunk class variances): the spec's
#: tests 6-13 are stated for it; the project defaults are tested in test_shrinkage.py
LITERAL = {"k_selection": "val", "var_shrinkage": 0.0}


def literal_memd(*args, **params):
    """``MeMdClassifier`` with the literal-reading defaults (explicit params win)."""
    return MeMdClassifier(*args, **{**LITERAL, **params})


def gaussian_data(n=240, d=50, n_classes=3, seed=0):
    """5 informative features (mean and variance shifts) among d."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d))
    X[:, 0] += 2.0 * y
    X[:, 1] -= 1.5 * (y == 1)
    X[:, 2] *= 1 + 2.0 * (y == 2)
    X[:, 3] += 1.2 * (y == 0) + 0.5 * y
    X[:, 4] *= 1 + 1.5 * (y == 0)
    return X, y


def count_data(n=300, d=80, n_classes=2, density=0.15, seed=0, duplicates=0):
    """Sparse non-negative data in [0, 1] (normalised frequencies), optionally tied columns."""
    y = np.arange(n) % n_classes
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X = X.multiply(1 + 2 * (np.arange(d)[None, :] < 6) * (y[:, None] == 1)).tocsr()
    if duplicates:
        X = sp.hstack([X, sp.csr_matrix((n, duplicates))]).tocsr()  # all-zero columns tie at 0
        X = sp.hstack([X, X[:, :duplicates]]).tocsr()  # repeated columns tie exactly
    X.data /= X.data.max()
    return X, y


def fit(X, y, **params):
    params.setdefault("k", X.shape[1])
    return literal_memd(**params).fit(X, y)


# ----------------------------------------------------------------------------- spec test 6
@pytest.mark.parametrize("family", FAMILIES)
def test_two_classes_memd_j_is_jeffreys_and_rankings_agree(family):
    X, y = count_data(duplicates=30)
    params = {"family": family, "mean_smoothing": 1e-2, "var_smoothing": 1e-3}
    J = fit(X, y, criterion="J", **params)
    JS = fit(X, y, criterion="JS", **params)
    sums = class_sums(X, y, 2, second_moment=family == "gaussian")
    moments = floored_moments(family, sums.counts, sums.s1, sums.s2, J.epsilon_)
    direct = jeffreys(
        family, {k: v[0] for k, v in moments.items()}, {k: v[1] for k, v in moments.items()}
    )
    np.testing.assert_allclose(J.scores_, direct, rtol=1e-12)
    prior = J.class_prior_
    np.testing.assert_allclose(JS.scores_, prior[0] * prior[1] * direct, rtol=1e-12)
    rounded = np.round(J.scores_ / J.scores_.max(), 12)
    assert len(np.unique(rounded)) < X.shape[1] - 30  # many exact ties
    np.testing.assert_array_equal(J.ranking_, JS.ranking_)
    for k in (1, 7, 40, X.shape[1]):
        assert set(J.ranking_[:k]) == set(JS.ranking_[:k])


# ----------------------------------------------------------------------------- spec test 7
def test_rest_sums_match_brute_force_moments():
    X, y = gaussian_data(n_classes=4)
    sums = class_sums(X, y, 4)
    rest = sums.rest()
    for j in range(4):
        other = X[y != j]
        np.testing.assert_allclose(
            rest.s1[j] / rest.counts[j], other.mean(0), rtol=1e-12, atol=1e-14
        )
        np.testing.assert_allclose(
            rest.s2[j] / rest.counts[j] - (rest.s1[j] / rest.counts[j]) ** 2,
            other.var(0),
            rtol=1e-12,
        )


# ----------------------------------------------------------------------------- spec test 8
@pytest.mark.parametrize("criterion", ["J", "JS"])
def test_informative_features_ranked_first(criterion):
    X, y = gaussian_data()
    clf = fit(X, y, criterion=criterion)
    assert set(clf.ranking_[:5]) == {0, 1, 2, 3, 4}


# ----------------------------------------------------------------------------- spec test 9
def test_all_features_bayes_rule_equals_gaussian_nb():
    X, y = gaussian_data(seed=3)
    X = X * 10 + 5
    clf = fit(X, y, floor_mode="add", var_smoothing=1e-9)
    nb = GaussianNB(var_smoothing=1e-9).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), nb.predict(X))
    diff = clf.predict_log_proba(X) - nb.predict_log_proba(X)
    np.testing.assert_allclose(diff - diff[:, :1], 0, atol=1e-8)
    np.testing.assert_allclose(clf.predict_proba(X).sum(1), 1, rtol=1e-12)
    assert clf.epsilon_ == pytest.approx(1e-9 * X.var(0).max(), rel=1e-9)


# ----------------------------------------------------------------------------- spec test 10
class NoDenseCSR(sp.csr_matrix):
    """A CSR matrix that refuses to be densified."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("toarray called on the data matrix")

    def todense(self, *args, **kwargs):
        raise AssertionError("todense called on the data matrix")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("criterion", ["J", "JS"])
def test_sparse_and_dense_inputs_agree(family, criterion):
    X, y = count_data(n_classes=3, seed=2)
    params = {"family": family, "criterion": criterion, "k": None, "mean_smoothing": 1e-2}
    dense = literal_memd(**params).fit(X.toarray(), y)
    for Xs in (X, X.tocsc()):
        sparse = literal_memd(**params).fit(Xs, y)
        np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-10)
        np.testing.assert_array_equal(sparse.ranking_, dense.ranking_)
        assert sparse.k_ == dense.k_
        np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(X.toarray()))


def test_sparse_input_is_never_densified():
    X, y = count_data(n_classes=3, seed=4)
    guarded = NoDenseCSR(X)
    for family in FAMILIES:
        clf = literal_memd(family=family, mean_smoothing=1e-2, floor_selection="val")
        clf.fit(guarded, y)
        clf.predict(guarded)
        assert clf.transform(guarded).shape == (X.shape[0], clf.k_)


def test_large_sparse_fit_stays_under_1gb():
    n, d, nnz = 20_000, 60_000, 1_200_000  # density 1e-3
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    X = sp.csr_matrix((rng.random(nnz), (rows, cols)), shape=(n, d))
    y = rng.integers(0, 4, n)
    tracemalloc.start()
    try:
        clf = literal_memd(criterion="J", family="exponential", mean_smoothing=1e-2).fit(X, y)
        clf.predict(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 30
    assert 1 <= clf.k_ <= d


# ----------------------------------------------------------------------------- spec test 11
def test_degenerate_features():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 4))
    X[y == 0, 0] = 1.0  # zero variance in class 0 only
    X[:, 1] = 3.0  # constant everywhere
    J_small = fit(X, y, criterion="J", var_smoothing=1e-9).scores_
    J_large = fit(X, y, criterion="J", var_smoothing=1e-3).scores_
    assert np.all(np.isfinite(J_small)) and np.all(np.isfinite(J_large))
    assert J_small[0] > J_large[0] > 0  # floor-dependent
    assert J_small[1] == 0 and J_large[1] == 0
    assert fit(X, y, criterion="JS").scores_[1] == 0


def test_one_moment_floor_rule():
    eps = 1e-3
    s1 = np.array([[0.0, 2.0], [5.0, 1.0]])
    counts = np.array([2.0, 5.0])
    exp = floored_moments("exponential", counts, s1, None, eps)
    np.testing.assert_allclose(exp["mean"], [[eps, 1 + eps], [1 + eps, 0.2 + eps]])
    trunc = floored_moments("truncexp01", counts, s1, None, eps)
    assert trunc["mean"][0, 0] == eps  # mean 0 -> ε_m
    assert trunc["mean"][1, 0] == 1 - eps  # mean 1 -> 1 - ε_m
    assert np.all(np.isfinite(trunc["lam"]))


# ----------------------------------------------------------------------------- spec test 12
@pytest.mark.parametrize("criterion", ["J", "JS"])
def test_permuting_features_permutes_scores_and_relabelling_keeps_ranking(criterion):
    X, y = gaussian_data(seed=5)
    base = fit(X, y, criterion=criterion)
    perm = np.random.default_rng(0).permutation(X.shape[1])
    permuted = fit(X[:, perm], y, criterion=criterion)
    np.testing.assert_allclose(permuted.scores_, base.scores_[perm], rtol=1e-12)
    relabelled = fit(X, np.array(["c", "a", "b"])[y], criterion=criterion)
    np.testing.assert_allclose(relabelled.scores_, base.scores_, rtol=1e-12)
    np.testing.assert_array_equal(relabelled.ranking_, base.ranking_)


def test_duplicating_a_class_changes_memd_j_as_the_priors_predict():
    X, y = gaussian_data(seed=6)
    X2, y2 = np.vstack([X, X[y == 0]]), np.r_[y, y[y == 0]]
    clf = fit(X2, y2, criterion="J", var_floor=1e-6)
    priors = np.bincount(y2) / y2.shape[0]
    expected = np.zeros(X.shape[1])
    for j in range(3):
        inside, rest = X2[y2 == j], X2[y2 != j]
        p = {"mean": inside.mean(0), "var": inside.var(0) + 1e-6}
        q = {"mean": rest.mean(0), "var": rest.var(0) + 1e-6}
        expected += priors[j] * jeffreys("gaussian", p, q)
    np.testing.assert_allclose(clf.class_prior_, priors)
    np.testing.assert_allclose(clf.scores_, expected, rtol=1e-9)
    assert not np.allclose(fit(X, y, criterion="J", var_floor=1e-6).scores_, expected, rtol=1e-3)


def test_divergences_attribute_sums_to_scores():
    X, y = gaussian_data(seed=7)
    J, JS = fit(X, y, criterion="J"), fit(X, y, criterion="JS")
    np.testing.assert_allclose(J.class_prior_ @ J.divergences_, J.scores_, rtol=1e-12)
    np.testing.assert_allclose(0.5 * JS.class_prior_ @ JS.divergences_, JS.scores_, rtol=1e-12)


# ----------------------------------------------------------------------------- spec test 13
def test_auto_grid():
    for d in (1, 7, 20_000, 20_001, 65_253, 10**6):
        grid = auto_k_grid(d)
        assert np.all(np.diff(grid) > 0) and grid[0] == 1 and grid[-1] == d
        assert grid.shape[0] == d if d <= 20_000 else grid.shape[0] <= 301
    assert auto_k_grid(65_253).shape[0] == 237


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_running_scores_equal_recomputing_the_bayes_rule(sparse_input, family, monkeypatch):
    X, y = count_data(n=200, d=60, n_classes=3, seed=8)
    X = X if sparse_input else X.toarray()
    sums = class_sums(X[:150], y[:150], 3, second_moment=family == "gaussian")
    model = fit_memd_model(sums, sums.counts / 150, family=family, criterion="J", epsilon=1e-3)
    grid = np.array([1, 2, 3, 5, 8, 13, 21, 34, 55, 60])
    expected = [
        np.mean(
            joint_log_likelihood(X[150:], model.lam, model.log_prior, model.ranking[:k]).argmax(1)
            == y[150:]
        )
        for k in grid
    ]
    monkeypatch.setattr(memd_module, "_CURVE_BUDGET", 50 * 3 * 3)  # 3 grid values per chunk
    np.testing.assert_allclose(
        validation_curve(model, X[150:], y[150:], grid), expected, atol=1e-15
    )


def test_k_is_the_smallest_k_at_the_maximum_validation_accuracy():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 50)
    X = rng.normal(size=(100, 30)) + 10.0 * y[:, None]  # every K separates perfectly: a tie
    assert literal_memd().fit(X, y).k_ == 1
    X, y = gaussian_data(seed=9)
    clf = literal_memd(criterion="J", k_grid=[1, 2, 3, 4, 5, 10, 20, 50]).fit(X, y)
    acc = clf.val_curve_["accuracy"][0]
    assert clf.k_ == clf.val_curve_["k"][np.flatnonzero(acc == acc.max())[0]]
    assert acc.max() > acc[0]


def test_k_equal_d_reproduces_the_all_feature_model():
    X, y = gaussian_data(seed=10)
    clf = fit(X, y)
    jll = joint_log_likelihood(X, clf.lambda_, np.log(clf.class_prior_), np.arange(X.shape[1]))
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[jll.argmax(1)])
    np.testing.assert_allclose(clf._joint_log_likelihood(X), jll, rtol=1e-12)


def test_inner_cv_uses_five_stratified_folds():
    X, y = gaussian_data(n=100, seed=11)
    clf = literal_memd(k_selection="inner_cv", random_state=3)
    splits = clf._splits(y, np.random.RandomState(3))
    assert len(splits) == 5
    held_out = np.concatenate([val for _, val in splits])
    np.testing.assert_array_equal(np.sort(held_out), np.arange(100))
    for _, val in splits:
        assert np.ptp(np.bincount(y[val], minlength=3)) <= 1
    fitted = clf.fit(X, y)
    grid = fitted.val_curve_["k"]
    curves = []
    for train, val in splits:
        sums = class_sums(X[train], y[train], 3)
        eps = 1e-9 * X[train].var(0).max()
        model = fit_memd_model(sums, sums.counts / len(train), criterion="JS", epsilon=eps)
        curves.append(validation_curve(model, X[val], y[val], grid))
    np.testing.assert_allclose(fitted.val_curve_["accuracy"][0], np.mean(curves, axis=0))


def test_floor_selection_picks_the_best_smoothing_and_k_pair():
    rng = np.random.default_rng(12)
    y = np.repeat([0, 1], 60)
    X = rng.normal(size=(120, 20))
    X[:, 0] = np.where(y == 0, 0.0, rng.normal(0.05, 0.02, 120))  # zero variance in class 0
    X[:, 1] += 0.8 * y
    clf = literal_memd(criterion="J", floor_selection="val").fit(X, y)
    acc = clf.val_curve_["accuracy"]
    assert acc.shape == (6, 20)
    best = np.argwhere(acc == acc.max())
    s, k = min(best, key=lambda sk: (sk[1], sk[0]))
    assert clf.k_ == clf.val_curve_["k"][k]
    assert clf.smoothing_ == clf.val_curve_["smoothing"][s]
    assert clf.epsilon_ == pytest.approx(clf.smoothing_ * X.var(0).max(), rel=1e-9)
    assert not np.all(acc == acc[0])  # the floor matters here
    fixed = literal_memd(criterion="J", var_smoothing=clf.smoothing_, k=clf.k_).fit(X, y)
    np.testing.assert_array_equal(fixed.predict(X), clf.predict(X))


def test_refit_full_false_keeps_the_split_model():
    X, y = gaussian_data(seed=13)
    full = literal_memd(random_state=1).fit(X, y)
    split = literal_memd(random_state=1, refit_full=False).fit(X, y)
    assert full.k_ == split.k_
    assert not np.allclose(full.scores_, split.scores_)


def test_same_seed_same_result():
    X, y = gaussian_data(seed=14)
    a = literal_memd(random_state=5).fit(X, y)
    b = clone(a).fit(X, y)
    assert a.k_ == b.k_
    np.testing.assert_array_equal(a.val_curve_["accuracy"], b.val_curve_["accuracy"])


def test_ranking_rounding_breaks_float_noise_ties_by_index():
    scores = np.array([1.0, 0.5, 0.5 * (1 + 1e-15), 0.5 * (1 - 1e-15), 0.2])
    np.testing.assert_array_equal(ranking_from_scores(scores), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(ranking_from_scores(np.zeros(3)), [0, 1, 2])


def test_class_sums_dense_and_sparse():
    X, y = count_data(n_classes=3)
    a, b = class_sums(X, y, 3), class_sums(X.toarray(), y, 3)
    assert isinstance(a, ClassSums)
    np.testing.assert_allclose(a.s1, b.s1, rtol=1e-12)
    np.testing.assert_allclose(a.s2, b.s2, rtol=1e-12)
    np.testing.assert_array_equal(a.counts, np.bincount(y))


# ----------------------------------------------------------------------------- selector form
def test_selector_in_a_pipeline_keeps_the_top_k_features():
    X, y = gaussian_data(seed=15)
    pipe = make_pipeline(MeMdSelector(criterion="J", k=5), LinearSVC()).fit(X, y)
    selector = pipe[0]
    assert set(np.flatnonzero(selector.get_support())) == set(selector.ranking_[:5])
    assert pipe.predict(X).shape == (X.shape[0],)
    clf = literal_memd(criterion="J", k=5).fit(X, y)
    np.testing.assert_array_equal(clf.get_support(), selector.get_support())
    np.testing.assert_array_equal(clf.transform(X), X[:, np.sort(clf.ranking_[:5])])


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"criterion": "KL"}, "criterion must be one of"),
        ({"family": "poisson"}, "family must be one of"),
        ({"floor_mode": "clip"}, "floor_mode must be one of"),
        ({"k_selection": "loo"}, "k_selection must be one of"),
        ({"floor_selection": "cv"}, "floor_selection must be one of"),
        ({"k": 0}, r"k=0 is out of range"),
        ({"k": 51}, r"k=51 is out of range"),
        ({"k": 2.5}, r"k=2.5 is out of range"),
        ({"var_smoothing": 0.0}, "var_smoothing values must be positive"),
        ({"var_floor": -1.0}, "var_floor must be a positive number"),
        ({"var_floor": 1e-3, "floor_selection": "val"}, "leave var_floor=None"),
        ({"val_fraction": 1.0}, r"val_fraction must lie in \(0, 1\)"),
        ({"k_grid": [0, 3]}, "k_grid must hold integers"),
        ({"priors": [0.5, 0.5]}, "priors must be 3 positive numbers"),
        ({"refit_full": False, "k_selection": "inner_cv"}, "refit_full=False"),
    ],
)
def test_bad_parameters_raise(params, match):
    X, y = gaussian_data()
    with pytest.raises(ValueError, match=match):
        literal_memd(**params).fit(X, y)


def test_bad_data_raise():
    X, y = gaussian_data()
    y_one = y.copy()
    y_one[0] = 7
    with pytest.raises(ValueError, match=r"\[7\] have only 1 sample"):
        literal_memd(k=3).fit(X, y_one)
    with pytest.raises(ValueError, match="negative values"):
        literal_memd(family="exponential", k=3).fit(X, y)
    with pytest.raises(ValueError, match="negative values"):
        literal_memd(family="truncexp01", k=3).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="values above 1"):
        literal_memd(family="truncexp01", k=3).fit(np.abs(X) + 1, y)
    X_nan = X.copy()
    X_nan[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        literal_memd(k=3).fit(X_nan, y)
    with pytest.raises(ValueError, match="only one class"):
        literal_memd(k=3).fit(X, np.zeros_like(y))
    clf = literal_memd(k=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :10])
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(X_nan)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", [MeMdClassifier(k_grid=[1, 2]), MeMdSelector(k_grid=[1, 2])])
def test_scikit_learn_estimator_checks(estimator):
    check_estimator(estimator)
