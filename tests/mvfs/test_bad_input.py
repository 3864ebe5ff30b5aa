"""Bad input to the multiview selectors: every case works or raises an error naming the problem.

One parametrised test, estimator × case. A case is a call on a fresh estimator and either
``WORKS`` or ``(exception type, regex of the message)``; per-estimator outcomes override the
default (e.g. sparse input works where the maths takes it).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from multiview_lab.mvfs import (
    ADMMMultiviewFeatureSelector,
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    LamSearchCV,
    ReliefFSelector,
    RFSSelector,
)

rng = np.random.default_rng(0)
N = 40
Y = np.repeat([0, 1], N // 2)
XS = [rng.normal(size=(N, 5)), rng.normal(size=(N, 6))]
XS[0][:, 0] += 2.0 * Y
X = np.hstack(XS)  # stacked: views_ind = [0, 5, 11]
VIEWS_IND = [0, 5, 11]

ESTIMATORS = {
    "ADMM": lambda: ADMMMultiviewFeatureSelector(n_features=2, max_iter=10),
    "RFS": lambda: RFSSelector(n_features=2, max_iter=10),
    "Fisher": lambda: FisherScoreSelector(n_features=2),
    "ANOVA": lambda: ANOVAFSelector(n_features=2),
    "ReliefF": lambda: ReliefFSelector(n_features=2),
    "AllFeatures": lambda: AllFeaturesSelector(),
    "LamSearchCV": lambda: LamSearchCV(RFSSelector(max_iter=5), lams=[0.1, 1.0], k=2, n_folds=2),
}
WORKS = "works"
NA = "not applicable"  # the estimator has no such parameter / method
TRANSFORMERS = [name for name in ESTIMATORS if name != "LamSearchCV"]


def stacked(name, **params):
    return ESTIMATORS[name]().set_params(views_ind=VIEWS_IND, **params)


def fitted(name):
    return stacked(name).fit(X, Y)


def with_nan(value):
    bad = X.copy()
    bad[3, 2] = value
    return bad


def bad_param(name):
    params = {"ADMM": {"rho": -1.0}, "RFS": {"tol": -1.0}, "LamSearchCV": {"n_folds": -1}}
    return params.get(name, {"n_features": -3})


def unknown_option(name):
    if name == "LamSearchCV":
        return {"lams": [1.0, -1.0]}  # a λ must be positive
    return {"ranking": "local"}


# case -> (call(name), default outcome, {estimator: outcome})
CASES = {
    "continuous y": (
        lambda n: stacked(n).fit(X, rng.normal(size=N)),
        (ValueError, "Unknown label type: continuous"),
        {},
    ),
    "y of the wrong length": (
        lambda n: stacked(n).fit(X, Y[:-1]),
        (ValueError, r"inconsistent numbers of samples: \[40, 39\]"),
        {},
    ),
    "y wrong length, list form": (
        lambda n: ESTIMATORS[n]().fit(XS, Y[:-1]),
        (ValueError, r"the views have 40 rows, y has 39 values"),
        {},
    ),
    "y=None": (
        lambda n: stacked(n).fit(X, None),
        (ValueError, "requires y to be passed, but the target y is None"),
        {},
    ),
    "single class": (
        lambda n: stacked(n).fit(X, np.zeros(N)),
        (ValueError, "at least 2 classes; got 1 class"),
        {},
    ),
    "a class of one sample": (
        lambda n: stacked(n).fit(X, np.r_[Y[:-1], 2]),
        (ValueError, r"class 2 \(1 sample\)"),
        {},
    ),
    "one sample": (
        lambda n: stacked(n).fit(X[:1], Y[:1]),
        (ValueError, "got 1 class"),
        {},
    ),
    "1-D X": (
        lambda n: stacked(n).fit(X[:, 0], Y),
        (ValueError, "Expected 2D array, got 1D array"),
        {},
    ),
    "NaN": (lambda n: stacked(n).fit(with_nan(np.nan), Y), (ValueError, "NaN"), {}),
    "NaN in a view, list form": (
        lambda n: ESTIMATORS[n]().fit([with_nan(np.nan)[:, :5], XS[1]], Y),
        (ValueError, "View 0.*NaN"),
        {},
    ),
    "inf": (lambda n: stacked(n).fit(with_nan(np.inf), Y), (ValueError, "infinity"), {}),
    "complex values": (
        lambda n: stacked(n).fit(X + 1j, Y),
        (ValueError, "Complex data not supported"),
        {},
    ),
    "string labels": (lambda n: stacked(n).fit(X, np.where(Y, "yes", "no")), WORKS, {}),
    "a view with fewer rows": (
        lambda n: ESTIMATORS[n]().fit([XS[0], XS[1][:-5]], Y),
        (ValueError, "same number of samples; got view 0: 40, view 1: 35"),
        {},
    ),
    "empty list of views": (
        lambda n: ESTIMATORS[n]().fit([], Y),
        (ValueError, "empty list: no views"),
        {},
    ),
    "a view with 0 columns": (
        lambda n: ESTIMATORS[n]().fit([XS[0], XS[1][:, :0]], Y),
        (ValueError, r"View 1: Found array with 0 feature\(s\)"),
        {},
    ),
    "views_ind not matching X": (
        lambda n: ESTIMATORS[n]().set_params(views_ind=[0, 5, 20]).fit(X, Y),
        (ValueError, "views_ind must be increasing view boundaries"),
        {},
    ),
    "more views than columns": (
        lambda n: ESTIMATORS[n]().set_params(views_ind=12).fit(X, Y),
        (ValueError, "too few to cut into views_ind=12 views"),
        {},
    ),
    "n_features larger than d": (
        lambda n: stacked(n, n_features=12).fit(X, Y),
        (ValueError, "n_features=12 is larger than the number of features"),
        {"LamSearchCV": NA},
    ),
    "sparse X": (
        lambda n: stacked(n).fit(sp.csr_matrix(X), Y),
        WORKS,
        {
            "ReliefF": (TypeError, "Sparse data was passed.*dense data is required"),
            "LamSearchCV": (TypeError, "Sparse data was passed.*dense data is required"),
        },
    ),
    "sparse views, list form": (
        lambda n: ESTIMATORS[n]().fit([sp.csc_matrix(V) for V in XS], Y),
        WORKS,
        {
            "ReliefF": (TypeError, "dense data is required"),
            "LamSearchCV": (TypeError, "dense data is required"),
        },
    ),
    "object array": (
        lambda n: stacked(n).fit(np.full(X.shape, "a", dtype=object), Y),
        (ValueError, "could not convert string to float"),
        {},
    ),
    "negative count or scale": (
        lambda n: stacked(n, **bad_param(n)).fit(X, Y),
        (ValueError, "parameter of .* must be"),
        {"ADMM": (ValueError, "rho must be positive; got -1.0")},
    ),
    "unknown option": (
        lambda n: stacked(n, **unknown_option(n)).fit(X, Y),
        (ValueError, "ranking='local' is not supported"),
        {"LamSearchCV": (ValueError, "positive finite")},
    ),
    "max_iter=-1": (
        lambda n: stacked(n, max_iter=-1).fit(X, Y),
        (ValueError, r"'max_iter' parameter of .* must be an int in the range \[1, inf\)"),
        {
            "ADMM": (ValueError, "max_iter must be a positive int; got -1"),
            **{name: NA for name in ("Fisher", "ANOVA", "ReliefF", "AllFeatures", "LamSearchCV")},
        },
    ),
}

# prediction-time cases: for the selectors' transform (LamSearchCV has none)
PREDICT_CASES = {
    "transform before fit": (
        lambda n: stacked(n).transform(X),
        (NotFittedError, "is not fitted yet"),
    ),
    "wrong number of views at transform": (
        lambda n: ESTIMATORS[n]().fit(XS, Y).transform(XS[:1]),
        (ValueError, "Xs has 1 views but 2 were expected"),
    ),
    "wrong number of features at transform": (
        lambda n: fitted(n).transform(X[:, :10]),
        (ValueError, "X has 10 features, but .* is expecting 11 features"),
    ),
    "wrong view width at transform, list form": (
        lambda n: ESTIMATORS[n]().fit(XS, Y).transform([XS[0], XS[1][:, :4]]),
        (ValueError, "View 1 has 4 features but 6 were seen in fit"),
    ),
    "NaN at transform": (
        lambda n: fitted(n).transform(with_nan(np.nan)),
        (ValueError, "NaN"),
    ),
    "sparse X at transform": (lambda n: fitted(n).transform(sp.csr_matrix(X)), WORKS),
}


def outcome(case, name):
    _, default, overrides = CASES[case]
    return overrides.get(name, default)


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("case", list(CASES) + list(PREDICT_CASES))
def test_bad_input_matrix(name, case):
    if case in PREDICT_CASES:
        if name not in TRANSFORMERS:
            pytest.skip("LamSearchCV has no transform")
        call, expected = PREDICT_CASES[case]
        if case == "sparse X at transform" and name == "ReliefF":
            expected = (TypeError, "dense data is required")
    else:
        call, expected = CASES[case][0], outcome(case, name)
    if expected == NA:
        pytest.skip(f"{name} has no parameter for {case!r}")
    if expected == WORKS:
        result = call(name)
        assert result is not None
        return
    exc, match = expected
    with pytest.raises(exc, match=match):
        call(name)


def test_string_labels_keep_their_classes():
    sel = FisherScoreSelector(n_features=1).fit(XS, np.where(Y, "yes", "no"))
    assert sel.classes_.tolist() == ["no", "yes"] and sel.ranking_[0] == 0


def test_sparse_fit_and_transform_agree_with_dense():
    dense = RFSSelector(n_features=3, max_iter=10, views_ind=VIEWS_IND).fit(X, Y)
    sparse = RFSSelector(n_features=3, max_iter=10, views_ind=VIEWS_IND).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-9)
    np.testing.assert_array_equal(sparse.transform(sp.csr_matrix(X)).toarray(), dense.transform(X))
