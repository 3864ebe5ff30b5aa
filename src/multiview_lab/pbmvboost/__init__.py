"""PB-MVBoost (Goyal et al., Neurocomputing 2019) and the boosting baselines of its Table 1.

* :class:`PBMVBoostClassifier` — Algorithm 1 (``compat="paper"`` or ``"reference"``).
* :class:`MVBoostClassifier` — the same loop with uniform view weights.
* :class:`MVAdaBoostClassifier` — one SAMME AdaBoost per view, uniform majority vote.
* :class:`RBoostSHClassifier` — shared distribution, EXP3.P view selection.
* :class:`MonoViewClassifier`, :class:`ConcatClassifier`, :class:`FusionDTClassifier`,
  :class:`MVMVClassifier` — the tree baselines; :class:`CqBoostClassifier` and
  :class:`FusionCqAllClassifier` — the two-level Fusion_Cq^all.
* :mod:`.cbound` — Gibbs risk, disagreement, C-bounds and the step-8 solvers.
* :mod:`.metrics` — accuracy / F1 from scores with an explicit tie policy.
"""

from multiview_lab.pbmvboost.baselines import (
    ConcatClassifier,
    FusionDTClassifier,
    MonoViewClassifier,
    MVMVClassifier,
)
from multiview_lab.pbmvboost.cbound import pac_bayes_quantities
from multiview_lab.pbmvboost.cqboost import CqBoostClassifier, FusionCqAllClassifier
from multiview_lab.pbmvboost.metrics import binary_scores, one_vs_all_scores
from multiview_lab.pbmvboost.mv_adaboost import MVAdaBoostClassifier
from multiview_lab.pbmvboost.pbmvboost import MVBoostClassifier, PBMVBoostClassifier
from multiview_lab.pbmvboost.rboost import RBoostSHClassifier

__all__ = [
    "ConcatClassifier",
    "CqBoostClassifier",
    "FusionCqAllClassifier",
    "FusionDTClassifier",
    "MonoViewClassifier",
    "MVMVClassifier",
    "MVAdaBoostClassifier",
    "MVBoostClassifier",
    "PBMVBoostClassifier",
    "RBoostSHClassifier",
    "binary_scores",
    "one_vs_all_scores",
    "pac_bayes_quantities",
]
