"""The multiview feature selectors as scikit-learn's check suite sees them.

The suite gives one 2-D ``X``; ``views_ind=2`` cuts it into two column blocks (views). The
iterative selectors run few iterations to keep the suite fast. Read by
:mod:`multiview_lab.testing` (the contract tests and ``benchmarks/sklearn_checks.py``).
"""

from __future__ import annotations

from multiview_lab.mvfs.admm import ADMMMultiviewFeatureSelector
from multiview_lab.mvfs.filters import (
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    ReliefFSelector,
)
from multiview_lab.mvfs.model_selection import LamSearchCV
from multiview_lab.mvfs.rfs import RFSSelector


def instances() -> list:
    """One small instance of every estimator of :mod:`multiview_lab.mvfs`."""
    return [
        ADMMMultiviewFeatureSelector(lam_frac=0.3, n_features=1, max_iter=20, views_ind=2),
        RFSSelector(lam_frac=0.3, n_features=1, max_iter=20, views_ind=2),
        FisherScoreSelector(n_features=1, views_ind=2),
        ANOVAFSelector(n_features=1, views_ind=2),
        ReliefFSelector(n_features=1, n_neighbors=3, views_ind=2),
        AllFeaturesSelector(views_ind=2),
        LamSearchCV(
            RFSSelector(max_iter=10, n_features=1),
            lams=[0.1, 10.0],
            k=1,
            n_folds=2,
            random_state=0,
            views_ind=2,
        ),
    ]


EXPECTED_FAILED: dict[str, dict[str, str]] = {}
