"""MIML-GP spec test 12: the five MIML metrics on hand-computed cases and against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    coverage_error,
    label_ranking_average_precision_score,
    label_ranking_loss,
)
from sklearn.metrics import (
    hamming_loss as sk_hamming,
)

from multiview_lab.miml.metrics import (
    coverage,
    hamming_loss,
    miml_metrics,
    one_error,
    one_minus_average_precision,
    ranking_loss,
)

Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [1, 1, 0, 1]])
S = np.array([[0.9, 0.8, 0.3, 0.1], [0.2, 0.5, 0.7, 0.1], [0.6, 0.1, 0.4, 0.9]])
# ranks:          bag 0: 1 2 3 4       bag 1: 3 2 1 4          bag 2: 2 4 3 1


def test_hand_computed_values():
    assert one_error(Y, S) == pytest.approx(1 / 3)  # bag 1's top label (2) is irrelevant
    # coverage: max rank of a relevant label - 1 -> 2, 1, 3
    assert coverage(Y, S) == pytest.approx((2 + 1 + 3) / 3)
    # ranking loss: bag 0 pairs (0,1)(0,3)(2,1)(2,3): (2,1) wrong -> 1/4;
    # bag 1: (1,0)(1,2)(1,3): (1,2) wrong -> 1/3; bag 2: (0,2)(1,2)(3,2): (1,2) wrong -> 1/3
    assert ranking_loss(Y, S) == pytest.approx((1 / 4 + 1 / 3 + 1 / 3) / 3)
    # AP: bag 0: (1/1 + 2/3)/2; bag 1: 1/2; bag 2: relevant ranks 1, 2, 4 -> (1 + 1 + 3/4)/3
    ap = ((1 + 2 / 3) / 2 + 1 / 2 + (1 + 1 + 3 / 4) / 3) / 3
    assert one_minus_average_precision(Y, S) == pytest.approx(1 - ap)
    H = np.array([[1, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 1]])
    assert hamming_loss(Y, H) == pytest.approx(3 / 12)


def test_equal_to_scikit_learn_without_ties():
    rng = np.random.default_rng(0)
    Yr = (rng.random((200, 6)) < 0.35).astype(int)
    Yr[Yr.sum(1) == 0, 0] = 1
    Yr[Yr.sum(1) == 6, 0] = 0
    Sr = rng.random((200, 6))
    Hr = (rng.random((200, 6)) < 0.3).astype(int)
    assert abs(coverage(Yr, Sr) - (coverage_error(Yr, Sr) - 1)) < 1e-12
    assert abs(ranking_loss(Yr, Sr) - label_ranking_loss(Yr, Sr)) < 1e-12
    ap = label_ranking_average_precision_score(Yr, Sr)
    assert abs(one_minus_average_precision(Yr, Sr) - (1 - ap)) < 1e-12
    assert hamming_loss(Yr, Hr) == sk_hamming(Yr, Hr)
    m = miml_metrics(Yr, Hr, Sr)
    assert set(m) == {
        "hamming_loss", "one_error", "coverage", "ranking_loss", "one_minus_average_precision"
    }  # fmt: skip


def test_tie_rules():
    Yt = np.array([[0, 1, 0], [1, 0, 0]])
    St = np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.1]])
    # one-error: a relevant label tied at the top is no error
    assert one_error(Yt, St) == 0.0
    # stable ranks, ties by label index: bag 0 label 1 has rank 2, bag 1 label 0 has rank 1
    assert coverage(Yt, St) == pytest.approx((1 + 0) / 2)
    assert one_minus_average_precision(Yt, St) == pytest.approx(1 - (1 / 2 + 1) / 2)
    # ranking loss counts f(s) <= f(s') as an error: each bag has one tied pair of two
    assert ranking_loss(Yt, St) == pytest.approx(0.5)
    # scikit-learn ranks ties pessimistically, which the spec does not
    assert coverage_error(Yt, St) - 1 == 1.0


def test_degenerate_bags_are_skipped():
    Yd = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 1]])
    Sd = np.array([[0.9, 0.1, 0.0], [0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])
    assert one_error(Yd, Sd) == 0.0 and coverage(Yd, Sd) == 0.0
    assert ranking_loss(Yd, Sd) == 0.0 and one_minus_average_precision(Yd, Sd) == 0.0
    assert coverage(Yd[1:2], Sd[1:2]) == 0.0


@pytest.mark.parametrize(
    ("scores", "match"),
    [(np.zeros((3, 3)), "scores have shape"), (np.full((3, 4), np.nan), "NaN")],
)
def test_bad_input(scores, match):
    with pytest.raises(ValueError, match=match):
        coverage(Y, scores)
    with pytest.raises(ValueError, match="Y_true must be"):
        one_error(Y[0], S[0])
