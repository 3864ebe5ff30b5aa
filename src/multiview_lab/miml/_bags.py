"""Validation and kernel helpers shared by every MIML estimator of this package.

Bags are stored stacked: one ``(N_I, d)`` array of all instances, bag after bag, plus the
``offsets`` array (length ``n + 1``) so that bag ``i`` is ``X[offsets[i]:offsets[i + 1]]``. This
is the layout of the matrix ``E = blockdiag(1_{n_1}, ..., 1_{n_n})`` of the MIML-GP spec (Sect. 1),
which is never formed: bag sums are ``np.add.reduceat`` over the offsets.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "bag_sum_kernel",
    "bag_self_sums",
    "check_bag_labels",
    "check_bags",
    "kernel_matrix",
    "sq_distances",
    "standardize_bags",
]

# Largest number of kernel entries held at once by the chunked helpers (32 MB of float64).
_CHUNK_ENTRIES = 4_000_000


def check_bags(bags, *, n_features: int | None = None):
    """Validate a collection of bags and return them stacked.

    Parameters
    ----------
    bags : list of array-like of shape (n_i, d), or array-like of shape (n, n_i, d)
        One 2-D array of instances per bag.
    n_features : int or None, default=None
        Number of features seen in ``fit`` (checked at predict time).

    Returns
    -------
    X : ndarray of shape (N_I, d)
        All instances, bag after bag, as float64.
    offsets : ndarray of shape (n + 1,)
        Bag ``i`` is ``X[offsets[i]:offsets[i + 1]]``.

    Raises
    ------
    ValueError
        If there are no bags, a bag is empty or not 2-D, bags have different feature
        dimensions (or differ from ``n_features``), or an instance holds NaN or infinity.
    """
    if isinstance(bags, np.ndarray) and bags.dtype != object:
        if bags.ndim != 3:
            raise ValueError(
                "bags must be a list of (n_i, d) arrays or an (n, n_i, d) array; got an array "
                f"of shape {bags.shape}."
            )
        bags = list(bags)
    if isinstance(bags, str) or not hasattr(bags, "__len__"):
        raise ValueError(f"bags must be a list of (n_i, d) arrays; got {type(bags).__name__}.")
    if len(bags) == 0:
        raise ValueError("bags is empty: at least one bag is needed.")
    arrays = []
    d_ref = None
    for i, bag in enumerate(bags):
        try:
            A = np.asarray(bag, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bag {i} could not be converted to a float array: {exc}") from exc
        if A.ndim != 2:
            raise ValueError(f"bag {i} must be a 2-D (n_i, d) array; got shape {A.shape}.")
        if A.shape[0] == 0:
            raise ValueError(f"bag {i} is empty: every bag needs at least one instance.")
        if d_ref is None:
            d_ref = A.shape[1]
        elif A.shape[1] != d_ref:
            raise ValueError(
                f"bag {i} has {A.shape[1]} features but bag 0 has {d_ref}: all instances must "
                "have the same feature dimension."
            )
        if not np.all(np.isfinite(A)):
            raise ValueError(f"bag {i} contains NaN or infinity.")
        arrays.append(A)
    if n_features is not None and d_ref != n_features:
        raise ValueError(f"bags have {d_ref} features but {n_features} were seen in fit.")
    sizes = np.array([A.shape[0] for A in arrays], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return np.vstack(arrays), offsets


def check_bag_labels(Y, n_bags: int) -> np.ndarray:
    """Validate an (n, Q) label matrix in {0, 1} or {-1, +1} and return it in {-1, +1}.

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D with ``n_bags`` rows, holds NaN or a value outside {0, 1} / {-1, +1},
        or a label column has no positive bag.
    """
    Y = np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"Y must be an (n_bags, n_labels) matrix; got shape {Y.shape}.")
    if Y.shape[0] != n_bags:
        raise ValueError(f"Y has {Y.shape[0]} rows but there are {n_bags} bags.")
    if Y.dtype.kind not in "biuf":
        raise ValueError(f"Y must be numeric in {{0, 1}} or {{-1, +1}}; got dtype {Y.dtype}.")
    if Y.dtype.kind == "f" and not np.all(np.isfinite(Y)):
        raise ValueError("Y contains NaN or infinity.")
    values = set(np.unique(Y).tolist())
    if not values <= {0, 1} and not values <= {-1, 1}:
        raise ValueError(
            f"Y must hold labels in {{0, 1}} or {{-1, +1}}; found values {sorted(values)}."
        )
    Ypm = np.where(Y > 0, 1.0, -1.0)
    empty = np.flatnonzero(~np.any(Ypm > 0, axis=0))
    if empty.size:
        raise ValueError(
            f"label column(s) {empty.tolist()} have no positive bag: every label needs at "
            "least one positive training bag."
        )
    return Ypm


def standardize_bags(train_bags, test_bags=()):
    """Standardise instance features with the mean and standard deviation of the training
    instances (MIML-GP spec Sect. 6.2); a constant feature keeps its scale (sd taken as 1).

    Parameters
    ----------
    train_bags, test_bags : list of ndarray of shape (n_i, d)
        The training bags (their instances give the statistics) and the bags to transform
        with them.

    Returns
    -------
    train, test : list of ndarray
        Both lists standardised with the training statistics.
    """
    X = np.vstack(train_bags)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return [(b - mu) / sd for b in train_bags], [(b - mu) / sd for b in test_bags]


def sq_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``A`` and ``B`` (clipped at 0)."""
    D = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :]
    D -= 2.0 * (A @ B.T)
    np.maximum(D, 0.0, out=D)
    return D


def kernel_matrix(A: np.ndarray, B: np.ndarray, kernel: str, delta: float) -> np.ndarray:
    """Instance kernel: Gaussian ``exp(-||x - x'||^2 / delta^2)`` (paper Eq. (2), note
    ``delta^2`` not ``2 delta^2``) or linear ``x . x'`` (paper Eq. (3))."""
    if kernel == "rbf":
        K = sq_distances(A, B)
        K *= -1.0 / delta**2
        return np.exp(K, out=K)
    return A @ B.T


def _row_chunks(offsets: np.ndarray, n_cols: int):
    """Yield ``(b0, b1)`` bag ranges whose instances times ``n_cols`` fit in one chunk."""
    n = offsets.size - 1
    max_rows = max(1, _CHUNK_ENTRIES // max(n_cols, 1))
    b0 = 0
    while b0 < n:
        b1 = int(np.searchsorted(offsets, offsets[b0] + max_rows, side="right")) - 1
        b1 = min(max(b1, b0 + 1), n)
        yield b0, b1
        b0 = b1


def bag_sum_kernel(XA, offA, XB, offB, kernel: str, delta: float) -> np.ndarray:
    """Bag-sum kernel ``(K_sum)_ik = sum_j sum_l k(x_ij, x_kl)`` (``E_A^T K E_B``), chunked.

    Memory is O(chunk * N_B); the instance kernel is never held whole.
    """
    nA, nB = offA.size - 1, offB.size - 1
    out = np.empty((nA, nB))
    for b0, b1 in _row_chunks(offA, XB.shape[0]):
        Kc = kernel_matrix(XA[offA[b0] : offA[b1]], XB, kernel, delta)
        Kc = np.add.reduceat(Kc, offB[:-1], axis=1)
        out[b0:b1] = np.add.reduceat(Kc, offA[b0:b1] - offA[b0], axis=0)
    return out


def bag_self_sums(X, offsets, kernel: str, delta: float) -> np.ndarray:
    """``1^T K_ii 1`` for every bag ``i`` (the within-bag kernel sums), chunked."""
    n = offsets.size - 1
    out = np.empty(n)
    sizes = np.diff(offsets)
    max_rows = int(np.sqrt(_CHUNK_ENTRIES))
    b0 = 0
    while b0 < n:
        b1 = int(np.searchsorted(offsets, offsets[b0] + max_rows, side="right")) - 1
        b1 = min(max(b1, b0 + 1), n)
        Xc = X[offsets[b0] : offsets[b1]]
        ids = np.repeat(np.arange(b1 - b0), sizes[b0:b1])
        Kc = kernel_matrix(Xc, Xc, kernel, delta)
        Kc[ids[:, None] != ids[None, :]] = 0.0
        out[b0:b1] = np.add.reduceat(Kc.sum(axis=1), offsets[b0:b1] - offsets[b0])
        b0 = b1
    return out
