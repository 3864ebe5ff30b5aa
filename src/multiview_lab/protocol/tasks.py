"""Task kinds: how one split of a data set meets an estimator.

A *task* is the small contract between the engine (:func:`multiview_lab.protocol.run_experiment`)
and the input convention of a family of estimators. Given a data set (a mapping), one row of the
split table and a registered :class:`~multiview_lab.protocol.Method`, it says

* what to pass to ``fit`` (:meth:`Task.fit_args`),
* how to score the fitted model (:meth:`Task.score`: a dict of metrics, or a list of dicts when
  one fit gives several rows, e.g. prediction-time readings of the same model),
* which fitted quantities become columns (:meth:`Task.info`) and which extra tables to keep
  (:meth:`Task.extras`: trajectories, weights, curves; name -> DataFrame),
* which rows an inner cross-validation (``tune:``) splits (:meth:`Task.labels`).

The kinds here cover the conventions of the five methods: a list of views (:class:`ViewsTask`),
sources and graphs with a labelled mask scored transductively (:class:`TransductiveTask`),
bags of instances (:class:`BagsTask`) and one 2-D dense or sparse matrix (:class:`MatrixTask`).
A pipeline subclasses one of them when its paper scores differently (PB-MVBoost's one-vs-all F1,
GBC's error); it never writes a loop over units. Tasks are dataclasses: their fields are settings,
part of every unit's cache key, and they must pickle (they travel to the workers).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score


def _rows_of(X, idx):
    return X[np.asarray(idx, dtype=np.int64)]


@dataclass
class Task:
    """Base class of the task kinds (see the module docstring)."""

    #: keys a method entry of this task's registry may carry besides the engine's
    method_options: ClassVar[tuple[str, ...]] = ()
    #: fitted attributes copied into the results as columns (attribute -> column)
    info_attributes: ClassVar[dict[str, str]] = {}

    def settings(self) -> dict[str, Any]:
        """The task's settings (its dataclass fields): part of every unit's cache key."""
        return {"task": f"{type(self).__module__}.{type(self).__qualname__}", **asdict(self)}

    def applies(self, method, split: dict[str, Any]) -> bool:
        """Whether ``method`` runs on ``split`` (default: always)."""
        return True

    def labels(self, data: dict[str, Any]) -> np.ndarray:
        """The labels of the rows that ``split["train"]`` indexes (stratifies inner CV)."""
        return np.asarray(data["y_train"] if "y_train" in data else data["y"])

    def fit_args(self, data: dict[str, Any], split: dict[str, Any], method) -> tuple:
        raise NotImplementedError

    def fit(self, model, data: dict[str, Any], split: dict[str, Any], method) -> None:
        model.fit(*self.fit_args(data, split, method))

    def score(self, model, data: dict[str, Any], split: dict[str, Any], method):
        raise NotImplementedError

    def info(self, model) -> dict[str, Any]:
        out = {}
        for attr, column in self.info_attributes.items():
            value = getattr(model, attr, None)
            if value is not None:
                out[column] = float(np.mean(value))
        return out

    def extras(self, model, data, split, method, unit: dict[str, Any]) -> dict[str, pd.DataFrame]:
        return {}


def classification_scores(y_true, y_pred) -> dict[str, float]:
    """Accuracy and macro-averaged F1."""
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "f1_macro": float(f1_score(y_true, y_pred, average="macro", zero_division=0)),
    }


@dataclass
class ViewsTask(Task):
    """A list of views (2-D arrays, dense or sparse, one row per sample).

    The data set is ``{"X": [views], "y"}`` with the split's ``train`` / ``test`` indices, or
    ``{"X_train": [views], "y_train", "X_test": [views], "y_test"}`` with a fixed test set
    (``test`` is ``None``; indices then select rows of the training pool).
    """

    def _part(self, data, split, which):
        idx = split.get(which)
        if "X_train" in data:
            if idx is None:
                if which == "train":
                    return data["X_train"], np.asarray(data["y_train"])
                return data["X_test"], np.asarray(data["y_test"])
            return [_rows_of(X, idx) for X in data["X_train"]], _rows_of(
                np.asarray(data["y_train"]), idx
            )
        if idx is None:
            raise ValueError(f"the split of {split.get('dataset')!r} has no {which} indices.")
        return [_rows_of(X, idx) for X in data["X"]], _rows_of(np.asarray(data["y"]), idx)

    def train_part(self, data, split, method):
        """``(views, y)`` of the training rows."""
        return self._part(data, split, "train")

    def test_part(self, data, split, method):
        """``(views, y)`` of the test rows."""
        return self._part(data, split, "test")

    def fit_args(self, data, split, method) -> tuple:
        return self.train_part(data, split, method)

    def score(self, model, data, split, method):
        Xs, y = self.test_part(data, split, method)
        return classification_scores(y, model.predict(Xs))


@dataclass
class MatrixTask(ViewsTask):
    """One 2-D matrix ``{"X", "y"}`` (dense or ``scipy.sparse``; rows are samples)."""

    def _part(self, data, split, which):
        idx = split.get(which)
        if idx is None:
            raise ValueError(f"the split of {split.get('dataset')!r} has no {which} indices.")
        return _rows_of(data["X"], idx), _rows_of(np.asarray(data["y"]), idx)


@dataclass
class BagsTask(ViewsTask):
    """Bags of instances ``{"bags": [2-D arrays], "Y"}`` (``Y``: one row of labels per bag)."""

    def labels(self, data):
        Y = np.asarray(data["Y"])
        return Y if Y.ndim == 1 else Y[:, 0]

    def _part(self, data, split, which):
        idx = split.get(which)
        if idx is None:
            raise ValueError(f"the split of {split.get('dataset')!r} has no {which} indices.")
        idx = np.asarray(idx, dtype=np.int64)
        return [data["bags"][i] for i in idx], np.asarray(data["Y"])[idx]


@dataclass
class TransductiveTask(Task):
    """Sources and graphs over one set of instances, a labelled mask, scored transductively.

    The data set is ``{"sources", "graphs", "y"}`` (see :class:`multiview_lab.estimators.GBCClassifier`);
    the split's ``train`` rows are labelled, all instances take part in the fit, and the
    prediction on the ``test`` rows is scored.
    """

    def labeled_mask(self, data, split) -> np.ndarray:
        mask = np.zeros(np.asarray(data["y"]).shape[0], dtype=bool)
        mask[np.asarray(split["train"], dtype=np.int64)] = True
        return mask

    def fit_args(self, data, split, method) -> tuple:
        return (
            data["sources"],
            data["graphs"],
            np.asarray(data["y"]),
            self.labeled_mask(data, split),
        )

    def predict(self, model, data, split, method) -> np.ndarray:
        return np.asarray(model.predict_transductive())

    def score(self, model, data, split, method):
        test = np.asarray(split["test"], dtype=np.int64)
        y = np.asarray(data["y"])
        pred = self.predict(model, data, split, method)[test]
        return {"error": float(np.mean(pred != y[test]))}
