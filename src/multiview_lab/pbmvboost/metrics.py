"""Accuracy and F1 from decision scores, with an explicit policy for ties (score exactly 0).

PB-MVBoost spec Sect. 4 (`tie_policy`) and test 14: ``"error"`` (project default) counts a tied
example as wrong (a false negative for a positive example, a false positive for a negative one);
``"drop"`` (the authors' code) removes tied examples before scoring. F1 is on the positive class
of each one-vs-all task, then averaged over classes (macro).
"""

from __future__ import annotations

import numpy as np

TIE_POLICIES = ("error", "drop")


def _check_tie_policy(tie_policy):
    if tie_policy not in TIE_POLICIES:
        raise ValueError(f"tie_policy must be one of {TIE_POLICIES}; got {tie_policy!r}.")


def binary_scores(y_true, score, *, tie_policy="error"):
    """Accuracy and F1 (positive class) of ``sign(score)`` against binary labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels: positive where ``y_true > 0`` (booleans, {0, 1} or {-1, +1}).
    score : array-like of shape (n_samples,)
        Decision scores; ``> 0`` predicts positive, ``< 0`` negative, ``0`` is a tie.
    tie_policy : {"error", "drop"}, default="error"
        ``"error"``: a tie is a wrong prediction (FN for a positive, FP for a negative).
        ``"drop"``: tied examples are removed first.

    Returns
    -------
    dict
        ``accuracy``, ``f1`` (0 when there are no positives and no positive predictions),
        ``n_ties``, ``n_scored``.

    Examples
    --------
    >>> binary_scores([1, 1, -1, -1], [2.0, 0.0, -1.0, -3.0])["accuracy"]
    0.75
    """
    _check_tie_policy(tie_policy)
    pos = np.asarray(y_true) > 0
    score = np.asarray(score, dtype=float)
    if pos.shape != score.shape or pos.ndim != 1:
        raise ValueError(
            f"y_true and score must be 1-D of the same length; got {pos.shape} and {score.shape}."
        )
    tie = score == 0
    if tie_policy == "drop":
        pos, score, n_ties, tie = pos[~tie], score[~tie], int(tie.sum()), np.zeros(0, bool)
    else:
        n_ties = int(tie.sum())
    correct = np.where(pos, score > 0, score < 0)  # a tie is never correct
    tp = int(np.sum(pos & (score > 0)))
    fn = int(np.sum(pos & (score <= 0)))  # ties of positives are false negatives
    fp = int(np.sum(~pos & (score >= 0)))  # ties of negatives are false positives
    denom = 2 * tp + fp + fn
    return {
        "accuracy": float(correct.mean()) if correct.size else float("nan"),
        "f1": 2 * tp / denom if denom else 0.0,
        "n_ties": n_ties,
        "n_scored": int(correct.size),
    }


def one_vs_all_scores(y_true, scores, classes, *, tie_policy="error"):
    """Per-class one-vs-all accuracy and F1, and their means over classes.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Multiclass labels.
    scores : array-like of shape (n_samples, n_classes)
        One decision-score column per class (e.g. ``decision_function`` of a one-vs-all model).
    classes : array-like of shape (n_classes,)
        The class of each column.
    tie_policy : {"error", "drop"}, default="error"

    Returns
    -------
    dict
        ``accuracy`` and ``f1`` (means over classes), ``per_class`` (list of
        :func:`binary_scores` dicts).
    """
    y_true = np.asarray(y_true)
    scores = np.asarray(scores, dtype=float)
    classes = np.asarray(classes)
    if scores.ndim != 2 or scores.shape != (y_true.shape[0], classes.shape[0]):
        raise ValueError(
            f"scores must have shape (n_samples, n_classes) = ({y_true.shape[0]}, "
            f"{classes.shape[0]}); got {scores.shape}."
        )
    per_class = [
        binary_scores(y_true == c, scores[:, k], tie_policy=tie_policy)
        for k, c in enumerate(classes)
    ]
    return {
        "accuracy": float(np.mean([p["accuracy"] for p in per_class])),
        "f1": float(np.mean([p["f1"] for p in per_class])),
        "per_class": per_class,
    }
