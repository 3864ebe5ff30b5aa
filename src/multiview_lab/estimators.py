"""Every public estimator of Multiview Lab in one flat namespace (like ``sklearn.ensemble``).

Each block re-exports one method subpackage; the estimators themselves import nothing from
Kedro or MLflow.
"""

# --- pbmvboost: PB-MVBoost, MVBoost and the baselines of the paper's Table 1 ---
from multiview_lab.pbmvboost.pbmvboost import MVBoostClassifier, PBMVBoostClassifier
from multiview_lab.pbmvboost.baselines import (  # noqa: E402, F401
    ConcatClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVMVClassifier,
)
from multiview_lab.pbmvboost.cqboost import (  # noqa: E402, F401
    CqBoostClassifier,
    FusionCqAllClassifier,
)

# --- gbc: Gradient Boosting Consensus and its joined-feature baselines ---
from multiview_lab.gbc.gbc import GBCClassifier, GBCRegressor  # noqa: E402, F401

# --- mvfs: ADMM multiview feature selection, centralised RFS, filter baselines ---
from multiview_lab.mvfs import (  # noqa: E402, F401
    ADMMMultiviewFeatureSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    ReliefFSelector,
    RFSSelector,
)

# --- miml: Bayesian MIML with a GP prior and the MIML baselines ---

# --- memd: maximum-entropy naive Bayes with Jeffreys / JS ranking ---
