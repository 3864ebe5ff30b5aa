"""Small synthetic scene and COREL data sets for the ``miml`` pipeline tests."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.pipelines.miml.nodes import make_splits, prepare_corel, prepare_scene

NAMES = ["a", "b", "c"]

PROTOCOL = {"n_folds": 3, "folds_run": [0, 2], "corel_repeats": 2, "seed": 0}
FIGURE3_PARAMS = {"delta": 2.0, "max_em": 5, "full_rank_above": None}
FIGURE3 = {
    "n_repeats": 1,
    "max_bags": 40,
    "reference": "exact",
    "methods": {
        "exact": {
            "estimator": "MIMLGPClassifier",
            "params": {**FIGURE3_PARAMS, "low_rank": "none"},
        },
        "half": {
            "estimator": "MIMLGPClassifier",
            "params": {**FIGURE3_PARAMS, "low_rank": "eig", "trace_frac": 0.5},
        },
        "full": {
            "estimator": "MIMLGPClassifier",
            "params": {**FIGURE3_PARAMS, "low_rank": "eig", "trace_frac": 1.0},
        },
    },
}
METHODS = {
    "GP": {"estimator": "MIMLGPClassifier", "params": {"delta": "median", "max_em": 5}},
    "GP-identity": {
        "estimator": "MIMLGPClassifier",
        "params": {"delta": "median", "fix_Kf": "identity"},
    },
    "kNN": {"estimator": "MIMLkNN", "params": {"n_references": 3, "n_citers": 5}},
}
COREL_METHODS = {
    "collective": {"estimator": "MIMLGPClassifier", "params": {"delta": "median", "max_em": 5}},
    "standard": {
        "estimator": "MIMLGPClassifier",
        "params": {"likelihood": "standard", "delta": "median", "max_em": 2},
    },
}


def make_bags(rng, Y, d=4):
    """Bags of 2-4 instances; each present label shifts one instance along its own axis."""
    bags = []
    for labels in Y:
        bag = rng.normal(size=(int(rng.integers(2, 5)), d))
        for s in np.flatnonzero(labels):
            bag[int(rng.integers(bag.shape[0])), s] += 3.0
        bags.append(bag)
    return bags


@pytest.fixture(autouse=True)
def _single_threaded_blas():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def scene():
    rng = np.random.default_rng(0)
    Y = (rng.random((60, 3)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    return prepare_scene((make_bags(rng, Y), Y, NAMES), {"max_bags": None})


@pytest.fixture(scope="module")
def corel():
    rng = np.random.default_rng(1)
    raw = []
    for _ in COREL_CATEGORIES:
        y = (np.arange(40) < 12).astype(np.int8)
        raw.append((make_bags(rng, y[:, None], d=3), y))
    return prepare_corel({"tasks": ["African", "Food"]}, *raw)


@pytest.fixture(scope="module")
def splits(scene, corel):
    """``(scene_splits, corel_splits, figure3_splits)``."""
    return make_splits(scene, corel, PROTOCOL, FIGURE3)
