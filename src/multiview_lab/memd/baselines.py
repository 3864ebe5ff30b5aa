"""Baselines of the MeMd experiments as small factories returning scikit-learn estimators.

MeMd spec Sect. 5.2: every baseline exists in two columns,

* ``"faithful"``: as the paper ran it. Linear SVM = libsvm ``SVC(kernel="linear", C=1)``
  (one-vs-one), features standardised for gene data, raw W for text; DME (discriminative maximum
  entropy) = multinomial ``LogisticRegression(C=1, lbfgs, max_iter=100)``.
* ``"strong"``: the same models with C chosen by inner stratified 5-fold CV over 10^-3..10^4; for
  text on tf-idf features (``TfidfTransformer`` defaults) with ``LinearSVC``.

plus naive-Bayes references with ``SelectKBest`` (chi2, ANOVA F, mutual information; K fixed or by
inner CV), and the MeMd classifiers with the spec's per-data-type settings. :data:`ESTIMATORS` maps
a name to a factory ``f(data, random_state)`` so that a pipeline can register them by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.feature_selection import SelectKBest, chi2, f_classif, mutual_info_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB, MultinomialNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from multiview_lab.memd.memd import MeMdClassifier

DATA_TYPES = ("gene", "text")
PROTOCOLS = ("faithful", "strong")
C_GRID = tuple(10.0**p for p in range(-3, 5))
SCORE_FUNCS = ("chi2", "f_classif", "mutual_info")
INNER_FOLDS = 5
ALPHA_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)

#: Spec settings per data type (MeMd spec Sect. 4 and 5.2).
MEMD_SETTINGS = {
    "gene": {"family": "gaussian", "k_selection": "inner_cv", "var_smoothing": 1e-9},
    "text": {
        "family": "exponential",
        "k_selection": "val",
        "var_smoothing": 1e-3,
        "mean_smoothing": 1e-2,
    },
}


def _check(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}.")


def _inner_cv(random_state) -> StratifiedKFold:
    return StratifiedKFold(n_splits=INNER_FOLDS, shuffle=True, random_state=random_state)


def _tune_c(pipeline: Pipeline, step: str, random_state) -> GridSearchCV:
    return GridSearchCV(
        pipeline, {f"{step}__C": list(C_GRID)}, cv=_inner_cv(random_state), n_jobs=None
    )


def linear_svm(
    protocol: str = "faithful", *, data: str = "gene", liblinear: bool = False, random_state=0
) -> BaseEstimator:
    """Linear SVM baseline (MeMd spec Sect. 5.2).

    Parameters
    ----------
    protocol : {"faithful", "strong"}
        Faithful: ``SVC(kernel="linear", C=1)`` (libsvm, one-vs-one; ``liblinear=True`` swaps in
        ``LinearSVC(C=1)`` for 20NG speed, to be documented). Strong: C by inner 5-fold CV, and
        for text tf-idf + ``LinearSVC``.
    data : {"gene", "text"}
        Gene data are standardised first; text uses the W features (faithful) or tf-idf (strong).
    liblinear : bool, default=False
        Faithful text column only: use ``LinearSVC``.
    random_state : int or None
        Seeds the inner CV folds and LinearSVC.
    """
    _check("protocol", protocol, PROTOCOLS)
    _check("data", data, DATA_TYPES)
    if data == "text" and (protocol == "strong" or liblinear):
        svm = LinearSVC(C=1.0, random_state=random_state)
    else:
        svm = SVC(kernel="linear", C=1.0)
    first = ("scale", StandardScaler()) if data == "gene" else ("tfidf", TfidfTransformer())
    steps = [first] if data == "gene" or protocol == "strong" else []
    pipeline = Pipeline([*steps, ("svm", svm)])
    return pipeline if protocol == "faithful" else _tune_c(pipeline, "svm", random_state)


def dme(protocol: str = "faithful", *, data: str = "gene", random_state=0) -> BaseEstimator:
    """DME = multinomial logistic regression (MeMd spec Sect. 5.1-5.2).

    Faithful: ``LogisticRegression(C=1, solver="lbfgs", max_iter=100)`` (multinomial loss; the
    paper notes DME works best with few iterations). Strong: C by inner 5-fold CV, on tf-idf for
    text. Gene data are standardised (lbfgs on raw intensities of 10^4 does not converge).
    """
    _check("protocol", protocol, PROTOCOLS)
    _check("data", data, DATA_TYPES)
    model = LogisticRegression(C=1.0, solver="lbfgs", max_iter=100)
    first = ("scale", StandardScaler()) if data == "gene" else ("tfidf", TfidfTransformer())
    steps = [first] if data == "gene" or protocol == "strong" else []
    pipeline = Pipeline([*steps, ("dme", model)])
    return pipeline if protocol == "faithful" else _tune_c(pipeline, "dme", random_state)


def _score_func(name: str, random_state):
    _check("score_func", name, SCORE_FUNCS)
    if name == "mutual_info":
        return partial(mutual_info_classif, random_state=random_state)
    return {"chi2": chi2, "f_classif": f_classif}[name]


def naive_bayes_select_k(
    score_func: str = "chi2",
    *,
    model: str = "multinomial",
    k: int | None = None,
    k_grid: Sequence[int] = (5, 10, 20, 50, 100, 200, 500, 1000),
    alpha_grid: Sequence[float] = ALPHA_GRID,
    random_state=0,
) -> BaseEstimator:
    """``SelectKBest(score_func, k)`` + GaussianNB / MultinomialNB (reference columns).

    Parameters
    ----------
    score_func : {"chi2", "f_classif", "mutual_info"}
        chi2 needs non-negative features (text); ANOVA F for gene data.
    model : {"multinomial", "gaussian"}
    k : int or None
        Fixed K; None chooses K from ``k_grid`` by inner stratified 5-fold CV.
    alpha_grid : sequence of float
        MultinomialNB smoothing tried with K when K is chosen by CV. W rows sum to 1, so the
        default alpha = 1 (a pseudo-count per word) swamps the class totals (measured on
        comp.* vs rec.*: accuracy .60); smaller values are needed.
    """
    _check("model", model, ("multinomial", "gaussian"))
    nb = MultinomialNB() if model == "multinomial" else GaussianNB()
    pipeline = Pipeline(
        [("select", SelectKBest(_score_func(score_func, random_state), k=k or 10)), ("nb", nb)]
    )
    if k is not None:
        return pipeline
    grid = {"select__k": sorted(int(v) for v in k_grid)}
    if model == "multinomial":
        grid["nb__alpha"] = [float(a) for a in alpha_grid]
    return GridSearchCV(pipeline, grid, cv=_inner_cv(random_state))


def memd(data: str = "gene", criterion: str = "JS", *, random_state=0, **params) -> MeMdClassifier:
    """MeMdClassifier with the spec's settings for ``data`` (MeMd spec Sect. 4, 5.2).

    Gene: Gaussian family, var_smoothing 1e-9, K by inner 5-fold CV. Text: exponential family,
    var_smoothing 1e-3 / mean_smoothing 1e-2, K by the 80/20 rule. ``params`` override.
    """
    _check("data", data, DATA_TYPES)
    return MeMdClassifier(
        criterion, **{**MEMD_SETTINGS[data], "random_state": random_state, **params}
    )


def _gaussian_nb_all(data, random_state):
    return GaussianNB()


#: name -> factory(data, random_state) returning an unfitted estimator.
ESTIMATORS: dict[str, Callable[[str, object], BaseEstimator]] = {
    "memd_j": lambda data, rs: memd(data, "J", random_state=rs),
    "memd_js": lambda data, rs: memd(data, "JS", random_state=rs),
    "memd_j_floor_val": lambda data, rs: memd(data, "J", random_state=rs, floor_selection="val"),
    "memd_js_floor_val": lambda data, rs: memd(data, "JS", random_state=rs, floor_selection="val"),
    "memd_j_gaussian": lambda data, rs: memd(data, "J", random_state=rs, family="gaussian"),
    "memd_js_gaussian": lambda data, rs: memd(data, "JS", random_state=rs, family="gaussian"),
    "svm_faithful": lambda data, rs: linear_svm("faithful", data=data, random_state=rs),
    "svm_faithful_liblinear": lambda data, rs: linear_svm(
        "faithful", data=data, liblinear=True, random_state=rs
    ),
    "svm_strong": lambda data, rs: linear_svm("strong", data=data, random_state=rs),
    "dme_faithful": lambda data, rs: dme("faithful", data=data, random_state=rs),
    "dme_strong": lambda data, rs: dme("strong", data=data, random_state=rs),
    "gaussian_nb": _gaussian_nb_all,
    "gnb_f_classif": lambda data, rs: naive_bayes_select_k(
        "f_classif", model="gaussian", random_state=rs
    ),
    "gnb_mutual_info": lambda data, rs: naive_bayes_select_k(
        "mutual_info", model="gaussian", random_state=rs
    ),
    "mnb_chi2": lambda data, rs: naive_bayes_select_k(
        "chi2",
        model="multinomial",
        k_grid=np.unique(np.geomspace(10, 50_000, 8).astype(int)),
        random_state=rs,
    ),
}


def make_estimator(name: str, data: str = "gene", random_state=0) -> BaseEstimator:
    """Build the estimator registered as ``name`` in :data:`ESTIMATORS`."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; registered: {sorted(ESTIMATORS)}.")
    _check("data", data, DATA_TYPES)
    return ESTIMATORS[name](data, random_state)
