"""λ by inner cross-validation (ADMM-MVFS spec §6.2): :func:`cross_validate_lam`, :func:`lam_max`."""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC

from multiview_lab.mvfs import (
    ADMMMultiviewFeatureSelector,
    LamSearchCV,
    RFSSelector,
    cross_validate_lam,
    lam_max,
)
from multiview_lab.mvfs.model_selection import _with_seed

ONE_NN = KNeighborsClassifier(n_neighbors=1)


def make_views(n_per_class=15, n_classes=3, sizes=(6, 5, 4), shift=4.0, noise_view=True, seed=0):
    """Three views with one strongly informative feature in each of the first two (global 1, 8)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n_per_class)
    Xs = [rng.standard_normal((y.shape[0], d)) * 3.0 + 5.0 for d in sizes]
    Xs[0][:, 1] += 3.0 * shift * y
    Xs[1][:, 2] -= 3.0 * shift * y
    if not noise_view:
        Xs = Xs[:2]
    return Xs, y


@pytest.fixture(scope="module")
def views():
    return make_views()


def test_lam_max_is_the_selectors_lam_max(views):
    Xs, y = views
    value = lam_max(Xs, y)
    assert np.isclose(RFSSelector(max_iter=1).fit(Xs, y).lam_max_, value, rtol=1e-12)
    admm = ADMMMultiviewFeatureSelector(max_iter=1).fit(Xs, y)
    assert np.isclose(admm.lam_max_, value, rtol=1e-12)
    minmax = RFSSelector(max_iter=1, standardize="minmax").fit(Xs, y).lam_max_
    assert np.isclose(lam_max(Xs, y, standardize="minmax"), minmax, rtol=1e-12)


def test_chance_level_lam_is_not_chosen(views):
    """λ ≥ λ_max of a fold has W = 0: not fitted, scored as the majority class, never chosen."""
    Xs, y = views
    big = 10.0 * lam_max(Xs, y)
    cv = cross_validate_lam(
        RFSSelector(max_iter=50), Xs, y, [big, 0.1, 1.0], classifier=ONE_NN, k=2, n_folds=3
    )
    assert np.allclose(cv.lams, [0.1, 1.0, big])  # sorted ascending
    assert cv.null_model[2].all() and not cv.null_model[:2].any()
    assert (cv.fit_time[2] == 0).all() and (cv.fit_time[:2] > 0).all()
    assert np.allclose(cv.scores[2], 1.0 / 3.0)  # balanced classes: chance level
    assert cv.mean_scores[:2].min() > 0.95  # the two informative features separate the classes
    assert cv.best_lam < cv.lam_max.min()


def test_best_score_wins_and_ties_go_to_the_largest_lam(views):
    """1-NN on the top 2-3 features: λ ≤ 0.1 is perfect on every fold, λ = 1 is not."""
    Xs, y = views
    lams = [1e-3, 1e-2, 1e-1, 1.0]
    cv = cross_validate_lam(RFSSelector(max_iter=50), Xs, y, lams, classifier=ONE_NN, k=[2, 3])
    assert cv.scores.shape == (4, 5)  # the default 5 folds
    assert np.allclose(cv.mean_scores[:3], 1.0) and cv.mean_scores[3] < 1.0
    assert cv.best_lam == 0.1  # a three-way tie: the sparsest model; the larger λ = 1 scores less
    assert cv.ks.tolist() == [2, 3] and cv.accuracies.shape == (4, 5, 1, 2)


def test_seeded_deterministic_and_independent_of_n_jobs():
    Xs, y = make_views(shift=0.6, seed=1)  # noisy: held-out scores depend on the folds
    lams = [0.01, 1.0, 10.0]
    kwargs = {"classifier": ONE_NN, "k": [2, 4], "n_folds": 3}
    a = cross_validate_lam(RFSSelector(max_iter=30), Xs, y, lams, random_state=7, **kwargs)
    b = cross_validate_lam(
        RFSSelector(max_iter=30), Xs, y, lams, random_state=7, n_jobs=2, **kwargs
    )
    assert np.array_equal(a.accuracies, b.accuracies) and a.best_index == b.best_index
    assert np.array_equal(a.lam_max, b.lam_max)
    other = cross_validate_lam(RFSSelector(max_iter=30), Xs, y, lams, random_state=8, **kwargs)
    assert not np.array_equal(a.lam_max, other.lam_max)  # other folds
    frame = a.to_frame(["1nn"])
    assert list(frame.columns) == [
        "lam",
        "fold",
        "score",
        "score_1nn",
        "lam_max",
        "null_model",
        "fit_time_s",
        "chosen",
    ]
    assert len(frame) == 3 * 3 and frame["chosen"].sum() == 3
    assert np.allclose(frame["score"], frame["score_1nn"])
    assert frame.loc[frame["chosen"], "lam"].unique().tolist() == [a.best_lam]


def test_admm_selector_several_classifiers_and_labels_of_any_type(views):
    Xs, y = views
    labels = np.array(["a", "b", "c"])[y]
    cv = cross_validate_lam(
        ADMMMultiviewFeatureSelector(max_iter=300, random_state=0),
        Xs,
        labels,
        [0.1, 1.0],
        classifier=[ONE_NN, LinearSVC(random_state=0)],
        k=2,
        n_folds=2,
    )
    assert cv.scores.shape == (2, 2) and cv.accuracies.shape == (2, 2, 2, 1)
    assert np.allclose(cv.scores, cv.accuracies.mean(axis=(2, 3)))  # mean over classifiers, k
    assert cv.mean_scores.min() > 0.9
    frame = cv.to_frame(["1nn", "svm"])
    assert np.allclose(frame["score"], (frame["score_1nn"] + frame["score_svm"]) / 2)
    with pytest.raises(ValueError, match="2 classifier name"):
        cv.to_frame(["1nn"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lams": []}, "grid is empty"),
        ({"lams": None}, "grid is empty"),
        ({"lams": [1.0, -1.0]}, "positive finite"),
        ({"lams": [1.0, np.inf]}, "positive finite"),
        ({"lams": [1.0, 1.0]}, "duplicate"),
        ({"n_folds": 16}, "larger than the smallest class"),
        ({"n_folds": 1}, "n_folds must be an int >= 2"),
        ({"n_folds": 2.5}, "n_folds must be an int >= 2"),
        ({"k": 0}, "k must be"),
        ({"k": 16}, "k must be"),
        ({"k": []}, "k must be"),
        ({"k": 1.5}, "k must be"),
        ({"classifier": []}, "non-empty list of classifiers"),
    ],
)
def test_bad_input_raises_clear_errors(views, kwargs, match):
    Xs, y = views
    args = {"lams": [0.1, 1.0], "classifier": ONE_NN, "k": 2, "n_folds": 3, **kwargs}
    lams = args.pop("lams")
    with pytest.raises(ValueError, match=match):
        cross_validate_lam(RFSSelector(max_iter=5), Xs, y, lams, **args)


def test_smallest_class_bounds_the_folds():
    Xs, y = make_views()
    keep = np.r_[np.arange(30), 30, 31, 32]  # class 2 keeps 3 samples
    Xs, y = [X[keep] for X in Xs], y[keep]
    with pytest.raises(ValueError, match=r"n_folds=4 .* smallest class \(3 samples of 2\)"):
        cross_validate_lam(RFSSelector(max_iter=5), Xs, y, [1.0], classifier=ONE_NN, k=1, n_folds=4)
    cv = cross_validate_lam(
        RFSSelector(max_iter=5), Xs, y, [1.0], classifier=ONE_NN, k=1, n_folds=3
    )
    assert cv.scores.shape == (1, 3)


def test_lam_search_cv_is_cross_validate_lam_as_an_estimator():
    Xs, y = make_views(shift=0.6, seed=1)
    lams = [0.01, 1.0, 10.0]
    svm = LinearSVC(max_iter=2000)
    search = LamSearchCV(
        RFSSelector(max_iter=30, lam_frac=0.5),
        lams=lams,
        classifiers=[("1nn", ONE_NN), ("svm", svm)],
        k=[2, 4],
        n_folds=3,
        random_state=7,
    ).fit(Xs, y)
    ref = cross_validate_lam(
        RFSSelector(max_iter=30),
        Xs,
        y,
        lams,
        classifier=[ONE_NN, LinearSVC(max_iter=2000, random_state=7)],
        k=[2, 4],
        n_folds=3,
        random_state=7,
    )
    assert np.array_equal(search.cv_result_.accuracies, ref.accuracies)
    assert search.best_lam_ == ref.best_lam
    assert search.best_score_ == ref.mean_scores[ref.best_index]
    assert search.best_score_std_ == ref.std_scores[ref.best_index]
    assert search.lam_max_ == pytest.approx(lam_max(Xs, y))
    assert search.classifier_names_ == ["1nn", "svm"]
    assert svm.random_state is None  # the given classifier is not modified
    assert list(search.cv_result_.to_frame(search.classifier_names_))[3:5] == [
        "score_1nn",
        "score_svm",
    ]
    assert clone(search).get_params()["lams"] == lams


def test_lam_search_cv_defaults_and_bad_classifiers(views):
    Xs, y = views
    search = LamSearchCV(lams=[0.1, 100.0], k=2, n_folds=3, random_state=0).fit(Xs, y)
    assert search.classifier_names_ == ["1nn"] and search.best_lam_ == 0.1
    for bad in ([], [ONE_NN], [("a", ONE_NN), ("a", ONE_NN)]):
        with pytest.raises(ValueError, match="classifier"):
            LamSearchCV(classifiers=bad, lams=[1.0], k=2, n_folds=3).fit(Xs, y)


def test_seed_reaches_unset_nested_random_states_only():
    search = _with_seed(GridSearchCV(LinearSVC(), {"C": [1.0]}), 5)
    assert search.estimator.random_state == 5
    assert _with_seed(LinearSVC(random_state=3), 5).random_state == 3  # fixed: kept
    assert _with_seed(LinearSVC(), None).random_state is None
    assert _with_seed(ONE_NN, 5).get_params() == ONE_NN.get_params()  # no random_state


def test_imports_neither_kedro_nor_mlflow():
    code = (
        "import sys, multiview_lab.mvfs.model_selection; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('kedro', 'mlflow')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
