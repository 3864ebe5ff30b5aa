"""Small synthetic multiview data for the engine's tests."""

import numpy as np
import pytest

from multiview_lab.protocol import splits


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 150)
    base = np.eye(3)[y] * 2.0
    views = [base @ rng.normal(size=(3, 6)) + rng.normal(0, 1.5, (150, 6)) for _ in range(2)]
    return {"SYN": {"X": views, "y": y}}


@pytest.fixture(scope="module")
def split_table(data):
    y = data["SYN"]["y"]
    rows = []
    for repeat in range(2):
        folds = splits.kfold(y.shape[0], 3, seed=repeat, y=y)
        seeds = [splits.seed_of("SYN", repeat, f) for f in range(3)]
        for row in splits.split_rows({"dataset": "SYN", "repeat": repeat}, folds, seeds, "fold"):
            rows.append(row)
    return splits.split_table(rows)


METHODS = {
    "tree": {
        "estimator": "ConcatViews",
        "params": {"estimator": "sklearn.tree.DecisionTreeClassifier", "params": {"max_depth": 3}},
    },
    "logreg": {
        "estimator": "ConcatViews",
        "params": {"estimator": "sklearn.linear_model.LogisticRegression"},
    },
}
