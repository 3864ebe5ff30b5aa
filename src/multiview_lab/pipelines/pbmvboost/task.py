"""The PB-MVBoost paper's task (Sect. 5.2): one-vs-all on MNIST views, scored on the test set.

A :class:`~multiview_lab.protocol.ViewsTask` whose labels are ±1 for the split's digit
(``task``), scored by accuracy and F1 of the positive class with an explicit tie policy
(:func:`multiview_lab.pbmvboost.metrics.binary_scores`). Method entries may carry:

* ``input_divisor``: the pixels are divided by it (255 for the SVMs of Fusion_Cq^all, spec 5.2;
  the trees see raw pixels);
* ``tie_policy``: ``"error"`` or ``"drop"`` (default: the protocol's);
* ``trajectory: true``: per-iteration train/test scores and the training C-bound (Figure 4);
* ``readings``: name -> prediction-time parameters; each is scored as a method of its own from
  the same fitted model (e.g. PB-MVBoost's ``vote``): training does not depend on them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multiview_lab.pbmvboost.metrics import binary_scores
from multiview_lab.protocol import ViewsTask


def _train_quantities(pac) -> dict[str, float]:
    """The scalar PAC-Bayes quantities on the training sample, as ``train_<name>`` columns."""
    return {f"train_{k}": float(v) for k, v in (pac or {}).items() if np.ndim(v) == 0}


@dataclass
class OneVsAllTask(ViewsTask):
    """One-vs-all MNIST views (see the module docstring)."""

    tie_policy: str = "error"
    method_options = ("input_divisor", "tie_policy", "trajectory", "readings")

    def _binary(self, Xs, y, split, method):
        divisor = float(method.option("input_divisor", 1.0))
        if divisor != 1.0:
            Xs = [X / divisor for X in Xs]
        return Xs, np.where(y == split["task"], 1, -1)

    def train_part(self, data, split, method):
        return self._binary(*super().train_part(data, split, method), split, method)

    def test_part(self, data, split, method):
        return self._binary(*super().test_part(data, split, method), split, method)

    def score(self, model, data, split, method):
        tie = method.option("tie_policy", self.tie_policy)
        Xs_test, y_test = self.test_part(data, split, method)
        row = binary_scores(y_test, model.decision_function(Xs_test), tie_policy=tie)
        row.update(_train_quantities(getattr(model, "pac_bayes_", None)))
        rows = [row]
        readings = method.option("readings") or {}
        if readings:
            Xs_train, y_train = self.train_part(data, split, method)
        for reading, params in readings.items():
            allowed = getattr(model, "_PREDICTION_PARAMS", ())
            other = sorted(set(params) - set(allowed))
            if other:
                raise ValueError(
                    f"Reading {reading!r} of {method.name!r} sets {other}: only the "
                    f"prediction-time parameters {list(allowed)} of {type(model).__name__} can "
                    "change on a fitted model; register it as a method of its own instead."
                )
            variant = copy.copy(model).set_params(**params)
            extra = {"method": reading}
            extra.update(binary_scores(y_test, variant.decision_function(Xs_test), tie_policy=tie))
            if hasattr(variant, "pac_bayes_quantities"):
                extra.update(_train_quantities(variant.pac_bayes_quantities(Xs_train, y_train)))
            rows.append(extra)
        return rows

    def extras(self, model, data, split, method, unit):
        if not (method.option("trajectory") and hasattr(model, "staged_decision_function")):
            return {}
        tie = method.option("tie_policy", self.tie_policy)
        (Xs_train, y_train), (Xs_test, y_test) = (
            self.train_part(data, split, method),
            self.test_part(data, split, method),
        )
        stages = zip(
            model.staged_decision_function(Xs_train),
            model.staged_decision_function(Xs_test),
            strict=True,
        )
        cbound = np.asarray(model.cbound_history_, dtype=float)[:, 1]  # uniform weights (Fig. 4)
        records = []
        for t, (s_train, s_test) in enumerate(stages):
            train = binary_scores(y_train, s_train, tie_policy=tie)
            test = binary_scores(y_test, s_test, tie_policy=tie)
            records.append(
                {
                    **{k: unit[k] for k in ("dataset", "method", "task", "draw", "n_train")},
                    "iteration": t + 1,
                    "train_accuracy": train["accuracy"],
                    "train_f1": train["f1"],
                    "test_accuracy": test["accuracy"],
                    "test_f1": test["f1"],
                    "train_cbound": float(cbound[t]),
                }
            )
        return {"trajectories": pd.DataFrame.from_records(records)}


def make_task(protocol) -> OneVsAllTask:
    """The pipeline's task from its protocol parameters."""
    return OneVsAllTask(tie_policy=protocol.get("tie_policy", "error"))
