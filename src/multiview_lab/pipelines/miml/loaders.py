"""Loaders of the MIML-GP paper's two text data sets kept in ``data/01_raw`` (see its README).

Both files store bags stacked: ``instances`` (all instances, bag after bag) and ``bag_offsets``
(length ``n + 1``), bag ``i`` being ``instances[off[i]:off[i + 1]]``.

* ``miml_reuters_text/miml_reuters_text.npz``: the MIML Reuters text data of Zhou et al. (the
  paper's Table 3): 2000 documents, 7119 passages with 243 term counts, ``targets`` int8
  (2000, 7) in {0, 1}, ``label_names`` (``label1`` .. ``label7``).
* ``mil_newsgroups/Newsgroups<k>.npz``: one of the 20 Newsgroups multi-instance tasks of Zhou,
  Sun & Li (2009) (the paper's Table 5): 100 bags of posts with 200 features, ``bag_labels``
  int8 (100,) in {0, 1} (50 positive bags first). Only ``Newsgroups2`` is stored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

REUTERS_BAGS, REUTERS_INSTANCES, REUTERS_FEATURES, REUTERS_LABELS = 2000, 7119, 243, 7
#: the 20 Newsgroups MI tasks stored in ``data/01_raw/mil_newsgroups``
NEWSGROUPS_TASKS = ("Newsgroups2",)


def _stacked_bags(z, path: Path, n_bags: int) -> list[np.ndarray]:
    X, off = z["instances"], z["bag_offsets"]
    if X.ndim != 2 or off.ndim != 1 or off[0] != 0 or off[-1] != X.shape[0]:
        raise ValueError(f"{path}: bag_offsets do not index the {X.shape[0]} instances.")
    if off.size != n_bags + 1 or np.any(np.diff(off) < 1):
        raise ValueError(f"{path}: {off.size - 1} bag offsets for {n_bags} labels, or empty bags.")
    X = X.astype(np.float64)
    return [X[off[i] : off[i + 1]] for i in range(n_bags)]


def load_reuters_text(path: str | Path) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    """Read the MIML Reuters text npz file.

    Parameters
    ----------
    path : str or Path
        ``miml_reuters_text.npz``.

    Returns
    -------
    bags : list of ndarray of shape (n_i, 243)
        One float64 array of passage term counts per document (2 to 26 passages).
    targets : ndarray of shape (2000, 7)
        Label sets in {0, 1} (int8).
    label_names : list of str
        ``['label1', ..., 'label7']`` (the distribution does not name the topics).
    """
    path = Path(path)
    with np.load(path, allow_pickle=False) as z:
        targets, names = z["targets"], z["label_names"]
        if targets.ndim != 2 or targets.shape[1] != names.size:
            raise ValueError(
                f"{path}: targets {targets.shape} and {names.size} label names disagree."
            )
        bags = _stacked_bags(z, path, targets.shape[0])
    return bags, targets.astype(np.int8), [str(s) for s in names]


def load_mil_newsgroups(
    directory: str | Path, task: str = "Newsgroups2"
) -> tuple[list[np.ndarray], np.ndarray]:
    """Read one 20 Newsgroups multi-instance task.

    Parameters
    ----------
    directory : str or Path
        Folder holding ``<task>.npz``.
    task : str
        One of :data:`NEWSGROUPS_TASKS`.

    Returns
    -------
    bags : list of ndarray of shape (n_i, 200)
        float64 post features per bag (12 to 58 posts).
    labels : ndarray of shape (100,)
        1 for the 50 positive bags (they come first), 0 for the 50 negative ones.
    """
    if task not in NEWSGROUPS_TASKS:
        raise ValueError(f"task={task!r} is not stored; use one of {NEWSGROUPS_TASKS}.")
    path = Path(directory) / f"{task}.npz"
    with np.load(path, allow_pickle=False) as z:
        y = z["bag_labels"]
        bags = _stacked_bags(z, path, y.size)
    return bags, y.astype(np.int8)
