"""Nodes of the ``miml`` pipeline (Bayesian MIML with a GP prior; MIML-GP spec Sect. 6).

Data flow: raw scene / COREL / Reuters text / 20 Newsgroups MI files (``RawDataset``) -> bag
lists (optionally a seeded slice) -> split tables (``05_model_input``): scene K-fold CV, COREL
50/50 splits per one-vs-rest task, the Figure 3 50/50 splits, Reuters K-fold CV (Table 3) and
repeated stratified K-fold CV per 20 Newsgroups MI task (Table 5) -> the shared training
stage, once per study (the methods of ``miml.methods``, ``miml.corel.methods``,
``miml.figure3.methods``, ``miml.reuters.methods`` and ``miml.newsgroups.methods``, run by
:func:`multiview_lab.protocol.run_experiment` with the tasks of :mod:`.task`) -> shared
reporting of the five lower-is-better metrics (scene table) and the paper's own tables and
figures (:mod:`.report`: COREL accuracy with 95 % intervals, the Reuters table, the 20
Newsgroups accuracy and AUC table, the Figure 3 study of the rank ``m`` against the exact
``K_sum``, the heat map of the learned label covariance).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.pipelines.miml.loaders import NEWSGROUPS_TASKS
from multiview_lab.protocol import splits as split_kinds

logger = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------
# ingestion
# ----------------------------------------------------------------------------------------------
def _slice(n: int, max_bags: int | None, seed: int, name: str) -> np.ndarray:
    """Indices of all bags, or of a seeded random subset of ``max_bags`` (kept in order)."""
    if max_bags is None:
        return np.arange(n)
    if not 2 <= int(max_bags) <= n:
        raise ValueError(f"{name}: max_bags={max_bags} must lie in [2, {n}].")
    rng = np.random.default_rng(split_kinds.seed_of(name, "slice", base=seed))
    return np.sort(rng.choice(n, size=int(max_bags), replace=False))


def _label_sets(raw: tuple, data: dict[str, Any], name: str) -> dict[str, Any]:
    """Multi-label bags ``{"bags", "Y", "label_names"}``, optionally a seeded slice of
    ``data.max_bags`` bags (the slice's seed is named by ``name``)."""
    bags, Y, names = raw
    Y = np.asarray(Y)
    if len(bags) != Y.shape[0] or Y.ndim != 2 or Y.shape[1] != len(names):
        raise ValueError(
            f"{name}: {len(bags)} bags, targets {Y.shape} and {len(names)} label names disagree."
        )
    keep = _slice(len(bags), data.get("max_bags"), data.get("seed", 0), name)
    out = {"bags": [bags[i] for i in keep], "Y": Y[keep], "label_names": list(names)}
    missing = np.flatnonzero(out["Y"].sum(axis=0) == 0)
    if missing.size:
        raise ValueError(f"{name} slice has no bag with label(s) {[names[i] for i in missing]}.")
    logger.info("%s: %d bags, %d labels.", name, len(out["bags"]), Y.shape[1])
    return out


def prepare_scene(raw: tuple, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Scene bags and label sets, optionally a seeded slice of ``data.max_bags`` bags.

    Parameters
    ----------
    raw : tuple
        ``(bags, targets, label_names)`` from :func:`multiview_lab.data.miml_scene.load_miml_scene`.
    data : dict
        ``max_bags`` (int or ``None`` = all 2000) and ``seed``.

    Returns
    -------
    dict
        ``{"scene": {"bags": list of (n_i, d) arrays, "Y": (n, Q) 0/1, "label_names"}}``.
    """
    return {"scene": _label_sets(raw, data, "scene")}


def prepare_reuters(raw: tuple, reuters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Reuters text bags and label sets (paper Table 3), optionally a seeded slice.

    Parameters
    ----------
    raw : tuple
        ``(bags, targets, label_names)`` from
        :func:`multiview_lab.pipelines.miml.loaders.load_reuters_text`.
    reuters : dict
        The ``miml.reuters`` block: ``max_bags`` (int or ``None`` = all 2000) and ``seed``.

    Returns
    -------
    dict
        ``{"reuters": {"bags": list of (n_i, 243) arrays, "Y": (n, 7) 0/1, "label_names"}}``.
    """
    return {"reuters": _label_sets(raw, reuters, "reuters")}


def prepare_corel(corel: dict[str, Any], *raw_tasks: tuple) -> dict[str, dict[str, Any]]:
    """The COREL one-vs-rest tasks named in ``corel.tasks``.

    ``raw_tasks`` are the outputs of :func:`multiview_lab.data.corel.load_corel_task` for every
    category of :data:`~multiview_lab.data.corel.COREL_CATEGORIES`, in that order. With
    ``corel.max_bags`` each task keeps a seeded random slice of its bags (smoke runs).

    Returns
    -------
    dict
        task -> ``{"bags": list of (n_i, 9) arrays, "y": (n,) 0/1}``.
    """
    return _mi_tasks(corel, COREL_CATEGORIES, raw_tasks, "corel")


_MI_STUDIES = {"corel": ("COREL", "category"), "newsgroups": ("20 Newsgroups", "task")}


def _mi_tasks(
    settings: dict[str, Any], names: Sequence[str], raw_tasks: Sequence[tuple], study: str
) -> dict[str, dict[str, Any]]:
    """The one-label MI tasks ``settings.tasks`` of ``names`` (one raw task per name, in
    order), each optionally a seeded slice of ``settings.max_bags`` bags (seed named by the
    task)."""
    title, kind = _MI_STUDIES[study]
    if len(raw_tasks) != len(names):
        raise ValueError(
            f"prepare_{study} needs one raw task per {kind} {tuple(names)}; got {len(raw_tasks)}."
        )
    available = dict(zip(names, raw_tasks, strict=True))
    tasks = list(settings.get("tasks") or [])
    unknown = [t for t in tasks if t not in available]
    if not tasks or unknown:
        raise ValueError(
            f"miml.{study}.tasks must be a non-empty subset of {tuple(names)}; got {tasks}."
        )
    out = {}
    for task in tasks:
        bags, y = available[task]
        keep = _slice(len(bags), settings.get("max_bags"), settings.get("seed", 0), task)
        y = np.asarray(y)[keep]
        if y.min() == y.max():
            raise ValueError(f"{title} {task}: the slice holds one class only; raise max_bags.")
        out[task] = {"bags": [bags[i] for i in keep], "y": y}
        logger.info("%s %s: %d bags, %d positive.", title, task, y.size, int(y.sum()))
    return out


def prepare_newsgroups(newsgroups: dict[str, Any], *raw_tasks: tuple) -> dict[str, dict[str, Any]]:
    """The 20 Newsgroups multi-instance tasks named in ``newsgroups.tasks`` (paper Table 5).

    ``raw_tasks`` are the outputs of
    :func:`multiview_lab.pipelines.miml.loaders.load_mil_newsgroups` for every task of
    :data:`~multiview_lab.pipelines.miml.loaders.NEWSGROUPS_TASKS`, in that order. With
    ``newsgroups.max_bags`` each task keeps a seeded random slice of its bags (smoke runs).

    Returns
    -------
    dict
        task -> ``{"bags": list of (n_i, 200) arrays, "y": (n,) 0/1}``.
    """
    return _mi_tasks(newsgroups, NEWSGROUPS_TASKS, raw_tasks, "newsgroups")


# ----------------------------------------------------------------------------------------------
# splits
# ----------------------------------------------------------------------------------------------
def _which(n_total: int, run: Sequence[int] | None, name: str) -> list[int]:
    keep = list(range(n_total)) if run is None else [int(k) for k in run]
    bad = [k for k in keep if not 0 <= k < n_total]
    if not keep or bad:
        raise ValueError(
            f"{name}: splits to run {keep} must be a non-empty subset of 0..{n_total - 1}."
        )
    return keep


def _table(dataset: str, index: str, parts, keep, seeds) -> list[dict[str, Any]]:
    """Split rows of ``parts[k]`` for ``k`` in ``keep``, the index column holding ``k``."""
    rows = split_kinds.split_rows({"dataset": dataset}, [parts[k] for k in keep], seeds, index)
    for row, k in zip(rows, keep, strict=True):
        row[index] = int(k)
    return rows


def make_splits(
    scene: dict[str, Any],
    corel: dict[str, Any],
    protocol: dict[str, Any],
    figure3: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The split tables of the three studies (:mod:`multiview_lab.protocol.splits`).

    * scene: ``protocol.n_folds``-fold CV (seeded plain K-fold, spec Sect. 6.2); only the folds
      of ``protocol.folds_run`` (``null`` = all) are kept. Key ``fold``.
    * COREL: ``protocol.corel_repeats`` random 50/50 splits per task, seeded by task. Key
      ``split``.
    * Figure 3: ``figure3.n_repeats`` random 50/50 splits of the scene bags (of a seeded subset
      of ``figure3.max_bags`` bags when given: the exact model costs O((Qn)^3)). Key ``repeat``.

    The split generators keep their seeds (``stable_seed("scene", "kfold")``, ...); the ``seed``
    of a row, which every method gets on that split, is ``stable_seed(study, [task,] index)``.

    Returns
    -------
    scene_splits, corel_splits, figure3_splits : DataFrame
        ``dataset, <key>, seed, train, test`` (indices into the data set's bags).
    """
    base = int(protocol.get("seed", 0))
    n_folds = int(protocol.get("n_folds", 10))
    n = len(scene["scene"]["bags"])
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds={n_folds} must lie in [2, {n}] (number of scene bags).")
    seed_of = split_kinds.seed_of
    folds = split_kinds.kfold(n, n_folds, seed_of("scene", "kfold", base=base))
    keep = _which(n_folds, protocol.get("folds_run"), "folds_run")
    scene_rows = _table(
        "scene", "fold", folds, keep, [seed_of("scene", k, base=base) for k in keep]
    )
    repeats = range(int(protocol.get("corel_repeats", 5)))
    corel_rows = []
    for task, data in corel.items():
        halves = split_kinds.random_halves(
            len(data["bags"]), len(repeats), seed_of("corel", task, base=base)
        )
        seeds = [seed_of("corel", task, r, base=base) for r in repeats]
        corel_rows += _table(task, "split", halves, repeats, seeds)
    repeats = range(int(figure3.get("n_repeats", 1)))
    pool = _slice(n, figure3.get("max_bags"), base, "figure3")  # the exact model is O((Qn)^3)
    halves = split_kinds.random_halves(pool.size, len(repeats), seed_of("figure3", base=base))
    halves = [(pool[a], pool[b]) for a, b in halves]
    seeds = [seed_of("figure3", r, base=base) for r in repeats]
    tables = tuple(
        split_kinds.split_table(rows)
        for rows in (scene_rows, corel_rows, _table("scene", "repeat", halves, repeats, seeds))
    )
    logger.info("splits: scene %d, COREL %d, Figure 3 %d.", *map(len, tables))
    return tables


def make_reuters_splits(reuters: dict[str, Any], settings: dict[str, Any]) -> pd.DataFrame:
    """The Reuters split table (paper Table 3: 10-fold cross-validation).

    Seeded plain K-fold over the bags (``settings.n_folds``, generator seed
    ``stable_seed("reuters", "kfold")``), as for scene; only the folds of
    ``settings.folds_run`` (``null`` = all) are kept; the seed of fold ``k``, which every method
    gets, is ``stable_seed("reuters", k)`` (all offset by ``settings.seed``).

    Returns
    -------
    DataFrame
        ``dataset, fold, seed, train, test``.
    """
    base = int(settings.get("seed", 0))
    n_folds = int(settings.get("n_folds", 10))
    n = len(reuters["reuters"]["bags"])
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds={n_folds} must lie in [2, {n}] (number of Reuters bags).")
    seed_of = split_kinds.seed_of
    folds = split_kinds.kfold(n, n_folds, seed_of("reuters", "kfold", base=base))
    keep = _which(n_folds, settings.get("folds_run"), "reuters.folds_run")
    rows = _table("reuters", "fold", folds, keep, [seed_of("reuters", k, base=base) for k in keep])
    table = split_kinds.split_table(rows)
    logger.info("splits: Reuters %d folds of %d.", len(table), n_folds)
    return table


def make_newsgroups_splits(tasks: dict[str, Any], settings: dict[str, Any]) -> pd.DataFrame:
    """The 20 Newsgroups split table (paper Table 5: ten times 10-fold cross-validation).

    Per task and repetition ``r < settings.n_repeats``: a seeded stratified K-fold over the bags
    (``settings.n_folds``, generator seed ``stable_seed("newsgroups", task, r)``); only the
    folds of ``settings.folds_run`` (``null`` = all) are kept. The seed every method gets on
    fold ``k`` is ``stable_seed("newsgroups", task, r, k)`` (all offset by ``settings.seed``).

    Returns
    -------
    DataFrame
        ``dataset, repeat, fold, seed, train, test``.
    """
    base = int(settings.get("seed", 0))
    n_folds = int(settings.get("n_folds", 10))
    n_repeats = int(settings.get("n_repeats", 10))
    if n_repeats < 1:
        raise ValueError(f"newsgroups.n_repeats={n_repeats} must be at least 1.")
    keep = _which(n_folds, settings.get("folds_run"), "newsgroups.folds_run")
    seed_of = split_kinds.seed_of
    rows = []
    for task, data in tasks.items():
        y = np.asarray(data["y"])
        for r in range(n_repeats):
            folds = split_kinds.kfold(y.size, n_folds, seed_of("newsgroups", task, r, base=base), y)
            seeds = [seed_of("newsgroups", task, r, k, base=base) for k in keep]
            part = split_kinds.split_rows(
                {"dataset": task, "repeat": r}, [folds[k] for k in keep], seeds, "fold"
            )
            for row, k in zip(part, keep, strict=True):
                row["fold"] = int(k)
            rows += part
    table = split_kinds.split_table(rows)
    logger.info("splits: 20 Newsgroups %d (%d repetitions).", len(table), n_repeats)
    return table
