"""The split kinds of the five papers, as rows of one split table.

A *split table* is a DataFrame with one row per split: key columns (``dataset`` first, then the
keys of the kind: ``task``, ``draw``, ``n_train``, ``repeat``, ``fold``, ``train_pct``,
``split``, ...), a ``seed`` (the seed every method gets on that split: paired comparisons), and
the index arrays ``train`` and ``test`` (``test`` may be ``None`` when a data set has a fixed
test set). A pipeline may add columns of its own (arrays too: GBC's deleted records).

Each function below returns ``[(train, test), ...]`` for one pool and seed; a pipeline turns them
into rows with :func:`split_rows` and the rows into a table with :func:`split_table`. Every split
is a pure function of its arguments, so any unit can be reproduced alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from multiview_lab.evaluation import stable_seed

ARRAY_COLUMNS = ("train", "test")

Split = tuple[np.ndarray, np.ndarray | None]


def _index(a) -> np.ndarray:
    return np.sort(np.asarray(a, dtype=np.int64))


def random_draw(
    n_pool: int, n: int, seed: int, *, y: np.ndarray | None = None, positive: Any = None
) -> Split:
    """``n`` rows drawn without replacement from a pool of ``n_pool`` (natural proportions);
    with ``y`` and ``positive``, ``n // 2`` rows of that label and the rest from the others
    (balanced). The test part is ``None``: the data set's own test set is used."""
    if not 2 <= n <= n_pool:
        raise ValueError(f"n_train={n} must lie in [2, {n_pool}].")
    rng = np.random.default_rng(seed)
    if y is None:
        return _index(rng.choice(n_pool, size=n, replace=False)), None
    pos, neg = np.flatnonzero(y == positive), np.flatnonzero(y != positive)
    idx = np.concatenate(
        [
            rng.choice(pos, size=n // 2, replace=False),
            rng.choice(neg, size=n - n // 2, replace=False),
        ]
    )
    return _index(idx), None


def kfold(n: int, n_folds: int, seed: int, y: np.ndarray | None = None) -> list[Split]:
    """Shuffled K-fold (stratified when ``y`` is given); each fold is the test part once."""
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds={n_folds} must lie in [2, {n}].")
    if y is not None:
        smallest = np.bincount(np.unique(y, return_inverse=True)[1]).min()
        if smallest < n_folds:
            raise ValueError(
                f"n_folds={n_folds} needs at least n_folds rows in every class; the smallest "
                f"class has {smallest}."
            )
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        return [(tr, te) for tr, te in folds.split(np.zeros((n, 1)), y)]
    folds = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
    return [(tr, te) for tr, te in folds.split(np.arange(n))]


def stratified_fraction(y: np.ndarray, fraction: float, seed: int) -> Split:
    """``round(fraction·n_c)`` training rows of every class c (at least 1, at most n_c − 1, so
    every class is seen in training and keeps a test row when it has two); test = the rest."""
    if not 0 < fraction < 1:
        raise ValueError(f"training fraction must lie in (0, 1); got {fraction}.")
    rng = np.random.default_rng(seed)
    out = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        k = int(np.clip(round(fraction * members.size), 1, max(members.size - 1, 1)))
        out.append(rng.choice(members, size=k, replace=False))
    train = _index(np.concatenate(out))
    return train, np.setdiff1d(np.arange(y.shape[0]), train)


def stratified_holdout(y: np.ndarray, test_size: float, seed: int) -> Split:
    """One stratified train/test split (scikit-learn's ``train_test_split``), sorted."""
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in (0, 1); got {test_size}.")
    train, test = train_test_split(
        np.arange(y.shape[0]), test_size=test_size, stratify=y, random_state=seed
    )
    return _index(train), _index(test)


def random_halves(n: int, n_repeats: int, seed: int) -> list[Split]:
    """``n_repeats`` random 50/50 splits from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_repeats):
        perm = rng.permutation(n)
        out.append((_index(perm[: n // 2]), _index(perm[n // 2 :])))
    return out


def split_rows(
    keys: Mapping[str, Any], splits: Iterable[Split], seeds: Iterable[int], index: str | None
) -> list[dict[str, Any]]:
    """Rows ``{**keys, index: i, "seed": seed_i, "train", "test"}`` for ``splits``
    (``index=None``: one split, no index column)."""
    rows = []
    for i, ((train, test), seed) in enumerate(zip(splits, seeds, strict=True)):
        row = dict(keys)
        if index is not None:
            row[index] = i
        row["seed"] = int(seed)
        row["train"] = _index(train)
        row["test"] = None if test is None else _index(test)
        rows.append(row)
    return rows


def split_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The split table of ``rows``, checked: ``dataset``, ``seed`` and ``train`` present,
    no repeated key, no empty training part, train and test disjoint."""
    if not rows:
        raise ValueError("the protocol defines no split: check the data sets and split settings.")
    table = pd.DataFrame(list(rows))
    missing = [c for c in ("dataset", "seed", "train") if c not in table.columns]
    if missing:
        raise ValueError(f"split rows lack column(s) {missing}.")
    if "test" not in table.columns:
        table["test"] = None
    keys = key_columns(table)
    if table.duplicated(subset=keys).any():
        raise ValueError(f"split rows repeat a key: {keys} do not identify a split.")
    for row in table.itertuples(index=False):
        train = np.asarray(row.train)
        if train.size == 0:
            raise ValueError(f"a split of {row.dataset!r} has an empty training part.")
        if row.test is not None and np.intersect1d(train, row.test).size:
            raise ValueError(f"a split of {row.dataset!r} has rows in both train and test.")
    return table


#: split-table keys that repeat the same work on other rows (a draw, a fold, a one-vs-all task...):
#: left out of a unit's cost group (the engine's ETA, the benchmarks' cost projections)
REPETITION_KEYS = frozenset({"draw", "fold", "repeat", "run", "split", "task", "choice", "sources"})


def key_columns(table: pd.DataFrame) -> list[str]:
    """The scalar key columns of a split table (everything but ``seed`` and array columns)."""
    first = table.iloc[0] if len(table) else {}
    return [
        c
        for c in table.columns
        if c != "seed"
        and c not in ARRAY_COLUMNS
        and not isinstance(first[c], np.ndarray | list | tuple | dict)
    ]


def seed_of(*keys: Any, base: int = 0) -> int:
    """The seed of a split named by ``keys`` (see :func:`multiview_lab.evaluation.stable_seed`)."""
    return stable_seed(*keys, base=base)
