"""PB-MVBoost (Goyal et al., 2019, Algorithm 1) and its ablation MVBoost.

At each iteration one weighted tree per view is fitted on the shared distribution ``D_t``
(PB-MVBoost spec (B2)); its weight is the AdaBoost weight ``Q = ln((1 - eps)/eps) / 2`` (B3), (B4);
the view weights ``rho^t`` maximise the multiview C-bound objective (B5) of the views' Gibbs risks
and disagreements under ``D_t`` (paper Eqs. (9), (10)); the distribution is updated with the
``rho``-weighted votes of the current voters (B6). See :mod:`multiview_lab.pbmvboost.cbound` for
the C-bound quantities and the solvers.

The cumulative votes ``M_v = sum_s Q_v^s h_v^s`` of each view are kept up to date on the training
set, so step 8 costs O(V n) per iteration (spec (B8), (B9)) instead of re-evaluating the voters.
"""

from __future__ import annotations

import logging
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from multiview_lab.pbmvboost._boosting import (
    _MAX_SEED,
    COMMON_CONSTRAINTS,
    BaseMultiviewBoosting,
    tree_predict_pm,
)
from multiview_lab.pbmvboost.cbound import (
    multiview_cbound,
    pac_bayes_quantities,
    risk_disagreement_from_votes,
    solve_rho_slsqp,
    solve_rho_vertices,
)

logger = logging.getLogger(__name__)

_COMPAT_DEFAULTS = {
    "paper": {
        "voter_weight_norm": "within_view",
        "constraint_jac": "ones",
        "optimize_first_iter": True,
        "rho_x0": "uniform",
        "zero_rho_tol": None,
        "eps_zero_factor": 0.1,
        "splitter": "best",
        "tree_random_state": "random_state",
        "rho_solver": "slsqp",
        "vote": "per_iteration",
        "vote_weights": "raw",
    },
    "reference": {
        "voter_weight_norm": "raw",
        "constraint_jac": "ones",
        "optimize_first_iter": False,
        "rho_x0": "uniform",
        "zero_rho_tol": 1e-12,
        "eps_zero_factor": 0.1,
        "splitter": "random",
        "tree_random_state": 1,
        "rho_solver": "slsqp",
        "vote": "final_rho",
        "vote_weights": "raw",
    },
}

_CHOICES = {
    "voter_weight_norm": ("within_view", "raw"),
    "constraint_jac": ("ones", "reference_bug"),
    "rho_x0": ("uniform", "previous"),
    "splitter": ("best", "random"),
    "rho_solver": ("slsqp", "vertices"),
    "vote": ("per_iteration", "final_rho"),
    "vote_weights": ("raw", "normalized"),
}

# Options whose "take the compat default" marker is "auto" because None is a meaningful value.
_AUTO_OPTIONS = ("zero_rho_tol", "tree_random_state")

_CONSTRAINTS = {
    **COMMON_CONSTRAINTS,
    "compat": [StrOptions(set(_COMPAT_DEFAULTS))],
    **{name: [StrOptions(set(choices)), None] for name, choices in _CHOICES.items()},
    "optimize_first_iter": ["boolean", None],
    "zero_rho_tol": [Interval(Real, 0, None, closed="left"), None, StrOptions({"auto"})],
    "eps_zero_factor": [Interval(Real, 0, 1, closed="right"), None],
    "tree_random_state": [
        Interval(Integral, 0, 2**32 - 1, closed="both"),
        StrOptions({"auto", "random_state"}),
    ],
    "optimize_rho": ["boolean"],
}


class PBMVBoostClassifier(BaseMultiviewBoosting):
    """PB-MVBoost: multiview boosting controlling the views' accuracy and diversity.

    Binary core (labels mapped to {-1, +1}); more than two classes are handled one-vs-all.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of iterations ``T`` (one tree per view per iteration) [paper, Sect. 5.2].
    max_depth : int or None, default=2
        Depth of the trees (2 for MNIST, 4 for Reuters [paper, Sect. 5.2]).
    compat : {"paper", "reference"}, default="paper"
        Which column of the spec's decisions table (PB-MVBoost spec Sect. 4) gives the defaults of
        the options left at ``None`` / ``"auto"``: ``"paper"`` (Algorithm 1 read literally, with
        the per-iteration vote (B7b)) or ``"reference"`` (the behaviour of the authors' public
        code). ``compat`` also sets the SLSQP policy: ``"paper"`` = guarded objective, ftol 1e-10,
        500 iterations, simplex projection with fallback; ``"reference"`` = SciPy defaults, NaN ->
        starting point, no projection (see :func:`~multiview_lab.pbmvboost.cbound.solve_rho_slsqp`).
    voter_weight_norm : {"within_view", "raw"} or None
        Voter weights in ``r_v``, ``d_v`` (spec (B8), (B9)): normalised ``q = Q / sum(Q)`` per
        view, or the raw ``Q``. Paper default "within_view", reference "raw".
    constraint_jac : {"ones", "reference_bug"} or None
        Jacobian of the simplex constraint (B11); "reference_bug" returns ``rho`` as in the
        authors' code (golden-value comparisons only). Default "ones".
    optimize_first_iter : bool or None
        Run step 8 at ``t = 1`` (B12; paper default True) or keep ``rho^1`` uniform (reference).
    rho_x0 : {"uniform", "previous"} or None
        SLSQP starting point: uniform (Algorithm 1 step 3, default) or the previous ``rho``.
    zero_rho_tol : float, None or "auto", default="auto"
        If set, ``Q_v^t = 0`` whenever ``rho_v^{t-1} <= zero_rho_tol`` (authors' code rule).
        Paper default None (off), reference 1e-12.
    eps_zero_factor : float or None
        A voter with zero weighted error gets ``eps = eps_zero_factor * min_i D_t(i)`` (B13).
        Default 0.1.
    splitter : {"best", "random"} or None
        Tree splitter. Paper default "best", reference "random".
    tree_random_state : int, "random_state" or "auto", default="auto"
        Seed of every tree: an int used for every tree (reference default 1), or
        ``"random_state"``: one seed per tree drawn from ``random_state`` (paper default).
    rho_solver : {"slsqp", "vertices"} or None
        Maximiser of step 8: SLSQP [paper, Sect. 5.2] (default) or exact vertex enumeration (B12b).
    vote : {"per_iteration", "final_rho"} or None
        Final vote: ``sum_t sum_v rho_v^t Q_v^t h_v^t`` (B7b; paper-mode default), or the literal
        ``sum_v rho_v^T sum_t c_v^t h_v^t`` (B7; reference default). Training does not depend
        on it: it may be changed on a fitted model with ``set_params`` (see ``_vote_options``).
    vote_weights : {"raw", "normalized"} or None
        ``c = Q`` or ``c = q`` in the "final_rho" vote (B7). Default "raw". Prediction-time,
        like ``vote``.
    tie_label : {-1, 1}, default=-1
        Label (in the {-1, +1} coding, -1 = ``classes_[0]``) predicted when the score is 0.
    optimize_rho : bool, default=True
        Optimise ``rho`` (step 8). False gives MVBoost (``rho`` uniform at every iteration).
    random_state : int, RandomState or None, default=None
        Seeds the trees (and the one-vs-all sub-models).
    views_ind : array-like of int, int or None, default=None
        Where the views are in a stacked 2-D ``X`` (a list of views carries its own):
        boundaries ``[0, d_1, d_1 + d_2, ..., d]``, an int ``V`` for ``V`` consecutive column
        blocks of near-equal width, or None for one view
        (:func:`~multiview_lab.utils.multiview.stack_views` gives both forms).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of columns of all the views together.
    feature_names_in_ : ndarray of str
        Column names, when fitted on a stacked DataFrame.
    n_views_ : int
    n_features_per_view_ : list of int
    views_ind_ : ndarray of int of shape (n_views_ + 1,)
        The view boundaries used in fit.
    n_iter_ : int
        Iterations done (``T`` unless boosting stopped early).
    estimators_ : ndarray of shape (n_iter_, n_views_), dtype object
        The trees ``h_v^t``.
    estimator_weights_ : ndarray of shape (n_iter_, n_views_)
        ``Q_v^t`` (B4).
    estimator_errors_ : ndarray of shape (n_iter_, n_views_)
        Weighted errors ``eps_v^t`` (B3), after the zero-error floor (B13).
    rho_ : ndarray of shape (n_views_,)
        ``rho^T``.
    rho_history_ : ndarray of shape (n_iter_, n_views_)
        ``rho^t`` (the weights used in the update (B6) of iteration t).
    gibbs_risk_history_, disagreement_history_ : ndarray of shape (n_iter_, n_views_)
        ``r_v^t``, ``d_v^t`` under ``D_t`` with the ``voter_weight_norm`` weights (Eqs. (9), (10)).
    cbound_history_ : ndarray of shape (n_iter_, 2)
        Multiview C-bound (Eq. (3)) of ``(rho^t, q^{.|t})`` (normalised voter weights) on the
        training set, under ``D_t`` (column 0) and under uniform weights (column 1, Fig. 4).
    cbound_valid_ : ndarray of shape (n_iter_,), dtype bool
        ``rho^t . r^t < 1/2`` (the objective of step 8 is a C-bound).
    distribution_history_ : ndarray of shape (n_iter_ + 1, n_samples)
        ``D_1, ..., D_{T+1}``.
    train_predictions_ : ndarray of shape (n_iter_, n_views_, n_samples), dtype int8
        ``h_v^t(x_i^v)`` on the training set.
    pac_bayes_ : dict
        :func:`~multiview_lab.pbmvboost.cbound.pac_bayes_quantities` of the final vote on the
        training set (see :meth:`pac_bayes_quantities`).
    resolved_params_ : dict
        The option values used (compat defaults filled in).
    ovr_estimators_ : list of PBMVBoostClassifier or None
        One binary model per class when there are more than two classes.

    See Also
    --------
    MVBoostClassifier : the same loop with ``rho`` uniform.

    References
    ----------
    A. Goyal, E. Morvant, P. Germain, M.-R. Amini. Multiview Boosting by Controlling the
    Diversity and the Accuracy of View-specific Voters. Neurocomputing 358 (2019) 81-92,
    Algorithm 1, Eqs. (1)-(3), (9), (10), (13)-(15).

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.pbmvboost import PBMVBoostClassifier
    >>> rng = np.random.RandomState(0)
    >>> y = rng.randint(2, size=200)
    >>> Xs = [y[:, None] + rng.normal(scale=s, size=(200, 3)) for s in (0.5, 1.0)]
    >>> clf = PBMVBoostClassifier(10, random_state=0).fit(Xs, y)
    >>> clf.rho_history_.shape
    (10, 2)
    >>> bool(clf.score(Xs, y) > 0.8)
    True
    """

    # Parameters read at prediction time only (see ``_vote_options``).
    _PREDICTION_PARAMS = ("vote", "vote_weights")

    _parameter_constraints: dict = _CONSTRAINTS

    def __init__(
        self,
        n_estimators=100,
        *,
        max_depth=2,
        compat="paper",
        voter_weight_norm=None,
        constraint_jac=None,
        optimize_first_iter=None,
        rho_x0=None,
        zero_rho_tol="auto",
        eps_zero_factor=None,
        splitter=None,
        tree_random_state="auto",
        rho_solver=None,
        vote=None,
        vote_weights=None,
        tie_label=-1,
        optimize_rho=True,
        random_state=None,
        views_ind=None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.compat = compat
        self.voter_weight_norm = voter_weight_norm
        self.constraint_jac = constraint_jac
        self.optimize_first_iter = optimize_first_iter
        self.rho_x0 = rho_x0
        self.zero_rho_tol = zero_rho_tol
        self.eps_zero_factor = eps_zero_factor
        self.splitter = splitter
        self.tree_random_state = tree_random_state
        self.rho_solver = rho_solver
        self.vote = vote
        self.vote_weights = vote_weights
        self.tie_label = tie_label
        self.optimize_rho = optimize_rho
        self.random_state = random_state
        self.views_ind = views_ind

    # -- options -----------------------------------------------------------------------------
    def _option(self, name, compat):
        """Option ``name``: its parameter, or the ``compat`` default for the "take the default"
        marker (None, or "auto" where None is meaningful), checked against its choices."""
        value = getattr(self, name)
        marker = "auto" if name in _AUTO_OPTIONS else None
        if value is marker or value == marker:
            value = _COMPAT_DEFAULTS[compat][name]
        allowed = _CHOICES.get(name)
        if allowed is not None and value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}; got {value!r}.")
        return value

    def _validate_params_values(self):
        # the values themselves are checked by _parameter_constraints; this resolves the
        # options left to the compat defaults
        self._opts = {
            name: self._option(name, self.compat) for name in _COMPAT_DEFAULTS[self.compat]
        }
        self._splitter = self._opts["splitter"]

    # -- boosting loop pieces ----------------------------------------------------------------
    def _begin_boosting(self, Xs, y, random_state):
        T, V, n = self.n_estimators, len(Xs), y.shape[0]
        seed = self._opts["tree_random_state"]
        if seed == "random_state":
            self._seeds = random_state.randint(_MAX_SEED, size=(T, V))
        else:
            self._seeds = np.full((T, V), int(seed))
        self.estimators_ = np.empty((T, V), dtype=object)
        self.estimator_weights_ = np.zeros((T, V))
        self.estimator_errors_ = np.zeros((T, V))
        self.rho_history_ = np.zeros((T, V))
        self.gibbs_risk_history_ = np.zeros((T, V))
        self.disagreement_history_ = np.zeros((T, V))
        self.cbound_history_ = np.zeros((T, 2))
        self.cbound_valid_ = np.zeros(T, dtype=bool)
        self.train_predictions_ = np.zeros((T, V, n), dtype=np.int8)
        self._votes = np.zeros((V, n))  # M_v = sum_s Q_v^s h_v^s on the training set
        self._q_sum = np.zeros(V)
        self._rho = np.full(V, 1.0 / V)
        self._uniform = np.full(n, 1.0 / n)

    def _normalised_votes(self, t):
        """``m_v = sum_s q_v^{s|t} h_v^s`` on the training set (uniform q when sum(Q_v) = 0)."""
        m = np.empty_like(self._votes)
        pos = self._q_sum > 0
        m[pos] = self._votes[pos] / self._q_sum[pos, None]
        if not pos.all():
            m[~pos] = self.train_predictions_[: t + 1, ~pos].mean(axis=0)
        return m

    def _boost(self, iboost, Xs, y, sample_weight, random_state):
        opts = self._opts
        d = sample_weight
        P = self.train_predictions_[iboost]
        for v, X in enumerate(Xs):
            tree, P[v] = self._fit_tree(X, y, d, int(self._seeds[iboost, v]))
            self.estimators_[iboost, v] = tree
        eps = (P != y) @ d  # (B3)
        eps = np.where(eps <= 0, opts["eps_zero_factor"] * d.min(), eps)  # (B13)
        with np.errstate(divide="ignore"):
            Q = np.maximum(0.5 * np.log((1.0 - eps) / eps), 0.0)  # (B4)
        if opts["zero_rho_tol"] is not None:
            Q[self._rho <= opts["zero_rho_tol"]] = 0.0
        self._votes += Q[:, None] * P
        self._q_sum += Q

        m = self._normalised_votes(iboost)
        if opts["voter_weight_norm"] == "within_view":
            r, dis = risk_disagreement_from_votes(m, 1.0, d, y)
        else:
            r, dis = risk_disagreement_from_votes(self._votes, self._q_sum, d, y)
        if self.optimize_rho and (iboost >= 1 or opts["optimize_first_iter"]):
            if opts["rho_solver"] == "vertices":
                self._rho = solve_rho_vertices(r, dis)
            else:
                x0 = self._rho if opts["rho_x0"] == "previous" else np.full(len(Xs), 1 / len(Xs))
                self._rho = solve_rho_slsqp(
                    r, dis, x0, constraint_jac=opts["constraint_jac"], policy=self.compat
                )
        rho = self._rho

        self.estimator_errors_[iboost] = eps
        self.estimator_weights_[iboost] = Q
        self.rho_history_[iboost] = rho
        self.gibbs_risk_history_[iboost] = r
        self.disagreement_history_[iboost] = dis
        self.cbound_valid_[iboost] = rho @ r < 0.5
        for col, w in enumerate((d, self._uniform)):
            r_n, d_n = risk_disagreement_from_votes(m, 1.0, w, y)
            self.cbound_history_[iboost, col] = multiview_cbound(rho, r_n, d_n)
        return (rho * Q) @ P  # (B6): the current iteration's voters only

    def _end_boosting(self, n_iter):
        for name in (
            "estimators_",
            "estimator_weights_",
            "estimator_errors_",
            "rho_history_",
            "gibbs_risk_history_",
            "disagreement_history_",
            "cbound_history_",
            "cbound_valid_",
            "train_predictions_",
        ):
            setattr(self, name, getattr(self, name)[:n_iter])
        self.rho_ = self.rho_history_[-1].copy()
        self.resolved_params_ = {**self._opts, "compat": self.compat}
        for name in ("_votes", "_q_sum", "_uniform", "_seeds"):
            delattr(self, name)

    def _fit_binary(self, Xs, y, random_state):
        super()._fit_binary(Xs, y, random_state)
        rho, m, _ = self._final_vote(self.train_predictions_)
        self.pac_bayes_ = pac_bayes_quantities(rho, m, y)

    # -- the final vote ----------------------------------------------------------------------
    def _vote_options(self):
        """``(vote, vote_weights)`` read from the current parameters (compat defaults for None).

        Training does not depend on them: they are read when a vote is computed, so
        ``set_params(vote=...)`` on a fitted model switches the final vote without refitting
        (as :class:`~sklearn.neighbors.KNeighborsClassifier` reads ``n_neighbors`` at predict
        time). ``resolved_params_`` and ``pac_bayes_`` keep the values of the fit.
        """
        compat = getattr(self, "resolved_params_", {}).get("compat", self.compat)
        return self._option("vote", compat), self._option("vote_weights", compat)

    def _staged_sums(self, P):
        """Running sums of the vote after each iteration t (updated in place, not copied).

        Yields ``(t, A, W)`` with ``A_v = sum_{s<=t} c_v^s h_v^s`` and ``W_v = sum_{s<=t} c_v^s``,
        ``c = rho^s Q^s`` for the per-iteration vote (B7b) and ``c = Q^s`` for the final-``rho``
        vote (B7). Every consumer of the sums reads these same running sums, so the stages of
        :meth:`_staged_votes`, :meth:`_staged_scores` and :meth:`_final_vote` agree bit for bit.
        """
        per_iteration = self._vote_options()[0] == "per_iteration"
        V, m_samples = P.shape[1], P.shape[2]
        A = np.zeros((V, m_samples))
        W = np.zeros(V)
        for t in range(P.shape[0]):
            Q = self.estimator_weights_[t]
            c = self.rho_history_[t] * Q if per_iteration else Q
            A += c[:, None] * P[t]
            W += c
            yield t, A, W

    def _vote_at(self, t, A, W, P):
        """Posterior over views, the views' normalised votes and the score after iteration t.

        The vote of every ``vote`` option is a two-level majority vote ``sign(sum_v rho_v m_v)``
        with ``m_v = sum_s q_v^s h_v^s`` and normalised ``q_v``: per-iteration vote (B7b),
        ``rho_v ∝ sum_s rho_v^s Q_v^s`` and ``q_v^s ∝ rho_v^s Q_v^s``; final vote (B7) with raw
        weights, ``rho_v ∝ rho_v^t sum_s Q_v^s`` and ``q_v^s ∝ Q_v^s``; with normalised weights,
        ``rho = rho^t``. A view whose weights are all 0 gets the uniform vote over its voters.
        The score keeps the scale of the spec's formulas.
        """
        pos = W > 0
        m = A / np.where(pos, W, 1.0)[:, None]
        if not pos.all():
            m[~pos] = P[: t + 1, ~pos].sum(axis=0, dtype=float) / (t + 1)
        rho_t = self.rho_history_[t]
        vote, vote_weights = self._vote_options()
        if vote == "per_iteration":
            return _normalise(W), m, A.sum(axis=0)
        if vote_weights == "raw":
            return _normalise(rho_t * W), m, rho_t @ A
        return rho_t, m, rho_t @ m

    def _staged_votes(self, P):
        """:meth:`_vote_at` after each iteration (generator of ``(rho, m, score)``)."""
        for t, A, W in self._staged_sums(P):
            yield self._vote_at(t, A, W, P)

    def _final_vote(self, P):
        """:meth:`_vote_at` after the last iteration."""
        *_, last = self._staged_sums(P)
        return self._vote_at(*last, P)

    def _staged_scores(self, P):
        """The score of :meth:`_vote_at` after each iteration, without the normalised votes."""
        vote, vote_weights = self._vote_options()
        per_iteration, raw = vote == "per_iteration", vote_weights == "raw"
        for t, A, W in self._staged_sums(P):
            if per_iteration:
                yield A.sum(axis=0)
            elif raw:
                yield self.rho_history_[t] @ A
            else:
                yield self._vote_at(t, A, W, P)[2]

    def _voter_predictions(self, Xs):
        T, V = self.estimators_.shape
        P = np.empty((T, V, Xs[0].shape[0]), dtype=np.int8)
        for t in range(T):
            for v in range(V):
                P[t, v] = tree_predict_pm(self.estimators_[t, v], Xs[v])
        return P

    def _decision_binary(self, Xs):
        return self._final_vote(self._voter_predictions(Xs))[2]

    def _staged_decision_binary(self, Xs):
        yield from self._staged_scores(self._voter_predictions(Xs))

    # -- PAC-Bayes quantities ----------------------------------------------------------------
    def _check_labelled(self, X, y):
        Xs = self._check_predict_input(X)
        if self.ovr_estimators_ is not None:
            raise ValueError(
                "PAC-Bayes quantities are defined per binary model; use ovr_estimators_[k] "
                "with labels y == classes_[k]."
            )
        y = np.asarray(y)
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y contains labels not seen in fit: {unknown.tolist()!r}.")
        return Xs, np.where(y == self.classes_[1], 1.0, -1.0)

    def pac_bayes_quantities(self, X, y):
        """PAC-Bayes quantities of the fitted vote on a labelled sample (uniform weights).

        Every ``vote`` option is a two-level majority vote ``sign(sum_v rho_v m_v)`` with
        ``m_v = sum_t q_v^t h_v^t`` and distributions ``rho``, ``q_v`` (paper Eq. (1)): for the
        per-iteration vote (B7b) ``rho_v ∝ sum_t rho_v^t Q_v^t`` and ``q_v^t ∝ rho_v^t Q_v^t``;
        for the final-``rho`` vote (B7) with raw weights ``rho_v ∝ rho_v^T sum_t Q_v^t`` and
        ``q_v^t ∝ Q_v^t``; with normalised weights ``rho = rho^T``, ``q_v^t ∝ Q_v^t``. For this
        posterior, :func:`~multiview_lab.pbmvboost.cbound.pac_bayes_quantities` gives the
        empirical Gibbs risk (Eq. (13)), disagreement (Eq. (14)), classical C-bound (Eq. (2)),
        multiview C-bound (Eq. (3)) and the 0-1 risk of the fitted classifier itself.

        Parameters
        ----------
        X : list of array-like or sparse matrix, or array-like or sparse matrix
            The views (see :meth:`decision_function`).
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.

        Returns
        -------
        dict
        """
        *_, q = self.staged_pac_bayes_quantities(X, y)
        return q

    def staged_pac_bayes_quantities(self, X, y):
        """:meth:`pac_bayes_quantities` of the vote after each iteration (list, one dict each)."""
        Xs, y_pm = self._check_labelled(X, y)
        return [
            pac_bayes_quantities(rho, m, y_pm)
            for rho, m, _ in self._staged_votes(self._voter_predictions(Xs))
        ]


def _normalise(w):
    s = w.sum()
    return w / s if s > 0 else np.full(w.shape, 1.0 / w.size)


class MVBoostClassifier(PBMVBoostClassifier):
    """MVBoost: PB-MVBoost with ``rho`` fixed uniform at every iteration (``optimize_rho=False``).

    The same loop, voters and distribution update (PB-MVBoost spec (B6)) as
    :class:`PBMVBoostClassifier`; only step 8 is skipped. With ``rho`` uniform, the
    per-iteration vote (B7b) equals the final-``rho`` vote (B7) with raw weights.

    Parameters
    ----------
    n_estimators, max_depth, compat, eps_zero_factor, splitter, tree_random_state, vote, vote_weights, tie_label, random_state, views_ind
        As in :class:`PBMVBoostClassifier`.

    Attributes
    ----------
    As in :class:`PBMVBoostClassifier`.

    References
    ----------
    Goyal et al. (2019), Sect. 5 (the MVBoost ablation of Table 1).

    Examples
    --------
    >>> import numpy as np
    >>> from multiview_lab.pbmvboost import MVBoostClassifier
    >>> rng = np.random.RandomState(0)
    >>> y = rng.randint(2, size=200)
    >>> Xs = [y[:, None] + rng.normal(size=(200, 3)) for _ in range(3)]
    >>> clf = MVBoostClassifier(5, random_state=0).fit(Xs, y)
    >>> clf.rho_.tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """

    _parameter_constraints: dict = {
        name: _CONSTRAINTS[name]
        for name in (
            "n_estimators",
            "max_depth",
            "compat",
            "eps_zero_factor",
            "splitter",
            "tree_random_state",
            "vote",
            "vote_weights",
            "tie_label",
            "random_state",
            "views_ind",
        )
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        max_depth=2,
        compat="paper",
        eps_zero_factor=None,
        splitter=None,
        tree_random_state="auto",
        vote=None,
        vote_weights=None,
        tie_label=-1,
        random_state=None,
        views_ind=None,
    ):
        super().__init__(
            n_estimators,
            max_depth=max_depth,
            compat=compat,
            eps_zero_factor=eps_zero_factor,
            splitter=splitter,
            tree_random_state=tree_random_state,
            vote=vote,
            vote_weights=vote_weights,
            tie_label=tie_label,
            optimize_rho=False,
            random_state=random_state,
            views_ind=views_ind,
        )
