"""The GBC savings of issue 15 (binning cache, root histograms by a sparse product, leaves
reused) leave every result bit-identical, and the cached work is done once."""

import numpy as np
import pytest

import multiview_lab.gbc._hist_tree as hist_tree
import multiview_lab.gbc.gbc as gbc_module
from multiview_lab.estimators import GBCClassifier
from multiview_lab.gbc._hist_tree import FeatureBinner, HistogramTree, OneHotBins
from multiview_lab.gbc.graphs import edges_to_adjacency


def _problem(seed=0, n=150, overlapping=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X1 = rng.normal(size=(n, 6)) + y[:, None]
    X2 = np.round(rng.normal(size=(n, 4)) + 0.5 * y[:, None], 1)  # ties, few distinct values
    X3 = rng.integers(0, 5, size=(n, 3)).astype(float)
    same = rng.integers(0, n, size=(3 * n, 2))
    same = same[y[same[:, 0]] == y[same[:, 1]]]
    graphs = [
        edges_to_adjacency(same, n),
        edges_to_adjacency(rng.integers(0, n, size=(2 * n, 2)), n),
    ]
    sources = [X1, X2, X3]
    if overlapping:  # the non-overlapping setting: source 2 misses a third of the instances
        keep = np.sort(rng.choice(n, size=2 * n // 3, replace=False))
        sources = [X1, (X2[keep], keep), X3]
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, size=n // 3, replace=False)] = True
    for i in range(n):  # every source needs a labelled instance of every class
        labeled[i] |= i < 6
    return sources, graphs, y, labeled


def _fitted(monkeypatch, savings, sources, graphs, y, labeled, **params):
    monkeypatch.setattr(gbc_module, "USE_CACHE", savings)
    monkeypatch.setattr(gbc_module, "USE_ONEHOT", savings)
    gbc_module.clear_cache()
    model = GBCClassifier(n_iter=25, random_state=0, **params)
    return model.fit(sources, graphs, y, labeled)


_ATTRS = (
    "source_weights_history_",
    "graph_weights_history_",
    "objective_history_",
    "step_sizes_",
    "n_iter_",
    "init_",
)


@pytest.mark.parametrize(
    "params",
    [
        {"lambda0": 0.1, "lambda1": 0.1},
        {"lambda0": 10.0, "lambda1": 1.0, "early_stopping": False},
        {"lambda0": 0.0, "lambda1": 0.0},  # trees on the labelled rows only
        {"lambda0": 0.01, "lambda1": 0.1, "step": "line_search", "shrinkage": 0.5},
        {"lambda0": 0.1, "lambda1": 0.1, "subsample": 0.7},  # no one-hot operator
        {"lambda0": 0.1, "lambda1": 0.0, "gradient": "exact", "update_order": "jacobi"},
    ],
)
@pytest.mark.parametrize("overlapping", [False, True])
def test_savings_leave_fits_bit_identical(monkeypatch, params, overlapping):
    sources, graphs, y, labeled = _problem(overlapping=overlapping)
    fast = _fitted(monkeypatch, True, sources, graphs, y, labeled, **params)
    slow = _fitted(monkeypatch, False, sources, graphs, y, labeled, **params)
    np.testing.assert_array_equal(
        fast.decision_function_transductive(), slow.decision_function_transductive()
    )
    np.testing.assert_array_equal(fast.decision_function(sources), slow.decision_function(sources))
    np.testing.assert_array_equal(fast.predict_transductive(), slow.predict_transductive())
    for attr in _ATTRS:
        for a, b in zip(getattr(fast, attr), getattr(slow, attr), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=attr)
    for trees_a, trees_b in zip(fast.estimators_[0], slow.estimators_[0], strict=True):
        for (ta, ca), (tb, cb) in zip(trees_a, trees_b, strict=True):
            assert ca == cb
            np.testing.assert_array_equal(ta.feature_, tb.feature_)
            np.testing.assert_array_equal(ta.bin_, tb.bin_)
            np.testing.assert_array_equal(ta.value_, tb.value_)


def test_root_histogram_by_sparse_product_equals_bincount_bit_for_bit():
    rng = np.random.default_rng(3)
    for trial in range(60):
        n, d = int(rng.integers(5, 300)), int(rng.integers(1, 12))
        X = rng.normal(size=(n, d)).round(int(rng.integers(0, 3)))
        binner = FeatureBinner(int(rng.integers(2, 64))).fit(X)
        Xb, B = binner.transform(X), binner.n_bins_
        z = rng.normal(size=n) * (rng.random(n) < 0.7)
        z[rng.random(n) < 0.2] = -0.0  # signed zeros (a zero gradient, negated)
        if trial % 4 == 0:
            z = np.round(z)  # ties between candidate splits
        keys = (Xb.astype(np.int64) + np.arange(d) * B).ravel()
        ref_s = np.bincount(keys, weights=np.repeat(z, d), minlength=d * B)
        ref_c = np.bincount(keys, minlength=d * B).astype(np.float64)
        onehot = OneHotBins(Xb, B)
        got = onehot.sums(z)
        np.testing.assert_array_equal(got, ref_s)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref_s))
        np.testing.assert_array_equal(onehot.root_counts, ref_c)
        depth, leaf = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        plain, fast = HistogramTree(depth, B, leaf), HistogramTree(depth, B, leaf)
        leaves_plain = plain.fit(Xb, z)
        leaves_fast = fast.fit(Xb, z, onehot=onehot)
        np.testing.assert_array_equal(leaves_fast, leaves_plain)
        np.testing.assert_array_equal(fast.feature_, plain.feature_)
        np.testing.assert_array_equal(fast.bin_, plain.bin_)
        # The fit's leaves are the leaves of a second descent (the reuse in _boost).
        np.testing.assert_array_equal(fast.apply_binned(Xb), leaves_fast)


def test_onehot_rejects_other_rows():
    Xb = np.zeros((10, 2), dtype=np.uint8)
    with pytest.raises(ValueError, match="onehot"):
        HistogramTree(2, 4).fit(Xb, np.ones(10), onehot=OneHotBins(Xb[:5], 4))


def test_binning_and_onehot_computed_once_per_source(monkeypatch):
    sources, graphs, y, labeled = _problem()
    calls = {"bin": 0, "onehot": 0}
    fit, init = FeatureBinner.fit, OneHotBins.__init__

    def counting_fit(self, X):
        calls["bin"] += 1
        return fit(self, X)

    def counting_init(self, Xb, n_bins):
        calls["onehot"] += 1
        init(self, Xb, n_bins)

    monkeypatch.setattr(hist_tree.FeatureBinner, "fit", counting_fit)
    monkeypatch.setattr(hist_tree.OneHotBins, "__init__", counting_init)
    monkeypatch.setattr(gbc_module, "USE_CACHE", True)
    gbc_module.clear_cache()
    grid = [(0.1, 0.1), (10.0, 0.0), (0.0, 1.0)]  # one inner-CV-like sequence
    folds = [labeled, labeled & (np.arange(y.shape[0]) % 2 == 0) | (np.arange(y.shape[0]) < 6)]
    fitted = []
    for lam0, lam1 in grid:
        for mask in folds:
            # Fresh copies, as the pipeline builds the sources anew for every fit.
            copies = [np.array(X) for X in sources]
            model = GBCClassifier(lambda0=lam0, lambda1=lam1, n_iter=3, random_state=0)
            fitted.append(model.fit(copies, graphs, y, mask))
    # Uniform setting, λ0 + λ1 > 0: every tree sees every row, whatever the mask.
    assert calls == {"bin": len(sources), "onehot": len(sources)}
    assert all(m.binners_[0] is fitted[0].binners_[0] for m in fitted)

    monkeypatch.setattr(gbc_module, "USE_CACHE", False)
    calls.update(bin=0, onehot=0)
    GBCClassifier(n_iter=3, random_state=0).fit(sources, graphs, y, labeled)
    GBCClassifier(n_iter=3, random_state=0).fit(sources, graphs, y, labeled)
    assert calls["bin"] == 2 * len(sources)


def test_cache_is_bounded_and_keyed_by_values(monkeypatch):
    monkeypatch.setattr(gbc_module, "USE_CACHE", True)
    monkeypatch.setattr(gbc_module, "_CACHE_SIZE", 3)
    gbc_module.clear_cache()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    d1, b1, Xb1 = gbc_module._bin_source(X, 16)
    d2, b2, _ = gbc_module._bin_source(X.copy(order="F"), 16)  # same values, other layout
    assert d1 == d2 and b1 is b2 and not Xb1.flags.writeable
    Y = X.copy()
    Y[0, 0] += 1e-12
    assert gbc_module._bin_source(Y, 16)[1] is not b1
    assert gbc_module._bin_source(X, 8)[1] is not b1
    for _ in range(5):
        gbc_module._bin_source(rng.normal(size=(5, 2)), 4)
    assert len(gbc_module._CACHE) == 3
    gbc_module.clear_cache()
    assert not gbc_module._CACHE
