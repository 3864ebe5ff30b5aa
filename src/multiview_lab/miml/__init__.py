"""Bayesian multi-instance multi-label learning with a GP prior (He, Gu & Wang 2012), its MIML
baselines (MIMLSVM, MIMLRBF, MIML-kNN), the five MIML metrics (:func:`evaluate_miml` scores a
fitted estimator) and the feature standardisation of the protocol (:func:`standardize_bags`).

Pure numpy/scipy/scikit-learn; no Kedro or MLflow here.
"""

from multiview_lab.miml._bags import standardize_bags
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
