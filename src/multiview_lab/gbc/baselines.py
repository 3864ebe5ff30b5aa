"""Joined-feature baselines of the GBC paper (Shi et al. 2012, "Comparison Methods and
Evaluations"; settings in docs/methods/gbc.md).

All sources and graphs are joined into one feature matrix X = [X^(1) … X^(p), M^(1) … M^(q)]
(each instance gets its adjacency rows as features); instances missing from a source take the
column means of that source over the training part (non-overlapping setting). On X,
:class:`JoinedFeaturesClassifier` fits one of

* ``"svm"``: ``SVC(kernel="rbf")`` on standardised features, C and γ by CV;
* ``"self_training_svm"``: the tuned SVM (Platt-calibrated for probabilities) in a self-training
  wrapper (threshold 0.9, ≤ 10 rounds);
* ``"gbdt"``: ``GradientBoostingClassifier`` (n_estimators, depth, learning rate by CV);
* ``"self_training_gbdt"``: the tuned GBDT in the same self-training wrapper.

It takes the inputs of :class:`~multiview_lab.gbc.GBCClassifier` (``fit(X, y)`` with -1 marking
unlabelled rows and the ``graphs`` parameter, or the source form ``fit(sources, graphs, y,
labeled_mask)``; ``predict_transductive()``), so one evaluation serves GBC and the baselines.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import LabelEncoder, StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from multiview_lab.gbc.gbc import _SourcesInputMixin
from multiview_lab.gbc.graphs import as_adjacency
from multiview_lab.utils.validation import check_n_classes

BASELINES = ("svm", "self_training_svm", "gbdt", "self_training_gbdt")


def _pairs(sources):
    for src in sources:
        X, ids = src if isinstance(src, tuple) else (src, np.arange(np.asarray(src).shape[0]))
        yield np.asarray(X, dtype=np.float64), np.asarray(ids)


def imputation_means(sources, n_instances: int, train_mask=None) -> list[np.ndarray]:
    """Column means of every source over its training instances (``train_mask``; default all)."""
    train = np.ones(n_instances, bool) if train_mask is None else np.asarray(train_mask, bool)
    means = []
    for i, (X, ids) in enumerate(_pairs(sources)):
        use = train[ids]
        if not use.any():
            raise ValueError(f"source {i} holds no training instance to compute imputation means.")
        means.append(X[use].mean(axis=0))
    return means


def _dense(sources, means, n_instances: int) -> np.ndarray:
    blocks = []
    for (X, ids), mean in zip(_pairs(sources), means, strict=True):
        full = np.tile(mean, (n_instances, 1))
        full[ids] = X
        blocks.append(full)
    return np.hstack(blocks)


def _with_links(dense: np.ndarray, links: list) -> np.ndarray | sp.csr_array:
    if not links:
        return dense
    X = sp.hstack([sp.csr_array(dense), *links], format="csr")
    # libsvm (SVC) accepts only 32-bit sparse indices.
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def joined_features(sources, graphs, n_instances: int, train_mask=None):
    """Join sources and adjacency rows into one matrix over the global index, imputing means.

    Parameters
    ----------
    sources : list of (X_i, ids_i)
        As for :class:`~multiview_lab.gbc.GBCClassifier` (a bare array holds every instance).
    graphs : list of sparse (n, n) or None
    n_instances : int
    train_mask : array-like of bool, shape (n,), optional
        Instances whose features define the imputation means (default: all instances of the
        source).

    Returns
    -------
    X : ndarray of shape (n, Σ d_i), or scipy.sparse.csr_array of shape (n, Σ d_i + q·n)
        when there are graphs.
    """
    dense = _dense(sources, imputation_means(sources, n_instances, train_mask), n_instances)
    adj = [as_adjacency(G, n_instances, name=f"graph {g}") for g, G in enumerate(graphs or [])]
    return _with_links(dense, adj)


def _default_grid(kind, n_features):
    if "svm" in kind:
        g = 1.0 / max(n_features, 1)
        return {"svc__C": [1.0, 10.0, 100.0], "svc__gamma": [0.1 * g, g, 10.0 * g]}
    return {"n_estimators": [100], "max_depth": [2, 3], "learning_rate": [0.1]}


def _base(kind, X, random_state):
    if "svm" in kind:
        scaler = StandardScaler(with_mean=not sp.issparse(X))
        return make_pipeline(scaler, SVC(kernel="rbf", random_state=random_state))
    return GradientBoostingClassifier(random_state=random_state)


class JoinedFeaturesClassifier(ClassifierMixin, _SourcesInputMixin, BaseEstimator):
    """A joined-feature baseline of the GBC paper, fitted transductively (Shi et al. 2012,
    "Comparison Methods and Evaluations").

    The sources and the graphs' adjacency rows are joined into one matrix over the global
    index (:func:`joined_features`; an instance missing from a source takes that source's
    column means over the labelled instances). The base classifier's parameters are chosen by
    a stratified ``cv``-fold grid search on the labelled instances; the self-training kinds
    then fit on every instance, the unlabelled ones with label −1.

    Parameters
    ----------
    kind : {"svm", "self_training_svm", "gbdt", "self_training_gbdt"}, default="svm"
        The base classifier: an RBF ``SVC`` on standardised features or a
        ``GradientBoostingClassifier``, alone or in a ``SelfTrainingClassifier``.
    param_grid : dict or None, default=None
        Grid of the base classifier's parameters (``svc__C``, ``svc__gamma`` for the SVMs;
        ``n_estimators``, ``max_depth``, ``learning_rate`` for GBDT). None: C ∈ {1, 10, 100} ×
        γ ∈ {0.1, 1, 10}/d for the SVMs, depth ∈ {2, 3} with 100 trees for GBDT.
    cv : int, default=3
        Folds of the grid search (stratified, shuffled with ``random_state``).
    threshold : float, default=0.9
        Self-training: unlabelled instances predicted with probability ≥ ``threshold`` are added.
    max_iter : int, default=10
        Self-training: at most this many rounds.
    random_state : int or None, default=None
        Seeds the grid-search folds, the SVC and the GBDT.
    views_ind : None, int or array-like of int, default=None
        View boundaries ``[0, d_1, d_1 + d_2, ..., d]`` of a stacked X (or an int number of
        near-equal column blocks; None: one view), see :mod:`multiview_lab.utils.multiview`.
        Ignored for a list of views.
    graphs : list of sparse matrices of shape (n, n) or None, default=None
        Symmetric adjacency matrices over the rows of the X given to ``fit(X, y)``; their rows
        become features.
    partial_sources : bool, default=False
        Whether a row of a source that is entirely NaN marks an instance missing from that
        source (it takes the imputation means); otherwise any NaN is an error.

    Attributes
    ----------
    classes_ : ndarray
        The labels seen among the labelled instances.
    estimator_ : estimator
        The fitted classifier on the joined features (labels encoded 0..K−1).
    best_params_ : dict
        The grid point chosen by the grid search.
    transduction_ : ndarray of shape (n,)
        The predicted label of every instance of the fit.
    imputation_means_ : list of ndarray
        Per source, the column means over its labelled instances.
    n_features_per_source_ : list of int
    n_instances_ : int
        n, the number of instances of the fit.
    n_graphs_ : int
    n_features_in_ : int
        Columns of the stacked X (the sum of the sources' widths).
    n_features_per_view_ : list of int
    n_views_ : int
    views_ind_ : ndarray of shape (n_views_ + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.estimators import JoinedFeaturesClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> X1 = rng.normal(size=(60, 2)) + 2 * y[:, None]
    >>> y_obs = np.where(np.arange(60) % 2 == 0, y, -1)          # odd rows unlabelled
    >>> clf = JoinedFeaturesClassifier(random_state=0).fit([X1], y_obs)
    >>> clf.predict_transductive().shape
    (60,)
    """

    _parameter_constraints: dict = {
        "kind": "no_validation",  # checked in fit, in the wording the project's tests match
        "param_grid": [None, dict, list],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "threshold": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "views_ind": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
        "graphs": [None, list, tuple],
        "partial_sources": ["boolean"],
    }

    def __init__(
        self,
        kind="svm",
        *,
        param_grid=None,
        cv=3,
        threshold=0.9,
        max_iter=10,
        random_state=None,
        views_ind=None,
        graphs=None,
        partial_sources=False,
    ):
        self.kind = kind
        self.param_grid = param_grid
        self.cv = cv
        self.threshold = threshold
        self.max_iter = max_iter
        self.random_state = random_state
        self.views_ind = views_ind
        self.graphs = graphs
        self.partial_sources = partial_sources

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *sources_form, labeled_mask=None):
        """Tune the base classifier on the labelled instances, then fit it.

        Parameters
        ----------
        X : list of array-like of shape (n, d_i), or array-like of shape (n, d)
            The sources as a list of views, or stacked and split by ``views_ind``.
        y : array-like of shape (n,)
            Labels; -1 marks the unlabelled rows (scikit-learn's semi-supervised convention)
            unless ``labeled_mask`` is given.
        *sources_form
            The source form ``fit(sources, graphs, y, labeled_mask=None)`` of
            :class:`~multiview_lab.gbc.GBCClassifier`: ``sources`` 2-D arrays (every
            instance) or pairs ``(X_i, instance_ids_i)``, ``graphs`` symmetric (n, n)
            adjacency matrices or None; there every instance is labelled by default.
        labeled_mask : array-like of bool of shape (n,), optional
            True where ``y`` is a label.

        Returns
        -------
        self
        """
        if self.kind not in BASELINES:
            raise ValueError(f"kind={self.kind!r} is not one of {BASELINES}.")
        if len(sources_form) == 1 and labeled_mask is None and sources_form[0] is not None:
            # the source form labels every instance by default
            sources_form = (sources_form[0], np.ones(np.shape(sources_form[0])[0], dtype=bool))
        Xs, ids, n, graphs, y, labeled = self._fit_input(
            X, y, sources_form, labeled_mask, minus_one_unlabelled=not sources_form
        )
        check_classification_targets(y[labeled])
        check_n_classes(y[labeled], 2)
        pairs = list(zip(Xs, ids, strict=True))
        self.imputation_means_ = imputation_means(pairs, n, labeled)
        X = _with_links(_dense(pairs, self.imputation_means_, n), graphs)
        enc = LabelEncoder().fit(y[labeled])
        grid = _default_grid(self.kind, X.shape[1]) if self.param_grid is None else self.param_grid
        folds = StratifiedKFold(int(self.cv), shuffle=True, random_state=self.random_state)
        search = GridSearchCV(_base(self.kind, X, self.random_state), grid, cv=folds)
        search.fit(X[np.flatnonzero(labeled)], enc.transform(y[labeled]))
        if not self.kind.startswith("self_training"):
            model = search.best_estimator_
        else:
            y_st = np.full(n, -1, dtype=np.int64)
            y_st[labeled] = enc.transform(y[labeled])
            base = clone(search.best_estimator_)
            if "svm" in self.kind:  # self-training needs probabilities: Platt-calibrate the SVC
                scaler, svc = (step for _, step in base.steps)
                # Calibration CV needs >= folds labelled examples per class; rare classes
                # (terrorist NBCR_Attack: 1 labelled at 10 %) lower the folds, and a single
                # example per class leaves libsvm's internal Platt scaling as the only option.
                smallest = int(np.bincount(y_st[labeled]).min())
                if smallest >= 2:
                    calibrated = CalibratedClassifierCV(svc, ensemble=False, cv=min(3, smallest))
                else:
                    calibrated = clone(svc).set_params(probability=True)
                base = make_pipeline(scaler, calibrated)
            model = SelfTrainingClassifier(
                base, threshold=self.threshold, max_iter=int(self.max_iter)
            ).fit(X, y_st)
        self.estimator_ = model
        # rounds of self-training (SelfTrainingClassifier.n_iter_), 1 for a plain fit
        self.n_iter_ = int(getattr(model, "n_iter_", 1))
        self.best_params_ = dict(search.best_params_)
        self.classes_ = enc.classes_
        self.n_instances_ = n
        self.n_features_per_source_ = [X_i.shape[1] for X_i in Xs]
        self.n_graphs_ = len(graphs)
        self.transduction_ = self.classes_[model.predict(X)]
        return self

    def predict_transductive(self):
        """The predicted label of every instance of the fit (length n)."""
        check_is_fitted(self)
        return self.transduction_

    def _features(self, X, graphs):
        check_is_fitted(self)
        Xs, ids, m = self._predict_input(X)
        dense = _dense(list(zip(Xs, ids, strict=True)), self.imputation_means_, m)
        if graphs is None:
            graphs = [sp.csr_array((m, self.n_instances_))] * self.n_graphs_
        graphs = list(graphs)
        if len(graphs) != self.n_graphs_:
            raise ValueError(f"got {len(graphs)} graphs but {self.n_graphs_} were seen in fit.")
        links = []
        for g, G in enumerate(graphs):
            G = sp.csr_array(G)
            if G.shape != (m, self.n_instances_):
                raise ValueError(
                    f"graph {g} has shape {G.shape}; expected ({m}, {self.n_instances_}): the "
                    "links of the new instances to the instances of the fit."
                )
            G.eliminate_zeros()
            G.data[:] = 1.0
            links.append(G)
        return _with_links(dense, links)

    def predict(self, X, graphs=None):
        """Labels of new instances (inductive).

        Parameters
        ----------
        X : list of array-like, array-like of shape (m, d), or list of sources
            As in :meth:`fit`: a list of views, a stacked X, or the source form (arrays, or
            ``(X_i, ids_i)`` pairs over 0..m−1); an instance missing from a source takes the
            fit's imputation means.
        graphs : list of sparse (m, n) or None, default=None
            Per graph of the fit, the links of the new instances to the n instances of the fit
            (None: no link). With the fit's own sources and graphs, ``predict`` gives
            :meth:`predict_transductive` (no instance missing).

        Returns
        -------
        ndarray of shape (m,)
        """
        features = self._features(X, graphs)
        return self.classes_[self.estimator_.predict(features)]
