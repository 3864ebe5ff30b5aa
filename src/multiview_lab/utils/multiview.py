"""The one multiview input convention of the project, which scikit-learn's tools accept.

A multiview estimator takes either

* **a list of views**, ``[X_1, ..., X_V]``, each of shape ``(n_samples, n_features_v)``, dense
  or ``scipy.sparse`` (as the papers write it); or
* **one stacked 2-D array** ``X`` of shape ``(n_samples, n_features_1 + ... + n_features_V)``
  with the estimator's ``views_ind`` parameter giving the view boundaries
  ``[0, d_1, d_1 + d_2, ..., d]`` (as scikit-multimodallearn does), or an int ``V`` for ``V``
  consecutive column blocks of near-equal width, or ``None`` for one view.

Only the second form has ``n_samples`` as its first dimension, so it is the one that
``cross_val_score``, ``GridSearchCV``, ``Pipeline`` (a scaler before the estimator) and the
estimator check suite can index. :func:`stack_views` turns views into that form::

    X, views_ind = stack_views([X_1, X_2])
    cross_val_score(MVBoostClassifier(views_ind=views_ind), X, y)

:class:`MultiviewMixin` gives an estimator one method, ``_validate_views``, that checks either
form, sets ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame) as scikit-learn's
``validate_data`` does, ``n_features_per_view_`` and ``views_ind_``, and returns the views.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import column_or_1d, validate_data

from multiview_lab.utils.validation import check_Xs


def _is_view(obj) -> bool:
    """Whether one element of a list is a view (2-D) rather than a row of a 2-D array."""
    if sp.issparse(obj):
        return True
    ndim = getattr(obj, "ndim", None)
    if ndim is not None:
        return ndim == 2
    return (
        isinstance(obj, Sequence)
        and not isinstance(obj, str)
        and len(obj) > 0
        and isinstance(obj[0], Sequence)
        and not isinstance(obj[0], str)
    )


def is_list_of_views(X) -> bool:
    """Whether ``X`` is a list (or tuple) of 2-D views rather than one 2-D array or a list of
    rows: any 2-D or sparse element makes it views (so that a 1-D element among them is named
    as a bad view, not read as a row)."""
    return isinstance(X, list | tuple) and any(_is_view(V) for V in X)


def stack_views(Xs) -> tuple[np.ndarray | sp.spmatrix, np.ndarray]:
    """Stack a list of views into one 2-D array and the boundaries that split it back.

    Parameters
    ----------
    Xs : list of array-like or sparse matrix of shape (n_samples, n_features_v)
        The views.

    Returns
    -------
    X : ndarray or sparse CSR matrix of shape (n_samples, sum of n_features_v)
        The views side by side; sparse (CSR) if any view is sparse, so that nothing is
        densified.
    views_ind : ndarray of shape (n_views + 1,)
        ``[0, d_1, d_1 + d_2, ..., d]``, to pass as an estimator's ``views_ind``.

    Examples
    --------
    >>> import numpy as np
    >>> X, views_ind = stack_views([np.ones((3, 2)), np.zeros((3, 4))])
    >>> X.shape, views_ind.tolist()
    ((3, 6), [0, 2, 6])
    """
    Xs = check_Xs(Xs, accept_sparse=["csr", "csc", "coo"], ensure_all_finite=False)
    views_ind = np.concatenate([[0], np.cumsum([X.shape[1] for X in Xs])]).astype(np.intp)
    if any(sp.issparse(X) for X in Xs):
        return sp.hstack(Xs, format="csr"), views_ind
    return np.hstack(Xs), views_ind


def resolve_views_ind(views_ind, n_features: int) -> np.ndarray:
    """The view boundaries ``[0, ..., n_features]`` that ``views_ind`` stands for.

    ``None`` is one view; an int ``V`` is ``V`` consecutive blocks of near-equal width (as
    ``numpy.array_split``); an array is checked: increasing, first 0, last ``n_features``.
    """
    if views_ind is None:
        return np.array([0, n_features], dtype=np.intp)
    if isinstance(views_ind, bool):
        raise ValueError("views_ind must be view boundaries or an int number of views; got a bool.")
    if isinstance(views_ind, int | np.integer):
        n_views = int(views_ind)
        if n_views < 1:
            raise ValueError(f"views_ind as a number of views must be >= 1; got {n_views}.")
        if n_views > n_features:
            raise ValueError(
                f"X has n_features = {n_features}, too few to cut into views_ind={n_views} "
                "views (each view needs at least one column)."
            )
        sizes = [len(b) for b in np.array_split(np.arange(n_features), n_views)]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    b = np.asarray(views_ind)
    if (
        b.ndim != 1
        or b.size < 2
        or b.dtype.kind not in "iu"
        or b[0] != 0
        or b[-1] != n_features
        or np.any(np.diff(b) <= 0)
    ):
        raise ValueError(
            "views_ind must be increasing view boundaries [0, ..., n_features] with at least "
            f"one column per view (or an int number of views); got {b.tolist()} for X with "
            f"{n_features} column(s)."
        )
    return b.astype(np.intp)


def split_views(X, views_ind) -> list:
    """Split the columns of a 2-D array (dense or sparse) into views at ``views_ind``
    (see :func:`resolve_views_ind`). Sparse input gives sparse views (CSR stays CSR)."""
    if not (sp.issparse(X) or getattr(X, "ndim", None) == 2):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array when views_ind is given; got shape {X.shape}.")
    b = resolve_views_ind(views_ind, X.shape[1])
    if sp.issparse(X) and X.format not in ("csr", "csc"):
        X = X.tocsr()
    return [X[:, b[v] : b[v + 1]] for v in range(b.size - 1)]


class MultiviewMixin:
    """``_validate_views``: one validation of multiview input for every multiview estimator.

    The estimator has a ``views_ind`` parameter (see the module docstring). The mixin adds no
    public method and no parameter.
    """

    def _validate_views(
        self,
        X,
        y="no_validation",
        *,
        reset: bool,
        accept_sparse=False,
        min_views: int = 1,
        dtype="numeric",
        ensure_all_finite: bool = True,
        ensure_min_samples: int = 1,
        y_numeric: bool = False,
    ):
        """Check multiview input and return the views (and ``y`` when given).

        Parameters
        ----------
        X : list of array-like, or array-like / sparse matrix of shape (n_samples, n_features)
            A list of views, or one stacked 2-D array split by ``self.views_ind``.
        y : array-like of shape (n_samples,), None or "no_validation"
            Targets, checked against ``X`` (1-D, finite, as many as the samples); ``None``
            (fit given no target) raises the error scikit-learn's estimators raise; the
            default, ``"no_validation"``, checks ``X`` alone (predict, transform).
        reset : bool
            ``True`` in ``fit``: record ``n_features_in_``, ``n_features_per_view_``,
            ``views_ind_`` (and ``feature_names_in_``); ``False`` after: check ``X`` against
            them.
        accept_sparse : bool or list of str, default=False
            Sparse formats the estimator's maths takes; others raise a ``TypeError`` that
            says dense data is required (nothing is densified silently).
        min_views : int, default=1
            Fewest views the method needs.
        dtype, ensure_all_finite, ensure_min_samples, y_numeric
            As in :func:`sklearn.utils.check_array` / ``check_X_y``.

        Returns
        -------
        Xs : list of ndarray or sparse matrix
            The views.
        y : ndarray
            Only when ``y`` is given.
        """
        if y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, but the "
                "target y is None."
            )
        no_y = isinstance(y, str) and y == "no_validation"
        if isinstance(X, list | tuple) and len(X) == 0:
            raise ValueError(
                f"{type(self).__name__} got an empty list: no views. Pass a list of 2-D views, "
                "or one 2-D array with views_ind."
            )
        views_ind = getattr(self, "views_ind", None)
        if is_list_of_views(X):
            # views_ind describes a stacked X; a list of views carries its own boundaries
            Xs = self._check_list_of_views(
                X,
                reset=reset,
                accept_sparse=accept_sparse,
                dtype=dtype,
                ensure_all_finite=ensure_all_finite,
                ensure_min_samples=ensure_min_samples,
            )
            if not no_y:
                y = _check_y(y, Xs[0].shape[0], y_numeric=y_numeric)
        else:
            check = {
                "accept_sparse": accept_sparse,
                "dtype": dtype,
                "ensure_all_finite": ensure_all_finite,
                "ensure_min_samples": ensure_min_samples,
            }
            if no_y:
                X = validate_data(self, X, reset=reset, **check)
            else:
                X, y = validate_data(self, X, y, reset=reset, y_numeric=y_numeric, **check)
            if reset:
                bounds = resolve_views_ind(views_ind, X.shape[1])
            else:
                bounds = np.asarray(self.views_ind_)
            Xs = split_views(X, bounds)
            if reset:
                self.views_ind_ = bounds
        if reset:
            if len(Xs) < min_views:
                raise ValueError(
                    f"{type(self).__name__} needs at least {min_views} views; got {len(Xs)}. "
                    "Pass a list of views, or a stacked X with views_ind giving the view "
                    "boundaries (multiview_lab.utils.stack_views makes both)."
                )
            self.n_features_per_view_ = [int(V.shape[1]) for V in Xs]
            self.n_views_ = len(Xs)
        return Xs if no_y else (Xs, y)

    def _check_list_of_views(
        self, Xs, *, reset, accept_sparse, dtype, ensure_all_finite, ensure_min_samples
    ) -> list:
        fitted = None if reset else getattr(self, "n_features_per_view_", None)
        Xs = check_Xs(
            Xs,
            accept_sparse=accept_sparse,
            dtype=dtype,
            ensure_all_finite=ensure_all_finite,
            n_views=None if fitted is None else len(fitted),
            n_features=fitted,
        )
        if Xs[0].shape[0] < ensure_min_samples:
            raise ValueError(
                f"Found array with {Xs[0].shape[0]} sample(s) while a minimum of "
                f"{ensure_min_samples} is required by {type(self).__name__}."
            )
        widths = [int(V.shape[1]) for V in Xs]
        if reset:
            self.n_features_in_ = int(sum(widths))
            self.views_ind_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.intp)
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        return Xs


def _check_y(y, n_samples: int, *, y_numeric: bool) -> np.ndarray:
    """1-D, finite targets, one per sample (the checks of ``check_X_y`` for a list of views)."""
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n_samples:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{n_samples}, {y.shape[0]}] (the views have {n_samples} rows, y has "
            f"{y.shape[0]} values)."
        )
    if y_numeric and y.dtype.kind == "O":
        y = y.astype(np.float64)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity.")
    return y
