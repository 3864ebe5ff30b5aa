"""MIMLGPClassifier's memory estimate (issue 17, item 5): fit refuses, before any large
allocation, a fit whose arrays would exceed ``max_memory_gb``, and says what it would need and
how to fit instead; the estimate follows the measured peak."""

from __future__ import annotations

import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

from multiview_lab.miml import MIMLGPClassifier
from multiview_lab.miml.gp import estimate_fit_memory

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_miml_memory.py"


def _bags(n, Q, seed=0):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_miml_memory", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synthetic_bags(n, Q, seed=seed)


def _peak(est, bags, Y):
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(bags, Y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_estimate_grows_as_the_square_of_bags_times_labels():
    full = [estimate_fit_memory(n, Q, 3 * n) for n, Q in [(100, 50), (200, 50), (200, 100)]]
    assert full[1] / full[0] == pytest.approx(4, rel=0.01)
    assert full[2] / full[1] == pytest.approx(4, rel=0.01)
    # the issue's fits: 200 bags x 200 labels (killed past 19 GB) and 80 x 80 (1.5 GB)
    assert estimate_fit_memory(200, 200, 600) / 2**30 == pytest.approx(35.8, abs=0.1)
    assert 0.5 < estimate_fit_memory(80, 80, 240) / 2**30 < 1.5
    std = estimate_fit_memory(200, 50, 600, likelihood="standard")
    assert std > full[1]  # the standard likelihood holds more dense matrices
    low = estimate_fit_memory(200, 200, 600, rank=20)
    assert low < estimate_fit_memory(200, 200, 600) / 40  # O((m Q)^2 + Q^3)


@pytest.mark.parametrize(
    "params", [{"low_rank": "none"}, {"likelihood": "standard"}], ids=["full", "standard"]
)
def test_estimate_matches_the_measured_peak_of_the_dense_paths(params):
    bags, Y = _bags(40, 15)
    est = MIMLGPClassifier(delta=1.0, max_em=2, n_mc=20, random_state=0, **params)
    peak = _peak(est, bags, Y)
    likelihood = params.get("likelihood", "collective")
    estimate = estimate_fit_memory(40, 15, sum(len(b) for b in bags), likelihood=likelihood)
    assert 0.85 * peak < estimate < 1.25 * peak


def test_estimate_bounds_the_measured_peak_of_the_low_rank_path():
    bags, Y = _bags(60, 20)
    est = MIMLGPClassifier(delta="median", full_rank_above=None, max_em=2, n_mc=20, random_state=0)
    peak = _peak(est, bags, Y)
    assert est.P_ is not None
    estimate = estimate_fit_memory(60, 20, 180, rank=est.m_)
    assert peak < estimate < 2 * peak


def test_the_issue_fit_raises_at_once_with_what_it_would_need():
    bags, Y = _bags(200, 200)
    est = MIMLGPClassifier(delta=1.0, low_rank="none")  # max_memory_gb=4 by default
    t0 = time.perf_counter()
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"would need about 35\.8 GB .* 200 bags x 200 labels"):
        est.fit(bags, Y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.perf_counter() - t0 < 5 and peak < 50 * 2**20  # nothing large was allocated
    with pytest.raises(ValueError, match=r"low_rank='eig' with full_rank_above=None"):
        est.fit(bags, Y)


def test_auto_switch_to_full_rank_is_checked_with_the_low_rank_alternative():
    """``low_rank="eig"`` picks the full-rank path when the rank m of K_sum exceeds half the
    bags (a narrow kernel): the error gives the low-rank path's need at that m."""
    bags, Y = _bags(200, 200)
    est = MIMLGPClassifier(delta=0.05, max_memory_gb=4)
    with pytest.raises(ValueError, match=r"full-rank path.* m = \d+ of K_sum exceeds") as err:
        est.fit(bags, Y)
    assert "full_rank_above=None keeps the low-rank path" in str(err.value)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"likelihood": "standard"}, "standard likelihood's dense 800 x 800"),
        ({"low_rank": "nystrom", "n_nystrom": 40}, "800 x 800 matrices .m = 40.*smaller n_nystrom"),
        # rank 40 of 40 (trace_frac=1): over 5 MB, while K_sum alone (checked first) is not
        ({"low_rank": "eig", "full_rank_above": None, "trace_frac": 1.0}, "smaller trace_frac"),
    ],
)
def test_every_path_is_checked(params, match):
    bags, Y = _bags(40, 20)
    with pytest.raises(ValueError, match=match):
        MIMLGPClassifier(delta=1.0, max_memory_gb=0.005, **params).fit(bags, Y)


def test_under_the_budget_or_without_a_budget_the_fit_is_unchanged():
    bags, Y = _bags(30, 4)
    kw = dict(delta=1.0, low_rank="none", max_em=3, n_mc=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = MIMLGPClassifier(**kw).fit(bags, Y)
        b = MIMLGPClassifier(max_memory_gb=None, **kw).fit(bags, Y)
    np.testing.assert_array_equal(a.Kf_, b.Kf_)
    np.testing.assert_array_equal(a.predict_proba(bags), b.predict_proba(bags))
    with pytest.raises(ValueError, match="max_memory_gb"):
        MIMLGPClassifier(max_memory_gb=1e-5, **kw).fit(bags, Y)
