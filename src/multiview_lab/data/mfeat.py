"""Loader for the UCI Multiple Features (mfeat) handwritten digits (data/01_raw/mfeat).

The raw folder holds the six original whitespace-separated view files and ``labels.txt``,
each gzipped byte-for-byte (``gunzip`` restores the files whose md5 sums are listed in
``data/01_raw/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MFEAT_VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")


def load_mfeat(raw_dir: str | Path = "data/01_raw/mfeat", views=MFEAT_VIEWS):
    """Load mfeat views and labels.

    Parameters
    ----------
    raw_dir : str or Path
        Folder with ``mfeat-<view>.gz`` and ``labels.txt.gz``.
    views : sequence of str
        Views to load, in order (``fou``, ``fac``, ``kar``, ``pix``, ``zer``, ``mor``).

    Returns
    -------
    views : dict[str, ndarray of shape (2000, d_view)]
        Float features, row r = digit r.
    y : ndarray of int, shape (2000,)
        Digit labels 0..9 (rows 200k..200k+199 are digit k).
    """
    raw_dir = Path(raw_dir)
    unknown = set(views) - set(MFEAT_VIEWS)
    if unknown:
        raise ValueError(f"unknown mfeat views {sorted(unknown)}; choose from {MFEAT_VIEWS}.")
    data = {v: np.loadtxt(raw_dir / f"mfeat-{v}.gz", dtype=np.float64) for v in views}
    y = np.loadtxt(raw_dir / "labels.txt.gz", dtype=np.int64)
    for v, X in data.items():
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"mfeat-{v} has {X.shape[0]} rows but labels.txt has {y.shape[0]}.")
    return data, y
