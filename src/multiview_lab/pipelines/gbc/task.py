"""How one GBC unit is fitted and scored: the paper's transductive error (spec §5).

A data set is ``{"sources", "source_names", "y", "graphs", "graph_names"}`` (sources as full
arrays, row r = instance r). A split row holds the training rows (``train``, labelled), the
scored rows (``test``, every other instance) and the records its setting deletes (``absent``:
flat indices ``r·p + i`` of instance r in source i); the number-of-sources study adds the
sources it keeps (``source_idx``). Every instance takes part in the fit (transductive); the
error is counted on the ``test`` rows.

Method options (besides ``estimator``, ``params``, ``tune``): ``graphs: false`` (the method
gets no graph), ``trajectory: true`` (the source and graph weights over the iterations,
averaged over the one-vs-rest models, become rows of the extra table ``weights``) and
``n_splits: k`` (the method runs on splits 0 … k−1 of each training size only: a costly
baseline on fewer repetitions than the protocol's ``n_splits``; claims pair it with the other
methods on those splits).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.gbc.settings import build_sources
from multiview_lab.protocol import TransductiveTask


def split_sources(data: dict[str, Any], split: dict[str, Any]) -> tuple[list, list[str]]:
    """The sources of one split as ``(X_i[S_i], S_i)`` pairs, and their names.

    ``split["source_idx"]`` (optional) selects sources; ``split["absent"]`` deletes records
    (flat indices over the n × p grid of the selected sources).
    """
    idx = split.get("source_idx")
    idx = range(len(data["sources"])) if idx is None else np.asarray(idx, dtype=np.int64)
    views = [data["sources"][i] for i in idx]
    names = [str(data["source_names"][i]) for i in idx]
    n, p = np.asarray(data["y"]).shape[0], len(views)
    present = np.ones(n * p, dtype=bool)
    absent = split.get("absent")
    if absent is not None:
        present[np.asarray(absent, dtype=np.int64)] = False
    present = present.reshape(n, p)
    return build_sources(views, [np.flatnonzero(present[:, i]) for i in range(p)]), names


def _mean_history(histories) -> np.ndarray:
    """Average weight histories of one-vs-rest models; shorter ones (early stopping) are
    held at their last value."""
    if isinstance(histories, np.ndarray):
        return histories
    length = max(h.shape[0] for h in histories)
    padded = [np.vstack([h, np.repeat(h[-1:], length - h.shape[0], axis=0)]) for h in histories]
    return np.mean(padded, axis=0)


@dataclass
class GBCTask(TransductiveTask):
    """Sources with deleted records, graphs, a labelled mask; the error on the test rows.

    Parameters
    ----------
    methods_by_dataset : dict, optional
        Data set -> the methods that run on it (default: every method on every data set).
    trajectories : bool, default=True
        Whether methods with ``trajectory: true`` record their weights (table ``weights``).
    """

    methods_by_dataset: dict[str, list[str]] = field(default_factory=dict)
    trajectories: bool = True
    method_options = ("graphs", "trajectory", "n_splits")
    # the options that change a fit (a grid point's inner-CV score): ``trajectory`` only adds
    # a table and ``n_splits`` selects units, so GBC's CV points are shared with the variants'
    # (multiview_lab.protocol.tuning)
    fit_options = ("graphs",)
    info_attributes = {"lambda0": "lambda0", "lambda1": "lambda1", "n_iter_": "n_iter"}

    def applies(self, method, split) -> bool:
        only = self.methods_by_dataset.get(split["dataset"])
        if only is not None and method.name not in only:
            return False
        n_splits = method.option("n_splits")
        if n_splits is None:
            return True
        if isinstance(n_splits, bool) or not isinstance(n_splits, int) or n_splits < 1:
            raise ValueError(
                f"method {method.name!r}: n_splits must be a positive integer (the method runs "
                f"on splits 0 .. n_splits-1 of each training size); got {n_splits!r}."
            )
        return int(split.get("split", 0)) < n_splits

    def fit_args(self, data, split, method) -> tuple:
        sources, _ = split_sources(data, split)
        graphs = list(data["graphs"]) if method.option("graphs", True) else []
        return sources, graphs, np.asarray(data["y"]), self.labeled_mask(data, split)

    def extras(self, model, data, split, method, unit) -> dict[str, pd.DataFrame]:
        if not (self.trajectories and method.option("trajectory")):
            return {}
        if not hasattr(model, "source_weights_history_"):
            return {}
        _, source_names = split_sources(data, split)
        keys = {k: v for k, v in unit.items() if k not in ("method", "seed")}
        keys.update(method=unit["method"], seed=unit["seed"])
        records = []
        for kind, attr, names in (
            ("source", "source_weights_history_", source_names),
            ("graph", "graph_weights_history_", data["graph_names"]),
        ):
            hist = _mean_history(getattr(model, attr))
            if hist.size == 0:
                continue
            for j, name in enumerate(names):
                for t in range(hist.shape[0]):
                    records.append(
                        {**keys, "kind": kind, "name": str(name), "iteration": t,
                         "weight": float(hist[t, j])}
                    )  # fmt: skip
        return {"weights": pd.DataFrame.from_records(records)}


def make_task(protocol: dict[str, Any]) -> GBCTask:
    """The task of the main study from ``gbc.protocol``."""
    only = protocol.get("methods_by_dataset") or {}
    return GBCTask(methods_by_dataset={str(k): [str(m) for m in v] for k, v in only.items()})


def make_source_count_task(study: dict[str, Any]) -> GBCTask:
    """The task of the number-of-sources study from ``gbc.sources``: its one method, no
    weight trajectories."""
    return GBCTask(
        methods_by_dataset={str(study["dataset"]): [str(study["method"])]}, trajectories=False
    )
