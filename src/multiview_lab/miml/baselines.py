"""The MIML baselines of the MIML-GP paper's Tables 2-3: MIMLSVM, MIMLRBF and MIML-kNN.

All three work on the (maximal) Hausdorff distance between bags (MIML-GP spec Sect. 6.2)::

    H(A, B) = max{ max_a min_b ||a - b||, max_b min_a ||a - b|| }

computed chunk-wise with ``reduceat`` over the stacked instances, never holding the full
instance-distance matrix. Each estimator has the API of :class:`~multiview_lab.miml.gp.MIMLGPClassifier`:
``fit(bags, Y)``, ``decision_function(bags)`` (real-valued per-label outputs for ranking
metrics) and ``predict(bags)`` (0/1 matrix; labels with positive output, the top-scoring label
when none is positive, so every bag gets at least one label).

They follow scikit-learn's classifier contract (:class:`~multiview_lab.miml._bags.BagClassifierMixin`):
a list of bags is indexed as rows by ``cross_val_score`` / ``GridSearchCV``, a plain 2-D ``X``
is read as bags of one instance each, and a 1-D ``y`` of class labels fits a single-label
(binary or multiclass) model whose ``predict`` returns class labels: ``decision_function > 0``
(binary) or its arg-max (multiclass), without the top-label rule, which is a multi-label rule.

References
----------
Z.-H. Zhou, M.-L. Zhang. Multi-instance multi-label learning with application to scene
classification. NIPS 2006 (MIMLSVM). M.-L. Zhang, Z.-J. Wang. MIMLRBF: RBF neural networks for
multi-instance multi-label learning. Neurocomputing 72, 2009. M.-L. Zhang. A k-nearest neighbor
based multi-instance multi-label learning algorithm. ICTAI 2010 (MIML-kNN).
"""

from __future__ import annotations

import logging
import numbers

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, _fit_context
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from multiview_lab.miml._bags import _CHUNK_ENTRIES, BagClassifierMixin, check_bags

logger = logging.getLogger(__name__)

__all__ = ["MIMLRBF", "MIMLSVM", "MIMLkNN", "hausdorff_distances", "k_medoids"]


def hausdorff_distances(bags_a, bags_b=None) -> np.ndarray:
    """Maximal Hausdorff distances between two collections of bags.

    Parameters
    ----------
    bags_a, bags_b : list of array-like of shape (n_i, d)
        ``bags_b=None`` uses ``bags_a``.

    Returns
    -------
    D : ndarray of shape (len(bags_a), len(bags_b))
    """
    XA, offA = check_bags(bags_a)
    XB, offB = (XA, offA) if bags_b is None else check_bags(bags_b, n_features=XA.shape[1])
    return _hausdorff(XA, offA, XB, offB)


def _hausdorff(XA, offA, XB, offB) -> np.ndarray:
    nA, nB = offA.size - 1, offB.size - 1
    out = np.empty((nA, nB))
    rows_per_chunk = max(1, _CHUNK_ENTRIES // XB.shape[0])
    b0 = 0
    while b0 < nA:
        b1 = int(np.searchsorted(offA, offA[b0] + rows_per_chunk, side="right")) - 1
        b1 = min(max(b1, b0 + 1), nA)
        D = cdist(XA[offA[b0] : offA[b1]], XB)  # exact zeros for identical instances
        local = offA[b0:b1] - offA[b0]
        # A -> B: for each a, nearest b within each B bag; then the worst a per A bag
        a_to_b = np.maximum.reduceat(np.minimum.reduceat(D, offB[:-1], axis=1), local, axis=0)
        # B -> A: for each b, nearest a within each A bag; then the worst b per B bag
        b_to_a = np.maximum.reduceat(np.minimum.reduceat(D, local, axis=0), offB[:-1], axis=1)
        out[b0:b1] = np.maximum(a_to_b, b_to_a)
        b0 = b1
    return out


def k_medoids(D: np.ndarray, k: int, *, max_iter: int = 100, random_state=None) -> np.ndarray:
    """k-medoids (alternating assignment / medoid update) on a distance matrix.

    Seeded k-means++-style initialisation; returns the indices of the ``k`` medoids.
    """
    n = D.shape[0]
    if not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k-medoids needs at least one medoid; got k={k}.")
    if k > n:
        raise ValueError(f"k={k} medoids requested from only {n} bags.")
    rng = check_random_state(random_state)
    medoids = [int(rng.randint(n))]
    closest = D[medoids[0]].copy()
    for _ in range(1, k):
        prob = closest**2
        tot = prob.sum()
        nxt = int(rng.choice(n, p=prob / tot)) if tot > 0 else int(rng.randint(n))
        if nxt in medoids:
            nxt = int(np.setdiff1d(np.arange(n), medoids)[0])
        medoids.append(nxt)
        np.minimum(closest, D[nxt], out=closest)
    medoids = np.array(medoids)
    for _ in range(max_iter):
        assign = np.argmin(D[:, medoids], axis=1)
        assign[medoids] = np.arange(k)
        new = medoids.copy()
        for c in range(k):
            members = np.flatnonzero(assign == c)
            new[c] = members[np.argmin(D[np.ix_(members, members)].sum(axis=1))]
        if np.array_equal(new, medoids):
            break
        medoids = new
    return medoids


def _predict_with_fallback(scores: np.ndarray) -> np.ndarray:
    """Labels with positive output; the top-scoring label if none is positive."""
    pred = (scores > 0).astype(int)
    empty = ~pred.any(axis=1)
    pred[empty, np.argmax(scores[empty], axis=1)] = 1
    return pred


class _HausdorffBagModel(BagClassifierMixin, BaseEstimator):
    """Shared fit/predict plumbing: stacked training bags and the Hausdorff distances.

    Subclasses implement ``_scores(bags)``, the real-valued (n_bags, Q) outputs.
    """

    def _fit_bags(self, bags, Y):
        X, off = self._validate_bags(bags, reset=True)
        Ypm = self._validate_targets(Y, off.size - 1)
        self.n_labels_ = Ypm.shape[1]
        return X, off, Ypm

    def _distances_to(self, bags, X_ref, off_ref):
        X, off = self._validate_bags(bags, reset=False)
        return _hausdorff(X, off, X_ref, off_ref)

    def decision_function(self, bags):
        """Real-valued outputs per label, shape (n_bags, Q); for a 1-D ``y``: (n_bags,)
        (binary) or (n_bags, n_classes)."""
        check_is_fitted(self)
        S = self._scores(bags)
        return S if self._label_mode == "multilabel" else self._single_label_decision(S)

    def predict(self, bags):
        """Label sets as an (n_bags, Q) 0/1 matrix (at least one label per bag); for a 1-D
        ``y``: class labels."""
        check_is_fitted(self)
        S = self._scores(bags)
        if self._label_mode == "multilabel":
            return _predict_with_fallback(S)
        return self._single_label_predict(S)


class MIMLSVM(_HausdorffBagModel):
    """MIMLSVM: k-medoids bag embedding and one SVM per label (Zhou & Zhang 2007).

    The training bags are clustered by k-medoids with the Hausdorff distance into
    ``k = int(ratio * n)`` clusters; each bag becomes the vector of its Hausdorff distances to
    the ``k`` medoids; one SVM per label is trained on it, ``C`` (and for the RBF kernel
    ``gamma``) chosen by ``cv``-fold cross-validation (MIML-GP spec Sect. 6.2). The MIML-GP
    paper uses the RBF kernel on scene and the linear kernel on Reuters (its Sect. 4.1).

    Parameters
    ----------
    ratio : float, default=0.2
        Number of medoids as a fraction of the training bags.
    kernel : {"rbf", "linear"}, default="rbf"
        SVM kernel on the medoid-distance vectors ``z, z'``: ``exp(-gamma ||z - z'||^2)`` or
        ``z . z'`` (scikit-learn's ``SVC(kernel=...)``; ``gamma_grid`` is then unused).
    C_grid : sequence of float, default=(0.1, 1, 10, 100)
        SVM ``C`` values tried.
    gamma_grid : sequence of float, default=(0.25, 1, 4)
        RBF ``gamma`` values tried, as multiples of ``1 / (k * var(features))`` (scikit-learn's
        ``gamma="scale"``); ignored by the linear kernel.
    cv : int, default=2
        Folds of the per-label grid search (the paper's 2-fold CV).
    random_state : int, RandomState or None, default=None
        Seeds k-medoids and the CV folds.

    Attributes
    ----------
    medoids_ : list of ndarray
        The medoid bags.
    svms_ : list of SVC
        One fitted SVM per label.
    classes_ : ndarray
        ``arange(Q)`` for a label matrix ``Y``, the class labels for a 1-D ``y``.
    n_features_in_ : int
        Features per instance.
    """

    # ``ratio`` (k from the data), ``kernel``: hand-written checks name the problem (tested)
    _parameter_constraints: dict = {
        "ratio": [Interval(numbers.Real, 0, 1, closed="both")],
        "kernel": [str],
        "C_grid": ["array-like"],
        "gamma_grid": ["array-like"],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, ratio=0.2, kernel="rbf", C_grid=(0.1, 1.0, 10.0, 100.0),
        gamma_grid=(0.25, 1.0, 4.0), cv=2, random_state=None,
    ):  # fmt: skip
        self.ratio = ratio
        self.kernel = kernel
        self.C_grid = C_grid
        self.gamma_grid = gamma_grid
        self.cv = cv
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, bags, Y):
        """Fit the medoid embedding and the per-label SVMs.

        Parameters
        ----------
        bags : list of array-like of shape (n_i, d), or array-like of shape (n, d)
            Training bags (a 2-D array: bags of one instance each).
        Y : array-like of shape (n, Q) or (n,)
            Label matrix in {0, 1} or {-1, +1}, or class labels.

        Returns
        -------
        self
        """
        X, off, Ypm = self._fit_bags(bags, Y)
        if self.kernel not in ("rbf", "linear"):
            raise ValueError(f"kernel={self.kernel!r} is not supported; use 'rbf' or 'linear'.")
        n = off.size - 1
        k = int(self.ratio * n) if isinstance(self.ratio, numbers.Real) else 0
        if k < 1 or k > n:
            raise ValueError(
                f"ratio={self.ratio!r} gives k={k} medoids for {n} bags; need 1 <= k <= n."
            )
        rng = check_random_state(self.random_state)
        D = _hausdorff(X, off, X, off)
        med = k_medoids(D, k, random_state=rng)
        self.medoids_ = [X[off[i] : off[i + 1]] for i in med]
        self._Xm = np.vstack(self.medoids_)
        self._offm = np.concatenate([[0], np.cumsum([len(b) for b in self.medoids_])])
        Z = D[:, med]
        scale = 1.0 / (k * Z.var()) if Z.var() > 0 else 1.0
        grid = {"C": list(self.C_grid)}
        if self.kernel == "rbf":
            grid["gamma"] = [g * scale for g in self.gamma_grid]
        self.svms_ = []
        for s in range(Ypm.shape[1]):
            y = Ypm[:, s]
            n_min = int(min(np.sum(y > 0), np.sum(y < 0)))
            if n_min >= self.cv:
                folds = StratifiedKFold(self.cv, shuffle=True, random_state=rng.randint(2**31))
                search = GridSearchCV(SVC(kernel=self.kernel), grid, cv=folds).fit(Z, y)
                self.svms_.append(search.best_estimator_)
            else:
                svm = SVC(kernel=self.kernel, C=1.0, gamma=scale)
                self.svms_.append(svm.fit(Z, y))
        return self

    def _scores(self, bags):
        """SVM outputs per label, shape (n_bags, Q)."""
        Z = self._distances_to(bags, self._Xm, self._offm)
        return np.column_stack([svm.decision_function(Z) for svm in self.svms_])


class MIMLRBF(_HausdorffBagModel):
    """MIMLRBF: RBF network on Hausdorff distances to per-label medoids (Zhang & Wang 2009).

    For each label ``s`` the bags having ``s`` are clustered by k-medoids into
    ``ceil(alpha * |bags with s|)`` medoids; the basis functions are
    ``phi_c(X) = exp(-H(X, c)^2 / (2 sigma^2))`` with ``sigma = mu x`` the mean pairwise Hausdorff
    distance between all medoids; the second layer (with a bias unit) is fitted by least squares
    (SVD) to targets ``+-1`` (MIML-GP spec Sect. 6.2).

    Parameters
    ----------
    alpha : float, default=0.1
        Medoids per label as a fraction of the bags having that label.
    mu : float, default=0.6
        Width factor of the basis functions.
    random_state : int, RandomState or None, default=None
        Seeds k-medoids.

    Attributes
    ----------
    centers_ : list of ndarray
        All medoid bags (label after label).
    sigma_ : float
        Basis width.
    weights_ : ndarray of shape (n_centers + 1, Q)
        Second-layer weights (last row = bias).
    classes_ : ndarray
        ``arange(Q)`` for a label matrix ``Y``, the class labels for a 1-D ``y``.
    n_features_in_ : int
        Features per instance.
    """

    # ``alpha = 0`` is named by the hand-written check (k = 0 medoids; tested)
    _parameter_constraints: dict = {
        "alpha": [Interval(numbers.Real, 0, 1, closed="both")],
        "mu": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, alpha=0.1, mu=0.6, random_state=None):
        self.alpha = alpha
        self.mu = mu
        self.random_state = random_state

    def _phi(self, D):
        Phi = np.exp(-(D**2) / (2.0 * self.sigma_**2))
        return np.hstack([Phi, np.ones((D.shape[0], 1))])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, bags, Y):
        """Fit the per-label medoids and the least-squares output layer.

        Parameters
        ----------
        bags : list of array-like of shape (n_i, d), or array-like of shape (n, d)
            Training bags (a 2-D array: bags of one instance each).
        Y : array-like of shape (n, Q) or (n,)
            Label matrix in {0, 1} or {-1, +1}, or class labels.

        Returns
        -------
        self
        """
        X, off, Ypm = self._fit_bags(bags, Y)
        if not isinstance(self.alpha, numbers.Real) or not 0 < self.alpha <= 1:
            raise ValueError(
                f"alpha must be in (0, 1] (k = 0 medoids otherwise); got {self.alpha!r}."
            )
        if not isinstance(self.mu, numbers.Real) or not self.mu > 0:
            raise ValueError(f"mu must be positive; got {self.mu!r}.")
        rng = check_random_state(self.random_state)
        D = _hausdorff(X, off, X, off)
        centers = []
        for s in range(Ypm.shape[1]):
            idx = np.flatnonzero(Ypm[:, s] > 0)
            k = int(np.ceil(self.alpha * idx.size))
            med = k_medoids(D[np.ix_(idx, idx)], k, random_state=rng)
            centers.extend(idx[med].tolist())
        centers = np.array(centers)
        Dc = D[np.ix_(centers, centers)]
        iu = np.triu_indices(centers.size, k=1)
        mean_dist = Dc[iu].mean() if iu[0].size else 1.0
        self.sigma_ = float(self.mu * mean_dist) if mean_dist > 0 else float(self.mu)
        self.centers_ = [X[off[i] : off[i + 1]] for i in centers]
        self._Xc = np.vstack(self.centers_)
        self._offc = np.concatenate([[0], np.cumsum([len(b) for b in self.centers_])])
        self.weights_ = np.linalg.lstsq(self._phi(D[:, centers]), Ypm, rcond=None)[0]
        return self

    def _scores(self, bags):
        """Network outputs per label, shape (n_bags, Q)."""
        return self._phi(self._distances_to(bags, self._Xc, self._offc)) @ self.weights_


class MIMLkNN(_HausdorffBagModel):
    """MIML-kNN: label counts over references and citers, then a linear layer (Zhang 2010).

    For a bag ``X``: its ``n_references`` nearest training bags (Hausdorff) and its citers, the
    training bags that count ``X`` among their ``n_citers`` nearest training bags; ``t(X)`` is
    the vector of label counts over references ∪ citers and ``y_s = w_s^T t(X)`` with ``W``
    fitted by least squares to ``+-1`` targets (MIML-GP spec Sect. 6.2). Citer radii are computed
    on the training set only (a training bag is never its own neighbour).

    Parameters
    ----------
    n_references : int, default=10
        ``k`` nearest training bags.
    n_citers : int, default=20
        ``c``: neighbourhood size defining citers (0 disables citers).

    Attributes
    ----------
    weights_ : ndarray of shape (Q, Q)
        Linear layer (``scores = t(X) @ weights_``).
    citer_radius_ : ndarray of shape (n_train,)
        Distance of each training bag to its ``n_citers``-th nearest other training bag.
    classes_ : ndarray
        ``arange(Q)`` for a label matrix ``Y``, the class labels for a 1-D ``y``.
    n_features_in_ : int
        Features per instance.
    """

    # the ranges depend on the number of training bags: checked in ``fit``
    _parameter_constraints: dict = {
        "n_references": [numbers.Integral],
        "n_citers": [numbers.Integral],
    }

    def __init__(self, *, n_references=10, n_citers=20):
        self.n_references = n_references
        self.n_citers = n_citers

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, bags, Y):
        """Compute training neighbourhoods and fit the linear layer.

        Parameters
        ----------
        bags : list of array-like of shape (n_i, d), or array-like of shape (n, d)
            Training bags (a 2-D array: bags of one instance each).
        Y : array-like of shape (n, Q) or (n,)
            Label matrix in {0, 1} or {-1, +1}, or class labels.

        Returns
        -------
        self
        """
        X, off, Ypm = self._fit_bags(bags, Y)
        n = off.size - 1
        k, c = self.n_references, self.n_citers
        if not isinstance(k, numbers.Integral) or not 1 <= k <= n - 1:
            raise ValueError(f"n_references must be an integer in [1, {n - 1}]; got {k!r}.")
        if not isinstance(c, numbers.Integral) or not 0 <= c <= n - 1:
            raise ValueError(f"n_citers must be an integer in [0, {n - 1}]; got {c!r}.")
        D = _hausdorff(X, off, X, off)
        np.fill_diagonal(D, np.inf)
        order = np.argsort(D, axis=1, kind="stable")
        A = np.zeros((n, n), dtype=bool)
        np.put_along_axis(A, order[:, :k], True, axis=1)  # references
        if c > 0:
            Nc = np.zeros((n, n), dtype=bool)
            np.put_along_axis(Nc, order[:, :c], True, axis=1)  # Nc[Z, X]: X among Z's c nearest
            A |= Nc.T  # Z cites X
            self.citer_radius_ = np.take_along_axis(D, order[:, c - 1 : c], axis=1).ravel()
        else:
            self.citer_radius_ = np.full(n, -np.inf)
        self._X, self._off, self._Y01 = X, off, (Ypm > 0).astype(float)
        T = A @ self._Y01
        self.weights_ = np.linalg.lstsq(T, Ypm, rcond=None)[0]
        return self

    def label_counts(self, bags) -> np.ndarray:
        """``t(X)``: label counts over references ∪ citers, shape (n_bags, Q)."""
        check_is_fitted(self)
        D = self._distances_to(bags, self._X, self._off)
        order = np.argsort(D, axis=1, kind="stable")
        A = np.zeros(D.shape, dtype=bool)
        np.put_along_axis(A, order[:, : self.n_references], True, axis=1)
        A |= D < self.citer_radius_[None, :]
        return A @ self._Y01

    def _scores(self, bags):
        """Linear outputs per label, shape (n_bags, Q)."""
        return self.label_counts(bags) @ self.weights_
