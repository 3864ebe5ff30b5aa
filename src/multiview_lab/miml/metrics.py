"""The five multi-label metrics of MIML papers (Schapire & Singer 2000), all lower-is-better.

Definitions and tie rules follow the MIML-GP spec, Sect. 6.2: ``p`` test bags, relevant set
``Y_i``, scores ``f(X_i, s)``; ranks come from a stable descending sort of the scores, ties broken
by label index (rank 1 = highest). Bags with no or with all labels are skipped for one-error,
coverage, ranking loss and average precision.

scikit-learn is used where its definition is the spec's: :func:`sklearn.metrics.hamming_loss`
and :func:`sklearn.metrics.label_ranking_loss` (which counts ``f(s) <= f(s')`` pairs, ties as
errors, like the spec). Coverage and average precision are computed here because scikit-learn
ranks tied scores pessimistically (rank = number of scores ``>=``), while the spec ranks by a
stable sort; without ties they equal ``coverage_error - 1`` and
``1 - label_ranking_average_precision_score`` (tested). One-error has no scikit-learn
counterpart.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import hamming_loss as _sk_hamming_loss
from sklearn.metrics import label_ranking_loss

__all__ = [
    "coverage",
    "evaluate_miml",
    "hamming_loss",
    "miml_metrics",
    "one_error",
    "one_minus_average_precision",
    "ranking_loss",
]


def _check(Y_true, scores=None):
    Y = np.asarray(Y_true)
    if Y.ndim != 2:
        raise ValueError(f"Y_true must be an (n_bags, n_labels) 0/1 matrix; got shape {Y.shape}.")
    Y = Y > 0
    if scores is None:
        return Y
    S = np.asarray(scores, dtype=float)
    if S.shape != Y.shape:
        raise ValueError(f"scores have shape {S.shape} but Y_true has shape {Y.shape}.")
    if not np.all(np.isfinite(S)):
        raise ValueError("scores contain NaN or infinity.")
    return Y, S


def _ranks(S: np.ndarray) -> np.ndarray:
    """Rank of every label per bag (1 = highest score; stable, ties by label index)."""
    order = np.argsort(-S, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, S.shape[1] + 1)[None, :], axis=1)
    return ranks


def _non_degenerate(Y: np.ndarray) -> np.ndarray:
    k = Y.sum(axis=1)
    return (k > 0) & (k < Y.shape[1])


def hamming_loss(Y_true, Y_pred) -> float:
    """Fraction of misclassified bag-label pairs, ``(1/p) sum_i |h(X_i) Δ Y_i| / Q``."""
    Y = _check(Y_true)
    H = _check(Y_pred)
    if H.shape != Y.shape:
        raise ValueError(f"Y_pred has shape {H.shape} but Y_true has shape {Y.shape}.")
    return float(_sk_hamming_loss(Y, H))


def one_error(Y_true, scores) -> float:
    """Fraction of bags whose top-ranked label is not relevant.

    No error is counted when any label tied at the top score is relevant (spec Sect. 6.2).
    """
    Y, S = _check(Y_true, scores)
    keep = _non_degenerate(Y)
    Y, S = Y[keep], S[keep]
    if Y.shape[0] == 0:
        return 0.0
    top = S == S.max(axis=1, keepdims=True)
    return float(np.mean(~np.any(top & Y, axis=1)))


def coverage(Y_true, scores) -> float:
    """``(1/p) sum_i max_{s in Y_i} rank(s) - 1`` (= scikit-learn's ``coverage_error - 1``
    without ties)."""
    Y, S = _check(Y_true, scores)
    keep = _non_degenerate(Y)
    Y, S = Y[keep], S[keep]
    if Y.shape[0] == 0:
        return 0.0
    return float(np.mean(np.max(np.where(Y, _ranks(S), 0), axis=1) - 1))


def ranking_loss(Y_true, scores) -> float:
    """Fraction of (relevant, irrelevant) label pairs with ``f(s) <= f(s')``."""
    Y, S = _check(Y_true, scores)
    keep = _non_degenerate(Y)
    if not np.any(keep):
        return 0.0
    return float(label_ranking_loss(Y[keep], S[keep]))


def one_minus_average_precision(Y_true, scores) -> float:
    """``1 - AP`` with ``AP = (1/p) sum_i (1/|Y_i|) sum_{s in Y_i}
    |{s' in Y_i : rank(s') <= rank(s)}| / rank(s)``."""
    Y, S = _check(Y_true, scores)
    keep = _non_degenerate(Y)
    Y, S = Y[keep], S[keep]
    if Y.shape[0] == 0:
        return 0.0
    R = _ranks(S)
    # relevant labels ranked at or above each rank: cumulative count along the ranking
    rel_by_rank = np.take_along_axis(Y, np.argsort(R, axis=1), axis=1)
    above = np.take_along_axis(np.cumsum(rel_by_rank, axis=1), R - 1, axis=1)
    prec = np.where(Y, above / R, 0.0).sum(axis=1) / Y.sum(axis=1)
    return float(1.0 - np.mean(prec))


def miml_metrics(Y_true, Y_pred, scores) -> dict[str, float]:
    """All five metrics as a flat dict (names as in the paper's tables)."""
    return {
        "hamming_loss": hamming_loss(Y_true, Y_pred),
        "one_error": one_error(Y_true, scores),
        "coverage": coverage(Y_true, scores),
        "ranking_loss": ranking_loss(Y_true, scores),
        "one_minus_average_precision": one_minus_average_precision(Y_true, scores),
    }


def evaluate_miml(estimator, bags, Y_true) -> dict[str, float]:
    """The five metrics of a fitted MIML estimator on ``bags``, plus the Hamming loss with a
    top-label fallback (``hamming_loss_top_fallback``, spec Sect. 5 ``threshold`` note): a bag
    predicted with no label gets its highest-scoring one, so that every method predicts at
    least one label.

    Parameters
    ----------
    estimator : object
        Fitted, with ``predict(bags)`` (0/1) and ``decision_function(bags)`` of shape (n, Q).
    bags : list of ndarray of shape (n_i, d)
        The test bags.
    Y_true : array-like of shape (n, Q)
        Their 0/1 label sets.

    Returns
    -------
    dict
        ``hamming_loss``, ``one_error``, ``coverage``, ``ranking_loss``,
        ``one_minus_average_precision`` and ``hamming_loss_top_fallback``.
    """
    scores = estimator.decision_function(bags)
    Y_pred = estimator.predict(bags)
    out = miml_metrics(Y_true, Y_pred, scores)
    fallback = np.array(Y_pred, copy=True)
    empty = ~fallback.any(axis=1)
    fallback[empty, np.argmax(scores[empty], axis=1)] = 1
    out["hamming_loss_top_fallback"] = hamming_loss(Y_true, fallback)
    return out
