"""The MeMd estimators and baselines as scikit-learn's check suite sees them.

They are single-view estimators (one 2-D ``X``, dense or sparse): no ``views_ind``. Small
grids keep the suite fast. Read by :mod:`multiview_lab.testing` (the contract tests and
``benchmarks/sklearn_checks.py``).
"""

from __future__ import annotations

from multiview_lab.memd.baselines import DMEBaseline, LinearSVMBaseline, SelectKNaiveBayes
from multiview_lab.memd.memd import MeMdClassifier, MeMdSelector


def instances() -> list:
    """One small instance of every estimator of :mod:`multiview_lab.memd`."""
    return [
        MeMdClassifier(k_grid=[1, 2]),
        MeMdSelector(k_grid=[1, 2]),
        LinearSVMBaseline(data="text"),
        DMEBaseline(data="gene"),
        SelectKNaiveBayes("f_classif", model="gaussian", k_grid=[1, 2, 100]),
    ]


EXPECTED_FAILED: dict[str, dict[str, str]] = {}
