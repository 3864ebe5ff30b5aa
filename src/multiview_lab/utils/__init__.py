"""Helpers shared by every estimator: the multiview input convention and its validation."""

from multiview_lab.utils.multiview import MultiviewMixin, split_views, stack_views
from multiview_lab.utils.validation import (
    check_binary_labels,
    check_n_classes,
    check_option,
    check_Xs,
    check_Xs_y,
    n_stratified_folds,
)

__all__ = [
    "MultiviewMixin",
    "split_views",
    "stack_views",
    "check_Xs",
    "check_Xs_y",
    "check_binary_labels",
    "check_n_classes",
    "check_option",
    "n_stratified_folds",
]
