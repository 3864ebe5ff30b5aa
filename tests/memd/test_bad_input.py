"""Bad input to MeMd and its baselines: every case works or raises an error naming the problem.

One parametrised test, estimator × case. A case is a call on a fresh estimator and either
``WORKS`` or ``(exception type, regex of the message)``; per-estimator outcomes override the
default. They are single-view estimators: a list of views must be refused clearly (NumPy would
say "inhomogeneous shape").
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from multiview_lab.memd import (
    DMEBaseline,
    LinearSVMBaseline,
    MeMdClassifier,
    MeMdSelector,
    SelectKNaiveBayes,
)

rng = np.random.default_rng(0)
N, D = 40, 8
Y = np.repeat([0, 1], N // 2)
X = np.abs(rng.normal(size=(N, D)))  # non-negative: every family and chi2 take it
X[:, 0] += 2.0 * Y

ESTIMATORS = {
    "MeMdClassifier": lambda: MeMdClassifier(k_grid=[1, 2]),
    "MeMdSelector": lambda: MeMdSelector(k=2),
    "LinearSVM": lambda: LinearSVMBaseline(),
    "DME": lambda: DMEBaseline(),
    "SelectKNB": lambda: SelectKNaiveBayes("f_classif", model="gaussian", k=2),
}
WORKS = "works"
DENSE_ONLY = (TypeError, "Sparse data was passed for .*, but dense data is required")


def fitted(name):
    return ESTIMATORS[name]().fit(X, Y)


def predict(est, X_new):
    return est.transform(X_new) if isinstance(est, MeMdSelector) else est.predict(X_new)


def with_value(value):
    bad = X.copy()
    bad[3, 2] = value
    return bad


TEXT_SETTINGS = {
    "MeMdClassifier": lambda: MeMdClassifier(family="exponential", k_grid=[1, 2]),
    "MeMdSelector": lambda: MeMdSelector(family="exponential", k=2),
    "LinearSVM": lambda: LinearSVMBaseline(data="text"),
    "DME": lambda: DMEBaseline(data="text"),
    "SelectKNB": lambda: SelectKNaiveBayes("chi2", k=2),
}

BAD_PARAM = {
    "MeMdClassifier": ({"k": -1}, "k=-1 is out of range"),
    "MeMdSelector": ({"inner_folds": -2}, "inner_folds must be an integer >= 2"),
    "LinearSVM": ({"liblinear": "yes"}, "'liblinear' parameter of LinearSVMBaseline must be"),
    "DME": ({"random_state": -5}, "'random_state' parameter of DMEBaseline must be"),
    "SelectKNB": ({"k": -2}, "'k' parameter of SelectKNaiveBayes must be"),
}
UNKNOWN_OPTION = {
    "MeMdClassifier": ({"criterion": "KL"}, "criterion must be one of"),
    "MeMdSelector": ({"family": "poisson"}, "family must be one of"),
    "LinearSVM": ({"protocol": "tuned"}, "protocol must be one of"),
    "DME": ({"data": "image"}, "data must be one of"),
    "SelectKNB": ({"score_func": "anova"}, "score_func must be one of"),
}

# case -> (call(name), default outcome, {estimator: outcome})
CASES = {
    "continuous y": (
        lambda n: ESTIMATORS[n]().fit(X, rng.normal(size=N)),
        (ValueError, "Unknown label type: continuous"),
        {},
    ),
    "y of the wrong length": (
        lambda n: ESTIMATORS[n]().fit(X, Y[:-1]),
        (ValueError, r"inconsistent numbers of samples: \[40, 39\]"),
        {},
    ),
    "y=None": (
        lambda n: ESTIMATORS[n]().fit(X, None),
        (ValueError, "requires y to be passed, but the target y is None"),
        {},
    ),
    "single class": (
        lambda n: ESTIMATORS[n]().fit(X, np.zeros(N)),
        (ValueError, r"y has only one class \(0.0\)"),
        {},
    ),
    "one sample": (
        lambda n: ESTIMATORS[n]().fit(X[:1], Y[:1]),
        (ValueError, "only one class"),
        {},
    ),
    "1-D X": (
        lambda n: ESTIMATORS[n]().fit(X[:, 0], Y),
        (ValueError, "Expected 2D array, got 1D array"),
        {},
    ),
    "NaN": (lambda n: ESTIMATORS[n]().fit(with_value(np.nan), Y), (ValueError, "NaN"), {}),
    "inf": (lambda n: ESTIMATORS[n]().fit(with_value(np.inf), Y), (ValueError, "infinity"), {}),
    "complex values": (
        lambda n: ESTIMATORS[n]().fit(X + 1j, Y),
        (ValueError, "Complex data not supported"),
        {},
    ),
    "string labels": (lambda n: ESTIMATORS[n]().fit(X, np.where(Y, "yes", "no")), WORKS, {}),
    "a list of views": (
        lambda n: ESTIMATORS[n]().fit([X[:, :3], X[:, 3:]], Y),
        (ValueError, "single-view estimator: X must be one 2-D array .* list of 2 views"),
        {},
    ),
    "a list of views with fewer rows": (
        lambda n: ESTIMATORS[n]().fit([X[:, :3], X[:-5, 3:]], Y),
        (ValueError, "single-view estimator.*list of 2 views"),
        {},
    ),
    "empty list": (
        lambda n: ESTIMATORS[n]().fit([], Y),
        (ValueError, "got an empty list as X"),
        {},
    ),
    "0 columns": (
        lambda n: ESTIMATORS[n]().fit(X[:, :0], Y),
        (ValueError, r"Found array with 0 feature\(s\)"),
        {},
    ),
    "sparse X": (
        lambda n: ESTIMATORS[n]().fit(sp.csr_matrix(X), Y),
        WORKS,
        {"LinearSVM": DENSE_ONLY, "DME": DENSE_ONLY, "SelectKNB": DENSE_ONLY},
    ),
    "sparse X, text settings": (
        lambda n: TEXT_SETTINGS[n]().fit(sp.csc_matrix(X), Y),
        WORKS,
        {},
    ),
    "object array": (
        lambda n: ESTIMATORS[n]().fit(np.full(X.shape, "a", dtype=object), Y),
        (ValueError, "could not convert string to float"),
        {},
    ),
    "negative count / bad value": (
        lambda n: ESTIMATORS[n]().set_params(**BAD_PARAM[n][0]).fit(X, Y),
        None,
        {n: (ValueError, BAD_PARAM[n][1]) for n in BAD_PARAM},
    ),
    "unknown option": (
        lambda n: ESTIMATORS[n]().set_params(**UNKNOWN_OPTION[n][0]).fit(X, Y),
        None,
        {n: (ValueError, UNKNOWN_OPTION[n][1]) for n in UNKNOWN_OPTION},
    ),
    "k larger than the features": (
        lambda n: ESTIMATORS[n]().set_params(k=D + 1).fit(X, Y),
        (ValueError, "k=9 is out of range"),
        {
            "LinearSVM": "no k",
            "DME": "no k",
            # scikit-learn's SelectKBest keeps every feature, and says so
            "SelectKNB": (UserWarning, "k=9 is greater than n_features=8"),
        },
    ),
    # prediction time
    "predict before fit": (
        lambda n: predict(ESTIMATORS[n](), X),
        (NotFittedError, "is not fitted yet"),
        {},
    ),
    "a list of views at predict": (
        lambda n: predict(fitted(n), [X[:, :3], X[:, 3:]]),
        (ValueError, "single-view estimator.*list of 2 views"),
        {},
    ),
    "wrong number of features at predict": (
        lambda n: predict(fitted(n), X[:, :5]),
        (ValueError, "X has 5 features, but .* is expecting 8 features"),
        {},
    ),
    "NaN at predict": (lambda n: predict(fitted(n), with_value(np.nan)), (ValueError, "NaN"), {}),
    "sparse X at predict": (
        lambda n: predict(fitted(n), sp.csr_matrix(X)),
        WORKS,
        {"LinearSVM": DENSE_ONLY, "DME": DENSE_ONLY, "SelectKNB": DENSE_ONLY},
    ),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_matrix(name, case):
    call, default, overrides = CASES[case]
    expected = overrides.get(name, default)
    if expected == "no k":
        pytest.skip(f"{name} has no parameter k")
    if expected == WORKS:
        assert call(name) is not None
        return
    exc, match = expected
    if issubclass(exc, Warning):
        with pytest.warns(exc, match=match):
            assert call(name) is not None
        return
    with pytest.raises(exc, match=match):
        call(name)


def test_string_labels_are_predicted_as_strings():
    y = np.where(Y, "yes", "no")
    for name in ("MeMdClassifier", "LinearSVM", "DME", "SelectKNB"):
        assert set(ESTIMATORS[name]().fit(X, y).predict(X)) <= {"yes", "no"}
