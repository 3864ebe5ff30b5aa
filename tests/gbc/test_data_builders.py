"""Loaders, graph builders, settings and baselines (GBC spec test 16)."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import pdist, squareform

from multiview_lab.data.mfeat import load_mfeat
from multiview_lab.data.terrorist import load_terrorist, load_terrorist_graphs
from multiview_lab.estimators import GBCClassifier, JoinedFeaturesClassifier
from multiview_lab.gbc.baselines import joined_features
from multiview_lab.gbc.graphs import (
    edges_to_adjacency,
    knn_similarity_graph,
    n_undirected_edges,
    neighbour_average_operator,
    same_label_edge_fraction,
)
from multiview_lab.gbc.settings import (
    absent_entries,
    build_sources,
    make_instance_sets,
    noisy_copy,
)

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"


@pytest.fixture(scope="module")
def mfeat():
    return load_mfeat(RAW / "mfeat")


@pytest.fixture(scope="module")
def terrorist():
    return load_terrorist(RAW / "terrorist_attack")


def test_mfeat_loader(mfeat):
    views, y = mfeat
    assert {v: X.shape[1] for v, X in views.items()} == {
        "fou": 76,
        "fac": 216,
        "kar": 64,
        "pix": 240,
        "zer": 47,
        "mor": 6,
    }
    assert all(X.shape[0] == 2000 for X in views.values())
    np.testing.assert_array_equal(y, np.repeat(np.arange(10), 200))


def test_mfeat_graphs(mfeat):
    views, y = mfeat
    k = 10
    for noise in (0.0, 0.2):
        G = knn_similarity_graph(views["mor"], k=k, noise=noise, random_state=0)
        assert (G != G.T).nnz == 0
        assert G.diagonal().sum() == 0
        assert np.asarray(G.sum(axis=1)).min() >= k
    clean = same_label_edge_fraction(knn_similarity_graph(views["mor"], k=k), y)
    noisy = same_label_edge_fraction(
        knn_similarity_graph(views["mor"], k=k, noise=0.2, random_state=0), y
    )
    assert 0.62 < clean < 0.72  # spec §5.2: the clean mor graph links same-label digits on 67 %
    assert 0.45 < noisy < 0.55  # σ_n ≈ 0.2 gives ≈ 0.5 (calibrate_graph_noise)


def _nearest_by_index_order(X, k):
    """Each row's k nearest others on standardised features, ties to the lower index."""
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    n = len(Z)
    D = squareform(pdist(Z, "sqeuclidean"))
    np.fill_diagonal(D, np.inf)
    index = np.broadcast_to(np.arange(n), D.shape)
    nearest = np.lexsort((index, D), axis=1)[:, :k]  # by distance, then by index
    A = np.zeros((n, n), dtype=bool)
    A[np.repeat(np.arange(n), k), nearest.ravel()] = True
    return A | A.T


def test_knn_graph_breaks_ties_at_the_kth_neighbour_by_the_lower_index():
    # integer features on a 3 x 3 grid: many instances tie at their 3rd neighbour, where a
    # selection (np.argpartition) picks among the tied ones by its SIMD path, i.e. by the CPU
    X = np.random.default_rng(0).integers(0, 3, (20, 2)).astype(float)
    G = knn_similarity_graph(X, k=3)
    np.testing.assert_array_equal(G.toarray() != 0, _nearest_by_index_order(X, 3))


def test_mfeat_graph_is_a_function_of_the_features(mfeat):
    views, _ = mfeat
    X = np.asarray(views["mor"], dtype=np.float64)
    assert len(np.unique(X, axis=0)) < len(X)  # duplicated digits: ties are real here
    G = knn_similarity_graph(X, k=10)
    np.testing.assert_array_equal(G.toarray() != 0, _nearest_by_index_order(X, 10))


def test_terrorist_loader_and_graphs(terrorist):
    X, y, classes, edges, node_ids = terrorist
    assert X.shape == (1293, 106) and set(np.unique(X)) == {0.0, 1.0}
    counts = dict(zip(classes, np.bincount(y), strict=True))
    assert counts == {
        "Arson": 31,
        "Bombing": 562,
        "Kidnapping": 179,
        "NBCR_Attack": 8,
        "other_attack": 15,
        "Weapon_Attack": 498,
    }
    G_loc = edges_to_adjacency(edges["loc"], 1293)
    G_org = edges_to_adjacency(edges["loc_org"], 1293)
    assert n_undirected_edges(G_loc) == 3172 and n_undirected_edges(G_org) == 571
    assert (G_loc != G_loc.T).nnz == 0
    graphs = load_terrorist_graphs(RAW / "terrorist_attack")
    assert (graphs["loc"] != G_loc).nnz == 0 and (graphs["loc_org"] != G_org).nnz == 0


def test_neighbour_average_operator_rows_sum_to_one_or_zero():
    G1 = edges_to_adjacency(np.array([[0, 1], [1, 2]]), 5)
    G2 = edges_to_adjacency(np.array([[0, 3]]), 5)
    A, has = neighbour_average_operator([G1, G2], np.array([0.25, 0.75]))
    np.testing.assert_allclose(A.sum(axis=1), [1, 1, 1, 1, 0])
    np.testing.assert_array_equal(has, [True, True, True, True, False])
    # Node 0: graph 1 neighbour {1} (w 0.25), graph 2 neighbour {3} (w 0.75).
    np.testing.assert_allclose(A.toarray()[0], [0, 0.25, 0, 0.75, 0])
    # Node 1 only in graph 1: ŵ renormalised to 1, split over {0, 2}.
    np.testing.assert_allclose(A.toarray()[1], [0.5, 0, 0.5, 0, 0])
    assert sp.issparse(A)


@pytest.mark.parametrize("mode", ["per_instance", "fixed_half"])
def test_non_overlapping_generator(mode):
    n, p = 1000, 5
    ids = make_instance_sets(n, p, "non_overlapping", missing_mode=mode, random_state=0)
    present = np.zeros((n, p), bool)
    for i, s in enumerate(ids):
        present[s, i] = True
    missing = (~present).sum(axis=1)
    assert np.sum(missing > 0) == 300  # exactly 30 % of the instances
    assert set(np.unique(missing)) == {0, p // 2}  # each from ⌊p/2⌋ sources
    if mode == "fixed_half":
        assert len({tuple(r) for r in present[missing > 0]}) == 1
    again = make_instance_sets(n, p, "non_overlapping", missing_mode=mode, random_state=0)
    assert all(np.array_equal(a, b) for a, b in zip(ids, again, strict=True))
    assert all(s.shape[0] == n for s in make_instance_sets(n, p, "uniform"))


def test_baselines_on_non_overlapping_sources():
    rng = np.random.default_rng(0)
    n = 120
    y = rng.integers(0, 2, n)
    views = [rng.normal(size=(n, 3)) + y[:, None], rng.normal(size=(n, 2)) + y[:, None]]
    ids = make_instance_sets(n, 2, "non_overlapping", random_state=0)
    sources = build_sources(views, ids)
    train = rng.random(n) < 0.5
    G = knn_similarity_graph(y[:, None] + rng.normal(0, 0.1, (n, 1)), k=3)
    X = joined_features(sources, [G], n, train_mask=train)
    assert X.shape == (n, 5 + n) and sp.issparse(X)
    dense = joined_features(sources, None, n, train_mask=train)
    missing = np.setdiff1d(np.arange(n), ids[1])
    held = np.intersect1d(ids[1], np.flatnonzero(train))
    np.testing.assert_allclose(
        dense[missing, 3:], np.tile(views[1][held].mean(axis=0), (missing.size, 1))
    )
    for kind in ("svm", "self_training_svm", "gbdt", "self_training_gbdt"):
        grid = {"n_estimators": [20], "max_depth": [2]} if "gbdt" in kind else None
        model = JoinedFeaturesClassifier(kind, param_grid=grid, random_state=0)
        model.fit(sources, [G], y, train)
        pred = model.predict_transductive()
        assert pred.shape == (n,) and np.mean(pred[~train] == y[~train]) > 0.7
        # the fitted classifier on the joined matrix, imputation by the training means
        np.testing.assert_array_equal(pred, model.classes_[model.estimator_.predict(X)])
        # inductive predict on the fit's own sources and graph gives the transduction
        np.testing.assert_array_equal(model.predict(sources, [G]), pred)
        expect = {"n_estimators": 20, "max_depth": 2} if grid else {"svc__C", "svc__gamma"}
        assert (model.best_params_ if grid else set(model.best_params_)) == expect
    no_links = JoinedFeaturesClassifier("svm", random_state=0).fit(sources, [G], y, train)
    assert no_links.predict([v[:5] for v in views]).shape == (5,)  # new instances, no link
    with pytest.raises(ValueError, match="expected \\(5, 120\\)"):
        no_links.predict([v[:5] for v in views], [G])
    with pytest.raises(ValueError, match="kind='lasso'"):
        JoinedFeaturesClassifier("lasso").fit(sources, [G], y, train)
    # GBC accepts the same non-overlapping sources.
    m = GBCClassifier(n_iter=10, early_stopping=False).fit(sources, [G], y, train)
    assert m.predict_transductive().shape == (n,)


def test_absent_entries_are_the_complement_of_the_instance_sets():
    n, p = 50, 4
    ids = make_instance_sets(n, p, "non_overlapping", random_state=3)
    absent = absent_entries(n, p, "non_overlapping", random_state=3)
    present = np.ones(n * p, bool)
    present[absent] = False
    for i, s in enumerate(ids):
        np.testing.assert_array_equal(np.flatnonzero(present.reshape(n, p)[:, i]), s)
    assert absent.dtype == np.int64 and np.all(np.diff(absent) > 0)
    assert absent_entries(n, p, "uniform").size == 0


def test_noisy_copy_is_seeded_with_the_requested_scale():
    X = np.zeros((2000, 5))
    a = noisy_copy(X, 1.0, random_state=0)
    np.testing.assert_array_equal(a, noisy_copy(X, 1.0, random_state=0))
    assert abs(a.std() - 1.0) < 0.02
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        noisy_copy(X, -1.0)
