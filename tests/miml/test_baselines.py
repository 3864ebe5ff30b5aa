"""MIML-GP spec test 14: Hausdorff distance, MIMLSVM, MIMLRBF, MIML-kNN."""

from __future__ import annotations

import numpy as np
import pytest

from multiview_lab.miml.baselines import MIMLRBF, MIMLSVM, MIMLkNN, hausdorff_distances, k_medoids


def _toy(n=40, Q=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.eye(Q, 3) * 6
    Y = (rng.random((n, Q)) < 0.15).astype(int)
    Y[np.arange(n) % Q == 0, 0] = 1
    Y[np.arange(n) % Q == 1, 1] = 1
    Y[np.arange(n) % Q == 2, 2] = 1
    Y[-1] = [0, 1, 0]
    bags = []
    for i in range(n):
        B = rng.normal(size=(rng.integers(2, 6), 3))
        for s in np.flatnonzero(Y[i]):
            B[rng.integers(len(B))] += centres[s]
        bags.append(B)
    return bags, Y


def _brute_hausdorff(A, B):
    D = np.linalg.norm(A[:, None] - B[None], axis=2)
    return max(D.min(1).max(), D.min(0).max())


def test_hausdorff_matches_definition_symmetric_zero_on_identical():
    bags, _ = _toy(n=12)
    D = hausdorff_distances(bags)
    ref = np.array([[_brute_hausdorff(a, b) for b in bags] for a in bags])
    np.testing.assert_allclose(D, ref, atol=1e-10)
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(D), 0.0, atol=1e-7)
    same = hausdorff_distances(bags[:3], [b[::-1].copy() for b in bags[:3]])
    np.testing.assert_allclose(np.diag(same), 0.0, atol=1e-7)


def test_k_medoids_returns_distinct_optimal_medoids_on_clusters():
    pts = np.concatenate([np.zeros((5, 1)), np.full((5, 1), 10.0)]) + np.arange(10)[:, None] * 0.01
    D = np.abs(pts - pts.T)
    med = k_medoids(D, 2, random_state=0)
    assert sorted(med.tolist()) == [2, 7]  # central point of each cluster
    with pytest.raises(ValueError, match="at least one medoid"):
        k_medoids(D, 0)


@pytest.mark.parametrize(
    "est", [MIMLSVM(random_state=0), MIMLRBF(random_state=0), MIMLkNN(n_references=5, n_citers=8)]
)
def test_baselines_learn_and_always_predict_a_label(est):
    bags, Y = _toy(n=60, seed=1)
    bags, Y, test_bags, Yt = bags[:40], Y[:40], bags[40:], Y[40:]
    est.fit(bags, Y)
    pred = est.predict(test_bags)
    assert pred.shape == Yt.shape and set(np.unique(pred)) <= {0, 1}
    assert np.all(pred.sum(axis=1) >= 1)
    scores = est.decision_function(test_bags)
    assert scores.shape == Yt.shape and np.all(np.isfinite(scores))
    # better than chance on separable toy labels
    assert np.mean(pred == Yt) > 0.6


def test_miml_knn_citers_use_training_set_only():
    bags, Y = _toy(n=30, seed=2)
    knn = MIMLkNN(n_references=3, n_citers=5).fit(bags, Y)
    from multiview_lab.miml.baselines import hausdorff_distances as hd

    D = hd(bags)
    np.fill_diagonal(D, np.inf)
    radius = np.sort(D, axis=1)[:, 4]
    np.testing.assert_allclose(knn.citer_radius_, radius)
    # a far-away test bag has references but no citers
    far = [np.full((2, 3), 1e3)]
    t = knn.label_counts(far)
    order = np.argsort(hd(far, bags)[0], kind="stable")[:3]
    np.testing.assert_array_equal(t[0], Y[order].sum(axis=0))
    # adding test bags never changes the training radii (computed on the training set only)
    knn.label_counts(bags[:5])
    np.testing.assert_allclose(knn.citer_radius_, radius)


@pytest.mark.parametrize(
    ("est", "match"),
    [
        (MIMLSVM(ratio=0.0), "k=0 medoids"),
        (MIMLRBF(alpha=0.0), "k = 0 medoids"),
        (MIMLkNN(n_references=0), "n_references must be"),
        (MIMLkNN(n_citers=-1), "n_citers must be"),
    ],
)
def test_invalid_sizes_raise(est, match):
    bags, Y = _toy(n=20, seed=3)
    with pytest.raises(ValueError, match=match):
        est.fit(bags, Y)


@pytest.mark.parametrize("cls", [MIMLSVM, MIMLRBF, MIMLkNN])
def test_bad_bags_raise(cls):
    with pytest.raises(ValueError, match="bag 1 is empty"):
        cls().fit([np.ones((2, 2)), np.ones((0, 2))], [[1], [0]])
    with pytest.raises(ValueError, match="no positive"):
        cls().fit([np.ones((2, 2)), np.ones((1, 2))], [[1, 0], [1, 0]])
    with pytest.raises(ValueError, match="NaN"):
        cls().fit([np.ones((2, 2)), np.array([[np.nan, 0.0]])], [[1], [0]])
