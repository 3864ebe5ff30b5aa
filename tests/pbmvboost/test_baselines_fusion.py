"""Tree baselines of PB-MVBoost's Table 1 (spec §5.2-5.3, tests 17 (MV-MV part) and 18)."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier

from multiview_lab.pbmvboost.baselines import (
    ConcatClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVMVClassifier,
    fit_tree_cv,
)

LABELS = np.array(["neg", "pos"])


def views(n=240, n_views=4, d=4, strength=(0.3, 0.6, 0.9, 1.2), seed=0):
    """Views of a shared binary label; view ``v`` carries signal of size ``strength[v]``."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.35).astype(int)
    Xs = [
        rng.normal(size=(n, d)) + strength[v] * (2 * y[:, None] - 1) * (np.arange(d) < 2)
        for v in range(n_views)
    ]
    return Xs, LABELS[y]


def to_pm(clf, labels):
    return np.where(labels == clf.classes_[1], 1, -1)


# --- MV-MV (test 17) ------------------------------------------------------------------------


def test_mvmv_single_view_equals_its_tree():
    Xs, y = views(n_views=1, strength=(1.0,))
    Xt, _ = views(n_views=1, strength=(1.0,), seed=1)
    clf = MVMVClassifier(max_depth=3, random_state=0).fit(Xs, y)
    seed = clf.estimators_[0].random_state
    tree = DecisionTreeClassifier(max_depth=3, random_state=seed).fit(Xs[0], y)
    np.testing.assert_array_equal(clf.predict(Xt), tree.predict(Xt[0]))
    # with the CV-chosen depth, MV-MV is its (only) tree
    clf = MVMVClassifier(random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(
        clf.predict(Xt), clf.classes_[(clf.estimators_[0].predict(Xt[0]) > 0).astype(int)]
    )


def test_mvmv_is_majority_with_probability_tie_break():
    Xs, y = views(strength=(0.4, 0.4, 0.5, 0.5))
    Xt, _ = views(n=600, strength=(0.4, 0.4, 0.5, 0.5), seed=1)
    clf = MVMVClassifier(max_depth=4, random_state=0).fit(Xs, y)
    votes = np.column_stack([t.predict(X) for t, X in zip(clf.estimators_, Xt, strict=True)]).sum(
        axis=1
    )
    proba = np.mean(
        [t.predict_proba(X)[:, 1] for t, X in zip(clf.estimators_, Xt, strict=True)], axis=0
    )
    expected = np.where(votes > 0, 1, np.where(votes < 0, -1, np.where(proba > 0.5, 1, -1)))
    assert np.sum(votes == 0) >= 20  # the tie rule is exercised
    assert len(set(expected[votes == 0])) == 2
    np.testing.assert_array_equal(to_pm(clf, clf.predict(Xt)), expected)
    for rule, tie_label in (("positive", 1), ("negative", -1)):
        other = MVMVClassifier(tie_break=rule, max_depth=4, random_state=0).fit(Xs, y)
        expected = np.where(votes > 0, 1, np.where(votes < 0, -1, tie_label))
        np.testing.assert_array_equal(to_pm(other, other.predict(Xt)), expected)


def test_mvmv_exact_tie_gives_negative_class():
    # depth-1 trees with leaves of positive rate 1/4 and 3/4 on both views
    y = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    xa = np.array([0, 0, 0, 0, 1, 1, 1, 1.0])[:, None]
    xb = np.array([0, 0, 1, 1, 1, 1, 0, 0.0])[:, None]
    clf = MVMVClassifier(max_depth=1, random_state=0).fit([xa, xb], y)
    test = [np.array([[1.0], [0.0], [1.0]]), np.array([[0.0], [1.0], [1.0]])]
    # rows 0-1: one vote each way, mean probability exactly 0.5 -> -1; row 2: both vote +1
    np.testing.assert_array_equal(clf.predict(test), [0, 0, 1])


# --- Fusion_dt (test 18) --------------------------------------------------------------------


@pytest.mark.parametrize("level1_output", ["sign", "proba"])
def test_fusion_dt_split_and_level2_rows(level1_output):
    Xs, y = views(n=250)
    clf = FusionDTClassifier(level1_output=level1_output, random_state=3).fit(Xs, y)
    i1, i2 = clf.level1_indices_, clf.level2_indices_
    n = y.shape[0]
    assert np.intersect1d(i1, i2).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([i1, i2])), np.arange(n))
    assert abs(i1.size - 0.6 * n) <= 1
    ratio = np.mean(y == "pos")
    for part in (i1, i2):
        assert abs(np.mean(y[part] == "pos") - ratio) <= 1 / n + 1e-12
    # level-1 trees saw exactly the 60 % rows, the level-2 tree exactly the 40 % rows
    for tree in clf.estimators_:
        assert tree.tree_.n_node_samples[0] == i1.size
    assert clf.final_estimator_.tree_.n_node_samples[0] == i2.size
    # level 2 equals a tree refitted on the level-1 outputs of the 40 % rows only
    if level1_output == "sign":
        Z2 = np.column_stack([t.predict(X[i2]) for t, X in zip(clf.estimators_, Xs, strict=True)])
    else:
        Z2 = np.column_stack(
            [t.predict_proba(X[i2])[:, 1] for t, X in zip(clf.estimators_, Xs, strict=True)]
        )
    ref = DecisionTreeClassifier(
        max_depth=clf.final_estimator_.max_depth, random_state=clf.final_estimator_.random_state
    ).fit(Z2, to_pm(clf, y[i2]))
    Xt, _ = views(n=300, seed=7)
    if level1_output == "sign":
        Zt = np.column_stack([t.predict(X) for t, X in zip(clf.estimators_, Xt, strict=True)])
    else:
        Zt = np.column_stack(
            [t.predict_proba(X)[:, 1] for t, X in zip(clf.estimators_, Xt, strict=True)]
        )
    np.testing.assert_array_equal(to_pm(clf, clf.predict(Xt)), ref.predict(Zt))


def test_fusion_dt_proba_outputs_are_probabilities():
    Xs, y = views(n=250)
    clf = FusionDTClassifier(level1_output="proba", max_depth=None, random_state=0).fit(Xs, y)
    Z = clf._level1_outputs(Xs)
    assert Z.min() >= 0 and Z.max() <= 1
    sign = FusionDTClassifier(level1_output="sign", max_depth=None, random_state=0).fit(Xs, y)
    assert set(np.unique(sign._level1_outputs(Xs))) <= {-1.0, 1.0}


# --- Mono and Concat ------------------------------------------------------------------------


def test_mono_picks_best_cv_view():
    Xs, y = views(strength=(0.0, 0.3, 1.5, 0.6))
    clf = MonoViewClassifier(random_state=0).fit(Xs, y)
    assert clf.selected_view_ == 2 == int(np.argmax(clf.view_cv_scores_))
    assert np.all(np.isfinite(clf.view_cv_scores_))
    # each view's score is the best CV accuracy of that view over the depth grid
    _, scores = fit_tree_cv(Xs[0], to_pm(clf, y), random_state=0)
    assert clf.view_cv_scores_[0] < clf.view_cv_scores_[2]
    assert scores.max() < clf.view_cv_scores_[2]
    Xt, _ = views(n=200, strength=(0.0, 0.3, 1.5, 0.6), seed=2)
    tree = clf.estimators_[2]
    np.testing.assert_array_equal(
        clf.predict(Xt), clf.classes_[(tree.predict_proba(Xt[2])[:, 1] > 0.5).astype(int)]
    )


def test_mono_test_selection_is_an_explicit_oracle():
    Xs, y = views(strength=(0.0, 1.5, 0.3, 0.6))
    Xt, yt = views(n=400, strength=(0.0, 1.5, 0.3, 0.6), seed=3)
    clf = MonoViewClassifier(mono_select="test", random_state=0).fit(Xs, y)
    with pytest.raises(ValueError, match="select_view"):
        clf.predict(Xt)
    clf.select_view(Xt, yt)
    assert clf.selected_view_ == int(np.argmax(clf.view_test_scores_)) == 1


def test_concat_equals_tree_on_hstack():
    Xs, y = views(d=3)
    Xt, _ = views(n=300, d=3, seed=4)
    clf = ConcatClassifier(max_depth=4, random_state=0).fit(Xs, y)
    seed = clf.estimator_.random_state  # trees break equal-gain splits at random: same seed
    tree = DecisionTreeClassifier(max_depth=4, random_state=seed).fit(np.hstack(Xs), y)
    np.testing.assert_array_equal(clf.predict(Xt), tree.predict(np.hstack(Xt)))
    cv = ConcatClassifier(random_state=0).fit(Xs, y)
    assert cv.estimator_.max_depth in (1, 2, 3, 4, 6, 8, None)
    assert cv.estimator_.n_features_in_ == 12


def test_depth_cv_picks_the_best_depth():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)  # XOR: depth 1 cannot fit it, depth 2 can
    tree, scores = fit_tree_cv(X, y, random_state=0)
    assert tree.max_depth == (1, 2, 3, 4, 6, 8, None)[int(np.argmax(scores))]
    assert tree.max_depth != 1 and scores[0] < 0.7 and scores.max() > 0.9


@pytest.mark.parametrize(
    ("signal", "depths"),
    [
        ("pixels", (1, 2, 3, 4, 6, 8, None)),  # deep trees: every depth is fitted
        ("binary", (1, 2, 3, 4, 6, 8, None)),  # 3 binary features: trees stop at depth <= 3
        ("binary", (None, 3, 1, 3, 8)),  # any order, repeated depths
    ],
)
def test_depth_cv_scores_equal_cross_val_score(signal, depths):
    """The CV accuracies are exactly scikit-learn's ``cross_val_score`` on the same folds, also
    for the depths served by a shallower tree that stopped growing before its limit."""
    rng = np.random.default_rng(3)
    if signal == "pixels":
        X = rng.integers(0, 256, size=(300, 20)).astype(float)
        y = np.where(X[:, 0] + X[:, 1] + rng.normal(scale=80, size=300) > 255, 1.0, -1.0)
    else:
        X = rng.integers(0, 2, size=(300, 3)) * 2.0 - 1.0
        y = np.where(X.sum(axis=1) + rng.normal(scale=1.0, size=300) > 0, 1.0, -1.0)
    tree, scores = fit_tree_cv(X, y, depths=depths, cv=5, random_state=4)
    rng_seeds = np.random.RandomState(4)
    tree_seed, fold_seed = (int(rng_seeds.randint(np.iinfo(np.int32).max)) for _ in range(2))
    folds = StratifiedKFold(5, shuffle=True, random_state=fold_seed)
    expected = [
        cross_val_score(
            DecisionTreeClassifier(max_depth=d, random_state=tree_seed), X, y, cv=folds
        ).mean()
        for d in depths
    ]
    np.testing.assert_array_equal(scores, expected)
    assert tree.random_state == tree_seed
    assert tree.max_depth == depths[int(np.argmax(expected))]


def test_same_seed_same_predictions():
    Xs, y = views()
    for cls in (MonoViewClassifier, ConcatClassifier, FusionDTClassifier, MVMVClassifier):
        a = cls(depth_grid=(1, 3, None), random_state=11).fit(Xs, y).predict(Xs)
        b = cls(depth_grid=(1, 3, None), random_state=11).fit(Xs, y).predict(Xs)
        np.testing.assert_array_equal(a, b)


# --- bad input ------------------------------------------------------------------------------

ESTIMATORS = [MonoViewClassifier, ConcatClassifier, FusionDTClassifier, MVMVClassifier]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_input(cls):
    Xs, y = views(n=60)
    bad = [X.copy() for X in Xs]
    bad[1][3, 0] = np.nan
    with pytest.raises(ValueError, match="View 1.*NaN"):
        cls().fit(bad, y)
    with pytest.raises(ValueError, match="same number of samples"):
        cls().fit([Xs[0], Xs[1][:-1]], y)
    with pytest.raises(ValueError, match="2-D"):
        cls().fit([Xs[0], Xs[1][:, 0]], y)
    # a 2-D X without views_ind is one view (multiview_lab.utils.multiview's convention)
    X = np.hstack(Xs)
    one = cls(max_depth=2, random_state=0).fit(X, y)
    assert one.n_views_ == 1
    np.testing.assert_array_equal(
        one.predict(X), cls(max_depth=2, random_state=0).fit([X], y).predict([X])
    )
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls().fit(Xs, np.zeros(60))
    with pytest.raises(ValueError, match="exactly 2 distinct labels"):
        cls().fit(Xs, np.arange(60) % 3)
    with pytest.raises(ValueError, match="'max_depth' parameter.*Got 'deep'"):
        cls(max_depth="deep").fit(Xs, y)
    with pytest.raises(ValueError, match="depth_grid"):
        cls(depth_grid=(1, 0)).fit(Xs, y)
    clf = cls(max_depth=2).fit(Xs, y)
    with pytest.raises(ValueError, match="views but 4 were expected"):
        clf.predict(Xs[:3])
    with pytest.raises(ValueError, match="View 0 has 3 features but 4"):
        clf.predict([Xs[0][:, :3]] + Xs[1:])


def test_bad_options():
    Xs, y = views(n=60)
    with pytest.raises(ValueError, match="'mono_select' parameter.*Got 'best'"):
        MonoViewClassifier(mono_select="best").fit(Xs, y)
    with pytest.raises(ValueError, match="'level1_output' parameter.*Got 'margin'"):
        FusionDTClassifier(level1_output="margin").fit(Xs, y)
    with pytest.raises(ValueError, match="'tie_break' parameter.*Got 'random'"):
        MVMVClassifier(tie_break="random").fit(Xs, y)
    with pytest.raises(ValueError, match="level1_size"):
        FusionDTClassifier(level1_size=1.5).fit(Xs, y)
    with pytest.raises(ValueError, match="'cv' parameter.*range \\[2, inf\\)"):
        MVMVClassifier(cv=1).fit(Xs, y)
    one = np.array([1] * 1 + [0] * 59)
    with pytest.raises(ValueError, match="smallest class has 1"):
        ConcatClassifier().fit(Xs, one)
