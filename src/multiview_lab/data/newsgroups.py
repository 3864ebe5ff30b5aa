"""20 Newsgroups (by-date release) as MeMd text tasks (MeMd spec Sect. 5.1-5.2).

Raw text is read from the tarball in ``data/01_raw/20newsgroups`` (Latin-1); documents are tokenised
with scikit-learn's default token pattern, lower-cased, stripped of scikit-learn's English stop
words, rare words (total count < 2, or document frequency < 2) are dropped, and each document's
counts are L1-normalised: ``W_ij = N(w_i, D_j) / Σ_k N(w_k, D_j)`` (documents left empty stay
all-zero). The result is a scipy.sparse CSR matrix.

Pure functions only: :func:`read_corpus` (tarball -> documents), :func:`task_documents`
(documents of a task and their labels), :func:`vectorise` (documents -> W).
"""

from __future__ import annotations

import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from os.path import commonprefix
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

RAW_PATH = Path("data/01_raw/20newsgroups/20news-bydate.tar.gz")
SUBSETS = ("train", "test")
MIN_COUNT_MODES = ("total", "df")
VOCAB_FITS = ("all", "train")

_COMP = (
    "comp.graphics",
    "comp.os.ms-windows.misc",
    "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware",
    "comp.windows.x",
)
_REC = ("rec.autos", "rec.motorcycles", "rec.sport.baseball", "rec.sport.hockey")
_SCI = ("sci.crypt", "sci.electronics", "sci.med", "sci.space")
_TALK = (
    "talk.politics.guns",
    "talk.politics.mideast",
    "talk.politics.misc",
    "talk.religion.misc",
)
NEWSGROUPS = (
    ("alt.atheism",) + _COMP + ("misc.forsale",) + _REC + _SCI + ("soc.religion.christian",) + _TALK
)


def _singletons(groups: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    return tuple((g,) for g in groups)


#: Project task list (MeMd spec Sect. 5.2): task name -> classes, each class a tuple of newsgroups.
TASKS: dict[str, tuple[tuple[str, ...], ...]] = {
    "graphics_vs_windows": (("comp.graphics",), ("comp.os.ms-windows.misc",)),
    "autos_vs_motorcycles": (("rec.autos",), ("rec.motorcycles",)),
    "baseball_vs_hockey": (("rec.sport.baseball",), ("rec.sport.hockey",)),
    "crypt_vs_electronics": (("sci.crypt",), ("sci.electronics",)),
    "atheism_vs_christian": (("alt.atheism",), ("soc.religion.christian",)),
    "guns_vs_mideast": (("talk.politics.guns",), ("talk.politics.mideast",)),
    "comp_vs_rec": (_COMP, _REC),
    "sci_vs_talk": (_SCI, _TALK),
    "comp_5": _singletons(_COMP),
    "rec_4": _singletons(_REC),
    "sci_4": _singletons(_SCI),
    "talk_4": _singletons(_TALK),
    "all_20": _singletons(NEWSGROUPS),
}
BINARY_TASKS = tuple(name for name, classes in TASKS.items() if len(classes) == 2)
MULTICLASS_TASKS = tuple(name for name, classes in TASKS.items() if len(classes) > 2)


@dataclass(frozen=True)
class Corpus:
    """Documents of the by-date release: ``text[i]`` posted to ``group[i]`` in ``subset[i]``."""

    text: list[str]
    group: np.ndarray
    subset: np.ndarray


def read_corpus(path: str | Path = RAW_PATH) -> Corpus:
    """Read every document of the 20 Newsgroups by-date tarball (Latin-1, sorted by member name).

    Parameters
    ----------
    path : str or Path
        ``20news-bydate.tar.gz`` with members ``20news-bydate-<subset>/<group>/<id>``.

    Returns
    -------
    Corpus
    """
    texts, groups, subsets = [], [], []
    with tarfile.open(path) as archive:
        members = sorted((m for m in archive.getmembers() if m.isfile()), key=lambda m: m.name)
        for member in members:
            parts = member.name.split("/")
            if len(parts) != 3 or not parts[0].startswith("20news-bydate-"):
                raise ValueError(f"unexpected member {member.name!r} in {path}.")
            texts.append(archive.extractfile(member).read().decode("latin-1"))
            groups.append(parts[1])
            subsets.append(parts[0].removeprefix("20news-bydate-"))
    return Corpus(texts, np.asarray(groups), np.asarray(subsets))


def task_documents(corpus: Corpus, task: str | Sequence[Sequence[str]]):
    """Documents and integer labels of a task (MeMd spec Sect. 5.2).

    Parameters
    ----------
    corpus : Corpus
    task : str or sequence of sequences of str
        A name of :data:`TASKS` or explicit classes (each a group of newsgroups).

    Returns
    -------
    texts : list of str
    y : ndarray of int
        Index of the class (order of the task definition).
    subset : ndarray of str
        ``"train"`` / ``"test"`` of each document.
    """
    if isinstance(task, str):
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; known tasks: {sorted(TASKS)}.")
        task = TASKS[task]
    y = np.full(corpus.group.shape[0], -1)
    for label, groups in enumerate(task):
        unknown = set(groups) - set(NEWSGROUPS)
        if unknown:
            raise ValueError(f"unknown newsgroup(s) {sorted(unknown)}.")
        y[np.isin(corpus.group, groups)] = label
    keep = np.flatnonzero(y >= 0)
    return [corpus.text[i] for i in keep], y[keep], corpus.subset[keep]


def vectorise(
    texts: Sequence[str],
    *,
    fit_mask=None,
    min_count: int = 2,
    min_count_mode: str = "total",
):
    """Normalised term frequencies W of the documents (MeMd spec Sect. 5.1-5.2).

    Parameters
    ----------
    texts : sequence of str
    fit_mask : array-like of bool or None, default=None
        Documents whose words form the vocabulary and its counts: all (None, ``vocab_fit="all"``,
        the paper's "whole document collection") or e.g. the training documents
        (``vocab_fit="train"``).
    min_count : int, default=2
        Words counted fewer than ``min_count`` times are dropped (the paper's γ = 2).
    min_count_mode : {"total", "df"}, default="total"
        Count total occurrences or the number of documents containing the word.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_documents, n_words), float64
        Rows sum to 1 (empty documents stay all-zero).
    vocabulary : ndarray of str
    """
    if min_count_mode not in MIN_COUNT_MODES:
        raise ValueError(
            f"min_count_mode must be one of {MIN_COUNT_MODES}; got {min_count_mode!r}."
        )
    vectoriser = CountVectorizer(lowercase=True, stop_words="english", dtype=np.float64)
    if fit_mask is None:
        counts = vectoriser.fit_transform(texts).tocsr()
        fit_counts = counts
    else:
        fit_mask = np.asarray(fit_mask, dtype=bool)
        vectoriser.fit([t for t, keep in zip(texts, fit_mask, strict=True) if keep])
        counts = vectoriser.transform(texts).tocsr()
        fit_counts = counts[fit_mask]
    if min_count_mode == "total":
        frequency = np.asarray(fit_counts.sum(axis=0)).ravel()
    else:
        frequency = np.diff(fit_counts.tocsc().indptr)
    keep = np.flatnonzero(frequency >= min_count)
    W = normalize(counts[:, keep], norm="l1", axis=1).tocsr()
    return sp.csr_matrix(W), vectoriser.get_feature_names_out()[keep]


def build_task(
    corpus: Corpus,
    task: str | Sequence[Sequence[str]],
    *,
    vocab_fit: str = "all",
    min_count: int = 2,
    min_count_mode: str = "total",
):
    """W, labels and vocabulary of one task (MeMd spec Sect. 5.2).

    Parameters
    ----------
    corpus : Corpus
    task : str or classes
        See :func:`task_documents`.
    vocab_fit : {"all", "train"}, default="all"
        Vocabulary and rare-word counts from all documents of the task (pooled CV) or from its
        ``train`` documents only (fixed by-date split).
    min_count, min_count_mode
        See :func:`vectorise`.

    Returns
    -------
    dict
        ``X`` (CSR), ``y``, ``subset``, ``vocabulary``, ``class_names``.
    """
    if vocab_fit not in VOCAB_FITS:
        raise ValueError(f"vocab_fit must be one of {VOCAB_FITS}; got {vocab_fit!r}.")
    texts, y, subset = task_documents(corpus, task)
    fit_mask = None if vocab_fit == "all" else subset == "train"
    X, vocabulary = vectorise(
        texts, fit_mask=fit_mask, min_count=min_count, min_count_mode=min_count_mode
    )
    classes = TASKS[task] if isinstance(task, str) else task
    names = [groups[0] if len(groups) == 1 else commonprefix(groups) + "*" for groups in classes]
    return {"X": X, "y": y, "subset": subset, "vocabulary": vocabulary, "class_names": names}
