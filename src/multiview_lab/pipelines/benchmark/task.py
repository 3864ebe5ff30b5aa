"""The benchmark's task: the views stacked in one 2-D array, classes scored by accuracy and
macro-F1.

Every data set is ``{"X", "y", "views_ind", "view_names"}``: the views side by side
(:func:`multiview_lab.utils.stack_views`; CSR when a view is sparse), which is the form
scikit-learn's meta-estimators index, so that ``OneVsRestClassifier`` and ``Pipeline`` work on
multiview estimators. Before a fit, every ``views_ind`` parameter of the registered estimator,
nested ones included (``estimator__views_ind`` of a one-vs-rest wrapper, a step of a
``Pipeline``), is set to the data set's view boundaries; single-view estimators (MeMd, a
scikit-learn classifier) see the concatenation.

Method entries may carry:

* ``densify: true``: sparse data sets are given to the method as a dense array (for estimators
  that refuse sparse input, e.g. GBC); the result rows say ``densified``. Without it a sparse
  data set stays sparse, and an estimator refusing it fails with an error saying to set it;
* ``datasets``: the data sets the method runs on (default: every one);
* ``data_params``: data set name -> estimator parameters set on top of ``params`` (nested ones
  by scikit-learn's ``a__b`` names), e.g. a selector's number of features per data set.

Scores: ``accuracy``, ``f1_macro``, ``n_train``, ``n_test`` (and the engine's ``fit_time_s``,
``score_time_s``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from multiview_lab.protocol import MatrixTask, classification_scores

_REFUSES_SPARSE = ("dense data is required", "sparse")


def set_views_ind(model, views_ind) -> list[str]:
    """Set every ``views_ind`` parameter of ``model`` (nested ones included); return their
    names."""
    names = [
        k for k in model.get_params(deep=True) if k == "views_ind" or k.endswith("__views_ind")
    ]
    if names:
        boundaries = np.asarray(views_ind, dtype=np.intp)
        model.set_params(**{k: boundaries for k in names})
    return names


@dataclass
class BenchmarkTask(MatrixTask):
    """Stacked views of the benchmark's data sets (see the module docstring)."""

    method_options = ("densify", "datasets", "data_params")

    def _data_params(self, method, dataset: str) -> dict[str, Any]:
        data_params = method.option("data_params") or {}
        if not isinstance(data_params, Mapping):
            raise ValueError(f"method {method.name!r}: data_params must map data sets to params.")
        return dict(data_params.get(dataset) or {})

    def applies(self, method, split) -> bool:
        """Whether the method runs on the split's data set (its ``datasets`` option); checks
        the ``data_params`` of that data set (unknown parameters fail here, naming them)."""
        wanted = method.option("datasets")
        if wanted is not None and split["dataset"] not in list(wanted):
            return False
        params = self._data_params(method, split["dataset"])
        if params:
            method.build().set_params(**params)
        return True

    def _densify(self, method, X):
        return X.toarray() if method.option("densify", False) and sp.issparse(X) else X

    def train_part(self, data, split, method):
        X, y = super().train_part(data, split, method)
        return self._densify(method, X), y

    def test_part(self, data, split, method):
        X, y = super().test_part(data, split, method)
        return self._densify(method, X), y

    def fit(self, model, data, split, method) -> None:
        params = self._data_params(method, split["dataset"])
        if params:
            model.set_params(**params)
        set_views_ind(model, data["views_ind"])
        X, y = self.train_part(data, split, method)
        try:
            model.fit(X, y)
        except TypeError as exc:
            if sp.issparse(X) and any(s in str(exc) for s in _REFUSES_SPARSE):
                dense_mb = X.shape[0] * X.shape[1] * 8 / 2**20
                raise TypeError(
                    f"method {method.name!r} refuses the sparse data set {split['dataset']!r} "
                    f"({exc}); set 'densify: true' on it in benchmark.methods to give it a "
                    f"dense array ({X.shape[0]} x {X.shape[1]}, {dense_mb:.0f} MiB)."
                ) from exc
            raise

    def score(self, model, data, split, method):
        X, y = self.test_part(data, split, method)
        return {
            **classification_scores(y, model.predict(X)),
            "n_train": int(len(split["train"])),
            "n_test": int(len(split["test"])),
            "densified": bool(method.option("densify", False) and sp.issparse(data["X"])),
        }


def make_task(protocol: Mapping[str, Any]) -> BenchmarkTask:
    """The pipeline's task (it has no settings of its own)."""
    return BenchmarkTask()
