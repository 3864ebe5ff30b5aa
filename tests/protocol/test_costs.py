"""CostModel: the projection of the units left of a run from its measured units."""

import math

import pytest

from multiview_lab.protocol import engine
from multiview_lab.protocol.costs import CostModel


def group(method="GBDT", dataset="mfeat", pct=10):
    return engine.cost_group({"method": method, "dataset": dataset, "train_pct": pct,
                              "split": 0, "seed": 1})  # fmt: skip


def test_a_measured_group_costs_its_own_mean():
    model = CostModel([(group(pct=10), 60.0), (group(pct=10), 70.0), (group(pct=50), 300.0)])
    assert model.unit_cost(group(pct=10)) == pytest.approx(65.0)
    assert model.mean() == pytest.approx(430.0 / 3)
    assert model.projected({group(pct=10): 2, group(pct=50): 1}) == pytest.approx(430.0)


def test_one_measured_size_scales_in_proportion():
    """GBDT at 10 % only: a 50 % unit costs 5 times as much, not the mean of the 10 % ones."""
    model = CostModel([(group(pct=10), 60.0), (group(pct=10), 80.0)])
    assert model.unit_cost(group(pct=50)) == pytest.approx(350.0)
    assert model.unit_cost(group(pct=5)) == pytest.approx(35.0)


def test_two_sizes_or_more_fit_a_power_law():
    """cost = 2 size^1.5 measured at 3 sizes: the fit gives it back at an unmeasured size."""
    model = CostModel([(group(pct=p), 2 * p**1.5) for p in (10, 20, 40)])
    assert model.unit_cost(group(pct=90)) == pytest.approx(2 * 90**1.5)
    # sizes with nothing measured in between, from the other slice only
    mixed = CostModel([(group(pct=10), 10.0), (group(pct=90), 30.0),
                       (group(dataset="terrorist", pct=10), 1000.0)])  # fmt: skip
    assert mixed.unit_cost(group(pct=50)) == pytest.approx(10 * math.sqrt(5))


def test_a_group_without_neighbours_gets_the_mean_of_every_unit():
    """A different label (data set, method) is not a size: no scaling across it."""
    model = CostModel([(group(pct=10), 10.0), (group(pct=10), 20.0),
                       (group(method="SVM", pct=50), 90.0)])  # fmt: skip
    assert model.unit_cost(group(dataset="terrorist", pct=10)) == pytest.approx(40.0)
    assert model.unit_cost((("dataset", "images"),)) == pytest.approx(40.0)
    assert math.isnan(CostModel().unit_cost(group()))
    assert CostModel().projected({}) == 0.0


def test_missing_values_match_and_are_not_sizes():
    """A key missing in one stage (NaN) matches NaN; a NaN size is not scaled on."""
    a = (("method", "GBC"), ("num_sources", "nan"), ("train_pct", "10.0"))
    b = (("method", "GBC"), ("num_sources", "nan"), ("train_pct", "50.0"))
    model = CostModel([(a, 4.0)])
    assert model.unit_cost(b) == pytest.approx(20.0)
    c = (("method", "GBC"), ("num_sources", "2"), ("train_pct", "nan"))
    d = (("method", "GBC"), ("num_sources", "3"), ("train_pct", "nan"))
    assert CostModel([(c, 6.0)]).unit_cost(d) == pytest.approx(9.0)
