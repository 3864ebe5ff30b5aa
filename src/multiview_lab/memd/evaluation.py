"""Repeated stratified cross-validation of MeMd and its baselines (MeMd spec Sect. 5.2).

Pure functions returning pandas results tables (one row per estimator, repetition and fold) so a
Kedro node only has to call them: gene data use 10-fold CV x 10 repetitions, text 2-fold CV x 5
repetitions (each fold used once for training).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from multiview_lab.memd.memd import MeMdClassifier

logger = logging.getLogger(__name__)


def selected_k(estimator: BaseEstimator) -> tuple[float, float]:
    """(K, ε) of a fitted estimator: MeMd's ``k_``/``epsilon_`` or a tuned SelectKBest's k."""
    if isinstance(estimator, MeMdClassifier):
        return float(estimator.k_), float(estimator.epsilon_)
    if isinstance(estimator, GridSearchCV):
        k = estimator.best_params_.get("select__k")
        return (np.nan if k is None else float(k)), np.nan
    return np.nan, np.nan


def repeated_cv(
    X,
    y,
    estimators: Mapping[str, Callable[[int], BaseEstimator]],
    *,
    n_splits: int = 10,
    seeds: Sequence[int] = range(10),
) -> pd.DataFrame:
    """Accuracy of each estimator over stratified ``n_splits``-fold CV, one repetition per seed.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
    y : array-like of shape (n,)
    estimators : mapping name -> factory(seed) returning an unfitted estimator
        The factory receives the repetition's seed (for inner splits).
    n_splits : int, default=10
    seeds : sequence of int, default=0..9
        Seeds of the outer folds (and of the estimators' inner splits).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, run, fold, accuracy, k, epsilon, fit_seconds``.
    """
    y = np.asarray(y)
    rows = []
    for seed in seeds:
        folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        for fold, (train, test) in enumerate(folds.split(np.zeros((y.shape[0], 1)), y)):
            for name, factory in estimators.items():
                start = time.perf_counter()
                model = factory(seed).fit(X[train], y[train])
                seconds = time.perf_counter() - start
                accuracy = float(np.mean(model.predict(X[test]) == y[test]))
                k, epsilon = selected_k(model)
                rows.append(
                    {
                        "method": name,
                        "run": seed,
                        "fold": fold,
                        "accuracy": accuracy,
                        "k": k,
                        "epsilon": epsilon,
                        "fit_seconds": seconds,
                    }
                )
        logger.info("repetition %d done (%d rows)", seed, len(rows))
    return pd.DataFrame(rows)


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std accuracy, median K and ε per method (MeMd spec Sect. 5.2, metric)."""
    return results.groupby("method", sort=False).agg(
        accuracy_mean=("accuracy", "mean"),
        accuracy_std=("accuracy", "std"),
        k_median=("k", "median"),
        epsilon_median=("epsilon", "median"),
        fit_seconds_mean=("fit_seconds", "mean"),
        n=("accuracy", "size"),
    )
