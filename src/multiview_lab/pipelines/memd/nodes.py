"""Nodes of the ``memd`` pipeline (MeMd spec Sect. 5: gene data and 20 Newsgroups).

Data flow: the two gene sets (``.npz``) and the 20 Newsgroups tarball (``01_raw``) -> gene data
sets, raw and log2-clipped (``03_primary``) and sparse text tasks, read and vectorised once
(``04_feature``) -> seeded repeated stratified CV folds (``05_model_input``) -> every method
registered under ``memd.methods`` on every unit (data set, repetition, fold, method)
(``07_model_output``: accuracy, chosen K, floor ε; and test accuracy against the number of
top-ranked features for MeMd) -> shared reporting, accuracy-vs-K figures and the top-ranked words
per class of each text task (``08_reporting``).
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
from joblib import delayed
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from multiview_lab.data.genes import DATASETS as GENE_FILES
from multiview_lab.data.genes import load_gene_dataset, log2_clip
from multiview_lab.data.newsgroups import TASKS, Corpus, build_task
from multiview_lab.evaluation import build_estimator, run_units, stable_seed
from multiview_lab.memd.baselines import DATA_TYPES, make_estimator, memd
from multiview_lab.memd.evaluation import selected_k
from multiview_lab.memd.memd import MeMdClassifier, MeMdModel, validation_curve

logger = logging.getLogger(__name__)

TRANSFORMS = ("raw", "log2")


# --------------------------------------------------------------------------- data
def read_gene_sets(raw_dir: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """Loader of the ``memd.genes_raw`` RawDataset: every gene set of ``raw_dir``.

    Thin adapter over :func:`multiview_lab.data.genes.load_gene_dataset` (whose first argument
    is the data set name, not the path a RawDataset passes).

    Returns
    -------
    dict
        ``"golub"`` / ``"colon"`` -> ``{"X", "y", "label_names", "feature_names", ...}``.
    """
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
        if source not in genes_raw:
            raise ValueError(
                f"gene set {name!r}: unknown source {source!r}; have {sorted(genes_raw)}."
            )
        transform = spec.get("transform", "raw")
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
    out = {}
    for task in tasks:
        start = time.perf_counter()
        built = build_task(
            corpus,
            task,
            vocab_fit=data.get("vocab_fit", "all"),
            min_count=int(data.get("min_count", 2)),
            min_count_mode=data.get("min_count_mode", "total"),
        )
        out[task] = {
            "X": built["X"],
            "y": built["y"],
            "vocabulary": built["vocabulary"],
            "class_names": list(built["class_names"]),
        }
        logger.info(
            "20NG %s: %d documents x %d words, nnz %d (%.1f s).",
            task,
            built["X"].shape[0],
            built["X"].shape[1],
            built["X"].nnz,
            time.perf_counter() - start,
        )
    return out


def _datasets(gene_data: Mapping, text_tasks: Mapping) -> dict[str, tuple[str, Mapping]]:
    clash = set(gene_data) & set(text_tasks)
    if clash:
        raise ValueError(f"data set names used by both gene sets and text tasks: {sorted(clash)}.")
    return {
        **{name: ("gene", d) for name, d in gene_data.items()},
        **{name: ("text", d) for name, d in text_tasks.items()},
    }


# --------------------------------------------------------------------------- splits
def make_splits(
    gene_data: Mapping[str, Any], text_tasks: Mapping[str, Any], protocol: Mapping[str, Any]
) -> pd.DataFrame:
    """Seeded repeated stratified K-fold CV of every data set (MeMd spec Sect. 5.2).

    ``protocol.gene`` / ``protocol.text`` give ``n_folds`` and ``n_repeats``; repetition r uses
    the fold seed ``protocol.seed + r`` (the spec's seeds 0..R-1), each fold is the test part
    once.

    Returns
    -------
    DataFrame
        ``dataset, data_type, run, fold, test`` (indices of the test rows).
    """
    base = int(protocol.get("seed", 0))
    rows = []
    for name, (data_type, d) in _datasets(gene_data, text_tasks).items():
        cv = protocol.get(data_type) or {}
        n_folds, n_repeats = int(cv.get("n_folds", 2)), int(cv.get("n_repeats", 1))
        y = np.asarray(d["y"])
        smallest = np.bincount(np.unique(y, return_inverse=True)[1]).min()
        if n_folds < 2 or smallest < n_folds:
            raise ValueError(
                f"{name}: n_folds={n_folds} needs 2 <= n_folds <= the smallest class size ({smallest})."
            )
        for run in range(n_repeats):
            folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=base + run)
            for fold, (_, test) in enumerate(folds.split(np.zeros((y.shape[0], 1)), y)):
                rows.append(
                    {
                        "dataset": name,
                        "data_type": data_type,
                        "run": run,
                        "fold": fold,
                        "test": test.astype(np.int64).tolist(),
                    }
                )
    if not rows:
        raise ValueError("no data set configured: set memd.data.genes and/or memd.data.text_tasks.")
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- methods
def method_estimator(spec: Mapping[str, Any], data_type: str, random_state: int):
    """Estimator of one registered method for one data type.

    ``spec`` is ``{registry: name | {gene: name, text: name}, params: {...}}`` (a factory of
    :data:`multiview_lab.memd.baselines.ESTIMATORS`, with the spec's per-data-type settings;
    ``params`` are set on top with ``set_params``) or ``{estimator: name, params: {...}}`` (any
    estimator, through :func:`multiview_lab.evaluation.build_estimator`).
    """
    if data_type not in DATA_TYPES:
        raise ValueError(f"data_type must be one of {DATA_TYPES}; got {data_type!r}.")
    if "registry" in spec:
        name = spec["registry"]
        if isinstance(name, Mapping):
            if data_type not in name:
                raise ValueError(f"method registry {dict(name)} has no entry for {data_type!r}.")
            name = name[data_type]
        model = make_estimator(name, data_type, random_state)
        params = dict(spec.get("params") or {})
        return model.set_params(**params) if params else model
    if "estimator" in spec:
        return build_estimator(spec, random_state=random_state)
    raise ValueError(f"a memd method needs 'registry' or 'estimator'; got keys {sorted(spec)}.")


def _applies(spec: Mapping[str, Any], data_type: str) -> bool:
    return data_type in (spec.get("data_types") or DATA_TYPES)


def _curve_grid(n_features: int, n_points: int) -> np.ndarray:
    grid = np.round(np.geomspace(1, n_features, n_points)).astype(int)
    return np.unique(np.r_[grid, n_features])


def accuracy_curve(model: MeMdClassifier, X_test, y_test, n_points: int) -> pd.DataFrame:
    """Test accuracy of a fitted MeMd classifier for K top-ranked features on a geometric grid.

    Uses the model fitted on the training fold (ranking and marginals) and the one-pass
    evaluation of :func:`multiview_lab.memd.memd.validation_curve` (MeMd spec Sect. 3.1).
    """
    index = {c: i for i, c in enumerate(model.classes_)}
    y_idx = np.array([index.get(v, -1) for v in np.asarray(y_test)])
    fitted = MeMdModel(
        lam=model.lambda_,
        log_prior=np.log(model.class_prior_),
        scores=model.scores_,
        divergences=model.divergences_,
        ranking=model.ranking_,
        epsilon=model.epsilon_,
    )
    grid = _curve_grid(model.n_features_in_, n_points)
    accuracy = validation_curve(fitted, X_test, y_idx, grid)
    return pd.DataFrame({"k": grid, "accuracy": accuracy})


def _fit_and_score(unit, spec, data_type, X, y, test, n_curve_points, blas_threads):
    """One evaluation unit: fit on the training rows, score on the test fold."""
    train = np.setdiff1d(np.arange(y.shape[0]), test, assume_unique=True)
    with threadpool_limits(limits=blas_threads):
        model = method_estimator(spec, data_type, unit["seed"])
        start = time.perf_counter()
        model.fit(X[train], y[train])
        fit_seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(X[test]) == y[test]))
        curve = None
        if isinstance(model, MeMdClassifier) and n_curve_points:
            curve = accuracy_curve(model, X[test], y[test], n_curve_points)
            curve = curve.assign(
                **{k: unit[k] for k in ("dataset", "data_type", "method", "run", "fold")}
            )
    k, epsilon = selected_k(model)
    row = {
        **unit,
        "accuracy": accuracy,
        "k": k,
        "epsilon": epsilon,
        "n_features": int(X.shape[1]),
        "n_train": int(train.shape[0]),
        "fit_seconds": fit_seconds,
    }
    return {"row": row, "curve": curve}


def evaluate_methods(
    gene_data: Mapping[str, Any],
    text_tasks: Mapping[str, Any],
    splits: pd.DataFrame,
    methods: Mapping[str, Mapping[str, Any]],
    protocol: Mapping[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every registered method on every (data set, repetition, fold) unit.

    The seed of a unit is ``stable_seed(dataset, run, fold, base=protocol.seed)``: it drives the
    inner CV / 80/20 splits of MeMd and the tuned baselines and is shared by the methods of one
    outer fold (paired comparison: on a binary task MeMd-J and MeMd-JS rank alike, so they then
    choose the same K and predict alike, as the paper says). Units run through
    :func:`multiview_lab.evaluation.run_units` with ``protocol.n_jobs`` workers and
    ``protocol.blas_threads`` BLAS threads each, so results do not depend on ``n_jobs``.
    A method runs on the data types in its ``data_types`` (default: both).

    Returns
    -------
    results : DataFrame
        One row per unit: ``dataset, data_type, method, run, fold, seed, accuracy, k, epsilon,
        n_features, n_train, fit_seconds`` (k: MeMd's K or a tuned SelectKBest's k, else NaN).
    curves : DataFrame
        MeMd units: test accuracy against K (``dataset, data_type, method, run, fold, k,
        accuracy``).
    """
    if not methods:
        raise ValueError("memd.methods is empty: register at least one method.")
    for name, spec in methods.items():
        if not isinstance(spec, Mapping) or not ({"registry", "estimator"} & set(spec)):
            raise ValueError(f"method {name!r} needs 'registry' or 'estimator'.")
        bad = set(spec.get("data_types") or DATA_TYPES) - set(DATA_TYPES)
        if bad:
            raise ValueError(f"method {name!r}: data_types {sorted(bad)} not in {DATA_TYPES}.")
    datasets = _datasets(gene_data, text_tasks)
    missing = sorted(set(splits["dataset"]) - set(datasets))
    if missing:
        raise ValueError(f"splits name data set(s) {missing} that were not built.")
    base = int(protocol.get("seed", 0))
    n_points = int(protocol.get("curve_points", 0))
    blas = int(protocol.get("blas_threads", 1))
    jobs = []
    for split in splits.itertuples(index=False):
        data_type, d = datasets[split.dataset]
        X = d["X"].tocsr() if sp.issparse(d["X"]) else d["X"]
        y = np.asarray(d["y"])
        test = np.asarray(split.test, dtype=np.int64)
        for method, spec in methods.items():
            if not _applies(spec, data_type):
                continue
            unit = {
                "dataset": split.dataset,
                "data_type": data_type,
                "method": method,
                "run": int(split.run),
                "fold": int(split.fold),
                "seed": stable_seed(split.dataset, int(split.run), int(split.fold), base=base),
            }
            jobs.append(delayed(_fit_and_score)(unit, spec, data_type, X, y, test, n_points, blas))
    if not jobs:
        raise ValueError("no evaluation unit: no method applies to the configured data types.")
    outputs = run_units(jobs, n_jobs=int(protocol.get("n_jobs", 1)), label="memd evaluation")
    results = pd.DataFrame([o["row"] for o in outputs])
    curves = [o["curve"] for o in outputs if o["curve"] is not None]
    columns = ["dataset", "data_type", "method", "run", "fold", "k", "accuracy"]
    curves = (
        pd.concat(curves, ignore_index=True)[columns] if curves else pd.DataFrame(columns=columns)
    )
    return results, curves


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
        X, y = d["X"], np.asarray(d["y"])
        model = memd("text", criterion, family=words.get("family", "exponential"))
        model.set_params(k=X.shape[1]).fit(X, y)
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
                rows.append(
                    {
                        "task": task,
                        "class": name,
                        "rank": rank,
                        "word": str(d["vocabulary"][i]),
                        "divergence": float(model.divergences_[j, i]),
                        "class_mean": float(class_mean[i]),
                        "rest_mean": float(rest_mean[i]),
                    }
                )
            lines.append(f"| {name} | {', '.join(str(d['vocabulary'][i]) for i in order)} |")
        lines.append("")
    columns = ["task", "class", "rank", "word", "divergence", "class_mean", "rest_mean"]
    return pd.DataFrame(rows, columns=columns), "\n".join(lines)
