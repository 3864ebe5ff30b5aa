"""MeMd spec test 14 (text pipeline) and the gene loaders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from multiview_lab.data.genes import load_gene_dataset, log2_clip
from multiview_lab.data.newsgroups import (
    BINARY_TASKS,
    MULTICLASS_TASKS,
    NEWSGROUPS,
    TASKS,
    Corpus,
    build_task,
    read_corpus,
    task_documents,
    vectorise,
)

RAW = Path(__file__).resolve().parents[2] / "data" / "01_raw"

DOCS = [
    "The quick brown fox jumps over the lazy dog. Fox fox!",
    "A lazy dog sleeps; the dog dreams of a fox.",
    "Quantum chromodynamics is hard",
    "the and of",  # only stop words: empty after preprocessing
    "Brown dogs and brown foxes, quick quick",
    "zebra",  # appears once: dropped
]


def test_text_preprocessing_removes_stop_words_and_rare_words_and_normalises():
    W, vocabulary = vectorise(DOCS)
    assert sp.isspmatrix_csr(W) and W.dtype == np.float64
    assert not set(vocabulary) & ENGLISH_STOP_WORDS
    counts = CountVectorizer(stop_words="english", vocabulary=vocabulary).transform(DOCS)
    assert np.asarray(counts.sum(0)).min() >= 2
    assert "zebra" not in vocabulary and "quantum" not in vocabulary and "fox" in vocabulary
    sums = np.asarray(W.sum(1)).ravel()
    non_empty = np.diff(W.indptr) > 0
    np.testing.assert_allclose(sums[non_empty], 1.0, atol=1e-12)
    assert sums[3] == 0 and W.data.min() > 0 and W.data.max() <= 1
    # W_ij = N(w_i, D_j) / Σ_k N(w_k, D_j)
    row0 = counts[0].toarray().ravel()
    np.testing.assert_allclose(W[0].toarray().ravel(), row0 / row0.sum(), rtol=1e-12)


def test_min_count_modes_differ_on_repeated_words():
    docs = ["alpha alpha beta", "beta gamma", "delta"]
    _, total = vectorise(docs, min_count_mode="total")
    _, df = vectorise(docs, min_count_mode="df")
    assert set(total) == {"alpha", "beta"} and set(df) == {"beta"}
    with pytest.raises(ValueError, match="min_count_mode must be one of"):
        vectorise(docs, min_count_mode="idf")


def test_vocab_fit_train_ignores_words_only_in_test_documents():
    corpus = Corpus(
        text=["red red blue", "blue green", "green red", "violet violet red"],
        group=np.array(["sci.med", "sci.space", "sci.med", "sci.space"]),
        subset=np.array(["train", "train", "train", "test"]),
    )
    task = build_task(corpus, [("sci.med",), ("sci.space",)], vocab_fit="train")
    assert "violet" not in task["vocabulary"]
    assert set(task["vocabulary"]) == {"red", "blue", "green"}
    pooled = build_task(corpus, [("sci.med",), ("sci.space",)], vocab_fit="all")
    assert "violet" in pooled["vocabulary"]
    np.testing.assert_array_equal(task["y"], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="vocab_fit must be one of"):
        build_task(corpus, "sci_4", vocab_fit="test")
    with pytest.raises(ValueError, match="unknown task"):
        task_documents(corpus, "sci_vs_art")


def test_task_list_matches_the_spec():
    assert len(NEWSGROUPS) == 20 and len(set(NEWSGROUPS)) == 20
    assert len(BINARY_TASKS) == 8 and len(MULTICLASS_TASKS) == 5
    assert [len(TASKS[t]) for t in MULTICLASS_TASKS] == [5, 4, 4, 4, 20]
    comp, rec = TASKS["comp_vs_rec"]
    assert len(comp) == 5 and len(rec) == 4
    assert all(g.startswith("comp.") for g in comp) and all(g.startswith("rec.") for g in rec)
    sci, talk = TASKS["sci_vs_talk"]
    assert len(sci) == 4 and set(talk) == set(TASKS["talk_4"][i][0] for i in range(4))


@pytest.fixture(scope="module")
def corpus():
    return read_corpus(RAW / "20newsgroups" / "20news-bydate.tar.gz")


def test_bydate_training_vocabulary_has_65253_words(corpus):
    assert len(corpus.text) == 18_846 and (corpus.subset == "train").sum() == 11_314
    task = build_task(corpus, "all_20", vocab_fit="train")
    assert task["X"].shape == (18_846, 65_253)
    assert task["class_names"] == list(NEWSGROUPS)
    train = task["subset"] == "train"
    assert np.bincount(task["y"][train]).tolist()[:2] == [480, 584]
    texts, y, _ = task_documents(corpus, "comp_vs_rec")
    assert len(texts) == np.isin(corpus.group, sum(TASKS["comp_vs_rec"], ())).sum()
    assert np.bincount(y).tolist() == [4891, 3979]


def test_gene_loaders():
    golub = load_gene_dataset("golub", RAW / "genes")
    assert golub["X"].shape == (72, 7129) and golub["X"].dtype == np.float64
    assert np.bincount(golub["y"]).tolist() == [47, 25]
    assert (golub["split"] == "train").sum() == 38 and golub["X"].min() < 0
    colon = load_gene_dataset("colon", RAW / "genes")
    assert colon["X"].shape == (62, 2000) and np.bincount(colon["y"]).tolist() == [22, 40]
    assert colon["X"][0, 0] == pytest.approx(8589.416)
    with pytest.raises(ValueError, match="unknown gene data set"):
        load_gene_dataset("lymphoma", RAW / "genes")
    logged = log2_clip(golub["X"], 20)
    assert logged.min() == pytest.approx(np.log2(20))
    with pytest.raises(ValueError, match="clip must be positive"):
        log2_clip(golub["X"], 0)
