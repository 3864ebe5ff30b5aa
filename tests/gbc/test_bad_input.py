"""Bad input: every case either works or raises an error naming the problem.

The matrix (estimator × case) covers both input forms: ``fit(X, y)`` (a list of views or a
stacked X; -1 / NaN marking unlabelled rows) and the source form ``fit(sources, graphs, y,
labeled_mask)``. The tests after it keep the source form's detailed checks (graphs, instance
ids, masks).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from multiview_lab.estimators import GBCClassifier, GBCRegressor, JoinedFeaturesClassifier

rng = np.random.default_rng(0)
Y = np.repeat([0, 1], 20)
X1, X2 = rng.normal(size=(40, 3)) + Y[:, None], rng.normal(size=(40, 2))
X = np.hstack([X1, X2])
VIEWS_IND = [0, 3, 5]
G = sp.csr_array(sp.random(40, 40, density=0.1, random_state=0))
G = (G + G.T).tocsr()

ESTIMATORS = {
    "GBCClassifier": lambda **kw: GBCClassifier(n_iter=2, random_state=0, **kw),
    "GBCRegressor": lambda **kw: GBCRegressor(n_iter=2, random_state=0, **kw),
    "JoinedFeaturesClassifier": lambda **kw: JoinedFeaturesClassifier(
        param_grid={"svc__C": [1.0], "svc__gamma": ["scale"]}, random_state=0, **kw
    ),
}
CLASSIFIERS = ("GBCClassifier", "JoinedFeaturesClassifier")
SUPPORTED = "works"


def _fitted(make):
    return make(views_ind=VIEWS_IND).fit(X, Y)


def _with(X, row, col, value):
    X = X.astype(np.result_type(X, type(value)))
    X[row, col] = value
    return X


def _partial_nan():
    X_nan = X.copy()
    X_nan[:5, 3:] = np.nan  # rows 0-4 miss view 1
    return X_nan


# case -> (function of the estimator factory, {estimator: outcome} or outcome for every one);
# an outcome is SUPPORTED or (exception type, message pattern).
CASES = {
    "continuous y": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, rng.normal(size=40)),
        {
            **dict.fromkeys(CLASSIFIERS, (ValueError, "Unknown label type: continuous")),
            "GBCRegressor": SUPPORTED,
        },
    ),
    "y of the wrong length": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, Y[:30]),
        (ValueError, r"inconsistent numbers of samples: \[40, 30\]"),
    ),
    "y of the wrong length, source form": (
        lambda make: make().fit([X1, X2], None, Y[:30]),
        (ValueError, "source 0 has 40 rows but there are 30 instances"),
    ),
    "y=None": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, None),
        (ValueError, "requires y to be passed, but the target y is None"),
    ),
    "y=None, source form": (
        lambda make: make().fit([X1, X2], None, None),
        (ValueError, "requires y to be passed, but the target y is None"),
    ),
    "2-D y": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, np.column_stack([Y, Y])),
        (ValueError, r"y should be a 1d array, got an array of shape \(40, 2\)"),
    ),
    "a single class": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, np.zeros(40)),
        {
            **dict.fromkeys(CLASSIFIERS, (ValueError, "at least 2 classes; got 1")),
            "GBCRegressor": SUPPORTED,
        },
    ),
    "every row marked -1": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, np.full(40, -1)),
        {
            **dict.fromkeys(CLASSIFIERS, (ValueError, "no labelled instance")),
            "GBCRegressor": SUPPORTED,  # -1 is a target value; NaN marks unlabelled rows
        },
    ),
    "every row NaN in y": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, np.full(40, np.nan)),
        {
            **dict.fromkeys(CLASSIFIERS, (ValueError, "y contains NaN or infinity at labelled")),
            "GBCRegressor": (ValueError, "no labelled instance"),
        },
    ),
    "one sample": (
        lambda make: make(views_ind=VIEWS_IND).fit(X[:1], Y[:1]),
        {
            **dict.fromkeys(CLASSIFIERS, (ValueError, r"1 sample\(s\).*minimum of 2")),
            "GBCRegressor": SUPPORTED,  # the mean of one target
        },
    ),
    "1-D X": (
        lambda make: make().fit(X[:, 0], Y),
        (ValueError, "Expected 2D array, got 1D array"),
    ),
    "NaN in X": (
        lambda make: make(views_ind=VIEWS_IND).fit(_with(X, 3, 1, np.nan), Y),
        (ValueError, "Input X contains NaN"),
    ),
    "NaN in a view": (
        lambda make: make().fit([X1, _with(X2, 3, 1, np.nan)], Y),
        (ValueError, "View 1: Input view 1 contains NaN"),
    ),
    "inf in X": (
        lambda make: make(views_ind=VIEWS_IND).fit(_with(X, 3, 1, np.inf), Y),
        (ValueError, "Input X contains infinity"),
    ),
    "complex X": (
        lambda make: make(views_ind=VIEWS_IND).fit(_with(X, 3, 1, 1j), Y),
        (ValueError, "Complex data not supported"),
    ),
    "complex y": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, Y + 1j),
        (ValueError, "Complex data not supported"),
    ),
    "string labels": (
        lambda make: make(views_ind=VIEWS_IND).fit(X, np.array(["no", "yes"])[Y]),
        {
            **dict.fromkeys(CLASSIFIERS, SUPPORTED),
            "GBCRegressor": (ValueError, "y must be numeric for GBCRegressor"),
        },
    ),
    "a view with fewer rows": (
        lambda make: make().fit([X1, X2[:35]], Y),
        (ValueError, "All views must have the same number of samples; got view 0: 40, view 1: 35"),
    ),
    "a source with fewer rows, source form (not taken as partial)": (
        lambda make: make().fit([X1, X2[:35]], None, Y),
        (ValueError, "source 1 has 35 rows but there are 40 instances.*pair"),
    ),
    "zero views": (
        lambda make: make().fit([], Y),
        (ValueError, "X is an empty list: no source"),
    ),
    "a view with 0 columns": (
        lambda make: make().fit([X1, X2[:, :0]], Y),
        (ValueError, r"View 1: Found array with 0 feature\(s\)"),
    ),
    "0 columns, stacked": (
        lambda make: make().fit(X[:, :0], Y),
        (ValueError, r"Found array with 0 feature\(s\)"),
    ),
    "3 views at predict after fitting 2": (
        lambda make: make().fit([X1, X2], Y).predict([X1, X2, X2]),
        (ValueError, "Xs has 3 views but 2 were expected"),
    ),
    "3 sources at predict after fitting 2, source form": (
        lambda make: make().fit([X1, X2], None, Y).predict([X1, X2, (X2, np.arange(40))]),
        (ValueError, "got 3 sources but 2 were seen in fit"),
    ),
    "wrong number of features at predict": (
        lambda make: _fitted(make).predict(X[:, :4]),
        (ValueError, "X has 4 features, but .* is expecting 5 features"),
    ),
    "wrong view width at predict": (
        lambda make: make().fit([X1, X2], Y).predict([X1, X1]),
        (ValueError, "View 1 has 3 features but 2 were seen in fit"),
    ),
    "predict before fit": (
        lambda make: make(views_ind=VIEWS_IND).predict(X),
        (NotFittedError, "is not fitted yet"),
    ),
    "sparse X": (
        lambda make: make(views_ind=VIEWS_IND).fit(sp.csr_array(X), Y),
        (TypeError, "Sparse data was passed.*dense data is required"),
    ),
    "sparse source, source form": (
        lambda make: make().fit([X1, sp.csr_array(X2)], None, Y),
        (TypeError, "source 1: sparse feature matrices are not supported"),
    ),
    "object array of numbers": (
        lambda make: make(views_ind=VIEWS_IND).fit(X.astype(object), Y),
        SUPPORTED,
    ),
    "object array of strings": (
        lambda make: make(views_ind=VIEWS_IND).fit(np.full((40, 5), "a", dtype=object), Y),
        (ValueError, "could not convert string to float"),
    ),
    "views_ind beyond the columns": (
        lambda make: make(views_ind=[0, 3, 6]).fit(X, Y),
        (ValueError, r"views_ind must be increasing view boundaries \[0, ..., n_features\]"),
    ),
    "graph over other rows (the graphs parameter)": (
        lambda make: make(graphs=[G[:30][:, :30]]).fit([X1, X2], Y),
        (ValueError, r"graph 0 has shape \(30, 30\) but X has 40 rows"),
    ),
    "graphs given twice": (
        lambda make: make(graphs=[G]).fit([X1, X2], [G], Y),
        (ValueError, "graphs given twice"),
    ),
    "pairs in fit(X, y)": (
        lambda make: make().fit([X1, (X2[:10], np.arange(10))], Y),
        (ValueError, r"pairs take the source form fit\(sources, graphs, y"),
    ),
    "partial sources as NaN rows": (
        lambda make: make(views_ind=VIEWS_IND, partial_sources=True).fit(_partial_nan(), Y),
        SUPPORTED,
    ),
    "NaN rows without partial_sources": (
        lambda make: make(views_ind=VIEWS_IND).fit(_partial_nan(), Y),
        (ValueError, "Input X contains NaN"),
    ),
    "a row NaN in part of a source": (
        lambda make: make(views_ind=VIEWS_IND, partial_sources=True).fit(_with(X, 7, 3, np.nan), Y),
        (ValueError, "source 1: row 7 has NaN in some but not all of its columns"),
    ),
    "an instance missing from every source": (
        lambda make: make(views_ind=VIEWS_IND, partial_sources=True).fit(
            _with(X, 7, slice(None), np.nan), Y
        ),
        (ValueError, r"1 instance\(s\) are held by no source \(first: \[7\]\)"),
    ),
    "too many positional arguments": (
        lambda make: make().fit([X1, X2], None, Y, np.ones(40, bool), "extra"),
        (TypeError, "got 5 positional arguments"),
    ),
}

HYPERPARAMETERS = {
    "GBCClassifier": [
        ("n_iter_no_change", -1, "'n_iter_no_change' parameter of GBCClassifier must be an int"),
        ("max_depth", 0, "'max_depth' parameter"),
        ("step", "brent", "'step' parameter of GBCClassifier must be a str among"),
        (
            "lambda0",
            np.inf,
            r"'lambda0' parameter of GBCClassifier must be a float in the range \[0.0, inf\)",
        ),
        ("views_ind", 0, "'views_ind' parameter"),
        ("graphs", G, "'graphs' parameter of GBCClassifier must be None, an instance of 'list'"),
    ],
    "GBCRegressor": [
        ("min_samples_leaf", 0, "'min_samples_leaf' parameter of GBCRegressor"),
        (
            "max_bins",
            300,
            r"'max_bins' parameter of GBCRegressor must be an int in the range \[2, 256\]",
        ),
        ("validation_fraction", 1.0, "'validation_fraction' parameter"),
        ("partial_sources", "yes", "'partial_sources' parameter"),
    ],
    "JoinedFeaturesClassifier": [
        ("kind", "lasso", "kind='lasso' is not one of"),
        ("cv", 1, "'cv' parameter of JoinedFeaturesClassifier must be an int in the range"),
        ("threshold", 1.5, "'threshold' parameter"),
        ("max_iter", -1, "'max_iter' parameter"),
    ],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_bad_input_matrix(name, case):
    run, outcomes = CASES[case]
    outcome = outcomes.get(name, SUPPORTED) if isinstance(outcomes, dict) else outcomes
    make = ESTIMATORS[name]
    if outcome == SUPPORTED:
        model = run(make)
        assert hasattr(model, "n_features_in_")
        return
    exc, match = outcome
    with pytest.raises(exc, match=match):
        run(make)


@pytest.mark.parametrize(
    "name,param,value,match", [(n, *c) for n, cases in HYPERPARAMETERS.items() for c in cases]
)
def test_invalid_hyperparameters(name, param, value, match):
    with pytest.raises(ValueError, match=match):
        ESTIMATORS[name](**{param: value}).fit([X1, X2], Y)


def test_string_labels_and_minus_one_marks():
    y = np.array(["no", "yes"])[Y].astype(object)
    y[::4] = -1  # unlabelled rows among string labels (object dtype, as SelfTrainingClassifier)
    clf = GBCClassifier(n_iter=5, random_state=0).fit([X1, X2], y)
    assert clf.classes_.tolist() == ["no", "yes"]
    assert set(clf.predict([X1, X2])) <= {"no", "yes"}
    # With labeled_mask, -1 is a class like any other.
    pm = np.where(Y == 1, 1, -1)
    clf = GBCClassifier(n_iter=5, random_state=0).fit([X1, X2], pm, labeled_mask=np.ones(40, bool))
    assert clf.classes_.tolist() == [-1, 1]


# ----------------------------------------------------------------------- the source form
def fit(sources=(X1, X2), graphs=None, y=Y, mask=None, **kw):
    params = {"n_iter": 2, "early_stopping": False, **kw}
    return GBCClassifier(**params).fit(list(sources), graphs, y, mask)


def test_graph_wrong_shape():
    with pytest.raises(ValueError, match=r"graph 0 has shape \(39, 39\); expected \(40, 40\)"):
        fit(graphs=[G[:39][:, :39]])


def test_graph_not_symmetric_or_not_a_list():
    A = sp.csr_array(([1.0], ([0], [1])), shape=(40, 40))
    with pytest.raises(ValueError, match="graph 0 is not symmetric"):
        fit(graphs=[A])
    with pytest.raises(ValueError, match="list of adjacency"):
        fit(graphs=G)


def test_graph_nan_or_negative():
    bad = G.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="graph 0 contains NaN"):
        fit(graphs=[bad])
    neg = G.copy()
    neg.data[:] = -1.0
    with pytest.raises(ValueError, match="negative"):
        fit(graphs=[neg])


def test_instance_ids_out_of_range_duplicated_or_mismatched():
    with pytest.raises(ValueError, match=r"source 1: instance ids must lie in \[0, 40\)"):
        fit(sources=[X1, (X2[:10], np.arange(35, 45))])
    with pytest.raises(ValueError, match="source 1: instance_ids contain duplicates"):
        fit(sources=[X1, (X2[:3], np.array([1, 1, 2]))])
    with pytest.raises(
        ValueError, match=r"source 1: instance_ids must be 1-D with one id per row \(10\)"
    ):
        fit(sources=[X1, (X2[:10], np.arange(9))])
    with pytest.raises(ValueError, match="source 0: instance_ids must be integers"):
        fit(sources=[(X1, np.arange(40.0)), X2])
    with pytest.raises(ValueError, match="held by no source"):
        fit(sources=[(X1[:30], np.arange(30)), (X2[:30], np.arange(30))])


def test_source_without_labelled_instance():
    with pytest.raises(ValueError, match="source 1 holds no labelled instance"):
        fit(sources=[X1, (X2[:15], np.arange(25, 40))], mask=np.arange(40) < 20)


def test_nan_in_features_or_labels():
    bad = X1.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="source 0: .*NaN"):
        fit(sources=[bad, X2])
    y = np.where(np.arange(40) < 30, np.arange(40) % 2 * 1.0, np.nan)
    with pytest.raises(ValueError, match="y contains NaN or infinity at labelled"):
        GBCRegressor(n_iter=2, early_stopping=False).fit([X1], None, y, np.ones(40, bool))
    with pytest.raises(ValueError, match="no labelled instance"):
        GBCRegressor(n_iter=2, early_stopping=False).fit([X1], None, np.full(40, np.nan))


def test_bad_labels_and_mask():
    with pytest.raises(ValueError, match="at least 2 classes"):
        fit(y=np.zeros(40))
    with pytest.raises(ValueError, match="labeled_mask must be a boolean array of shape"):
        fit(mask=np.ones(40))
    with pytest.raises(ValueError, match="y must be 1-D"):
        fit(y=Y[:, None])
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        fit(y=rng.normal(size=40))


@pytest.mark.parametrize(
    "param,value,match",
    [
        ("step", "brent", r"'step' parameter of GBCClassifier must be a str among"),
        ("coupling_loss", "hinge", "'coupling_loss' parameter"),
        ("consensus_on", "labeled", "'consensus_on' parameter"),
        ("gradient", "numeric", "'gradient' parameter"),
        ("update_order", "random", "'update_order' parameter"),
        ("weight_loss_reduction", "max", "'weight_loss_reduction' parameter"),
        ("lambda0", -1.0, r"'lambda0' parameter of GBCClassifier must be a float in the range"),
        ("subsample", 0.0, r"'subsample' parameter of GBCClassifier must be a float in the range"),
        ("graph_c", "edges", "'graph_c' parameter"),
        (
            "n_iter",
            0,
            r"'n_iter' parameter of GBCClassifier must be an int in the range \[1, inf\)",
        ),
    ],
)
def test_unknown_options(param, value, match):
    with pytest.raises(ValueError, match=match):
        fit(**{param: value})


def test_predict_checks_sources():
    clf = fit()
    with pytest.raises(ValueError, match="View 1 has 3 features but 2 were seen in fit"):
        clf.predict([X1, X1])
    with pytest.raises(ValueError, match="Xs has 1 views but 2 were expected"):
        clf.predict([X1])
    with pytest.raises(ValueError, match="X has 3 features, but GBCClassifier is expecting 5"):
        clf.predict(X1)
    with pytest.raises(ValueError, match="source 1 has 3 features but 2 were seen in fit"):
        clf.predict([X1, (X1, np.arange(40))])
    with pytest.raises(ValueError, match="All views must have the same number of samples"):
        clf.predict([X1, X2[:35]])
