"""Every public estimator of Multiview Lab in one flat namespace (like ``sklearn.ensemble``).

The estimators import nothing from Kedro or MLflow; each comes from its method's subpackage:

* PB-MVBoost (:mod:`multiview_lab.pbmvboost`): PB-MVBoost, MVBoost and the baselines of the
  paper's Table 1;
* Gradient Boosting Consensus (:mod:`multiview_lab.gbc`) and its joined-feature baselines;
* ADMM multiview feature selection (:mod:`multiview_lab.mvfs`), centralised RFS and filters;
* Bayesian MIML with a GP prior (:mod:`multiview_lab.miml`) and the MIML baselines;
* MeMd, maximum-entropy naive Bayes (:mod:`multiview_lab.memd`) and its baselines;
* :class:`ConcatViews`: any scikit-learn classifier on the concatenated views.
"""

from multiview_lab.gbc.baselines import JoinedFeaturesClassifier
from multiview_lab.gbc.gbc import GBCClassifier, GBCRegressor
from multiview_lab.memd import (
    DMEBaseline,
    LinearSVMBaseline,
    MeMdClassifier,
    MeMdSelector,
    SelectKNaiveBayes,
)
from multiview_lab.miml import BagStandardScaler
from multiview_lab.miml.baselines import MIMLRBF, MIMLSVM, MIMLkNN
from multiview_lab.miml.gp import MIMLGPClassifier
from multiview_lab.mvfs import (
    ADMMMultiviewFeatureSelector,
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    LamSearchCV,
    ReliefFSelector,
    RFSSelector,
)
from multiview_lab.pbmvboost import (
    ConcatClassifier,
    CqBoostClassifier,
    FusionCqAllClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVAdaBoostClassifier,
    MVBoostClassifier,
    MVMVClassifier,
    PBMVBoostClassifier,
    RBoostSHClassifier,
)
from multiview_lab.utils.concat_views import ConcatViews

__all__ = [
    # PB-MVBoost and the baselines of its Table 1
    "PBMVBoostClassifier",
    "MVBoostClassifier",
    "MVAdaBoostClassifier",
    "RBoostSHClassifier",
    "MonoViewClassifier",
    "ConcatClassifier",
    "FusionDTClassifier",
    "MVMVClassifier",
    "CqBoostClassifier",
    "FusionCqAllClassifier",
    # Gradient Boosting Consensus
    "GBCClassifier",
    "GBCRegressor",
    "JoinedFeaturesClassifier",
    # ADMM multiview feature selection and baselines
    "ADMMMultiviewFeatureSelector",
    "RFSSelector",
    "FisherScoreSelector",
    "ANOVAFSelector",
    "ReliefFSelector",
    "AllFeaturesSelector",
    "LamSearchCV",
    # Bayesian MIML with a GP prior and baselines
    "MIMLGPClassifier",
    "MIMLSVM",
    "MIMLkNN",
    "MIMLRBF",
    "BagStandardScaler",
    # MeMd
    "MeMdClassifier",
    "MeMdSelector",
    "LinearSVMBaseline",
    "DMEBaseline",
    "SelectKNaiveBayes",
    # any scikit-learn classifier on the concatenated views
    "ConcatViews",
]
