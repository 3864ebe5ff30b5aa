"""Helpers shared by every estimator: input validation for multiview data."""

from multiview_lab.utils.validation import (
    check_binary_labels,
    check_n_classes,
    check_option,
    check_Xs,
    check_Xs_y,
    n_stratified_folds,
)

__all__ = [
    "check_Xs",
    "check_Xs_y",
    "check_binary_labels",
    "check_n_classes",
    "check_option",
    "n_stratified_folds",
]
