"""One number format and one vocabulary for every table and figure of the project.

* Numbers: :func:`number` writes a value with a fixed number of decimals and, for values of
  magnitude below one, without the leading zero (``.9034``), as the papers' tables do;
  :func:`mean_std` writes ``mean ± std``, and ``mean ± –`` when there is a single repetition
  (a standard deviation of one value is not a result).
* Words: :func:`words` turns a column name into the label a reader expects on an axis or in a
  header (``fit_time_s`` -> ``fit time (s)``, ``lam`` -> ``λ``), a ``labels`` mapping of the
  reporting parameters taking precedence.
* Direction: :func:`better` says whether a metric is better high (``max``), low (``min``) or
  has no better side (``None``, e.g. a chosen number of features), which the tables use to
  set the best value of a column in bold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

# Column names whose reading is not their spelling; mathtext ($...$) is rendered by Matplotlib.
_WORDS = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced accuracy",
    "f1": "F1",
    "macro_f1": "macro-F1",
    "auc": "AUC",
    "error": "error",
    "fit_time_s": "fit time (s)",
    "score_time_s": "score time (s)",
    "select_time_s": "selection time (s)",
    "hamming_loss": "Hamming loss",
    "one_error": "one-error",
    "coverage": "coverage",
    "ranking_loss": "ranking loss",
    "one_minus_average_precision": "1 − average precision",
    "average_precision": "average precision",
    "n_train": "training examples $n$",
    "train_pct": "training data (%)",
    "num_sources": "number of sources",
    "lam": r"$\lambda$",
    "k": "$K$",
    "rank": "rank $m$",
}

_LOWER = re.compile(r"(error|loss|coverage|time|risk|bound|one_minus)")
_HIGHER = re.compile(r"(accuracy|f1|auc|precision|recall|score)")


_TEX = {r"\lambda": "λ", r"\geq": "≥", r"\leq": "≤", r"\sigma": "σ", r"\rho": "ρ"}


def plain(text: str) -> str:
    """A label without Matplotlib's mathtext, for Markdown and CSV headers (``$\\lambda$`` -> λ)."""
    for tex, char in _TEX.items():
        text = text.replace(tex, char)
    return re.sub(r"[${}]", "", text)


def words(name: Any, labels: Mapping[str, str] | None = None, math: bool = True) -> str:
    """The reader's label of a column or metric name.

    ``labels`` (a reporting block's ``labels``) comes first, then the project's vocabulary;
    any other name has its underscores read as spaces and a trailing ``_s`` as ``(s)``.
    ``math=False`` gives the label as plain text (see :func:`plain`), for tables.

    Examples
    --------
    >>> words("fit_time_s")
    'fit time (s)'
    >>> words("inner_cv_folds")
    'inner cv folds'
    >>> words("k", {"k": "K (top-ranked genes)"})
    'K (top-ranked genes)'
    """
    name = str(name)
    if labels and name in labels:
        text = str(labels[name])
    elif name in _WORDS:
        text = _WORDS[name]
    elif name.endswith("_s"):
        text = name[:-2].replace("_", " ") + " (s)"
    else:
        text = name.replace("_", " ")
    return text if math else plain(text)


def better(metric: str, directions: Mapping[str, str | None] | None = None) -> str | None:
    """``"max"`` if higher values of ``metric`` are better, ``"min"`` if lower, else ``None``.

    ``directions`` (a reporting block's ``better``) overrides the guess made from the name:
    errors, losses, coverage, times, risks and bounds are better low; accuracy, F1, AUC,
    precision, recall and scores high; anything else (a count, a chosen K) has no best.
    """
    if directions and metric in directions:
        value = directions[metric]
        if value not in ("max", "min", None):
            raise ValueError(f"better.{metric} must be 'max', 'min' or null; got {value!r}.")
        return value
    if _LOWER.search(metric):
        return "min"
    if _HIGHER.search(metric):
        return "max"
    return None


def number(value: float, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals, the leading zero dropped below one (``-.0312``)."""
    if value is None or not math.isfinite(float(value)):
        return "–"
    text = f"{float(value):.{digits}f}"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text


def signed(value: float, digits: int = 4) -> str:
    """:func:`number` with its sign always written (``+.0123``, ``-.0312``), for differences.

    A difference that is not zero but would round to it at ``digits`` gets two significant
    digits instead (``-.000031``, not ``-.0000``): its sign is what a reader looks for."""
    magnitude = abs(float(value)) if value is not None else math.nan
    if 0.0 < magnitude < 0.5 * 10.0**-digits:  # False for nan and inf
        digits = 1 - math.floor(math.log10(magnitude))
    text = number(value, digits)
    return text if text.startswith("-") or text == "–" else "+" + text


def count(n: int, noun: str) -> str:
    """``1 unit``, ``2 units``: a count and its noun (a regular plural) for a log line."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def mean_std(mean: float, std: float | None, digits: int = 4, n: float | None = None) -> str:
    """``mean ± std``; ``mean ± –`` when there is one repetition (``n == 1``) or no std."""
    if mean is None or not math.isfinite(float(mean)):
        return "–"
    single = n is not None and math.isfinite(float(n)) and int(n) <= 1
    if single or std is None or not math.isfinite(float(std)):
        return f"{number(mean, digits)} ± –"
    return f"{number(mean, digits)} ± {number(std, digits)}"
