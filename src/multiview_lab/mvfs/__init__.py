"""Supervised multiview feature selection: distributed ADMM (ADMM-MVFS), centralised RFS, filters,
λ by inner cross-validation.

See the ADMM-MVFS spec (``shared/specs/admm_mvfs.md``) for the equations cited in the docstrings.
"""

from multiview_lab.mvfs.admm import ADMMMultiviewFeatureSelector, mvfs_objective
from multiview_lab.mvfs.filters import (
    AllFeaturesSelector,
    ANOVAFSelector,
    FisherScoreSelector,
    ReliefFSelector,
    anova_f,
    fisher_score,
    relieff,
)
from multiview_lab.mvfs.model_selection import (
    LamCVResult,
    LamSearchCV,
    cross_validate_lam,
    lam_max,
)
from multiview_lab.mvfs.rfs import RFSSelector, rfs_objective, rfs_solve

__all__ = [
    "ADMMMultiviewFeatureSelector",
    "ANOVAFSelector",
    "AllFeaturesSelector",
    "FisherScoreSelector",
    "LamCVResult",
    "LamSearchCV",
    "RFSSelector",
    "ReliefFSelector",
    "anova_f",
    "cross_validate_lam",
    "fisher_score",
    "lam_max",
    "mvfs_objective",
    "relieff",
    "rfs_objective",
    "rfs_solve",
]
