"""A standardised sparse view, applied without being formed (sparse input of the L2,1 solvers).

The solvers of :mod:`multiview_lab.mvfs` work on the standardised features
``Z = (X − 1 locᵀ) diag(1/scale)``. Centring a sparse ``X`` would make it dense, so for sparse
input ``Z`` is kept as the operator :class:`StandardizedSparse`, ``Z = diag(r) (X − 1 locᵀ)
diag(c)``, whose products with dense arrays cost ``O(nnz(X))``:

* ``Z @ W = r ∘ (X (c ∘ W) − 1 (locᵀ (c ∘ W)))`` and ``Zᵀ @ E = c ∘ (Xᵀ (r ∘ E) − loc (1ᵀ (r ∘ E)))``;
* the Gram matrix ``Z₁ᵀ Z₂`` (d × d) and the kernel ``Z₁ Z₂ᵀ`` (n × n) of two operators on the
  same ``X`` and ``loc``, expanded so that only ``Xᵀ W X`` / ``X H Xᵀ`` are sparse products (their
  small dense results are materialised, never ``X`` itself);
* ``Z * g[None, :]`` (columns) and ``Zᵀ * f[None, :]`` (rows of ``Z``) rescale the operator.

These are exactly the operations the IRLS, FISTA, ridge-start and RFS code apply to ``X``
(``X @ W``, ``X.T @ E``, ``X.T @ X``, ``X @ X.T``, ``(X * g) @ X.T``, ``(X.T * f) @ X``), so the
same solver code runs on dense arrays (unchanged) and on this operator.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _dense(A) -> np.ndarray:
    """A small product (d × d, n × n or n × C) as an ndarray."""
    return A.toarray() if sp.issparse(A) else np.asarray(A)


class StandardizedSparse:
    """``Z = diag(r) (X − 1 locᵀ) diag(c)`` for a sparse ``X`` of shape (n, d), never formed.

    Parameters
    ----------
    X : sparse matrix of shape (n, d)
        Raw values (converted to CSR float64).
    loc : ndarray of shape (d,)
        Column centres subtracted from ``X``.
    col : ndarray of shape (d,)
        Column factors (``1 / scale``).
    row : ndarray of shape (n,) or None
        Row factors (None: all ones).
    """

    def __init__(self, X, loc, col, row=None):
        self.X = X if sp.isspmatrix_csr(X) or isinstance(X, sp.csr_array) else sp.csr_array(X)
        self.loc = np.asarray(loc, dtype=float)
        self.col = np.asarray(col, dtype=float)
        self.row = None if row is None else np.asarray(row, dtype=float)
        self.shape = self.X.shape
        self.ndim = 2

    @property
    def T(self) -> _TransposedSparse:  # noqa: N802 - mirrors ndarray.T
        return _TransposedSparse(self)

    def _rows(self):
        return np.ones(self.shape[0]) if self.row is None else self.row

    # -- products with dense arrays ---------------------------------------------------------------
    def __matmul__(self, other):
        if isinstance(other, _TransposedSparse):
            return _kernel(self, other.base)
        W = np.asarray(other, dtype=float)
        vector = W.ndim == 1
        W = W[:, None] if vector else W
        Wc = self.col[:, None] * W
        out = _dense(self.X @ Wc) - (self.loc @ Wc)[None, :]
        if self.row is not None:
            out = self.row[:, None] * out
        return out[:, 0] if vector else out

    def rmatmul(self, E):
        """``Zᵀ @ E`` for a dense ``E`` of shape (n,) or (n, k)."""
        E = np.asarray(E, dtype=float)
        vector = E.ndim == 1
        E = E[:, None] if vector else E
        if self.row is not None:
            E = self.row[:, None] * E
        out = _dense(self.X.T @ E) - np.outer(self.loc, E.sum(axis=0))
        out = self.col[:, None] * out
        return out[:, 0] if vector else out

    def __mul__(self, other):
        """``Z * g[None, :]``: a column rescaling (the only broadcast the solvers use)."""
        g = np.asarray(other, dtype=float)
        if g.ndim != 2 or g.shape != (1, self.shape[1]):
            raise TypeError(
                f"A standardised sparse view can only be multiplied by a (1, {self.shape[1]}) "
                f"column scaling; got shape {g.shape}."
            )
        return StandardizedSparse(self.X, self.loc, self.col * g[0], self.row)

    def __array__(self, *args, **kwargs):
        raise TypeError(
            "A standardised sparse view is applied as an operator and never densified; this "
            "operation would need its dense values."
        )


class _TransposedSparse:
    """``Zᵀ`` of a :class:`StandardizedSparse` ``Z``."""

    def __init__(self, base: StandardizedSparse):
        self.base = base
        self.shape = base.shape[::-1]
        self.ndim = 2

    @property
    def T(self) -> StandardizedSparse:  # noqa: N802 - mirrors ndarray.T
        return self.base

    def __matmul__(self, other):
        if isinstance(other, StandardizedSparse):
            return _gram(self.base, other)
        return self.base.rmatmul(other)

    def __mul__(self, other):
        """``Zᵀ * f[None, :]``: a rescaling of the rows of ``Z``."""
        f = np.asarray(other, dtype=float)
        if f.ndim != 2 or f.shape != (1, self.shape[1]):
            raise TypeError(
                f"A transposed standardised sparse view can only be multiplied by a "
                f"(1, {self.shape[1]}) row scaling; got shape {f.shape}."
            )
        b = self.base
        return _TransposedSparse(StandardizedSparse(b.X, b.loc, b.col, b._rows() * f[0]))


def _same_data(A: StandardizedSparse, B: StandardizedSparse) -> None:
    if A.X is not B.X or not np.array_equal(A.loc, B.loc):
        raise ValueError("Gram and kernel products need two operators on the same data.")


def _gram(A: StandardizedSparse, B: StandardizedSparse) -> np.ndarray:
    """``Aᵀ B`` (d × d) = ``diag(c_A) (X − 1 locᵀ)ᵀ diag(w) (X − 1 locᵀ) diag(c_B)``, ``w = r_A r_B``."""
    _same_data(A, B)
    X, loc = A.X, A.loc
    w = A._rows() * B._rows()
    WX = X if A.row is None and B.row is None else sp.csr_array(X.multiply(w[:, None]))
    XtWX = _dense(X.T @ WX)
    Xtw = _dense(X.T @ w)
    G = XtWX - np.outer(Xtw, loc) - np.outer(loc, Xtw) + w.sum() * np.outer(loc, loc)
    return A.col[:, None] * G * B.col[None, :]


def _kernel(A: StandardizedSparse, B: StandardizedSparse) -> np.ndarray:
    """``A Bᵀ`` (n × n) = ``diag(r_A) (X − 1 locᵀ) diag(h) (X − 1 locᵀ)ᵀ diag(r_B)``, ``h = c_A c_B``."""
    _same_data(A, B)
    X, loc = A.X, A.loc
    h = A.col * B.col
    XHXt = _dense(sp.csr_array(X.multiply(h[None, :])) @ X.T)
    u = _dense(X @ (h * loc))
    K = XHXt - u[:, None] - u[None, :] + float(loc @ (h * loc))
    return A._rows()[:, None] * K * B._rows()[None, :]


def column_stats(X, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(loc, scale, constant, low)`` of the columns of a sparse ``X`` (implicit zeros count).

    ``method`` is ``"zscore"`` (mean, ML standard deviation) or ``"minmax"`` (min, range);
    ``constant`` flags the columns whose minimum ``low`` equals their maximum.
    """
    from sklearn.utils.sparsefuncs import mean_variance_axis, min_max_axis

    X = sp.csr_matrix(X, dtype=float)
    low, high = min_max_axis(X, axis=0)
    constant = low == high
    if method == "zscore":
        mean, var = mean_variance_axis(X, axis=0)
        loc, scale = np.asarray(mean), np.sqrt(np.maximum(np.asarray(var), 0.0))
    else:
        loc, scale = np.asarray(low, dtype=float), np.asarray(high - low, dtype=float)
    return loc, scale, constant, np.asarray(low, dtype=float)
