"""Bad input for the four MIML estimators: every case either works (and the result is
checked) or raises an error whose message names the problem; none is accepted silently."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from multiview_lab.miml import MIMLRBF, MIMLSVM, MIMLGPClassifier, MIMLkNN

pytestmark = pytest.mark.filterwarnings("ignore:MIMLGPClassifier reached max_em")

N = 24


def _make(name, **kw):
    base = {
        "MIMLGPClassifier": dict(delta=1.0, max_em=3, n_mc=50, random_state=0),
        "MIMLSVM": dict(C_grid=(1.0,), gamma_grid=(1.0,), random_state=0),
        "MIMLRBF": dict(random_state=0),
        "MIMLkNN": dict(n_references=3, n_citers=5),
    }[name]
    cls = {"MIMLGPClassifier": MIMLGPClassifier, "MIMLSVM": MIMLSVM, "MIMLRBF": MIMLRBF,
           "MIMLkNN": MIMLkNN}[name]  # fmt: skip
    return cls(**{**base, **kw})


def _data(seed=0):
    """N bags of 1-4 instances x 2 features; Y (N, 2) with both labels present and absent;
    y = class labels 0/1."""
    rng = np.random.default_rng(seed)
    y = np.arange(N) % 2
    Y = np.column_stack([y, (np.arange(N) % 3 == 0).astype(int)])
    bags = [rng.normal(size=(rng.integers(1, 5), 2)) + 3 * y[i] for i in range(N)]
    return bags, Y, y


BAGS, Y, y = _data()


def _with(i, bag):
    bags = list(BAGS)
    bags[i] = bag
    return bags


def _fit(bags=None, target=None):
    return lambda est: est.fit(BAGS if bags is None else bags, Y if target is None else target)


def _predict(bags, *, target=None, method="predict"):
    def run(est):
        est.fit(BAGS, Y if target is None else target)
        return getattr(est, method)(bags)

    return run


def _string_labels(est):
    labels = np.where(y == 1, "cat", "dog")
    pred = est.fit(BAGS, labels).predict(BAGS)
    assert pred.shape == (N,) and set(pred) <= {"cat", "dog"}
    assert np.mean(pred == labels) > 0.8
    assert est.decision_function(BAGS).shape == (N,)


def _multiclass_labels(est):
    labels = np.array(["a", "b", "c"])[np.arange(N) % 3]
    pred = est.fit(BAGS, labels).predict(BAGS[:5])
    assert pred.shape == (5,) and set(pred) <= {"a", "b", "c"}
    assert est.decision_function(BAGS[:5]).shape == (5, 3)


def _object_array(est):
    X = np.array([b[0] for b in BAGS])
    a = est.fit(X.astype(object), y).predict(X)
    np.testing.assert_array_equal(a, est.fit(X, y).predict(X))


def _object_array_of_bags(est):
    bags = np.empty(N, dtype=object)
    bags[:] = BAGS
    np.testing.assert_array_equal(est.fit(bags, Y).predict(bags), est.fit(BAGS, Y).predict(BAGS))


def _one_column_label_matrix(est):
    pred = est.fit(BAGS, y[:, None]).predict(BAGS)
    assert pred.shape == (N, 1)


def _predict_before_fit(est):
    est.predict(BAGS)


def _invalid_hyperparameters(est):
    name = type(est).__name__
    for params, match in BAD_PARAMS[name]:
        with pytest.raises(ValueError, match=match):
            _make(name, **params).fit(BAGS, Y)
    raise ValueError("all invalid hyperparameters raised")  # the case's own expected error


BAD_PARAMS = {
    "MIMLGPClassifier": [
        ({"max_em": -1}, "max_em must be a positive integer"),
        ({"n_mc": 0}, "'n_mc' parameter"),
        ({"kernel": "poly"}, "'kernel' parameter"),
        ({"likelihood": "max"}, "likelihood='max' is not supported"),
        ({"threshold": 1.5}, "'threshold' parameter"),
        ({"max_memory_gb": -1.0}, "'max_memory_gb' parameter"),
    ],
    "MIMLSVM": [
        ({"ratio": -0.5}, "'ratio' parameter"),
        ({"cv": 1}, "'cv' parameter"),
        ({"kernel": "poly"}, "kernel='poly'"),
    ],
    "MIMLRBF": [({"mu": 0.0}, "'mu' parameter"), ({"alpha": 2.0}, "'alpha' parameter")],
    "MIMLkNN": [
        ({"n_references": -1}, "n_references must be an integer"),
        ({"n_citers": N}, "n_citers must be an integer"),
        ({"n_citers": 2.5}, "'n_citers' parameter"),
    ],
}

X2 = np.array([b[0] for b in BAGS])
complex_bag = BAGS[1].astype(complex)
complex_bag[0, 0] += 1j

#: case -> (action on a fresh estimator, None if it must work else (exception, message))
CASES = {
    "continuous y": (_fit(target=np.linspace(0, 1, N)), (ValueError, "Unknown label type")),
    "y of the wrong length": (_fit(target=y[:-1]), (ValueError, "23 rows but there are 24")),
    "Y of the wrong shape": (_fit(target=Y[:-2]), (ValueError, "22 rows but there are 24")),
    "Y with 3 dimensions": (_fit(target=Y[:, :, None]), (ValueError, r"\(n_bags, n_labels\)")),
    "y=None": (lambda e: e.fit(BAGS, None), (ValueError, "requires y to be passed")),
    "a single class": (_fit(target=np.ones(N, int)), (ValueError, "only one class")),
    "a label never positive": (
        _fit(target=np.column_stack([y, np.zeros(N, int)])),
        (ValueError, r"label column\(s\) \[1\] have no positive bag"),
    ),
    "a label positive in every bag": (
        _fit(target=np.column_stack([y, np.ones(N, int)])),
        (ValueError, r"\[1\] have no negative bag"),
    ),
    "Y values outside {0, 1}": (_fit(target=2 * Y), (ValueError, r"\{0, 1\} or \{-1, \+1\}")),
    "one sample": (lambda e: e.fit(BAGS[:1], y[:1]), (ValueError, "only one class")),
    "1-D X": (lambda e: e.fit(X2[:, 0], y), (ValueError, "Expected 2D array, got 1D array")),
    "NaN in a bag": (_fit(_with(2, np.array([[np.nan, 0.0]]))), (ValueError, "bag 2 contains NaN")),
    "inf in a bag": (
        _fit(_with(2, np.array([[np.inf, 0.0]]))),
        (ValueError, "bag 2 contains NaN or infinity"),
    ),
    "NaN in a 2-D X": (
        lambda e: e.fit(np.where(X2 > 2, np.nan, X2), y),
        (ValueError, "Input X contains NaN"),
    ),
    "complex values in a bag": (
        _fit(_with(1, complex_bag)),
        (ValueError, "Complex data not supported: bag 1"),
    ),
    "complex 2-D X": (lambda e: e.fit(X2 + 1j, y), (ValueError, "Complex data not supported")),
    "string labels": (_string_labels, None),
    "multiclass string labels": (_multiclass_labels, None),
    "a one-column label matrix": (_one_column_label_matrix, None),
    "bags with different numbers of features": (
        _fit(_with(3, np.ones((2, 3)))),
        (ValueError, "bag 3 has 3 features but bag 0 has 2"),
    ),
    "an empty bag": (_fit(_with(4, np.ones((0, 2)))), (ValueError, "bag 4 is empty")),
    "no bags": (lambda e: e.fit([], []), (ValueError, "bags is empty")),
    "a bag with 0 features": (_fit([np.ones((2, 0))] * N), (ValueError, "bag 0 has 0 features")),
    "a 2-D X with 0 columns": (
        lambda e: e.fit(np.ones((N, 0)), y),
        (ValueError, r"0 feature\(s\)"),
    ),
    "a 1-D bag": (_fit(_with(5, np.ones(2))), (ValueError, "bag 5 must be a 2-D")),
    "wrong number of features at predict (bags)": (
        _predict([np.ones((2, 3))]),
        (ValueError, "3 features but 2 were seen in fit"),
    ),
    "wrong number of features at predict (2-D X)": (
        _predict(np.ones((3, 3)), method="decision_function"),
        (ValueError, "X has 3 features, but .* is expecting 2 features"),
    ),
    "predict before fit": (_predict_before_fit, (NotFittedError, "not fitted yet")),
    "sparse 2-D X": (
        lambda e: e.fit(sp.csr_matrix(X2), y),
        (TypeError, "Sparse input is not supported"),
    ),
    "a sparse bag": (
        _fit(_with(0, sp.csr_matrix(BAGS[0]))),
        (TypeError, "bag 0 is a sparse matrix. Sparse input is not supported"),
    ),
    "a 2-D object array": (_object_array, None),
    "an object array of bags": (_object_array_of_bags, None),
    "an object array with a dict": (
        lambda e: e.fit(np.array([[{"a": 1}, 0.0]] * N, dtype=object), y),
        (TypeError, "argument must be a string or a real number"),
    ),
    "a bag of strings": (
        _fit(_with(6, np.array([["a", "b"]]))),
        (ValueError, "bag 6 could not be converted to a float array"),
    ),
    "invalid hyperparameters": (
        _invalid_hyperparameters,
        (ValueError, "all invalid hyperparameters raised"),
    ),
}

NAMES = ["MIMLGPClassifier", "MIMLSVM", "MIMLRBF", "MIMLkNN"]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_bad_input(name, case):
    action, expected = CASES[case]
    est = _make(name)
    if expected is None:
        action(est)
        return
    exc, match = expected
    with pytest.raises(exc, match=match):
        action(est)
