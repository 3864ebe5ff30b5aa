"""Node-friendly helpers of the MIML experimental protocol (MIML-GP spec Sect. 6): seeded splits,
feature standardisation with training statistics, and one evaluation unit."""

from __future__ import annotations

import logging
import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold

from multiview_lab.miml.metrics import hamming_loss, miml_metrics

logger = logging.getLogger(__name__)

__all__ = [
    "evaluate_miml",
    "evaluate_split",
    "kfold_splits",
    "random_half_splits",
    "standardize_bags",
]


def kfold_splits(n_bags: int, n_splits: int = 10, random_state: int = 0):
    """Seeded plain K-fold splits ``[(train_idx, test_idx), ...]`` (spec Sect. 6.2)."""
    kf = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return [(tr, te) for tr, te in kf.split(np.arange(n_bags))]


def random_half_splits(n_bags: int, n_repeats: int = 5, random_state: int = 0):
    """Seeded random 50/50 splits (paper Fig. 3 and the COREL protocol)."""
    rng = np.random.default_rng(random_state)
    out = []
    for _ in range(n_repeats):
        perm = rng.permutation(n_bags)
        out.append((np.sort(perm[: n_bags // 2]), np.sort(perm[n_bags // 2 :])))
    return out


def standardize_bags(train_bags, test_bags):
    """Standardise instance features with the mean/std of the training instances."""
    X = np.vstack(train_bags)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return [(b - mu) / sd for b in train_bags], [(b - mu) / sd for b in test_bags]


def evaluate_miml(estimator, test_bags, Y_test) -> dict[str, float]:
    """The five metrics of one fitted estimator, plus Hamming loss with a top-label fallback
    (spec Sect. 5 ``threshold`` note) so that every method predicts at least one label."""
    scores = estimator.decision_function(test_bags)
    Y_pred = estimator.predict(test_bags)
    out = miml_metrics(Y_test, Y_pred, scores)
    fallback = Y_pred.copy()
    empty = ~fallback.any(axis=1)
    fallback[empty, np.argmax(scores[empty], axis=1)] = 1
    out["hamming_loss_top_fallback"] = hamming_loss(Y_test, fallback)
    return out


def evaluate_split(estimators: dict, bags, Y, train_idx, test_idx, *, standardize=True):
    """Fit every estimator (cloned) on one split and return one result row per method.

    Parameters
    ----------
    estimators : dict of str -> estimator
        Unfitted estimators with the MIML API (``fit(bags, Y)``, ``predict``,
        ``decision_function``).
    bags : list of ndarray
        All bags; ``Y`` the (n, Q) 0/1 label matrix.
    train_idx, test_idx : array-like of int
        The split.
    standardize : bool, default=True
        Standardise features with the training instances' statistics (spec Sect. 6.2).

    Returns
    -------
    rows : list of dict
        ``method``, ``fit_seconds``, ``predict_seconds`` and the metrics of :func:`evaluate_miml`.
    """
    Y = np.asarray(Y)
    train = [bags[i] for i in train_idx]
    test = [bags[i] for i in test_idx]
    if standardize:
        train, test = standardize_bags(train, test)
    rows = []
    for name, est in estimators.items():
        est = clone(est)
        t0 = time.perf_counter()
        est.fit(train, Y[train_idx])
        t1 = time.perf_counter()
        res = evaluate_miml(est, test, Y[test_idx])
        t2 = time.perf_counter()
        rows.append({"method": name, "fit_seconds": t1 - t0, "predict_seconds": t2 - t1, **res})
        logger.info("%s: %s", name, rows[-1])
    return rows
