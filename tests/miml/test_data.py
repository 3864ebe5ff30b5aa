"""Loaders of the MIML scene and COREL data in data/01_raw, and the protocol helpers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from multiview_lab.data.corel import COREL_CATEGORIES, load_corel_task
from multiview_lab.data.miml_scene import load_miml_scene
from multiview_lab.miml.protocol import kfold_splits, random_half_splits, standardize_bags

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"


def test_scene_matches_published_description():
    bags, Y, names = load_miml_scene(RAW / "miml_scene" / "miml_scene.npz")
    assert len(bags) == 2000 and all(b.shape == (9, 15) for b in bags)
    assert names == ["desert", "mountains", "sea", "sunset", "trees"]
    assert Y.sum(axis=0).tolist() == [409, 458, 580, 465, 560]
    assert Y.sum(axis=1).min() >= 1
    assert np.mean(Y.sum(axis=1) > 1) == pytest.approx(0.2285)


def test_corel_tasks():
    for cat in ("African", "Food"):
        bags, y = load_corel_task(RAW / "corel_mi", cat)
        assert len(bags) == 2000 and y.sum() == 100 and np.all(y[:100] == 1)
        sizes = [len(b) for b in bags]
        assert min(sizes) == 2 and max(sizes) == 13 and sum(sizes) == 7947
        assert bags[0].shape[1] == 9
    assert len(COREL_CATEGORIES) == 7
    with pytest.raises(ValueError, match="not stored"):
        load_corel_task(RAW / "corel_mi", "Horses")


def test_splits_and_standardisation():
    folds = kfold_splits(100, 10, random_state=0)
    test_idx = np.concatenate([te for _, te in folds])
    assert sorted(test_idx.tolist()) == list(range(100))
    assert all(np.intersect1d(tr, te).size == 0 for tr, te in folds)
    np.testing.assert_array_equal(folds[0][1], kfold_splits(100, 10, random_state=0)[0][1])
    halves = random_half_splits(10, 3, random_state=1)
    assert all(len(a) == 5 and np.intersect1d(a, b).size == 0 for a, b in halves)
    rng = np.random.default_rng(0)
    train = [rng.normal(3, 5, size=(4, 2)) for _ in range(10)]
    tr_std, te_std = standardize_bags(train, [np.full((1, 2), 3.0)])
    X = np.vstack(tr_std)
    np.testing.assert_allclose(X.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(X.std(0), 1)
    assert te_std[0].shape == (1, 2)


def test_evaluate_split_rows_and_top_label_fallback():
    from multiview_lab.miml.baselines import MIMLkNN
    from multiview_lab.miml.protocol import evaluate_miml, evaluate_split

    rng = np.random.default_rng(0)
    Y = np.eye(2, dtype=int)[np.arange(30) % 2]
    bags = [rng.normal(size=(3, 2)) + 4 * Y[i, 0] for i in range(30)]
    rows = evaluate_split(
        {"knn": MIMLkNN(n_references=3, n_citers=3)}, bags, Y, range(20), range(20, 30)
    )
    assert rows[0]["method"] == "knn" and rows[0]["hamming_loss"] == 0.0
    assert rows[0]["one_error"] == 0.0 and rows[0]["fit_seconds"] >= 0

    class NoLabel:  # predicts nothing; scores rank label 1 first
        def predict(self, bags):
            return np.zeros((len(bags), 2), dtype=int)

        def decision_function(self, bags):
            return np.tile([0.1, 0.2], (len(bags), 1))

    res = evaluate_miml(NoLabel(), bags[:4], Y[:4])
    assert res["hamming_loss"] == 0.5
    assert res["hamming_loss_top_fallback"] == 0.5  # two bags right, two bags doubly wrong
    res = evaluate_miml(NoLabel(), bags[1:2], Y[1:2])
    assert res["hamming_loss_top_fallback"] == 0.0
