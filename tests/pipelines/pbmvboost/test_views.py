"""View construction (PB-MVBoost spec, test 15) and training draws (spec Sect. 5.2)."""

import numpy as np
import pytest

from multiview_lab.data.mnist import MNIST1_CORNERS, MNIST2_CORNERS, extract_views
from multiview_lab.pipelines.pbmvboost.nodes import build_views, draw_training_samples


@pytest.fixture
def images():
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)


def test_mnist1_quarters_tile_the_image_exactly_once():
    covered = np.zeros((28, 28), dtype=int)
    for r, c in MNIST1_CORNERS:
        covered[r : r + 14, c : c + 14] += 1
    assert (covered == 1).all()


def test_mnist2_windows_inside_and_pairwise_overlapping():
    for r, c in MNIST2_CORNERS:
        assert 0 <= r and r + 14 <= 28 and 0 <= c and c + 14 <= 28
    for i, (r1, c1) in enumerate(MNIST2_CORNERS):
        for r2, c2 in MNIST2_CORNERS[i + 1 :]:
            assert abs(r1 - r2) < 14 and abs(c1 - c2) < 14


@pytest.mark.parametrize("corners", [MNIST1_CORNERS, MNIST2_CORNERS])
def test_view_of_image_k_is_the_slice(images, corners):
    views = extract_views(images, corners)
    assert len(views) == 4
    for v, (r, c) in enumerate(corners):
        assert views[v].shape == (5, 196)
        assert views[v].dtype == np.float32
        for k in range(5):
            np.testing.assert_array_equal(views[v][k], images[k, r : r + 14, c : c + 14].ravel())


def test_window_outside_image_is_rejected(images):
    with pytest.raises(ValueError, match="leaves the 28x28 image"):
        extract_views(images, [(20, 0)])


def _mnist(n_train=300, n_test=50):
    rng = np.random.default_rng(1)
    return {
        "x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "y_train": np.arange(n_train) % 10,
        "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "y_test": np.arange(n_test) % 10,
    }


DATA = {
    "window": 14,
    "datasets": {
        "MNIST1": {"corners": [list(c) for c in MNIST1_CORNERS]},
        "MNIST2": {"corners": [list(c) for c in MNIST2_CORNERS]},
    },
}


def test_build_views_shapes_and_labels():
    views = build_views(_mnist(), DATA)
    assert set(views) == {"MNIST1", "MNIST2"}
    for data in views.values():
        assert [x.shape for x in data["X_train"]] == [(300, 196)] * 4
        assert [x.shape for x in data["X_test"]] == [(50, 196)] * 4
        assert data["y_train"].shape == (300,)


def test_build_views_rejects_mismatched_labels():
    mnist = _mnist()
    mnist["y_train"] = mnist["y_train"][:-1]
    with pytest.raises(ValueError, match="do not match"):
        build_views(mnist, DATA)


PROTOCOL = {
    "datasets": ["MNIST1", "MNIST2"],
    "tasks": [0, 3],
    "n_train": [40, 60],
    "n_draws": 3,
    "seed": 7,
}


def test_draws_are_seeded_distinct_and_in_range():
    views = build_views(_mnist(), DATA)
    draws = draw_training_samples(views, PROTOCOL)
    assert len(draws) == 2 * 2 * 2 * 3
    again = draw_training_samples(views, PROTOCOL)
    for a, b in zip(draws["train"], again["train"], strict=True):
        np.testing.assert_array_equal(a, b)
    for _, row in draws.iterrows():
        idx = row["train"]
        assert len(np.unique(idx)) == row["n_train"] and idx.min() >= 0 and idx.max() < 300
    assert draws["seed"].nunique() == len(draws)


def test_balanced_draws_hold_half_positives():
    views = build_views(_mnist(), DATA)
    draws = draw_training_samples(views, {**PROTOCOL, "train_sampling": "balanced"})
    for _, row in draws.iterrows():
        y = views[row["dataset"]]["y_train"][row["train"]]
        assert (y == row["task"]).sum() == row["n_train"] // 2


def test_draws_reject_bad_protocol():
    views = build_views(_mnist(), DATA)
    with pytest.raises(ValueError, match="train_sampling"):
        draw_training_samples(views, {**PROTOCOL, "train_sampling": "stratified"})
    with pytest.raises(ValueError, match="n_train"):
        draw_training_samples(views, {**PROTOCOL, "n_train": [1000]})
    with pytest.raises(ValueError, match="Unknown data set"):
        draw_training_samples(views, {**PROTOCOL, "datasets": ["MNIST3"]})
