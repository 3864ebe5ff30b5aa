"""Bad input raises ValueError naming the problem."""

import numpy as np
import pytest
import scipy.sparse as sp

from multiview_lab.estimators import GBCClassifier, GBCRegressor

rng = np.random.default_rng(0)
Y = np.repeat([0, 1], 20)
X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
G = sp.csr_array(sp.random(40, 40, density=0.1, random_state=0))
G = (G + G.T).tocsr()


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


@pytest.mark.parametrize(
    "param,value,match",
    [
        ("step", "brent", r"step='brent' is not one of \('newton', 'line_search'\)"),
        ("coupling_loss", "hinge", "coupling_loss='hinge'"),
        ("consensus_on", "labeled", "consensus_on='labeled'"),
        ("gradient", "numeric", "gradient='numeric'"),
        ("update_order", "random", "update_order='random'"),
        ("weight_loss_reduction", "max", "weight_loss_reduction='max'"),
        ("lambda0", -1.0, "lambda0 must be a finite number >= 0"),
        ("subsample", 0.0, r"subsample must be in \(0, 1\]"),
        ("graph_c", "edges", "graph_c must be 'n_edges' or a positive number"),
        ("n_iter", 0, "n_iter must be a positive integer"),
    ],
)
def test_unknown_options(param, value, match):
    with pytest.raises(ValueError, match=match):
        fit(**{param: value})


def test_predict_checks_sources():
    clf = fit()
    with pytest.raises(ValueError, match="source 1 has 3 features but 2 were seen in fit"):
        clf.predict([X1, X1])
    with pytest.raises(ValueError, match="got 1 sources but 2 were seen in fit"):
        clf.predict([X1])
    with pytest.raises(ValueError, match="sources must be a non-empty list"):
        clf.predict(X1)
