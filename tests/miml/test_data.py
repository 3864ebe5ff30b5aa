"""Loaders of the MIML scene and COREL data in data/01_raw, the feature standardisation and
:func:`~multiview_lab.miml.evaluate_miml`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from multiview_lab.data.corel import COREL_CATEGORIES, load_corel_task
from multiview_lab.data.miml_scene import load_miml_scene
from multiview_lab.miml import MIMLkNN, evaluate_miml, standardize_bags

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


def test_standardisation_uses_the_training_instances():
    rng = np.random.default_rng(0)
    train = [rng.normal(3, 5, size=(4, 2)) for _ in range(10)]
    for b in train:
        b[:, 1] = 7.0  # a constant feature keeps its scale (sd taken as 1)
    tr_std, te_std = standardize_bags(train, [np.full((1, 2), 3.0)])
    X = np.vstack(tr_std)
    np.testing.assert_allclose(X.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(X.std(0), [1, 0])
    X0 = np.vstack(train)
    expected = (3.0 - X0[:, 0].mean()) / X0[:, 0].std()
    np.testing.assert_allclose(te_std[0], [[expected, 3.0 - 7.0]])
    assert standardize_bags(train)[1] == []


def test_evaluate_miml_scores_and_top_label_fallback():
    rng = np.random.default_rng(0)
    Y = np.eye(2, dtype=int)[np.arange(30) % 2]
    bags = [rng.normal(size=(3, 2)) + 4 * Y[i, 0] for i in range(30)]
    knn = MIMLkNN(n_references=3, n_citers=3).fit(bags[:20], Y[:20])
    res = evaluate_miml(knn, bags[20:], Y[20:])
    assert res["hamming_loss"] == 0.0 and res["one_error"] == 0.0
    assert res["hamming_loss_top_fallback"] == 0.0

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
