"""The GBC estimators as scikit-learn's check suite sees them (see :mod:`multiview_lab.testing`).

The suite's 2-D X is cut into two views (``views_ind=2``); a handful of boosting iterations
keeps the whole suite fast.
"""

from __future__ import annotations

from multiview_lab.gbc.baselines import JoinedFeaturesClassifier
from multiview_lab.gbc.gbc import GBCClassifier, GBCRegressor


def instances() -> list:
    """Small, fast instances of the GBC estimators, their stacked X cut into two views."""
    return [
        GBCClassifier(n_iter=5, views_ind=2, random_state=0),
        GBCRegressor(n_iter=5, views_ind=2, random_state=0),
        JoinedFeaturesClassifier(
            "svm",
            param_grid={"svc__C": [1.0], "svc__gamma": ["scale"]},
            views_ind=2,
            random_state=0,
        ),
    ]


_MINUS_ONE = (
    "-1 in y marks an unlabelled row (scikit-learn's semi-supervised convention, which the "
    "estimator follows); the check fits labels [-1, 1], which scikit-learn itself only "
    "replaces for its semi-supervised classifiers, by name "
    "(estimator_checks._choose_check_classifiers_labels)."
)

EXPECTED_FAILED: dict[str, dict[str, str]] = {
    "GBCClassifier": {"check_classifiers_classes": _MINUS_ONE},
    "JoinedFeaturesClassifier": {"check_classifiers_classes": _MINUS_ONE},
}
