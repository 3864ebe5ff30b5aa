"""The histogram tree learner equals scikit-learn's exact tree on binned data (GBC spec §3)."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from multiview_lab.gbc._hist_tree import FeatureBinner, HistogramTree


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_tree_equals_sklearn_on_binned_data(depth):
    rng = np.random.default_rng(depth)
    X = rng.normal(size=(400, 9))
    z = np.sin(2 * X[:, 0]) + X[:, 3] * X[:, 5] + 0.3 * rng.normal(size=400)
    binner = FeatureBinner(max_bins=32).fit(X)
    Xb = binner.transform(X)
    tree = HistogramTree(depth, binner.n_bins_)
    leaves = tree.fit(Xb, z)
    tree.set_leaf_values(leaves, z)
    ref = DecisionTreeRegressor(max_depth=depth, criterion="squared_error").fit(Xb.astype(float), z)
    np.testing.assert_allclose(tree.predict_binned(Xb), ref.predict(Xb.astype(float)), atol=1e-12)
    np.testing.assert_array_equal(tree.apply_binned(Xb), leaves)


def test_binning_is_lossless_for_few_distinct_values_and_consistent_on_new_data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(300, 4)).astype(float)
    binner = FeatureBinner(max_bins=64).fit(X)
    Xb = binner.transform(X)
    for j in range(4):  # one bin per distinct value, order preserved
        assert np.unique(Xb[:, j]).shape[0] == np.unique(X[:, j]).shape[0]
        assert np.all(np.diff(Xb[np.argsort(X[:, j]), j].astype(int)) >= 0)
    # Values between training values fall in the bin of the split they would follow.
    x_new = np.array([[4.4, 4.6, -1.0, 99.0]])
    b = binner.transform(x_new)[0]
    assert b[0] == binner.transform([[4.0, 0, 0, 0]])[0, 0]
    assert b[1] == binner.transform([[0, 5.0, 0, 0]])[0, 1]
    assert b[2] == 0 and b[3] == len(binner.edges_[3])


def test_quantile_binning_caps_bins():
    X = np.random.default_rng(1).normal(size=(1000, 3))
    binner = FeatureBinner(max_bins=16).fit(X)
    assert binner.transform(X).max() <= 15
    with pytest.raises(ValueError, match="max_bins"):
        FeatureBinner(max_bins=300).fit(X)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_weighted_split_equals_sklearn_weighted_tree(depth):
    """``weight``: the tree fits z / weight with weights ``weight`` (scikit-learn's weighted
    squared error), the criterion of ``split_weighting="terms"``; rows of a tiny weight (the
    unlabelled rows of a GBC fit) barely move the splits."""
    rng = np.random.default_rng(10 + depth)
    X = rng.normal(size=(300, 6))
    weight = np.where(rng.random(300) < 0.4, 0.01, 1.0)
    z = weight * (np.sin(2 * X[:, 0]) + X[:, 2] + 0.3 * rng.normal(size=300))
    binner = FeatureBinner(max_bins=32).fit(X)
    Xb = binner.transform(X)
    tree = HistogramTree(depth, binner.n_bins_)
    leaves = tree.fit(Xb, z, weight=weight)
    ref = DecisionTreeRegressor(max_depth=depth, criterion="squared_error")
    ref.fit(Xb.astype(float), z / weight, sample_weight=weight)
    # Same partition of the rows (leaf ids differ: heap order vs scikit-learn's order).
    ours, theirs = leaves, ref.apply(Xb.astype(float))
    pairs = np.unique(np.column_stack([ours, theirs]), axis=0)
    assert pairs.shape[0] == np.unique(ours).shape[0] == np.unique(theirs).shape[0]
    # Unit weights are the unweighted tree, bit for bit.
    plain = HistogramTree(depth, binner.n_bins_).fit(Xb, z)
    np.testing.assert_array_equal(
        HistogramTree(depth, binner.n_bins_).fit(Xb, z, weight=np.ones(300)), plain
    )


def test_zero_weight_rows_do_not_create_splits():
    """Rows without a term (weight 0, z = 0) add nothing to a split's gain."""
    rng = np.random.default_rng(3)
    Xb = rng.integers(0, 8, size=(200, 3)).astype(np.uint8)
    z = np.where(Xb[:, 0] > 3, 1.0, -1.0)
    weight = np.ones(200)
    dead = rng.random(200) < 0.5
    z[dead], weight[dead] = 0.0, 0.0
    Xb[dead, 1] = 7  # feature 1 separates only the rows without a term
    tree = HistogramTree(1, 8)
    tree.fit(Xb, z, weight=weight)
    assert tree.feature_[0] == 0 and tree.bin_[0] == 3
