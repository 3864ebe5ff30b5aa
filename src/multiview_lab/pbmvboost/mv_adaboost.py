"""MV-AdaBoost: one discrete AdaBoost per view, combined by a uniform majority vote.

Baseline of Goyal et al. (2019), Table 1; PB-MVBoost spec Sect. 5.3. Each view gets
scikit-learn's :class:`~sklearn.ensemble.AdaBoostClassifier` (SAMME, learning rate 1, ``T``
depth-limited trees) on all training data; the views' predictions are combined by a uniform
majority vote, ties broken by the sum of the views' AdaBoost decision functions, then ``tie_label``.
"""

from __future__ import annotations

from itertools import zip_longest

import numpy as np
from sklearn import config_context
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import StrOptions

from multiview_lab.pbmvboost._boosting import (
    _MAX_SEED,
    COMMON_CONSTRAINTS,
    MultiviewClassifierBase,
    tree_leaf_signs,
)


def samme_decision_function(ada, X):
    """``ada.decision_function(X)`` of a fitted binary SAMME AdaBoost, from the trees' leaves.

    For two classes scikit-learn's SAMME decision function is ``2 S / sum_t w_t`` with
    ``S = sum_t w_t h_t(x)``, ``h_t = +1`` where tree t predicts ``classes_[1]``, accumulated over
    t in order (its class-0 column is exactly ``-S``). This computes the same float operations in
    the same order, but reads each tree's class from ``tree_.apply`` on the already validated
    float32 ``X`` instead of going through ``predict`` and its input checks once per tree, so the
    result is bit-identical and several times cheaper. More than two classes fall back to
    ``ada.decision_function``.

    Parameters
    ----------
    ada : AdaBoostClassifier
        Fitted, with decision-tree estimators.
    X : ndarray or CSR matrix of shape (n_samples, n_features), dtype float32
        Validated input.

    Returns
    -------
    score : ndarray of shape (n_samples,)
    """
    if ada.n_classes_ != 2:
        return ada.decision_function(X)
    S = 0
    for tree, w in zip(ada.estimators_, ada.estimator_weights_, strict=False):
        # tree.predict(X) == classes_[1] exactly where the leaf's class-1 value is the larger
        S = S + np.where(tree_leaf_signs(tree)[tree.tree_.apply(X)] > 0, w, -w)
    S = S / ada.estimator_weights_.sum()
    return S + S


class MVAdaBoostClassifier(MultiviewClassifierBase):
    """Per-view SAMME AdaBoost with a uniform majority vote over the views.

    ``decision_function`` is ``sum_v h_v(x) + sum_v f_v(x) / (V + 1)`` where ``h_v`` in {-1, +1} is
    view v's AdaBoost prediction and ``f_v`` in [-1, 1] its decision function: the vote count
    decides whenever it is non-zero (``|sum_v f_v| / (V + 1) < 1``) and the summed decision
    functions break its ties, as the spec states; an exact 0 gives ``tie_label``.

    Parameters
    ----------
    n_estimators : int, default=100
        AdaBoost rounds ``T`` per view.
    max_depth : int or None, default=2
        Depth of the trees.
    splitter : {"best", "random"}, default="best"
        Tree splitter.
    tie_label : {-1, 1}, default=-1
        Label (-1 = ``classes_[0]``) predicted on a zero score.
    random_state : int, RandomState or None, default=None
        Seeds the per-view AdaBoosts.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X``: boundaries ``[0, d_1, ..., d]``, an int
        number of near-equal column blocks, or None for one view (as in
        :class:`~multiview_lab.pbmvboost.PBMVBoostClassifier`).

    Attributes
    ----------
    classes_, n_features_in_, n_views_, n_features_per_view_, views_ind_, ovr_estimators_
        As in :class:`~multiview_lab.pbmvboost.PBMVBoostClassifier`.
    estimators_ : list of AdaBoostClassifier
        One fitted AdaBoost per view (trained on labels in {-1, +1}).

    References
    ----------
    Goyal et al. (2019), Sect. 5 (MV-AdaBoost baseline); Y. Freund, R. E. Schapire (1997);
    J. Zhu, H. Zou, S. Rosset, T. Hastie. Multi-class AdaBoost (SAMME). Stat. Interface 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.pbmvboost import MVAdaBoostClassifier
    >>> rng = np.random.RandomState(0)
    >>> y = rng.randint(2, size=200)
    >>> Xs = [y[:, None] + rng.normal(size=(200, 3)) for _ in range(3)]
    >>> clf = MVAdaBoostClassifier(10, random_state=0).fit(Xs, y)
    >>> len(clf.estimators_)
    3
    """

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "splitter": [StrOptions({"best", "random"})],
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        max_depth=2,
        splitter="best",
        tie_label=-1,
        random_state=None,
        views_ind=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.splitter = splitter
        self.tie_label = tie_label
        self.random_state = random_state
        self.views_ind = views_ind

    def _validate_params_values(self):
        """Every value is checked by ``_parameter_constraints``."""

    def _fit_binary(self, Xs, y, random_state):
        seeds = random_state.randint(_MAX_SEED, size=len(Xs))
        # the views (finite) and the options were validated in fit: skip the per-tree checks
        with config_context(skip_parameter_validation=True, assume_finite=True):
            self.estimators_ = [
                AdaBoostClassifier(
                    DecisionTreeClassifier(max_depth=self.max_depth, splitter=self.splitter),
                    n_estimators=self.n_estimators,
                    learning_rate=1.0,
                    random_state=int(seed),
                ).fit(X, y)
                for X, seed in zip(Xs, seeds, strict=True)
            ]

    def _combine(self, decisions):
        f = np.asarray(decisions)  # (V, n), positive = +1
        votes = np.where(f > 0, 1.0, -1.0).sum(axis=0)  # AdaBoost predicts classes_[0] on 0
        return votes + f.sum(axis=0) / (f.shape[0] + 1)

    def _decision_binary(self, Xs):
        return self._combine(
            [samme_decision_function(est, X) for est, X in zip(self.estimators_, Xs, strict=True)]
        )

    def _staged_decision_binary(self, Xs):
        gens = [
            est.staged_decision_function(X) for est, X in zip(self.estimators_, Xs, strict=True)
        ]
        last = [None] * len(gens)
        for stage in zip_longest(*gens):
            last = [f if f is not None else prev for f, prev in zip(stage, last, strict=True)]
            yield self._combine(last)
