"""Bad input: every estimator raises a ValueError that names the problem."""

import numpy as np
import pytest

from multiview_lab.pbmvboost import (
    MVAdaBoostClassifier,
    MVBoostClassifier,
    PBMVBoostClassifier,
    RBoostSHClassifier,
    binary_scores,
    one_vs_all_scores,
)

ESTIMATORS = [PBMVBoostClassifier, MVBoostClassifier, MVAdaBoostClassifier, RBoostSHClassifier]


@pytest.fixture(scope="module")
def good():
    rng = np.random.RandomState(0)
    y = rng.randint(2, size=40)
    return [y[:, None] + rng.normal(size=(40, 3)), y[:, None] + rng.normal(size=(40, 2))], y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_nan_and_inf(cls, good):
    Xs, y = good
    for bad in (np.nan, np.inf):
        X1 = Xs[1].copy()
        X1[3, 1] = bad
        with pytest.raises(ValueError, match="View 1"):
            cls(3).fit([Xs[0], X1], y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_beyond_float32_range(cls, good):
    """The trees work in float32: a finite float64 that overflows it is rejected, in fit and in
    predict, instead of reaching the trees as infinity."""
    Xs, y = good
    X1 = Xs[1].copy()
    X1[3, 1] = 1e300
    with pytest.raises(ValueError, match="View 1 has values too large for float32"):
        with np.errstate(over="ignore"):
            cls(3).fit([Xs[0], X1], y)
    clf = cls(3, random_state=0).fit(Xs, y)
    with pytest.raises(ValueError, match="View 1 has values too large for float32"):
        with np.errstate(over="ignore"):
            clf.predict([Xs[0], X1])


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_views_of_unequal_length(cls, good):
    Xs, y = good
    with pytest.raises(ValueError, match="same number of samples"):
        cls(3).fit([Xs[0], Xs[1][:-1]], y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_one_dimensional_view(cls, good):
    Xs, y = good
    with pytest.raises(ValueError, match="View 1 must be a 2-D array"):
        cls(3).fit([Xs[0], Xs[1][:, 0]], y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_single_array_without_views_ind(cls, good):
    Xs, y = good
    with pytest.raises(ValueError, match="list of 2-D arrays"):
        cls(3).fit(Xs[0], y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_views_ind(cls, good):
    Xs, y = good
    with pytest.raises(ValueError, match="views_ind"):
        cls(3, views_ind=[0, 3, 4]).fit(np.hstack(Xs), y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_single_class(cls, good):
    Xs, _ = good
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls(3).fit(Xs, np.ones(40))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_labels_of_wrong_length_or_nan(cls, good):
    Xs, y = good
    with pytest.raises(ValueError, match="40 samples"):
        cls(3).fit(Xs, y[:-1])
    with pytest.raises(ValueError, match="NaN"):
        cls(3).fit(Xs, np.where(y == 1, np.nan, 0.0))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_predict_with_wrong_views(cls, good):
    Xs, y = good
    clf = cls(3, random_state=0).fit(Xs, y)
    with pytest.raises(ValueError, match="views but 2 were expected"):
        clf.predict(Xs[:1])
    with pytest.raises(ValueError, match="View 1 has 3 features but 2"):
        clf.predict([Xs[0], Xs[0]])


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_common_options(cls, good):
    Xs, y = good
    for params, name in [
        ({"n_estimators": 0}, "n_estimators"),
        ({"max_depth": 0}, "max_depth"),
        ({"tie_label": 0}, "tie_label"),
    ]:
        with pytest.raises(ValueError, match=name):
            cls(**params).fit(Xs, y)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"compat": "foo"}, "compat"),
        ({"voter_weight_norm": "foo"}, "voter_weight_norm"),
        ({"constraint_jac": "foo"}, "constraint_jac"),
        ({"optimize_first_iter": "yes"}, "optimize_first_iter"),
        ({"rho_x0": "foo"}, "rho_x0"),
        ({"zero_rho_tol": -1.0}, "zero_rho_tol"),
        ({"eps_zero_factor": 0.0}, "eps_zero_factor"),
        ({"splitter": "foo"}, "splitter"),
        ({"tree_random_state": "foo"}, "tree_random_state"),
        ({"rho_solver": "foo"}, "rho_solver"),
        ({"vote": "foo"}, "vote"),
        ({"vote_weights": "foo"}, "vote_weights"),
        ({"optimize_rho": "no"}, "optimize_rho"),
    ],
)
def test_pbmvboost_unknown_options(params, name, good):
    Xs, y = good
    with pytest.raises(ValueError, match=name):
        PBMVBoostClassifier(3, **params).fit(Xs, y)


@pytest.mark.parametrize(
    ("cls", "params", "name"),
    [
        (RBoostSHClassifier, {"gamma": 0.0}, "gamma"),
        (RBoostSHClassifier, {"sigma": -1.0}, "sigma"),
        (RBoostSHClassifier, {"splitter": "foo"}, "splitter"),
        (MVAdaBoostClassifier, {"splitter": "foo"}, "splitter"),
        (MVBoostClassifier, {"compat": "foo"}, "compat"),
    ],
)
def test_baseline_unknown_options(cls, params, name, good):
    Xs, y = good
    with pytest.raises(ValueError, match=name):
        cls(3, **params).fit(Xs, y)


def test_pac_bayes_needs_binary_model(good):
    Xs, _ = good
    y3 = np.arange(40) % 3
    clf = PBMVBoostClassifier(3, random_state=0).fit(Xs, y3)
    with pytest.raises(ValueError, match="per binary model"):
        clf.pac_bayes_quantities(Xs, y3)
    binary = PBMVBoostClassifier(3, random_state=0).fit(Xs, y3 > 0)
    with pytest.raises(ValueError, match="labels not seen in fit"):
        binary.pac_bayes_quantities(Xs, y3)


def test_metrics_bad_input():
    with pytest.raises(ValueError, match="tie_policy"):
        binary_scores([1, -1], [1.0, -1.0], tie_policy="ignore")
    with pytest.raises(ValueError, match="same length"):
        binary_scores([1, -1, 1], [1.0, -1.0])
    with pytest.raises(ValueError, match="n_samples, n_classes"):
        one_vs_all_scores([0, 1], np.zeros((2, 3)), [0, 1])
