"""Shared data for the PB-MVBoost tests: small synthetic multiview problems and one MNIST1 task."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

MNIST_PATH = Path(__file__).resolve().parents[2] / "data" / "01_raw" / "mnist.npz"


def synthetic_views(n=300, n_views=4, d=5, seed=0, flip_y=0.05):
    """``n_views`` blocks of ``d`` columns of one ``make_classification`` problem, plus noise."""
    X, y = make_classification(
        n_samples=n,
        n_features=n_views * d,
        n_informative=n_views * 2,
        n_redundant=0,
        shuffle=False,
        flip_y=flip_y,
        random_state=seed,
    )
    rng = np.random.RandomState(seed)
    # interleave informative columns so every view holds some signal
    perm = np.argsort(np.arange(n_views * d) % n_views, kind="stable")
    X = X[:, perm] + rng.normal(scale=0.5, size=X.shape)
    return [X[:, v * d : (v + 1) * d] for v in range(n_views)], y


def mnist1_views(x):
    """The four 14x14 quarters of 28x28 images, flattened row-major (MNIST1)."""
    return [
        np.ascontiguousarray(x[:, r : r + 14, c : c + 14].reshape(x.shape[0], -1))
        for r in (0, 14)
        for c in (0, 14)
    ]


@pytest.fixture(scope="session")
def mnist1_task():
    """One MNIST1 one-vs-all task (digit 3): random n = 500 training draw, 10,000 test images."""
    if not MNIST_PATH.exists():
        pytest.skip(f"{MNIST_PATH} not found")
    with np.load(MNIST_PATH) as z:
        rng = np.random.RandomState(2019)
        idx = rng.choice(z["x_train"].shape[0], 500, replace=False)
        return (
            mnist1_views(z["x_train"][idx]),
            np.where(z["y_train"][idx] == 3, 1, -1),
            mnist1_views(z["x_test"]),
            np.where(z["y_test"] == 3, 1, -1),
        )


@pytest.fixture(scope="session")
def make_views():
    """Factory of synthetic multiview problems (see :func:`synthetic_views`)."""
    return synthetic_views
