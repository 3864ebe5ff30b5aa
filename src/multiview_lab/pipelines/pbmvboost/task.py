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

Every PB-MVBoost / MVBoost row (readings included) also carries the paper's PAC-Bayes bounds on
the training sample, at the protocol's ``bounds.delta``
(:func:`multiview_lab.pbmvboost.bounds.pac_bayes_bounds`): ``bound_gibbs_cor1`` (Corollary 1,
on the true Gibbs risk; compare with ``test_gibbs_risk``, the Gibbs risk on the test set, and
``train_gibbs_risk``, the empirical risk it starts from), ``bound_mv_thm2`` (Theorem 2, on the
true risk of the vote; compare with ``1 - accuracy`` and ``test_multiview_cbound``), the KL terms
``bound_kl_views`` (``E_rho KL(Q_v||P_v)``) and ``bound_kl_rho`` (``KL(rho||pi)``), the Catoni
constant used ``bound_catoni_c`` and ``bound_delta``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multiview_lab.pbmvboost.bounds import has_bounds, pac_bayes_bounds
from multiview_lab.pbmvboost.metrics import binary_scores
from multiview_lab.protocol import ViewsTask


def _train_quantities(pac) -> dict[str, float]:
    """The scalar PAC-Bayes quantities on the training sample, as ``train_<name>`` columns."""
    return {f"train_{k}": float(v) for k, v in (pac or {}).items() if np.ndim(v) == 0}


@dataclass
class OneVsAllTask(ViewsTask):
    """One-vs-all MNIST views (see the module docstring).

    ``bounds_delta``: confidence of the PAC-Bayes bound columns (``None``: no bound columns).
    """

    tie_policy: str = "error"
    bounds_delta: float | None = 0.05
    method_options = ("input_divisor", "tie_policy", "trajectory", "readings")

    def __post_init__(self):
        if self.bounds_delta is not None and not 0.0 < float(self.bounds_delta) <= 1.0:
            raise ValueError(
                f"bounds.delta must lie in (0, 1] or be null; got {self.bounds_delta!r}."
            )

    def _bound_columns(self, model, train, test) -> dict[str, float]:
        """The PAC-Bayes bound columns of a PB-MVBoost / MVBoost model (empty for others)."""
        if self.bounds_delta is None or not has_bounds(model):
            return {}
        b = pac_bayes_bounds(model, *train, delta=float(self.bounds_delta))
        held_out = model.pac_bayes_quantities(*test)
        return {
            "bound_gibbs_cor1": b["bound_gibbs_cor1"],
            "bound_mv_thm2": b["bound_mv_thm2"],
            "bound_kl_views": b["kl_views"],
            "bound_kl_rho": b["kl_rho"],
            "bound_catoni_c": b["catoni_C"],
            "bound_delta": b["delta"],
            "test_gibbs_risk": float(held_out["gibbs_risk"]),
            "test_multiview_cbound": float(held_out["multiview_cbound"]),
        }

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
        train, test = self.train_part(data, split, method), (Xs_test, y_test)
        row.update(self._bound_columns(model, train, test))
        rows = [row]
        readings = method.option("readings") or {}
        Xs_train, y_train = train
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
            extra.update(self._bound_columns(variant, train, test))
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
    """The pipeline's task from its protocol parameters (``tie_policy``, ``bounds.delta``)."""
    bounds = protocol.get("bounds") or {}
    return OneVsAllTask(
        tie_policy=protocol.get("tie_policy", "error"), bounds_delta=bounds.get("delta", 0.05)
    )
