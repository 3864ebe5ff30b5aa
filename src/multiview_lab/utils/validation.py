"""Validation of multiview input, in one place.

Every estimator of the project takes multiview data as a list of 2-D arrays, one per view, all with
the same number of rows. :func:`check_Xs` and :func:`check_Xs_y` validate that layout on top of
scikit-learn's :func:`~sklearn.utils.check_array` and raise a ``ValueError`` that names the problem
(which view, which shape) so that a user never has to guess.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.multiclass import type_of_target

logger = logging.getLogger(__name__)


def check_Xs(
    Xs,
    *,
    min_views: int = 1,
    n_views: int | None = None,
    accept_sparse: bool | str | Sequence[str] = False,
    dtype="numeric",
    ensure_all_finite: bool = True,
    n_features: Sequence[int] | None = None,
    copy: bool = False,
) -> list:
    """Validate multiview input and return it as a list of checked arrays.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        One 2-D array per view. A single 2-D array is *not* accepted: a multiview estimator
        needs to know where the views are.
    min_views : int, default=1
        Smallest number of views accepted.
    n_views : int or None, default=None
        Exact number of views expected (e.g. at predict time, the number seen in ``fit``).
    accept_sparse : bool, str or list of str, default=False
        Passed to :func:`sklearn.utils.check_array`.
    dtype : str, type or None, default="numeric"
        Passed to :func:`sklearn.utils.check_array`.
    ensure_all_finite : bool, default=True
        Reject NaN and infinity.
    n_features : sequence of int or None, default=None
        Expected number of columns per view (the numbers seen in ``fit``).
    copy : bool, default=False
        Copy each view.

    Returns
    -------
    Xs : list of ndarray or sparse matrix
        The validated views.

    Raises
    ------
    ValueError
        If ``Xs`` is not a non-empty list of 2-D arrays with equal numbers of rows, if a view
        contains NaN or infinity, or if the number of views or of features does not match.
    """
    if isinstance(Xs, np.ndarray) or not isinstance(Xs, Sequence) or isinstance(Xs, str):
        raise ValueError(
            "Xs must be a list of 2-D arrays, one per view; got "
            f"{type(Xs).__name__}. Wrap a single view as [X]."
        )
    if len(Xs) < max(min_views, 1):
        raise ValueError(f"Xs must hold at least {max(min_views, 1)} view(s); got {len(Xs)}.")
    if n_views is not None and len(Xs) != n_views:
        raise ValueError(f"Xs has {len(Xs)} views but {n_views} were expected (as seen in fit).")
    checked = []
    for v, X in enumerate(Xs):
        if hasattr(X, "ndim") and X.ndim != 2:
            raise ValueError(
                f"View {v} must be a 2-D array (n_samples, n_features); got {X.ndim}-D "
                f"with shape {getattr(X, 'shape', None)}."
            )
        try:
            X = check_array(
                X,
                accept_sparse=accept_sparse,
                dtype=dtype,
                ensure_all_finite=ensure_all_finite,
                ensure_2d=True,
                copy=copy,
                input_name=f"view {v}",
            )
        except ValueError as exc:
            raise ValueError(f"View {v}: {exc}") from exc
        checked.append(X)
    n_rows = [X.shape[0] for X in checked]
    if len(set(n_rows)) != 1:
        raise ValueError(
            "All views must have the same number of samples; got "
            + ", ".join(f"view {v}: {n}" for v, n in enumerate(n_rows))
            + "."
        )
    if n_features is not None:
        for v, (X, d) in enumerate(zip(checked, n_features, strict=True)):
            if X.shape[1] != d:
                raise ValueError(f"View {v} has {X.shape[1]} features but {d} were seen in fit.")
    return checked


def check_Xs_y(Xs, y, *, min_views: int = 1, min_classes: int = 2, **kwargs):
    """Validate multiview input together with its labels.

    Parameters
    ----------
    Xs : list of array-like
        See :func:`check_Xs`.
    y : array-like of shape (n_samples,)
        Target labels; must be 1-D, finite and as long as every view.
    min_views : int, default=1
        Smallest number of views accepted.
    min_classes : int, default=2
        Smallest number of distinct labels accepted (``0`` disables the check, e.g. for
        regression).
    **kwargs
        Passed to :func:`check_Xs`.

    Returns
    -------
    Xs : list
        The validated views.
    y : ndarray of shape (n_samples,)
        The validated labels.
    """
    Xs = check_Xs(Xs, min_views=min_views, **kwargs)
    y = np.asarray(y)
    if y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        else:
            raise ValueError(f"y must be 1-D (n_samples,); got shape {y.shape}.")
    if y.shape[0] != Xs[0].shape[0]:
        raise ValueError(f"y has {y.shape[0]} labels but the views have {Xs[0].shape[0]} samples.")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    if min_classes:
        check_n_classes(y, min_classes)
    return Xs, y


def check_n_classes(y, min_classes: int = 2) -> np.ndarray:
    """Return the sorted classes of ``y``; raise if there are fewer than ``min_classes``."""
    classes = np.unique(y)
    if classes.shape[0] < min_classes:
        got = f"{classes.shape[0]} class" + ("" if classes.shape[0] == 1 else "es")
        raise ValueError(
            f"y must contain at least {min_classes} classes; got {got} "
            f"({classes.tolist()!r}). A classifier cannot be fitted on a single class."
        )
    return classes


def check_binary_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Map a binary target to ``{-1, +1}``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Exactly two distinct labels.

    Returns
    -------
    y_pm : ndarray of shape (n_samples,), dtype float
        ``-1.0`` for ``classes[0]`` and ``+1.0`` for ``classes[1]``.
    classes : ndarray of shape (2,)
        The sorted original labels.

    Raises
    ------
    ValueError
        If ``y`` does not have exactly two distinct labels.
    """
    y = np.asarray(y)
    kind = type_of_target(y)
    classes = np.unique(y)
    if classes.shape[0] != 2 or kind not in ("binary", "multiclass"):
        raise ValueError(
            f"A binary task needs exactly 2 distinct labels; got {classes.shape[0]} "
            f"(type of target: {kind!r})."
        )
    return np.where(y == classes[1], 1.0, -1.0), classes


def n_stratified_folds(y, cv: int, what: str = "cross-validation") -> int:
    """Number of stratified folds to use: ``cv``, or fewer when a class is smaller.

    Small one-vs-all training draws (n = 150 at ~10 % positives) can hold fewer positives than
    folds. Rather than failing a whole protocol, the number of folds drops to the size of the
    smallest class (logged as a warning); fewer than 2 examples of a class is an error.
    """
    n_min = int(np.unique(y, return_counts=True)[1].min())
    if n_min < 2:
        raise ValueError(
            f"{what} needs at least 2 examples of each class; the smallest class has {n_min}."
        )
    if n_min < cv:
        logger.warning(
            "%s: %d folds requested but the smallest class has %d examples; using %d folds.",
            what,
            cv,
            n_min,
            n_min,
        )
        return n_min
    return cv


def check_option(name: str, value, allowed) -> None:
    """Raise a ``ValueError`` naming the option and its allowed values unless ``value`` is one."""
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; choose one of {list(allowed)}.")
