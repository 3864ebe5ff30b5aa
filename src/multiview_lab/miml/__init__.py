"""Bayesian multi-instance multi-label learning with a GP prior (He, Gu & Wang 2012), its MIML
baselines (MIMLSVM, MIMLRBF, MIML-kNN), the five MIML metrics (:func:`evaluate_miml` scores a
fitted estimator) and the feature standardisation of the protocol (:func:`standardize_bags`;
:class:`BagStandardScaler` is its transformer form, to head a ``Pipeline``).

The estimators follow scikit-learn's classifier contract: a list of bags is indexed as rows
by ``cross_val_score`` / ``GridSearchCV``, a plain 2-D ``X`` is read as bags of one instance
each, a 2-D ``Y`` is a label matrix (multi-label) and a 1-D ``y`` holds class labels
(single-label); see :class:`~multiview_lab.miml._bags.BagClassifierMixin`.

Pure numpy/scipy/scikit-learn; no Kedro or MLflow here.
"""

from multiview_lab.miml._bags import BagStandardScaler, standardize_bags
from multiview_lab.miml.baselines import MIMLRBF, MIMLSVM, MIMLkNN, hausdorff_distances
from multiview_lab.miml.gp import MIMLGPClassifier
from multiview_lab.miml.metrics import (
    coverage,
    evaluate_miml,
    hamming_loss,
    miml_metrics,
    one_error,
    one_minus_average_precision,
    ranking_loss,
)

__all__ = [
    "BagStandardScaler",
    "MIMLGPClassifier",
    "MIMLRBF",
    "MIMLSVM",
    "MIMLkNN",
    "coverage",
    "evaluate_miml",
    "hamming_loss",
    "hausdorff_distances",
    "miml_metrics",
    "one_error",
    "one_minus_average_precision",
    "ranking_loss",
    "standardize_bags",
]
