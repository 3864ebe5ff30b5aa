"""Evaluation helpers of the MeMd experiments (MeMd spec Sect. 5.2).

The repeated stratified cross-validation itself runs on the shared experiment engine
(:mod:`multiview_lab.protocol`, task :mod:`multiview_lab.pipelines.memd.task`).
"""

from __future__ import annotations

import numpy as np

from multiview_lab.memd.baselines import SelectKNaiveBayes
from multiview_lab.memd.memd import MeMdClassifier


def selected_k(estimator) -> tuple[float, float]:
    """(K, ε) of a fitted estimator: MeMd's ``k_`` and ``epsilon_``; a SelectKBest baseline's
    ``k_`` (ε NaN); (NaN, NaN) for any other model (GaussianNB's own ``epsilon_``, a variance
    floor, is not MeMd's ε)."""
    if isinstance(estimator, MeMdClassifier):
        return float(estimator.k_), float(estimator.epsilon_)
    if isinstance(estimator, SelectKNaiveBayes):
        return float(estimator.k_), np.nan
    return np.nan, np.nan
