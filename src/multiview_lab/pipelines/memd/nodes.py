"""Nodes of the ``memd`` pipeline (MeMd spec Sect. 5: gene data and 20 Newsgroups).

Data flow: the two gene sets (``.npz``) and the 20 Newsgroups tarball (``01_raw``) -> gene data
sets, raw and log2-clipped (``03_primary``) and sparse text tasks, read and vectorised once
(``04_feature``) -> the data sets and their seeded repeated stratified CV folds
(``05_model_input``) -> the shared training stage runs every method registered under
``memd.methods`` on every split (task :mod:`.task`; ``07_model_output``: accuracy, chosen K,
floor ε, and MeMd's test accuracy against the number of top-ranked features) -> shared
reporting, accuracy-vs-K figures and the top-ranked words per class of each text task
(``08_reporting``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from multiview_lab.data.genes import DATASETS as GENE_FILES
from multiview_lab.data.genes import load_gene_dataset, log2_clip
from multiview_lab.data.newsgroups import TASKS, Corpus, build_task
from multiview_lab.evaluation import stable_seed
from multiview_lab.memd.baselines import MEMD_SETTINGS
from multiview_lab.memd.memd import MeMdClassifier
from multiview_lab.protocol import splits

logger = logging.getLogger(__name__)

TRANSFORMS = ("raw", "log2")


# --------------------------------------------------------------------------- data
def read_gene_sets(raw_dir: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """Loader of the ``memd.genes_raw`` RawDataset: ``"golub"`` / ``"colon"`` -> ``{"X", "y",
    "label_names", "feature_names", ...}`` (:func:`multiview_lab.data.genes.load_gene_dataset`)."""
    return {name: load_gene_dataset(name, raw_dir) for name in GENE_FILES}


def prepare_gene_data(genes_raw: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Gene data sets of the protocol, raw or log2-clipped (MeMd spec Sect. 5.2).

    Parameters
    ----------
    genes_raw : dict
        Output of :func:`read_gene_sets`.
    data : dict
        ``genes``: name -> ``{source: golub|colon, transform: raw|log2, clip: c}``; the log2
        variant is ``log2(max(x, c))`` (the spec's extra experiment; c is recorded). A ``null``
        entry is skipped (an environment removing a base data set).

    Returns
    -------
    dict
        name -> ``{"X" (n, d) float64, "y", "feature_names", "transform", "clip"}``.
    """
    out = {}
    for name, spec in (data.get("genes") or {}).items():
        if spec is None:
            continue
        source = spec.get("source", name)
        transform = spec.get("transform", "raw")
        if source not in genes_raw:
            raise ValueError(
                f"gene set {name!r}: unknown source {source!r}; have {sorted(genes_raw)}."
            )
        if transform not in TRANSFORMS:
            raise ValueError(
                f"gene set {name!r}: transform must be one of {TRANSFORMS}; got {transform!r}."
            )
        X = np.asarray(genes_raw[source]["X"], dtype=np.float64)
        clip = float(spec.get("clip", 20.0)) if transform == "log2" else np.nan
        if transform == "log2":
            X = log2_clip(X, clip)
        out[name] = {
            "X": X,
            "y": np.asarray(genes_raw[source]["y"]),
            "feature_names": np.asarray(genes_raw[source]["feature_names"]).astype(str),
            "transform": transform,
            "clip": clip,
        }
        logger.info("gene set %s: %d x %d (%s).", name, X.shape[0], X.shape[1], transform)
    return out


def _cap_documents(corpus: Corpus, max_docs: int, seed: int) -> Corpus:
    """A seeded subset of at most ``max_docs`` documents per newsgroup (smoke runs)."""
    rng = np.random.default_rng(seed)
    keep = []
    for group in np.unique(corpus.group):
        idx = np.flatnonzero(corpus.group == group)
        keep.append(np.sort(rng.choice(idx, size=min(max_docs, idx.size), replace=False)))
    keep = np.sort(np.concatenate(keep))
    return Corpus([corpus.text[i] for i in keep], corpus.group[keep], corpus.subset[keep])


def build_text_tasks(corpus: Corpus, data: Mapping[str, Any]) -> dict[str, Any]:
    """Sparse W matrices of the configured 20 Newsgroups tasks, built once per run.

    Parameters
    ----------
    corpus : Corpus
        The whole by-date release (train + test pooled, MeMd spec Sect. 5.2).
    data : dict
        ``text_tasks``: list of names of :data:`multiview_lab.data.newsgroups.TASKS`;
        ``min_count`` (2), ``min_count_mode`` ("total"), ``vocab_fit`` ("all": vocabulary over
        all documents of the task, as the paper); ``max_docs_per_group`` (null = all; smoke runs
        keep a seeded subset), ``seed``.

    Returns
    -------
    dict
        task -> ``{"X" CSR, "y", "vocabulary", "class_names"}``.
    """
    tasks = list(data.get("text_tasks") or [])
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown 20NG task(s) {unknown}; known: {sorted(TASKS)}.")
    if not tasks:
        return {}
    cap = data.get("max_docs_per_group")
    if cap is not None:
        corpus = _cap_documents(corpus, int(cap), int(data.get("seed", 0)))
    settings = {
        "vocab_fit": data.get("vocab_fit", "all"),
        "min_count": int(data.get("min_count", 2)),
        "min_count_mode": data.get("min_count_mode", "total"),
    }
    out = {}
    for task in tasks:
        start = time.perf_counter()
        built = build_task(corpus, task, **settings)
        out[task] = {k: built[k] for k in ("X", "y", "vocabulary")}
        out[task]["class_names"] = list(built["class_names"])
        (n, d), nnz = built["X"].shape, built["X"].nnz
        seconds = time.perf_counter() - start
        logger.info("20NG %s: %d documents x %d words, nnz %d (%.1f s).", task, n, d, nnz, seconds)
    return out


def build_datasets(gene_data: Mapping[str, Any], text_tasks: Mapping[str, Any]) -> dict[str, Any]:
    """The data sets the methods run on: name -> ``{"X", "y", "data_type"}``.

    Gene sets keep their dense (n, d) float64 matrix, text tasks their CSR matrix (never
    densified); ``data_type`` is ``"gene"`` or ``"text"``.
    """
    clash = set(gene_data) & set(text_tasks)
    if clash:
        raise ValueError(f"data set names used by both gene sets and text tasks: {sorted(clash)}.")
    out = {}
    for data_type, group in (("gene", gene_data), ("text", text_tasks)):
        for name, d in group.items():
            X = d["X"].tocsr() if sp.issparse(d["X"]) else np.asarray(d["X"])
            out[name] = {"X": X, "y": np.asarray(d["y"]), "data_type": data_type}
    if not out:
        raise ValueError("no data set configured: set memd.data.genes and/or memd.data.text_tasks.")
    return out


# --------------------------------------------------------------------------- splits
def make_splits(datasets: Mapping[str, Any], protocol: Mapping[str, Any]) -> pd.DataFrame:
    """Seeded repeated stratified K-fold CV of every data set (MeMd spec Sect. 5.2).

    ``protocol.gene`` / ``protocol.text`` give ``n_folds`` and ``n_repeats``; repetition r uses
    the fold seed ``protocol.seed + r`` (the spec's seeds 0..R-1), each fold is the test part
    once. The seed of a split, which every method gets (paired comparison: on a binary task
    MeMd-J and MeMd-JS rank alike, so they choose the same K and predict alike, as the paper
    says), is ``stable_seed(dataset, run, fold, base=protocol.seed)``.

    Returns
    -------
    DataFrame
        The split table: ``dataset, data_type, run, fold, seed, train, test``.
    """
    if not datasets:
        raise ValueError("no data set configured: set memd.data.genes and/or memd.data.text_tasks.")
    base = int(protocol.get("seed", 0))
    rows = []
    for name, d in datasets.items():
        data_type = d["data_type"]
        cv = protocol.get(data_type) or {}
        n_folds, n_repeats = int(cv.get("n_folds", 2)), int(cv.get("n_repeats", 1))
        y = np.asarray(d["y"])
        for run in range(n_repeats):
            try:
                folds = splits.kfold(y.shape[0], n_folds, base + run, y=y)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from exc
            seeds = [stable_seed(name, run, fold, base=base) for fold in range(len(folds))]
            keys = {"dataset": name, "data_type": data_type, "run": run}
            rows += splits.split_rows(keys, folds, seeds, "fold")
    return splits.split_table(rows)


# --------------------------------------------------------------------------- reporting
def top_words(text_tasks: Mapping[str, Any], words: Mapping[str, Any]) -> tuple[pd.DataFrame, str]:
    """Top-ranked words per class of each text task (MeMd-J with the spec's text settings).

    MeMd (``criterion``, ``family``; K fixed to the vocabulary, no K search) is fitted on all
    documents of the task. Words of class j are ranked by their one-vs-all Jeffreys divergence
    J_ij (paper Eq. (20); ``divergences_[j]``) among the words more frequent in class j than in
    the other classes (mean normalised frequency), so the list shows what characterises the class.

    Parameters
    ----------
    words : dict
        ``n_top`` (words per class), ``criterion`` ("J"), ``family`` ("exponential").

    Returns
    -------
    table : DataFrame
        ``task, class, rank, word, divergence, class_mean, rest_mean``.
    markdown : str
        One line of words per class and task.
    """
    n_top = int(words.get("n_top", 10))
    if n_top < 1:
        raise ValueError(f"top_words.n_top must be >= 1; got {n_top}.")
    criterion = words.get("criterion", "J")
    rows = []
    lines = ["# Top-ranked words per class (MeMd, fitted on all documents of each task)", ""]
    for task, d in text_tasks.items():
        X, y, vocab = d["X"], np.asarray(d["y"]), d["vocabulary"]
        settings = {**MEMD_SETTINGS["text"], "family": words.get("family", "exponential")}
        model = MeMdClassifier(criterion, **settings, k=X.shape[1], random_state=0).fit(X, y)
        lines += [f"## {task}", "", "| class | top words |", "|---|---|"]
        for j, label in enumerate(model.classes_):
            in_class = y == label
            class_mean = np.asarray(X[in_class].mean(axis=0)).ravel()
            rest_mean = np.asarray(X[~in_class].mean(axis=0)).ravel()
            score = np.where(class_mean > rest_mean, model.divergences_[j], -np.inf)
            order = np.argsort(-score, kind="stable")[:n_top]
            order = order[np.isfinite(score[order])]
            name = d["class_names"][int(label)]
            for rank, i in enumerate(order, start=1):
                values = (task, name, rank, str(vocab[i]), float(model.divergences_[j, i]))
                rows.append((*values, float(class_mean[i]), float(rest_mean[i])))
            lines.append(f"| {name} | {', '.join(str(vocab[i]) for i in order)} |")
        lines.append("")
    columns = ["task", "class", "rank", "word", "divergence", "class_mean", "rest_mean"]
    return pd.DataFrame(rows, columns=columns), "\n".join(lines)
