"""The PB-MVBoost family as scikit-learn's check suite sees it (read by ``multiview_lab.testing``).

``instances()`` gives every estimator of :mod:`multiview_lab.pbmvboost` and
:class:`~multiview_lab.utils.concat_views.ConcatViews` with small settings; the multiview ones
have ``views_ind=2``, so that the suite's 2-D ``X`` is cut into two column blocks (views).
``EXPECTED_FAILED`` lists, per class name, the checks that cannot apply, with the reason.
"""

from __future__ import annotations

from sklearn.linear_model import LogisticRegression

from multiview_lab.pbmvboost.baselines import (
    ConcatClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVMVClassifier,
)
from multiview_lab.pbmvboost.cqboost import CqBoostClassifier, FusionCqAllClassifier
from multiview_lab.pbmvboost.mv_adaboost import MVAdaBoostClassifier
from multiview_lab.pbmvboost.pbmvboost import MVBoostClassifier, PBMVBoostClassifier
from multiview_lab.pbmvboost.rboost import RBoostSHClassifier
from multiview_lab.utils.concat_views import ConcatViews

__all__ = ["EXPECTED_FAILED", "instances"]


def instances() -> list:
    """The estimators to check, with small, fast settings."""
    trees = {"max_depth": 2, "cv": 3, "random_state": 0, "views_ind": 2}
    return [
        PBMVBoostClassifier(5, random_state=0, views_ind=2),
        MVBoostClassifier(5, random_state=0, views_ind=2),
        MVAdaBoostClassifier(5, random_state=0, views_ind=2),
        RBoostSHClassifier(5, random_state=0, views_ind=2),
        MonoViewClassifier(**trees),
        ConcatClassifier(**trees),
        FusionDTClassifier(**trees),
        MVMVClassifier(**trees),
        CqBoostClassifier(0.01, gamma=0.5, n_max_iterations=20),
        FusionCqAllClassifier(
            Cs=(0.1, 1.0),
            gammas=(0.5,),
            mus=(0.01,),
            cv_level1=2,
            cv_level2=2,
            n_max_iterations=20,
            random_state=0,
            views_ind=2,
        ),
        ConcatViews(LogisticRegression(), views_ind=2),
    ]


EXPECTED_FAILED: dict[str, dict[str, str]] = {}
