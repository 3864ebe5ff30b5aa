"""memd.baselines.mutual_info: scikit-learn's mutual_info_classif, bit for bit, vectorised."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.feature_selection import mutual_info_classif

from multiview_lab.memd.baselines import MutualInfoScore, mutual_info


def _data(seed, n=60, d=300, n_classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None] * (rng.random(d) < 0.1)
    X[:, :40] = np.round(X[:, :40])  # many equal values (clipped expression levels): ties
    X[:, 40] = 5.0  # a constant gene
    return X, y


@pytest.mark.parametrize("seed, n_classes", [(0, 2), (1, 2), (2, 3), (3, 4)])
def test_identical_to_scikit_learn(seed, n_classes):
    X, y = _data(seed, n_classes=n_classes)
    for random_state in (0, 12345):
        expected = mutual_info_classif(X, y, random_state=random_state)
        got = mutual_info(X, y, random_state=random_state, max_block=5000)  # several blocks
        np.testing.assert_array_equal(got, expected)


def test_a_row_alone_in_its_class_is_left_out_as_in_scikit_learn():
    X, y = _data(4)
    y = y.copy()
    y[0] = 7  # a class of one row
    np.testing.assert_array_equal(
        mutual_info(X, y, random_state=1), mutual_info_classif(X, y, random_state=1)
    )


def test_small_classes_and_sparse_input_are_scikit_learns_own():
    """A class of <= 7 rows (scikit-learn's brute-force neighbour search) and sparse counts
    (discrete features) go to scikit-learn itself."""
    X, y = _data(5, n=30)
    y = (np.arange(30) < 6).astype(int)  # 6 rows in class 1
    np.testing.assert_array_equal(
        mutual_info(X, y, random_state=2), mutual_info_classif(X, y, random_state=2)
    )
    counts = sparse.random(40, 50, density=0.2, format="csr", random_state=0)
    counts.data = np.ceil(counts.data * 5)
    yc = np.arange(40) % 2
    np.testing.assert_array_equal(
        mutual_info(counts, yc, random_state=0), mutual_info_classif(counts, yc, random_state=0)
    )


def test_the_score_function_of_selectkbest_uses_it():
    X, y = _data(6)
    np.testing.assert_array_equal(
        MutualInfoScore(3)(X, y), mutual_info_classif(X, y, random_state=3)
    )
