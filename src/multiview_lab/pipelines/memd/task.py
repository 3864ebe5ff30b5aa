"""The MeMd paper's task (spec Sect. 5.2): one matrix per data set, scored by test accuracy.

A :class:`~multiview_lab.protocol.MatrixTask` over dense gene matrices and ``scipy.sparse`` text
matrices (rows are never densified). Each data set carries its ``data_type`` (``gene`` or
``text``), as does the split table. Method entries may carry:

* ``data_types``: the data types the method runs on (default: both);
* ``data_params``: ``{gene: {...}, text: {...}}``, estimator parameters set on top of ``params``
  for the data sets of that type (the spec's per-data-type settings, e.g. MeMd's family and K
  selection, or a baseline's ``data``).

Scores: ``accuracy``, the chosen ``k`` and floor ``epsilon`` (MeMd's, or a SelectKBest
baseline's ``k``; else NaN), ``n_features``, ``n_train``. With ``curve_points``, every MeMd unit
adds the test accuracy against the number of top-ranked features (extra table ``curves``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.memd.baselines import DATA_TYPES
from multiview_lab.memd.evaluation import selected_k
from multiview_lab.memd.memd import MeMdClassifier, MeMdModel, validation_curve
from multiview_lab.protocol import MatrixTask

CURVE_COLUMNS = ["dataset", "data_type", "method", "run", "fold", "k", "accuracy"]


def _curve_grid(n_features: int, n_points: int) -> np.ndarray:
    grid = np.round(np.geomspace(1, n_features, n_points)).astype(int)
    return np.unique(np.r_[grid, n_features])


def accuracy_curve(model: MeMdClassifier, X_test, y_test, n_points: int) -> pd.DataFrame:
    """Test accuracy of a fitted MeMd classifier for K top-ranked features on a geometric grid.

    Uses the model fitted on the training fold (ranking and marginals) and the one-pass
    evaluation of :func:`multiview_lab.memd.memd.validation_curve` (MeMd spec Sect. 3.1).
    """
    index = {c: i for i, c in enumerate(model.classes_)}
    y_idx = np.array([index.get(v, -1) for v in np.asarray(y_test)])
    fitted = MeMdModel(
        lam=model.lambda_,
        log_prior=np.log(model.class_prior_),
        scores=model.scores_,
        divergences=model.divergences_,
        ranking=model.ranking_,
        epsilon=model.epsilon_,
    )
    grid = _curve_grid(model.n_features_in_, n_points)
    accuracy = validation_curve(fitted, X_test, y_idx, grid)
    return pd.DataFrame({"k": grid, "accuracy": accuracy})


@dataclass
class MeMdTask(MatrixTask):
    """Gene and text matrices of the MeMd experiments (see the module docstring)."""

    curve_points: int = 0
    method_options = ("data_types", "data_params")

    def _data_params(self, method) -> dict[str, Any]:
        data_params = method.option("data_params") or {}
        if not isinstance(data_params, Mapping):
            raise ValueError(f"method {method.name!r}: data_params must map data types to params.")
        bad = sorted(set(data_params) - set(DATA_TYPES))
        if bad:
            raise ValueError(
                f"method {method.name!r}: data_params for {bad}; data types are {DATA_TYPES}."
            )
        return data_params

    def applies(self, method, split) -> bool:
        """Whether the split's ``data_type`` is one of the method's ``data_types``; checks the
        method's options (unknown data types or estimator parameters fail here, naming them)."""
        data_types = list(method.option("data_types") or DATA_TYPES)
        bad = sorted(set(data_types) - set(DATA_TYPES))
        if bad:
            raise ValueError(f"method {method.name!r}: data_types {bad} not in {DATA_TYPES}.")
        for params in self._data_params(method).values():
            method.build(**dict(params or {}))  # unknown parameters fail here
        return split["data_type"] in data_types

    def fit(self, model, data, split, method) -> None:
        params = self._data_params(method).get(split["data_type"]) or {}
        if params:
            model.set_params(**params)
        model.fit(*self.train_part(data, split, method))

    def score(self, model, data, split, method):
        X, y = self.test_part(data, split, method)
        k, epsilon = selected_k(model)
        return {
            "accuracy": float(np.mean(model.predict(X) == y)),
            "k": k,
            "epsilon": epsilon,
            "n_features": int(data["X"].shape[1]),
            "n_train": int(len(split["train"])),
        }

    def extras(self, model, data, split, method, unit) -> dict[str, pd.DataFrame]:
        if not (self.curve_points and isinstance(model, MeMdClassifier)):
            return {}
        X, y = self.test_part(data, split, method)
        curve = accuracy_curve(model, X, y, self.curve_points)
        curve = curve.assign(**{k: unit[k] for k in CURVE_COLUMNS if k in unit})
        return {"curves": curve[CURVE_COLUMNS]}


def make_task(protocol: Mapping[str, Any]) -> MeMdTask:
    """The pipeline's task from its protocol parameters (``curve_points``: 0 = no curves)."""
    return MeMdTask(curve_points=int(protocol.get("curve_points", 0) or 0))
