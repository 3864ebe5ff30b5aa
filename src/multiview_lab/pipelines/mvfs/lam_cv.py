"""λ by inner stratified cross-validation (ADMM-MVFS spec §6.2), an engine experiment of its own.

Units = the splits, on the run's backend: :class:`LamCVTask` fits the
:class:`~multiview_lab.mvfs.LamSearchCV` of :func:`lam_cv_method` on the split's z-scored
training rows; its result row is the chosen λ, its extra table ``lam_cv`` every (λ, fold) score.
:func:`attach_lam` then hands each split's λ to the selectors registered with ``lam_cv: true``
(the ADMM and RFS minimise the same objective, so both get the same λ).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.pipelines.mvfs.task import LamCVTask, build_classifier
from multiview_lab.protocol import run_experiment
from multiview_lab.specs import build_estimator

logger = logging.getLogger(__name__)

LAM_CV_COLUMNS = ["split", "lam", "fold", "score", "lam_max", "null_model", "fit_time_s", "chosen"]
LAM_CHOSEN_COLUMNS = ["split", "lam", "lam_max", "lam_frac", "score_mean", "score_std"]


def lam_cv_method(
    selectors: Mapping[str, Any], lam_cv: Mapping[str, Any], protocol: Mapping[str, Any]
) -> dict[str, Any]:
    """The registry entry of the λ search: a :class:`~multiview_lab.mvfs.LamSearchCV` of the
    selector ``lam_cv.fit_with`` (its params updated by ``lam_cv.params``) over ``lam_cv.grid``
    with ``lam_cv.folds`` folds, scored with ``lam_cv.classifiers`` (null: the protocol's) on
    the top-k features for every k of ``lam_cv.k`` (null: ``protocol.k_grid``)."""
    name = lam_cv.get("fit_with", "RFS")
    if name not in selectors:
        raise ValueError(
            f"mvfs.lam_cv.fit_with must name a selector of mvfs.selectors; got {name!r}, "
            f"registered: {sorted(selectors)}."
        )
    spec = selectors[name]
    params = {**(spec.get("params") or {}), **(lam_cv.get("params") or {})}
    classifiers = lam_cv.get("classifiers") or protocol.get("classifiers") or {}
    if not classifiers:
        raise ValueError("mvfs.lam_cv.classifiers (or protocol.classifiers) is empty.")
    return {
        "estimator": "LamSearchCV",
        "params": {
            "selector": build_estimator({"estimator": spec["estimator"], "params": params}),
            "lams": list(lam_cv.get("grid") or []),
            "classifiers": [(c, build_classifier(c, e, None)) for c, e in classifiers.items()],
            "k": list(lam_cv.get("k") or protocol["k_grid"]),
            "n_folds": int(lam_cv.get("folds", 5)),
        },
    }


def _lam_cv_enabled(lam_cv: dict[str, Any] | None) -> bool:
    return bool(lam_cv) and bool(lam_cv.get("enabled", True))


def select_lam(
    views: dict[str, Any],
    split_table: pd.DataFrame,
    selectors: dict[str, dict[str, Any]],
    lam_cv: dict[str, Any] | None,
    protocol: dict[str, Any],
    execution: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """λ by inner stratified cross-validation on the training rows of every split (spec §6.2).

    One engine experiment (units = splits, on the run's backend): :class:`LamCVTask` fits the
    :class:`~multiview_lab.mvfs.LamSearchCV` of :func:`lam_cv_method` on the split's z-scored
    training rows. ``lam_cv`` holds
    ``enabled`` (default true; false or a null section: nothing is run, the selectors keep the
    ``lam`` / ``lam_frac`` of their params and the outputs are empty), ``fit_with`` (the
    selector of ``mvfs.selectors`` fitted on the inner folds, its params updated by
    ``lam_cv.params``), ``grid``, ``folds`` (stratified, shuffled with the split's seed), ``k``
    (null: ``protocol.k_grid``) and ``classifiers`` (registry format; null: the protocol's). The
    criterion is the held-out accuracy averaged over the classifiers and k, then over the folds;
    ties go to the largest λ.

    Returns
    -------
    table : DataFrame
        One row per (split, λ, fold): ``split, lam, fold, score, score_<classifier>..., lam_max,
        null_model, fit_time_s, chosen`` (``lam_max`` of the fold's training part; ``null_model``:
        λ ≥ λ_max, not fitted, majority-class score).
    chosen : DataFrame
        One row per split: ``split, lam, lam_max, lam_frac, score_mean, score_std`` (``lam_max``
        of the whole training split, the one the final fits see; ``lam_frac = lam / lam_max``).
    metrics : dict
        ``lam_cv/split<s>/lam``, ``.../lam_frac`` and ``.../score`` for MLflow.
    """
    if not _lam_cv_enabled(lam_cv):
        logger.info("mvfs.lam_cv disabled: λ from the selectors' lam / lam_frac.")
        return pd.DataFrame(columns=LAM_CV_COLUMNS), pd.DataFrame(columns=LAM_CHOSEN_COLUMNS), {}
    name = lam_cv.get("fit_with", "RFS")
    result = run_experiment(
        LamCVTask(),
        views,
        split_table,
        {name: lam_cv_method(selectors, lam_cv, protocol)},
        execution=execution,
        keep_models={"first": False},
        label="mvfs λ CV",
    )
    chosen = result.results[LAM_CHOSEN_COLUMNS].reset_index(drop=True)
    metrics = {}
    for row in chosen.itertuples(index=False):
        metrics[f"lam_cv/split{row.split}/lam"] = float(row.lam)
        metrics[f"lam_cv/split{row.split}/lam_frac"] = float(row.lam_frac)
        metrics[f"lam_cv/split{row.split}/score"] = float(row.score_mean)
        logger.info(
            "Split %d: λ = %.4g (%.3g λ_max) by inner CV.", row.split, row.lam, row.lam_frac
        )
    return result.extras["lam_cv"], chosen, metrics


def attach_lam(split_table: pd.DataFrame, lam_chosen: pd.DataFrame | None) -> pd.DataFrame:
    """The split table with each split's chosen λ in a ``lam`` column (unchanged when the CV is
    disabled), read by the selectors registered with ``lam_cv: true``.

    The λ is held as a one-element array: a setting of the split (part of every unit's cache
    key), not a key column (the key columns become columns of every result row).
    """
    if lam_chosen is None or lam_chosen.empty:
        return split_table
    lams = {int(s): float(v) for s, v in zip(lam_chosen["split"], lam_chosen["lam"], strict=True)}
    missing = sorted(set(map(int, split_table["split"])) - set(lams))
    if missing:
        raise ValueError(f"No λ chosen by the inner CV for split(s) {missing}.")
    out = split_table.copy()
    out["lam"] = [np.array([lams[int(s)]]) for s in out["split"]]
    return out
