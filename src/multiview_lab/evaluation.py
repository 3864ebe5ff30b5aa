"""Evaluation helpers shared by every method's pipeline (no Kedro, no MLflow here).

A method's pipeline produces a *results table*: one row per evaluation unit (e.g. one data set,
method, one-vs-all task and random draw), key columns and one column per metric. The functions
below turn such tables into the reported summaries:

* :func:`summarise` averages over inner keys (e.g. the one-vs-all tasks of one draw), then gives
  mean, standard deviation and count over the repetitions (e.g. random training draws);
* :func:`flag_significance` marks, within each column of a table, the methods significantly worse
  than the best one by a Wilcoxon rank-sum test (as PB-MVBoost's Table 1 does);
* :func:`stable_seed` gives a seed from any keys, identical across processes and runs.

Estimators named in conf are built by :mod:`multiview_lab.specs` (its names are importable from
here too); the unit cache's keys are in :mod:`multiview_lab.protocol.cache`.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ranksums

from multiview_lab.specs import (  # noqa: F401  (importable from here too)
    build_estimator,
    estimator_modules,
    resolve_estimator_class,
)

logger = logging.getLogger(__name__)


def stable_seed(*keys: Any, base: int = 0) -> int:
    """A 31-bit seed from ``base`` and any hashable keys, identical across processes and runs.

    Python's ``hash`` is salted per process; CRC-32 of the keys' ``repr`` is not.
    """
    text = "|".join(repr(k) for k in (base, *keys))
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def summarise(
    results: pd.DataFrame,
    group_by: Sequence[str],
    metrics: Sequence[str],
    repeat_key: str | None = None,
    average_over: Sequence[str] = (),
) -> pd.DataFrame:
    """Mean, standard deviation and count of each metric.

    Parameters
    ----------
    results : DataFrame
        One row per evaluation unit.
    group_by : list of str
        Key columns of the summary rows (e.g. ``["dataset", "method"]``).
    metrics : list of str
        Metric columns to summarise.
    repeat_key : str or None
        Column indexing repetitions (e.g. ``"draw"``). The standard deviation is taken over
        repetitions after averaging over ``average_over``; its count is reported as
        ``n_<repeat_key>s``.
    average_over : list of str
        Keys averaged within one repetition first (e.g. the one-vs-all ``"task"``).

    Returns
    -------
    DataFrame
        Columns ``group_by``, then ``<metric>_mean`` and ``<metric>_std`` (sample standard
        deviation, ``ddof=1``; 0 for a single repetition) per metric, then the count.
    """
    missing = [c for c in (*group_by, *metrics, *average_over) if c not in results.columns]
    if repeat_key is not None and repeat_key not in results.columns:
        missing.append(repeat_key)
    if missing:
        raise ValueError(f"results table lacks column(s) {missing}; has {list(results.columns)}.")
    if results.empty:
        raise ValueError("results table is empty: nothing to summarise.")
    unit = [*group_by, *([repeat_key] if repeat_key else []), *average_over]
    if average_over and results.duplicated(subset=unit).any():
        raise ValueError(
            f"results table has several rows per evaluation unit {unit}: a key column is missing."
        )
    group_by = list(group_by)
    metrics = list(metrics)
    per_repeat = results
    if repeat_key is not None:
        inner = [*group_by, repeat_key]
        per_repeat = results.groupby(inner, sort=False, dropna=False)[metrics].mean().reset_index()
    grouped = per_repeat.groupby(group_by, sort=False, dropna=False)[metrics]
    mean = grouped.mean()
    std = grouped.std(ddof=1).fillna(0.0)
    out = pd.DataFrame(index=mean.index)
    for m in metrics:
        out[f"{m}_mean"] = mean[m]
        out[f"{m}_std"] = std[m]
    count_name = f"n_{repeat_key}s" if repeat_key else "n"
    out[count_name] = grouped.size()
    return out.reset_index()


def flag_significance(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    column_keys: Sequence[str],
    method_key: str,
    metrics: Sequence[str],
    repeat_key: str,
    alpha: float = 0.02,
    higher_is_better: bool | Mapping[str, bool] = True,
    contenders: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Mark results significantly worse than the best of their column (Wilcoxon rank-sum).

    Within each column (one value of ``column_keys``, e.g. one data set) and for each metric, the
    best method is the one with the best mean among ``contenders`` (default: every method; a
    paper's table takes the best among its own methods, and rows added beside them should not
    move it). Every other method's per-repetition values are compared with the best method's
    by :func:`scipy.stats.ranksums`; the result is flagged (``<metric>_worse = True``) when its
    mean is worse and ``p < alpha``. The best method, and any row better than it, is never
    flagged. The p-values are reported as ``<metric>_p``.

    Returns
    -------
    DataFrame
        ``summary`` with ``<metric>_worse`` and ``<metric>_p`` columns added.
    """
    summary = summary.copy()
    eligible = np.ones(len(summary), dtype=bool)
    if contenders is not None:
        eligible = summary[method_key].isin(list(contenders)).to_numpy()
        if not eligible.any():
            raise ValueError(
                f"contenders {list(contenders)}: none is a method of the summary "
                f"{sorted(summary[method_key].unique())}."
            )
        absent = sorted(set(contenders) - set(summary[method_key]))
        if absent:  # e.g. a run with fewer methods registered
            logger.warning("contenders %s have no results; the others compete.", absent)
    group_cols = [*column_keys, method_key, repeat_key]
    per_repeat = results.groupby(group_cols, sort=False)[list(metrics)].mean().reset_index()
    for metric in metrics:
        better_high = (
            higher_is_better[metric] if isinstance(higher_is_better, Mapping) else higher_is_better
        )
        worse = np.zeros(len(summary), dtype=bool)
        pvals = np.full(len(summary), np.nan)
        columns = summary.groupby(list(column_keys), sort=False) if column_keys else [((), summary)]
        for key, block in columns:
            means = block[f"{metric}_mean"][eligible[summary.index.get_indexer(block.index)]]
            if means.empty:
                continue
            best_idx = means.idxmax() if better_high else means.idxmin()
            best_method = block.loc[best_idx, method_key]
            key = key if isinstance(key, tuple) else (key,)
            mask = np.ones(len(per_repeat), dtype=bool)
            for col, val in zip(column_keys, key, strict=True):
                mask &= (per_repeat[col] == val).to_numpy()
            col_rows = per_repeat[mask]
            best_vals = col_rows.loc[col_rows[method_key] == best_method, metric].to_numpy()
            for idx in block.index:
                if idx == best_idx:
                    continue
                method = summary.loc[idx, method_key]
                vals = col_rows.loc[col_rows[method_key] == method, metric].to_numpy()
                if len(vals) < 2 or len(best_vals) < 2:
                    continue
                pos = summary.index.get_loc(idx)
                is_worse = (
                    summary.loc[idx, f"{metric}_mean"] < summary.loc[best_idx, f"{metric}_mean"]
                    if better_high
                    else summary.loc[idx, f"{metric}_mean"]
                    > summary.loc[best_idx, f"{metric}_mean"]
                )
                if not (is_worse or eligible[pos]):
                    continue  # a non-contender beating the best: not flagged, like the best
                p = ranksums(vals, best_vals).pvalue
                pvals[pos] = p
                worse[pos] = bool(is_worse and p < alpha)
        summary[f"{metric}_worse"] = worse
        summary[f"{metric}_p"] = pvals
    return summary
