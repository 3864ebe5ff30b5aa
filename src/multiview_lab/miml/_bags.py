"""Validation and kernel helpers shared by every MIML estimator of this package.

Bags are stored stacked: one ``(N_I, d)`` array of all instances, bag after bag, plus the
``offsets`` array (length ``n + 1``) so that bag ``i`` is ``X[offsets[i]:offsets[i + 1]]``. This
is the layout of the matrix ``E = blockdiag(1_{n_1}, ..., 1_{n_n})`` of the MIML-GP spec (Sect. 1),
which is never formed: bag sums are ``np.add.reduceat`` over the offsets.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.metrics import accuracy_score
from sklearn.utils._tags import ClassifierTags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = [
    "BagClassifierMixin",
    "BagStandardScaler",
    "SPARSE_MESSAGE",
    "bag_sum_kernel",
    "bag_self_sums",
    "check_bag_labels",
    "check_bags",
    "kernel_matrix",
    "sq_distances",
    "standardize_bags",
]

#: why sparse bags are refused (the TypeError of every MIML estimator)
SPARSE_MESSAGE = (
    "Sparse input is not supported by the MIML estimators: their Gaussian and linear kernels "
    "(MIML-GP) and their Hausdorff distances (MIMLSVM, MIMLRBF, MIML-kNN) are computed on "
    "dense instance blocks, and a sparse bag would have to be densified. Pass dense bags "
    "(e.g. bag.toarray() if it fits in memory)."
)

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
        If there are no bags, a bag is empty, not 2-D, has no feature or holds complex values,
        bags have different feature dimensions (or differ from ``n_features``), or an
        instance holds NaN or infinity.
    TypeError
        If a bag is a sparse matrix (see :data:`SPARSE_MESSAGE`).
    """
    if sp.issparse(bags):
        raise TypeError(SPARSE_MESSAGE)
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
        if sp.issparse(bag):
            raise TypeError(f"bag {i} is a sparse matrix. {SPARSE_MESSAGE}")
        try:
            A = np.asarray(bag)
            if np.iscomplexobj(A):
                raise ValueError(
                    f"Complex data not supported: bag {i} holds complex values; the kernels "
                    "and distances are defined on real features."
                )
            A = A.astype(np.float64, copy=False)
        except (TypeError, ValueError) as exc:
            if str(exc).startswith("Complex data"):
                raise
            raise ValueError(f"bag {i} could not be converted to a float array: {exc}") from exc
        if A.ndim != 2:
            raise ValueError(f"bag {i} must be a 2-D (n_i, d) array; got shape {A.shape}.")
        if A.shape[0] == 0:
            raise ValueError(f"bag {i} is empty: every bag needs at least one instance.")
        if A.shape[1] == 0:
            raise ValueError(
                f"bag {i} has 0 features (shape={A.shape}): instances need at least one feature."
            )
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
        or a label column has no positive bag or no negative bag.
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
    full = np.flatnonzero(np.all(Ypm > 0, axis=0))
    if full.size:
        raise ValueError(
            f"label column(s) {full.tolist()} have no negative bag (positive in every bag): "
            "every label needs at least one negative training bag too; drop such labels "
            "(they are predicted for every bag anyway)."
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


# ----------------------------------------------------------------------------------------------
# the scikit-learn face of the MIML estimators
# ----------------------------------------------------------------------------------------------
def _is_instance_matrix(bags) -> bool:
    """Whether ``bags`` is one 2-D array of instances (one instance per bag) rather than a
    collection of bags: a 2-D (or 1-D, to be rejected with scikit-learn's wording) array, a
    DataFrame, a sparse matrix, or a list of rows."""
    if sp.issparse(bags):
        return True
    if isinstance(bags, np.ndarray):
        return not (bags.ndim == 3 and bags.dtype != object) and not (
            bags.dtype == object and bags.ndim == 1
        )
    if isinstance(bags, list | tuple):
        if len(bags) == 0 or sp.issparse(bags[0]):
            return False
        ndim = getattr(bags[0], "ndim", None)
        if ndim is None:
            try:
                ndim = np.ndim(bags[0])
            except ValueError:  # a ragged nested list: a bag (check_bags names the problem)
                return False
        return ndim < 2
    return hasattr(bags, "__array__") or hasattr(bags, "iloc")


class BagClassifierMixin(ClassifierMixin):
    """Input checks, targets and tags shared by the MIML estimators (scikit-learn contract).

    **Input.** ``bags`` is a list of bags, each a 2-D array ``(n_i, d)`` of instances (bags
    may have different sizes ``n_i``; the list has one entry per bag, so scikit-learn's
    ``cross_val_score``, ``GridSearchCV`` and ``Pipeline`` index it as rows), or an
    ``(n, n_i, d)`` array, or a **plain 2-D array** ``X`` of shape ``(n, d)``, read as ``n``
    bags of one instance each (``bags[i] = X[i:i + 1]``; checked by scikit-learn's
    ``validate_data``, so ``n_features_in_`` and ``feature_names_in_`` follow its rules).
    ``n_features_in_`` is the number of features per instance. Sparse bags raise a
    ``TypeError`` (:data:`SPARSE_MESSAGE`).

    **Targets.** A 2-D ``Y`` of shape ``(n, Q)`` in {0, 1} or {-1, +1} is a label-indicator
    matrix (multi-label; every label needs a positive and a negative training bag);
    ``predict`` returns a 0/1 matrix of the same shape and ``classes_`` is
    ``arange(Q)`` (scikit-learn's convention for multi-label classifiers). A 1-D ``y`` is
    single-label: binary or multiclass class labels of any type (strings included); the
    model is then fitted on the indicator columns of ``classes_[1]`` (binary) or of every
    class (one-vs-rest, multiclass), and ``predict`` returns class labels.
    """

    def _validate_bags(self, bags, *, reset: bool):
        """Checked instances ``X`` (N_I, d) and bag ``offsets`` (see :func:`check_bags`)."""
        if _is_instance_matrix(bags):
            if sp.issparse(bags):
                raise TypeError(SPARSE_MESSAGE)
            X = validate_data(self, bags, reset=reset, dtype=np.float64)
            return X, np.arange(X.shape[0] + 1)
        if reset:
            X, offsets = check_bags(bags)
            self.n_features_in_ = int(X.shape[1])
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return X, offsets
        return check_bags(bags, n_features=self.n_features_in_)

    def _validate_targets(self, Y, n_bags: int) -> np.ndarray:
        """The training labels as an (n, Q) matrix in {-1, +1}; sets ``classes_``."""
        name = type(self).__name__
        if Y is None:
            raise ValueError(
                f"This {name} estimator requires y to be passed, but the target y is None."
            )
        if sp.issparse(Y):  # a sparse label-indicator matrix (labels, not features)
            Y = Y.toarray()
        Y = np.asarray(Y)
        if Y.ndim != 1:
            self._label_mode = "multilabel"
            Ypm = check_bag_labels(Y, n_bags)
            self.classes_ = np.arange(Ypm.shape[1])
            return Ypm
        if Y.shape[0] != n_bags:
            raise ValueError(f"Y has {Y.shape[0]} rows but there are {n_bags} bags.")
        check_classification_targets(Y)
        classes = np.unique(Y)
        if classes.size < 2:
            raise ValueError(
                f"{name} needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {classes[0]!r}."
            )
        self.classes_ = classes
        if classes.size == 2:
            self._label_mode = "binary"
            return np.where(Y == classes[1], 1.0, -1.0)[:, None]
        self._label_mode = "multiclass"
        return np.where(Y[:, None] == classes[None, :], 1.0, -1.0)

    def _single_label_decision(self, S: np.ndarray) -> np.ndarray:
        """Scores of a single-label fit: ``(n,)`` for binary, ``(n, n_classes)`` otherwise."""
        return S[:, 0] if self._label_mode == "binary" else S

    def _single_label_predict(self, S: np.ndarray) -> np.ndarray:
        """Class labels from per-column scores whose decision threshold is 0."""
        if self._label_mode == "binary":
            return self.classes_[(S[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(S, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy: subset accuracy for a label matrix ``y`` (in {0, 1} or {-1, +1}),
        plain accuracy for class labels."""
        y = np.asarray(y)
        pred = self.predict(X)
        if y.ndim == 2:
            return float(accuracy_score(y > 0, np.asarray(pred) > 0, sample_weight=sample_weight))
        return float(accuracy_score(y, pred, sample_weight=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags = ClassifierTags(multi_class=True, multi_label=True)
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.input_tags.sparse = False
        return tags


class BagStandardScaler(TransformerMixin, BaseEstimator):
    """Standardise instance features with the statistics of the training instances.

    The transformer form of :func:`standardize_bags` (MIML-GP spec Sect. 6.2), so that the
    standardisation is fitted inside each fold of ``cross_val_score`` / ``GridSearchCV`` when
    it heads a :class:`~sklearn.pipeline.Pipeline` before a MIML estimator. A constant
    feature keeps its scale (its standard deviation is taken as 1).

    Attributes
    ----------
    mean_, scale_ : ndarray of shape (n_features,)
        Mean and standard deviation (1 for constant features) of the training instances.
    n_features_in_ : int
        Features per instance.

    Examples
    --------
    >>> import numpy as np
    >>> bags = [np.array([[0.0, 1.0], [2.0, 1.0]]), np.array([[4.0, 1.0]])]
    >>> [b.tolist() for b in BagStandardScaler().fit_transform(bags)]
    [[[-1.224744871391589, 0.0], [0.0, 0.0]], [[1.224744871391589, 0.0]]]
    """

    def fit(self, bags, y=None):
        """Compute the mean and standard deviation of the training instances."""
        X, _ = _validate_bags_only(self, bags, reset=True)
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        return self

    def transform(self, bags):
        """The bags standardised, in the form they came in (a list, or a 2-D array)."""
        check_is_fitted(self)
        X, offsets = _validate_bags_only(self, bags, reset=False)
        Z = (X - self.mean_) / self.scale_
        if _is_instance_matrix(bags):
            return Z
        return [Z[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


def _validate_bags_only(estimator, bags, *, reset):
    return BagClassifierMixin._validate_bags(estimator, bags, reset=reset)
