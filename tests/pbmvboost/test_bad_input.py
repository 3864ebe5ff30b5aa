"""Bad input: every estimator either works or raises an error that names the problem.

:func:`test_bad_input_matrix` runs every case of ``CASES`` on every multiview estimator of the
package (and :class:`~multiview_lab.utils.concat_views.ConcatViews`);
:func:`test_cqboost_bad_input_matrix` runs the single-view cases on CqBoost. A case that works
checks what it gives; no case is silently accepted.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

from multiview_lab.estimators import ConcatViews
from multiview_lab.pbmvboost import (
    ConcatClassifier,
    CqBoostClassifier,
    FusionCqAllClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVAdaBoostClassifier,
    MVBoostClassifier,
    MVMVClassifier,
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


# --- the matrix: estimator x case --------------------------------------------------------

_TREES = {"max_depth": 2, "cv": 3, "random_state": 0}
_FUSION = {
    "Cs": (1.0,),
    "gammas": (0.5,),
    "mus": (0.01,),
    "cv_level1": 2,
    "cv_level2": 2,
    "random_state": 0,
}


def _maker(cls, **base):
    """A factory of small ``cls`` instances; keywords override ``base``."""
    return lambda **kw: cls(**{**base, **kw})


_BOOST = {"n_estimators": 3, "random_state": 0}
MAKERS = {
    "PBMVBoostClassifier": _maker(PBMVBoostClassifier, **_BOOST),
    "MVBoostClassifier": _maker(MVBoostClassifier, **_BOOST),
    "MVAdaBoostClassifier": _maker(MVAdaBoostClassifier, **_BOOST),
    "RBoostSHClassifier": _maker(RBoostSHClassifier, **_BOOST),
    "MonoViewClassifier": _maker(MonoViewClassifier, **_TREES),
    "ConcatClassifier": _maker(ConcatClassifier, **_TREES),
    "FusionDTClassifier": _maker(FusionDTClassifier, **_TREES),
    "MVMVClassifier": _maker(MVMVClassifier, **_TREES),
    "FusionCqAllClassifier": _maker(FusionCqAllClassifier, **_FUSION),
    "ConcatViews": _maker(ConcatViews, estimator=LogisticRegression()),
}
BINARY_ONLY = {
    "MonoViewClassifier",
    "ConcatClassifier",
    "FusionDTClassifier",
    "MVMVClassifier",
    "FusionCqAllClassifier",
}
TREE_BASED = set(MAKERS) - {"FusionCqAllClassifier", "ConcatViews"}
NEGATIVE_COUNT = {
    "PBMVBoostClassifier": {"n_estimators": -1},
    "MVBoostClassifier": {"n_estimators": -1},
    "MVAdaBoostClassifier": {"n_estimators": -1},
    "RBoostSHClassifier": {"n_estimators": -1},
    "MonoViewClassifier": {"cv": -1},
    "ConcatClassifier": {"cv": -1},
    "FusionDTClassifier": {"cv": -1},
    "MVMVClassifier": {"cv": -1},
    "FusionCqAllClassifier": {"n_max_iterations": -1},  # was numpy's "negative dimensions"
    "ConcatViews": {"random_state": -1},
}
UNKNOWN_OPTION = {
    "PBMVBoostClassifier": {"compat": "foo"},
    "MVBoostClassifier": {"compat": "foo"},
    "MVAdaBoostClassifier": {"splitter": "foo"},
    "RBoostSHClassifier": {"splitter": "foo"},
    "MonoViewClassifier": {"mono_select": "foo"},
    "ConcatClassifier": {"max_depth": "foo"},
    "FusionDTClassifier": {"level1_output": "foo"},
    "MVMVClassifier": {"tie_break": "foo"},
    "FusionCqAllClassifier": {"level1_fit": "foo"},
}


def _data():
    rng = np.random.RandomState(0)
    y = np.repeat([0, 1], 20)[rng.permutation(40)]
    Xs = [y[:, None] + rng.normal(size=(40, 3)), y[:, None] + rng.normal(size=(40, 2))]
    return Xs, y


def _raises(make, X, y, exc, match):
    with pytest.raises(exc, match=match):
        make().fit(X, y)


def _fitted(make, X, y, **kw):
    return make(**kw).fit(X, y)


def case_continuous_y(name, make, Xs, y):
    _raises(make, Xs, y + np.linspace(0.01, 0.5, 40), ValueError, "Unknown label type")


def case_y_wrong_length(name, make, Xs, y):
    _raises(make, Xs, y[:-1], ValueError, r"inconsistent numbers of samples: \[40, 39\]")


def case_y_none(name, make, Xs, y):
    _raises(make, Xs, None, ValueError, "requires y to be passed")


def case_single_class(name, make, Xs, y):
    _raises(make, Xs, np.ones(40), ValueError, "1 class|one class")


def case_one_sample(name, make, Xs, y):
    _raises(make, [X[:1] for X in Xs], y[:1], ValueError, "1 class|one class")


def case_one_d_x(name, make, Xs, y):
    _raises(make, Xs[0][:, 0], y, ValueError, "Expected 2D array, got 1D array")


def case_one_d_view(name, make, Xs, y):
    _raises(make, [Xs[0], Xs[1][:, 0]], y, ValueError, "View 1 must be a 2-D array")


def case_nan(name, make, Xs, y):
    X1 = Xs[1].copy()
    X1[3, 1] = np.nan
    _raises(make, [Xs[0], X1], y, ValueError, "View 1.*NaN")
    _raises(make, np.hstack([Xs[0], X1]), y, ValueError, "Input X contains NaN")


def case_inf(name, make, Xs, y):
    X1 = Xs[1].copy()
    X1[3, 1] = np.inf
    _raises(make, [Xs[0], X1], y, ValueError, "View 1.*infinity")


def case_complex(name, make, Xs, y):
    _raises(make, [Xs[0], Xs[1] + 1j], y, ValueError, "Complex data not supported")


def case_string_labels(name, make, Xs, y):
    labels = np.where(y == 1, "yes", "no")
    clf = make().fit(Xs, labels)
    assert clf.classes_.tolist() == ["no", "yes"]
    pred = clf.predict(Xs)
    assert set(pred) <= {"no", "yes"}
    np.testing.assert_array_equal(pred == "yes", make().fit(Xs, y).predict(Xs) == 1)


def case_three_classes(name, make, Xs, y):
    y3 = np.arange(40) % 3
    if name in BINARY_ONLY:
        _raises(make, Xs, y3, ValueError, "Only binary classification is supported")
    else:  # one-vs-all
        clf = make().fit(Xs, y3)
        assert clf.classes_.tolist() == [0, 1, 2]
        assert set(clf.predict(Xs)) <= {0, 1, 2}


def case_view_with_fewer_rows(name, make, Xs, y):
    _raises(make, [Xs[0], Xs[1][:-5]], y, ValueError, "same number of samples.*view 1: 35")


def case_empty_list(name, make, Xs, y):
    _raises(make, [], y, ValueError, "empty list: no views")


def case_zero_column_view(name, make, Xs, y):
    _raises(make, [Xs[0], np.empty((40, 0))], y, ValueError, "View 1.*0 feature")


def case_predict_wrong_number_of_views(name, make, Xs, y):
    clf = make().fit(Xs, y)
    with pytest.raises(ValueError, match="1 views but 2 were expected"):
        clf.predict(Xs[:1])
    with pytest.raises(ValueError, match="3 views but 2 were expected"):
        clf.predict(Xs + [Xs[1]])


def case_predict_wrong_number_of_features(name, make, Xs, y):
    clf = make().fit(Xs, y)
    with pytest.raises(ValueError, match="View 1 has 3 features but 2 were seen in fit"):
        clf.predict([Xs[0], Xs[0]])
    stacked = make(views_ind=[0, 3, 5]).fit(np.hstack(Xs), y)
    with pytest.raises(ValueError, match="X has 4 features, but .* is expecting 5 features"):
        stacked.predict(np.hstack(Xs)[:, :4])


def case_predict_before_fit(name, make, Xs, y):
    for method in ("predict", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(make(), method)(Xs)


def case_sparse(name, make, Xs, y):
    dense = make().fit(Xs, y)
    for fmt in ("csr", "csc"):
        clf = make().fit([sp.csr_matrix(X).asformat(fmt) for X in Xs], y)
        pred = clf.predict([sp.csr_matrix(X).asformat(fmt) for X in Xs])
        if name in TREE_BASED:  # the trees split sparse and dense input alike
            np.testing.assert_array_equal(pred, dense.predict(Xs))
        else:  # linear models: the same problem, solved up to rounding
            assert np.mean(pred == dense.predict(Xs)) > 0.95


def case_object_array(name, make, Xs, y):
    clf = make().fit([X.astype(object) for X in Xs], y)
    np.testing.assert_array_equal(clf.predict(Xs), make().fit(Xs, y).predict(Xs))
    words = np.full((40, 2), "a", dtype=object)
    _raises(make, [Xs[0], words], y, ValueError, "could not convert string to float")


def case_negative_count(name, make, Xs, y):
    param = NEGATIVE_COUNT[name]
    with pytest.raises(InvalidParameterError, match=f"'{next(iter(param))}' parameter"):
        make(**param).fit(Xs, y)


def case_unknown_option(name, make, Xs, y):
    if name == "ConcatViews":  # its options are the wrapped estimator's
        with pytest.raises(ValueError, match="Invalid parameter 'foo'"):
            ConcatViews(LogisticRegression(), params={"foo": 1}).fit(Xs, y)
        return
    param = UNKNOWN_OPTION[name]
    with pytest.raises(InvalidParameterError, match=f"'{next(iter(param))}' parameter.*'foo'"):
        make(**param).fit(Xs, y)


def case_bad_views_ind(name, make, Xs, y):
    X = np.hstack(Xs)
    with pytest.raises(ValueError, match="views_ind must be increasing view boundaries"):
        make(views_ind=[0, 3, 4]).fit(X, y)
    with pytest.raises(ValueError, match="too few to cut into views_ind=9 views"):
        make(views_ind=9).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'views_ind' parameter"):
        make(views_ind="two").fit(X, y)


def case_stacked_without_views_ind_is_one_view(name, make, Xs, y):
    X = np.hstack(Xs)
    clf = make().fit(X, y)
    assert clf.n_views_ == 1 and clf.n_features_in_ == 5
    np.testing.assert_array_equal(clf.predict(X), make().fit([X], y).predict([X]))


CASES = {
    name[len("case_") :]: func for name, func in dict(globals()).items() if name.startswith("case_")
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_bad_input_matrix(name, case):
    Xs, y = _data()
    CASES[case](name, MAKERS[name], Xs, y)


def test_the_matrix_covers_the_brief():
    expected = {
        "continuous_y",
        "y_wrong_length",
        "y_none",
        "single_class",
        "one_sample",
        "one_d_x",
        "nan",
        "inf",
        "complex",
        "string_labels",
        "view_with_fewer_rows",
        "empty_list",
        "zero_column_view",
        "predict_wrong_number_of_views",
        "predict_wrong_number_of_features",
        "predict_before_fit",
        "sparse",
        "object_array",
        "negative_count",
        "unknown_option",
    }
    assert expected <= set(CASES)


# --- CqBoost: the single-view cases ---------------------------------------------------------


def _cq(**kw):
    return CqBoostClassifier(0.01, gamma=0.5, **kw)


CQ_CASES = {
    "continuous_y": lambda X, y: _raises(
        _cq, X, y + 0.5 * np.arange(40) / 40, ValueError, "Unknown label type"
    ),
    "y_wrong_length": lambda X, y: _raises(
        _cq, X, y[:-1], ValueError, r"inconsistent numbers of samples"
    ),
    "y_none": lambda X, y: _raises(_cq, X, None, ValueError, "requires y to be passed"),
    "single_class": lambda X, y: _raises(_cq, X, np.ones(40), ValueError, "got 1 class"),
    "one_sample": lambda X, y: _raises(_cq, X[:1], y[:1], ValueError, "got 1 class"),
    "one_d_x": lambda X, y: _raises(_cq, X[:, 0], y, ValueError, "Expected 2D array"),
    "nan": lambda X, y: _raises(_cq, np.where(X > 2, np.nan, X), y, ValueError, "contains NaN"),
    "inf": lambda X, y: _raises(_cq, np.where(X > 2, np.inf, X), y, ValueError, "infinity"),
    "complex": lambda X, y: _raises(_cq, X + 1j, y, ValueError, "Complex data not supported"),
    "three_classes": lambda X, y: _raises(
        _cq, X, np.arange(40) % 3, ValueError, "Only binary classification is supported"
    ),
    "list_of_views": lambda X, y: _raises(
        _cq, [X[:, :3], X[:, 3:]], y, ValueError, "single-view estimator.*list of 2 views"
    ),
    "empty_list": lambda X, y: _raises(_cq, [], y, ValueError, "empty list as X"),
    "zero_columns": lambda X, y: _raises(_cq, X[:, :0], y, ValueError, "0 feature"),
    "object_strings": lambda X, y: _raises(
        _cq, np.full((40, 2), "a", dtype=object), y, ValueError, "could not convert string"
    ),
    "negative_count": lambda X, y: _raises(
        lambda: _cq(n_max_iterations=-1), X, y, InvalidParameterError, "'n_max_iterations'"
    ),
    "unknown_option": lambda X, y: _raises(
        lambda: _cq(voters="foo"), X, y, InvalidParameterError, "'voters' parameter.*'foo'"
    ),
    "sparse_precomputed": lambda X, y: _raises(
        lambda: _cq(voters="precomputed"), sp.csr_matrix(np.tanh(X)), y, TypeError, "must be dense"
    ),
}


@pytest.mark.parametrize("case", sorted(CQ_CASES))
def test_cqboost_bad_input_matrix(case):
    Xs, y = _data()
    CQ_CASES[case](np.hstack(Xs), y)


def test_cqboost_cases_that_work():
    Xs, y = _data()
    X = np.hstack(Xs)
    clf = _cq().fit(X, np.where(y == 1, "yes", "no"))  # string labels
    assert set(clf.predict(X)) <= {"no", "yes"}
    with pytest.raises(NotFittedError):
        _cq().predict(X)
    with pytest.raises(ValueError, match="X has 4 features, but CqBoostClassifier is expecting 5"):
        clf.predict(X[:, :4])
    dense = _cq().fit(X, y).decision_function(X)
    for fmt in ("csr", "csc"):  # RBF voters: only distances, sparse or not
        sparse = _cq().fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense, atol=1e-12)
    assert _cq().__sklearn_tags__().input_tags.sparse
    assert not _cq(voters="precomputed").__sklearn_tags__().input_tags.sparse
    np.testing.assert_array_equal(
        _cq().fit(X.astype(object), y).decision_function(X), dense
    )  # a numeric object array is converted
