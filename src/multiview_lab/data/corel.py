"""Loader of the COREL-2000 multi-instance tasks (Chen & Wang) kept in ``data/01_raw/corel_mi``.

Seven one-vs-rest tasks (African, Beach, Historical, Buses, Dinosaurs, Elephants, Food), one file
``Corel<Category>.npz`` each with ``instances`` float32 (7947, 9), ``bag_offsets`` int64 (2001,)
and ``bag_labels`` int8 (2000,) in {0, 1}; bag ``i`` is ``instances[off[i]:off[i + 1]]``. The 100
positive bags come first in every file, so bag order differs between files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

COREL_CATEGORIES = ("African", "Beach", "Historical", "Buses", "Dinosaurs", "Elephants", "Food")


def load_corel_task(directory: str | Path, category: str) -> tuple[list[np.ndarray], np.ndarray]:
    """Read one COREL one-vs-rest task.

    Parameters
    ----------
    directory : str or Path
        Folder holding ``Corel<Category>.npz``.
    category : str
        One of :data:`COREL_CATEGORIES`.

    Returns
    -------
    bags : list of ndarray of shape (n_i, 9)
        float64 region features per image (2-13 regions).
    labels : ndarray of shape (2000,)
        1 for the category, 0 for the other images.
    """
    if category not in COREL_CATEGORIES:
        raise ValueError(f"category={category!r} is not stored; use one of {COREL_CATEGORIES}.")
    with np.load(Path(directory) / f"Corel{category}.npz", allow_pickle=False) as z:
        X, off, y = z["instances"], z["bag_offsets"], z["bag_labels"]
    if off[0] != 0 or off[-1] != X.shape[0] or off.size != y.size + 1:
        raise ValueError(f"Corel{category}.npz: bag_offsets do not match instances and labels.")
    X = X.astype(np.float64)
    return [X[off[i] : off[i + 1]] for i in range(y.size)], y.astype(np.int8)
