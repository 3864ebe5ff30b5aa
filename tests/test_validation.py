"""Shared validation helpers."""

import logging

import numpy as np
import pytest

from multiview_lab.utils.validation import (
    check_binary_labels,
    check_Xs,
    check_Xs_y,
    n_stratified_folds,
)


def test_check_Xs_errors_name_the_problem():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="list of 2-D arrays"):
        check_Xs(X)
    with pytest.raises(ValueError, match="same number of samples; got view 0: 5, view 1: 4"):
        check_Xs([X, np.zeros((4, 2))])
    with pytest.raises(ValueError, match="View 1 must be a 2-D array"):
        check_Xs([X, np.zeros(5)])
    with pytest.raises(ValueError, match="View 0: .*NaN"):
        check_Xs([np.full((5, 2), np.nan)])
    with pytest.raises(ValueError, match="at least 2 view"):
        check_Xs([X], min_views=2)
    with pytest.raises(ValueError, match="View 0 has 2 features but 3 were seen in fit"):
        check_Xs([X], n_features=[3])


def test_check_Xs_y_and_binary_labels():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="y has 3 labels but the views have 4"):
        check_Xs_y([X], [0, 1, 0])
    with pytest.raises(ValueError, match="at least 2 classes"):
        check_Xs_y([X], [1, 1, 1, 1])
    y_pm, classes = check_binary_labels(["b", "a", "b", "a"])
    assert list(classes) == ["a", "b"] and list(y_pm) == [1, -1, 1, -1]
    with pytest.raises(ValueError, match="exactly 2 distinct labels"):
        check_binary_labels([0, 1, 2])


def test_n_stratified_folds_shrinks_to_the_smallest_class(caplog):
    y = np.array([1] * 3 + [0] * 20)
    with caplog.at_level(logging.WARNING):
        assert n_stratified_folds(y, 5) == 3
    assert "using 3 folds" in caplog.text
    assert n_stratified_folds(np.array([1] * 6 + [0] * 6), 5) == 5
    with pytest.raises(ValueError, match="smallest class has 1"):
        n_stratified_folds(np.array([1] + [0] * 9), 5)
