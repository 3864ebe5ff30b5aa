"""The ADMM-MVFS project protocol's tasks (spec §6.2): selection and evaluation as one unit.

Both tasks see the views z-scored with the mean and standard deviation of the split's training
rows only (:func:`standardise_split`).

* :class:`SelectionTask` fits a registered selector on the training rows and scores its
  ranking: for every k of ``protocol.k_grid`` and every classifier of ``protocol.classifiers``
  (registry format: ``estimator`` + ``params``, ``tune`` = ``GridSearchCV`` over ``tune.grid``
  with ``tune.folds`` folds), the accuracy on the test rows of the classifier trained on the
  top-k features; one result row per (k, classifier). Its extra tables are ``rankings`` (one
  row per unit: ranking, λ, iterations, stop reason, final objective) and ``histories`` (the
  per-iteration trajectory of the iterative selectors). Method entries may carry
  ``lam_cv: true`` (the selector gets the split's ``lam``, chosen by the inner CV),
  ``all_features: true`` (scored once at k = d, the score repeated at every k of the grid: the
  flat reference line of the all-features baseline) and ``score_with`` (a subset of the
  protocol's classifiers).

The λ search that precedes it is the experiment of :mod:`.lam_cv`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV

from multiview_lab.protocol import ViewsTask, parse_method

HISTORY_KEYS = ("objective", "primal_residual", "dual_residual", "rho", "time")


def standardise_split(Xs, train_idx, test_idx) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Z-score every view with the mean and (ML) standard deviation of the training rows only.

    Constant training columns get scale 1 (they stay constant, hence carry no information).
    Returns the standardised training and test views.
    """
    train, test = [], []
    for X in Xs:
        X_train = X[train_idx]
        loc = X_train.mean(axis=0)
        scale = X_train.std(axis=0)
        scale[scale == 0] = 1.0
        train.append((X_train - loc) / scale)
        test.append((X[test_idx] - loc) / scale)
    return train, test


def build_classifier(name: str, entry: Mapping[str, Any], seed: int | None):
    """The classifier of a registry entry, seeded with ``seed`` unless its params fix one; with
    ``tune``, a ``GridSearchCV`` over ``tune.grid`` (``tune.folds`` folds, default 5; scored
    by ``tune.metric``, default the classifier's accuracy)."""
    method = parse_method(name, entry)
    model = method.build(seed)
    if not method.tune:
        return model
    tune = method.tune
    return GridSearchCV(
        model, dict(tune["grid"]), cv=int(tune.get("folds", 5)), scoring=tune.get("metric")
    )


@dataclass
class ZScoredViewsTask(ViewsTask):
    """Views ``{"X": [views], "y"}``, z-scored with the split's training statistics."""

    def parts(self, data, split):
        """``((views, y) of the training rows, (views, y) of the test rows)``, z-scored."""
        y = np.asarray(data["y"])
        train = np.asarray(split["train"], dtype=np.int64)
        test = np.asarray(split["test"], dtype=np.int64)
        Xs_train, Xs_test = standardise_split(data["X"], train, test)
        return (Xs_train, y[train]), (Xs_test, y[test])

    def train_part(self, data, split, method):
        return self.parts(data, split)[0]

    def test_part(self, data, split, method):
        return self.parts(data, split)[1]


@dataclass
class LamCVTask(ZScoredViewsTask):
    """λ by inner CV on a split's training rows: the chosen λ, and the ``lam_cv`` table
    (the units of :func:`multiview_lab.pipelines.mvfs.lam_cv.select_lam`; kept here, with the
    other tasks, so that its cache key does not cover the engine that node calls)."""

    def score(self, model, data, split, method):
        return {
            "lam": model.best_lam_,
            "lam_max": model.lam_max_,
            "lam_frac": model.best_lam_ / model.lam_max_,
            "score_mean": model.best_score_,
            "score_std": model.best_score_std_,
        }

    def extras(self, model, data, split, method, unit):
        table = model.cv_result_.to_frame(model.classifier_names_)
        table.insert(0, "split", unit["split"])
        return {"lam_cv": table}


@dataclass
class SelectionTask(ZScoredViewsTask):
    """A selector's ranking, scored on its top-k features (see the module docstring)."""

    k_grid: list[int] = field(default_factory=lambda: [10])
    classifiers: dict[str, Any] = field(default_factory=dict)
    method_options = ("lam_cv", "all_features", "score_with")

    def __post_init__(self) -> None:
        if not self.classifiers:
            raise ValueError("mvfs.protocol.classifiers is empty: register at least one.")
        for name, entry in self.classifiers.items():
            parse_method(name, entry)  # a malformed entry fails before any fit
        self.k_grid = sorted(int(k) for k in self.k_grid)

    def fit(self, model, data, split, method) -> None:
        Xs, y = self.train_part(data, split, method)
        d = sum(X.shape[1] for X in Xs)
        if not self.k_grid or self.k_grid[0] < 1 or self.k_grid[-1] > d:
            raise ValueError(f"k_grid must lie in [1, {d}]; got {self.k_grid}.")
        lam = split.get("lam")
        if method.option("lam_cv", False) and lam is not None:
            model.set_params(lam=float(np.ravel(lam)[0]), lam_frac=None)
        model.fit(Xs, y)

    def score(self, model, data, split, method):
        (Xs_train, y_train), (Xs_test, y_test) = self.parts(data, split)
        X_train, X_test = np.hstack(Xs_train), np.hstack(Xs_test)
        names = list(method.option("score_with") or self.classifiers)
        unknown = sorted(set(names) - set(self.classifiers))
        if unknown:
            raise ValueError(
                f"{method.name}: score_with names {unknown}, not classifiers of the protocol "
                f"({list(self.classifiers)})."
            )
        full = bool(method.option("all_features", False))
        ranking = np.asarray(model.ranking_, dtype=np.int64)
        rows = []
        for k in [X_train.shape[1]] if full else self.k_grid:
            cols = ranking[:k]
            for name in names:
                clf = build_classifier(name, self.classifiers[name], int(split["seed"]))
                clf.fit(X_train[:, cols], y_train)
                accuracy = float(np.mean(clf.predict(X_test[:, cols]) == y_test))
                rows.append({"k": int(k), "classifier": name, "accuracy": accuracy})
        if full:  # one score per classifier, repeated at every k of the grid
            rows = [{**row, "k": k} for k in self.k_grid for row in rows]
        return rows

    def extras(self, model, data, split, method, unit):
        history = getattr(model, "history_", None)
        keys = {k: unit[k] for k in ("dataset", "method", "split", "seed")}
        ranking = {
            **keys,
            "ranking": np.asarray(model.ranking_, dtype=np.int64),
            "lam": float(getattr(model, "lam_", np.nan)),
            "n_iter": int(getattr(model, "n_iter_", 0)),
            "stop_reason": str(getattr(model, "stop_reason_", "")),
            "objective": float(history["objective"][-1]) if history else np.nan,
        }
        out = {"rankings": pd.DataFrame([ranking])}
        if history:
            frame = pd.DataFrame(
                {k: np.asarray(history[k], dtype=float) for k in HISTORY_KEYS if k in history}
            )
            frame.insert(0, "iteration", np.arange(1, len(frame) + 1))
            frame.insert(0, "method", unit["method"])
            frame.insert(0, "split", unit["split"])
            out["histories"] = frame
        return out


def make_task(protocol: Mapping[str, Any]) -> SelectionTask:
    """The selection task of the pipeline's protocol parameters."""
    return SelectionTask(
        k_grid=list(protocol["k_grid"]), classifiers=dict(protocol.get("classifiers") or {})
    )
