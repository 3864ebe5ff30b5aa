"""The split tables of the ``gbc`` pipeline's two studies (:mod:`multiview_lab.protocol.splits`).

* :func:`make_splits`: seeded stratified training parts in both settings, uniform and
  non-overlapping (the records the setting deletes, per split);
* :func:`make_source_count_splits`: the number-of-sources study's random source subsets.

Seeds are hashes of the split's keys (:func:`multiview_lab.protocol.splits.seed_of`), so every
split is reproducible alone; the split's seed is also every method's seed on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.gbc.settings import SETTINGS, absent_entries
from multiview_lab.protocol.splits import seed_of, split_rows, split_table, stratified_fraction


def _check_methods(methods: dict[str, Any] | None, names, what: str) -> None:
    unknown = [m for m in names if m not in (methods or {})]
    if unknown:
        raise ValueError(f"{what} names unregistered method(s) {unknown} (not in gbc.methods).")


def make_splits(
    datasets: dict[str, dict[str, Any]], protocol: dict[str, Any], methods: dict | None = None
) -> pd.DataFrame:
    """The split table of the main study: one row per (dataset, setting, train_pct, split).

    The training part of (dataset, train_pct, split) is a stratified fraction seeded with
    hash(dataset, train_pct, split); the records deleted in the non-overlapping setting
    (``missing_fraction`` of the instances lose ⌊p/2⌋ sources) are seeded with
    hash(dataset, "missing", split). The two settings differ only by the deleted records.

    Returns
    -------
    DataFrame
        ``dataset, setting, train_pct, split, seed, train, test`` (every other instance) and
        ``absent`` (flat indices r·p + i of the deleted records, see
        :func:`multiview_lab.gbc.settings.absent_entries`).
    """
    settings = list(protocol["settings"])
    bad = [s for s in settings if s not in SETTINGS]
    if bad:
        raise ValueError(f"settings {bad} are not among {SETTINGS}.")
    pcts = [int(p) for p in protocol["train_pcts"]]
    if not pcts or any(not 0 < p < 100 for p in pcts):
        raise ValueError(f"train_pcts must be percentages in (0, 100); got {pcts}.")
    n_splits, base = int(protocol["n_splits"]), int(protocol.get("seed", 0))
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1; got {n_splits}.")
    if methods is not None:
        for names in (protocol.get("methods_by_dataset") or {}).values():
            _check_methods(methods, names, "methods_by_dataset")
    missing = {
        "missing_fraction": float(protocol.get("missing_fraction", 0.3)),
        "missing_mode": protocol.get("missing_mode", "per_instance"),
    }
    rows = []
    for name in protocol["datasets"]:
        if name not in datasets:
            raise ValueError(f"Unknown dataset {name!r}; built: {sorted(datasets)}.")
        y = datasets[name]["y"]
        n, p = y.shape[0], len(datasets[name]["sources"])
        for split in range(n_splits):
            miss_seed = seed_of(name, "missing", split, base=base)
            for setting in settings:
                absent = absent_entries(n, p, setting, **missing, random_state=miss_seed)
                for pct in pcts:
                    seed = seed_of(name, pct, split, base=base)
                    keys = {"dataset": name, "setting": setting, "train_pct": pct, "split": split}
                    part = stratified_fraction(y, pct / 100, seed)
                    rows += [
                        {**r, "absent": absent} for r in split_rows(keys, [part], [seed], None)
                    ]
    return split_table(rows)


def make_source_count_splits(
    datasets: dict[str, dict[str, Any]], study: dict[str, Any], methods: dict[str, Any]
) -> pd.DataFrame:
    """The split table of the number-of-sources study (the paper's Table 4, on ``study.dataset``).

    For each count k in ``study.n_sources`` and choice c < ``study.n_choices``: k vector sources
    drawn at random (all graphs kept), a stratified training part of ``study.train_pct`` % and
    the records ``study.setting`` deletes, all seeded with hash(dataset, "sources", k, c).

    Returns
    -------
    DataFrame
        ``dataset, setting, train_pct, num_sources, choice, sources`` (names joined by ``+``),
        ``seed, train, test, absent`` and ``source_idx`` (the chosen sources).
    """
    name, method = study["dataset"], study["method"]
    if name not in datasets:
        raise ValueError(f"sources study: unknown dataset {name!r}; built {sorted(datasets)}.")
    _check_methods(methods, [method], "sources study: method")
    data = datasets[name]
    p, y = len(data["sources"]), data["y"]
    counts = [int(k) for k in study["n_sources"]]
    if any(not 1 <= k <= p for k in counts):
        raise ValueError(f"sources study: n_sources {counts} must lie in [1, {p}].")
    base, pct = int(study.get("seed", 0)), int(study["train_pct"])
    setting = study.get("setting", "uniform")
    fraction = float(study.get("missing_fraction", 0.3))
    rows = []
    for k in counts:
        for choice in range(int(study["n_choices"])):
            seed = seed_of(name, "sources", k, choice, base=base)
            chosen = np.sort(np.random.default_rng(seed).choice(p, size=k, replace=False))
            absent = absent_entries(
                y.shape[0], k, setting, missing_fraction=fraction, random_state=seed
            )
            keys = {
                "dataset": name,
                "setting": setting,
                "train_pct": pct,
                "num_sources": k,
                "choice": choice,
                "sources": "+".join(data["source_names"][i] for i in chosen),
            }
            part = stratified_fraction(y, pct / 100, seed)
            rows += [
                {**r, "absent": absent, "source_idx": chosen.astype(np.int64)}
                for r in split_rows(keys, [part], [seed], None)
            ]
    return split_table(rows)
