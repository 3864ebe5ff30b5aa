"""Nodes of the ``benchmark`` pipeline: data sets named in conf -> stacked views -> seeded
repeated stratified K-fold -> the shared training stage and reporting.

Data sets are entries of ``benchmark.datasets`` (read by
:func:`multiview_lab.io.multiview_files.load_multiview`; relative paths start at
``data/01_raw``), so a data set is added by conf alone; methods are entries of
``benchmark.methods`` in the registry format of :mod:`multiview_lab.protocol.registry`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from multiview_lab.io.multiview_files import MultiviewFiles
from multiview_lab.protocol import splits
from multiview_lab.protocol.registry import is_enabled
from multiview_lab.utils import stack_views

logger = logging.getLogger(__name__)


def load_datasets(raw: MultiviewFiles, datasets: Mapping[str, Any]) -> dict[str, Any]:
    """Every enabled data set of ``benchmark.datasets``, its views stacked.

    Parameters
    ----------
    raw : MultiviewFiles
        The loader of the raw folder (the catalog's ``benchmark.raw``).
    datasets : dict
        Name -> spec (``format``, ``path`` and the format's keys; ``enabled: false`` skips it).

    Returns
    -------
    dict
        Name -> ``{"X", "y", "views_ind", "view_names", "source"}``: ``X`` the views side by
        side (CSR when any view is sparse, never densified), ``views_ind`` their boundaries.
    """
    enabled = {str(k): v for k, v in (datasets or {}).items() if is_enabled(v)}
    if not enabled:
        raise ValueError("no data set enabled: add one under benchmark.datasets.")
    out = {}
    for name, spec in enabled.items():
        if "/" in name:
            raise ValueError(f"data set name {name!r} must not contain '/'.")
        data = raw.load(spec)
        X, views_ind = stack_views(data["views"])
        out[name] = {
            "X": X,
            "y": data["y"],
            "views_ind": views_ind,
            "view_names": list(data["view_names"]),
            "source": data["source"],
        }
        logger.info(
            "%s: %d samples, %d classes, %d views of %s features (%s) from %s.",
            name, X.shape[0], np.unique(data["y"]).size, len(data["views"]),
            np.diff(views_ind).tolist(), "sparse" if sp.issparse(X) else "dense", data["source"],
        )  # fmt: skip
    return out


def describe_datasets(datasets: Mapping[str, Any]) -> pd.DataFrame:
    """One row per data set: samples, classes, views and their widths, density, the file."""
    rows = []
    for name, d in datasets.items():
        X, y = d["X"], np.asarray(d["y"])
        nnz = X.nnz if sp.issparse(X) else int(np.count_nonzero(X))
        classes, counts = np.unique(y, return_counts=True)
        rows.append(
            {
                "dataset": name,
                "n_samples": int(X.shape[0]),
                "n_classes": int(classes.size),
                "class_counts": " ".join(f"{c}:{n}" for c, n in zip(classes, counts, strict=True)),
                "n_views": len(d["view_names"]),
                "views": " ".join(
                    f"{v}({w})"
                    for v, w in zip(d["view_names"], np.diff(d["views_ind"]), strict=True)
                ),
                "n_features": int(X.shape[1]),
                "sparse": bool(sp.issparse(X)),
                "density": nnz / max(X.shape[0] * X.shape[1], 1),
                "source": d["source"],
            }
        )
    return pd.DataFrame(rows)


def make_splits(
    datasets: Mapping[str, Any], protocol: Mapping[str, Any], methods: Mapping[str, Any]
) -> pd.DataFrame:
    """Seeded repeated stratified K-fold of every data set.

    Repetition r of data set D shuffles its folds with ``stable_seed(D, r, base=seed)``; each
    fold is the test part once. Every method gets the split's seed
    ``stable_seed(D, r, fold, base=seed)`` (paired comparisons). Also logs which methods are
    given sparse data sets densified (their ``densify: true``).

    Parameters
    ----------
    datasets : dict
        The prepared data sets.
    protocol : dict
        ``n_folds`` (default 5), ``n_repeats`` (default 1), ``seed`` (default 0).
    methods : dict
        The method registry (only read for the log).

    Returns
    -------
    DataFrame
        The split table: ``dataset, repeat, fold, split, seed, train, test``; ``split`` numbers
        the R × K splits of a data set (the reporting's repetitions).
    """
    n_folds, n_repeats = int(protocol.get("n_folds", 5)), int(protocol.get("n_repeats", 1))
    base = int(protocol.get("seed", 0))
    if n_repeats < 1:
        raise ValueError(f"benchmark.protocol.n_repeats must be >= 1; got {n_repeats}.")
    rows = []
    for name, d in datasets.items():
        y = np.asarray(d["y"])
        for repeat in range(n_repeats):
            try:
                folds = splits.kfold(
                    y.shape[0], n_folds, splits.seed_of(name, repeat, base=base), y=y
                )
            except ValueError as exc:
                raise ValueError(f"data set {name!r}: {exc}") from exc
            seeds = [splits.seed_of(name, repeat, fold, base=base) for fold in range(n_folds)]
            block = splits.split_rows({"dataset": name, "repeat": repeat}, folds, seeds, "fold")
            for row in block:
                row["split"] = repeat * n_folds + row["fold"]
            rows += block
    table = splits.split_table(rows)
    sparse = [n for n, d in datasets.items() if sp.issparse(d["X"])]
    for method, entry in (methods or {}).items():
        if is_enabled(entry) and isinstance(entry, Mapping) and entry.get("densify") and sparse:
            logger.info("benchmark: method %r is given the sparse data set(s) %s densified "
                        "(densify: true).", method, sparse)  # fmt: skip
    return table[["dataset", "repeat", "fold", "split", "seed", "train", "test"]]
