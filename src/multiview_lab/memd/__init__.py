"""MeMd: generative maximum-entropy classification with Jeffreys / JS_GM feature ranking.

Dukkipati et al., ICDM 2013. :mod:`.divergences` holds the maximum-entropy families and their
divergences, :mod:`.memd` the classifier and selector, :mod:`.baselines` the paper's and the
project's baselines as scikit-learn estimators.
"""

from multiview_lab.memd.baselines import DMEBaseline, LinearSVMBaseline, SelectKNaiveBayes
from multiview_lab.memd.memd import MeMdClassifier, MeMdSelector

__all__ = [
    "DMEBaseline",
    "LinearSVMBaseline",
    "MeMdClassifier",
    "MeMdSelector",
    "SelectKNaiveBayes",
]
