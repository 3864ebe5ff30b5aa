"""The estimators as scikit-learn's check suite sees them, gathered from every method.

Each method's package declares, in its ``_sklearn_checks.py``, ``instances()`` (the estimators
to check, with small settings and, for a multiview estimator, ``views_ind`` so that a stacked
2-D X is split into views) and ``EXPECTED_FAILED`` (per class name, the checks that cannot
apply to it, each with its reason). The project's tests
(``tests/<method>/test_sklearn_contract.py``) and ``benchmarks/sklearn_checks.py`` read them
from here, so that both run the same suite.
"""

from __future__ import annotations

import importlib

_PACKAGES = ("pbmvboost", "gbc", "mvfs", "memd", "miml")


def _modules():
    for name in _PACKAGES:
        try:
            yield importlib.import_module(f"multiview_lab.{name}._sklearn_checks")
        except ModuleNotFoundError as exc:
            if exc.name != f"multiview_lab.{name}._sklearn_checks":
                raise


def SKLEARN_CHECK_INSTANCES() -> list:  # noqa: N802 - a constant-like registry accessor
    """Every estimator instance the check suite runs on."""
    return [est for module in _modules() for est in module.instances()]


def expected_failed_checks(estimator) -> dict[str, str]:
    """The checks ``estimator`` is declared to fail, check name -> reason."""
    name = type(estimator).__name__
    for module in _modules():
        if name in module.EXPECTED_FAILED:
            return dict(module.EXPECTED_FAILED[name])
    return {}
