"""rBoost.SH: boosting over one shared distribution with an EXP3.P bandit choosing the view.

Peng et al. (2011, 2017), as used as a baseline in Goyal et al. (2019), PB-MVBoost spec Sect. 5.3:
at each round the EXP3.P bandit (arms = views) draws one view, a weighted tree is fitted on that
view, and the shared distribution is updated with that tree's predictions. The bandit's weights are
kept in log space.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import softmax
from sklearn.utils._param_validation import Interval, StrOptions

from multiview_lab.pbmvboost._boosting import (
    _MAX_SEED,
    COMMON_CONSTRAINTS,
    BaseMultiviewBoosting,
    tree_predict_pm,
)

_DELTA_CAP = 1.0 - 1e-10


class RBoostSHClassifier(BaseMultiviewBoosting):
    """rBoost.SH: shared-distribution multiview boosting with EXP3.P view selection.

    With ``M`` views (arms), ``T`` rounds, exploration ``gamma`` and confidence ``sigma``
    (PB-MVBoost spec Sect. 5.3)::

        log p_j = sigma * gamma / 3 * sqrt(T / M)
        q_j = (1 - gamma) softmax(log p)_j + gamma / M;   j_t ~ q
        h_t = tree on view j_t with weights D_t;  delta_t = sum_i D_t(i) y_i h_t(x_i)
        alpha_t = ln((1 + delta_t) / (1 - delta_t)) / 2   (0 if delta_t <= 0; delta_t <= 1 - 1e-10)
        D_{t+1}(i) ∝ D_t(i) exp(-alpha_t y_i h_t(x_i))
        r_t = 1 - sqrt(1 - delta_t**2);  rhat_j = r_t / q_j if j = j_t else 0
        log p_j += gamma / (3 M) * (rhat_j + sigma / (q_j sqrt(T M)))
        H(x) = sign(sum_t alpha_t h_t(x^{j_t}))

    Parameters
    ----------
    n_estimators : int, default=100
        Number of rounds ``T``.
    max_depth : int or None, default=2
        Depth of the trees.
    sigma : float, default=0.15
        EXP3.P confidence parameter.
    gamma : float, default=0.3
        EXP3.P exploration rate, in (0, 1].
    splitter : {"best", "random"}, default="best"
        Tree splitter.
    tie_label : {-1, 1}, default=-1
        Label (-1 = ``classes_[0]``) predicted on a zero score.
    random_state : int, RandomState or None, default=None
        Seeds the bandit draws and the trees.
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X``: boundaries ``[0, d_1, ..., d]``, an int
        number of near-equal column blocks, or None for one view (as in
        :class:`~multiview_lab.pbmvboost.PBMVBoostClassifier`).

    Attributes
    ----------
    classes_, n_features_in_, n_views_, n_features_per_view_, views_ind_, n_iter_, distribution_history_
        As in :class:`~multiview_lab.pbmvboost.PBMVBoostClassifier`.
    estimators_ : list of DecisionTreeClassifier
        ``h_t``.
    selected_views_ : ndarray of shape (n_iter_,), dtype int
        ``j_t``.
    estimator_weights_ : ndarray of shape (n_iter_,)
        ``alpha_t``.
    edges_ : ndarray of shape (n_iter_,)
        ``delta_t`` (capped).
    arm_probabilities_ : ndarray of shape (n_iter_, n_views_)
        ``q`` at each round.
    log_arm_weights_ : ndarray of shape (n_views_,)
        Final ``log p``.
    ovr_estimators_ : list or None
        One-vs-all binary models for more than two classes.

    References
    ----------
    J. Peng, C. Barbu, G. Seetharaman, W. Fan, X. Wu, K. Palaniappan. ShareBoost: boosting for
    multi-view learning with performance guarantees. ECML-PKDD 2011; J. Peng, A. J. Aved,
    G. Seetharaman, K. Palaniappan. Multiview boosting with information propagation for
    classification. IEEE TNNLS 2017. P. Auer et al. The nonstochastic multiarmed bandit problem
    (EXP3.P). SIAM J. Comput. 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.pbmvboost import RBoostSHClassifier
    >>> rng = np.random.RandomState(0)
    >>> y = rng.randint(2, size=200)
    >>> Xs = [y[:, None] + rng.normal(scale=s, size=(200, 3)) for s in (0.5, 3.0)]
    >>> clf = RBoostSHClassifier(20, random_state=0).fit(Xs, y)
    >>> clf.selected_views_.shape
    (20,)
    """

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "sigma": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, 1, closed="right")],
        "splitter": [StrOptions({"best", "random"})],
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        max_depth=2,
        sigma=0.15,
        gamma=0.3,
        splitter="best",
        tie_label=-1,
        random_state=None,
        views_ind=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.sigma = sigma
        self.gamma = gamma
        self.splitter = splitter
        self.tie_label = tie_label
        self.random_state = random_state
        self.views_ind = views_ind

    def _validate_params_values(self):
        # every value is checked by _parameter_constraints
        self._splitter = self.splitter

    def _begin_boosting(self, Xs, y, random_state):
        T, M = self.n_estimators, len(Xs)
        self._seeds = random_state.randint(_MAX_SEED, size=T)
        self._log_p = np.full(M, self.sigma * self.gamma / 3.0 * np.sqrt(T / M))
        self.estimators_ = []
        self.selected_views_ = np.zeros(T, dtype=int)
        self.estimator_weights_ = np.zeros(T)
        self.edges_ = np.zeros(T)
        self.arm_probabilities_ = np.zeros((T, M))

    def _boost(self, iboost, Xs, y, sample_weight, random_state):
        T, M, gamma = self.n_estimators, len(Xs), self.gamma
        q = (1.0 - gamma) * softmax(self._log_p) + gamma / M
        j = int(random_state.choice(M, p=q / q.sum()))
        tree, pred = self._fit_tree(Xs[j], y, sample_weight, int(self._seeds[iboost]))
        delta = min(float(sample_weight @ (y * pred)), _DELTA_CAP)
        alpha = 0.5 * np.log((1.0 + delta) / (1.0 - delta)) if delta > 0 else 0.0
        reward = 1.0 - np.sqrt(1.0 - delta * delta)
        r_hat = np.zeros(M)
        r_hat[j] = reward / q[j]
        self._log_p += gamma / (3.0 * M) * (r_hat + self.sigma / (q * np.sqrt(T * M)))

        self.estimators_.append(tree)
        self.selected_views_[iboost] = j
        self.estimator_weights_[iboost] = alpha
        self.edges_[iboost] = delta
        self.arm_probabilities_[iboost] = q
        return alpha * pred  # the selected view's predictions only

    def _end_boosting(self, n_iter):
        for name in ("selected_views_", "estimator_weights_", "edges_", "arm_probabilities_"):
            setattr(self, name, getattr(self, name)[:n_iter])
        self.estimators_ = self.estimators_[:n_iter]
        self.log_arm_weights_ = self._log_p
        del self._seeds, self._log_p

    def _staged_decision_binary(self, Xs):
        score = np.zeros(Xs[0].shape[0])
        for tree, j, alpha in zip(
            self.estimators_, self.selected_views_, self.estimator_weights_, strict=True
        ):
            score = score + alpha * tree_predict_pm(tree, Xs[j])
            yield score

    def _decision_binary(self, Xs):
        *_, score = self._staged_decision_binary(Xs)
        return score
