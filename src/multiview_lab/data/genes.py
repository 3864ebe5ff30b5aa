"""Gene-expression benchmarks of the MeMd experiments (MeMd spec Sect. 5.2).

* Golub et al. (1999) leukaemia, ALL vs AML: 72 samples x 7129 probes (original split 38 / 34);
  raw values, some negative.
* Alon et al. (1999) colon, normal vs tumour: 62 samples x 2000 genes; raw intensities.

Both are read from the ``.npz`` conversions kept in ``data/01_raw/genes`` (see
``data/01_raw/README.md``, MeMd section). Pure functions, no Kedro.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

RAW_DIR = Path("data/01_raw/genes")
DATASETS = {"golub": "golub_leukemia.npz", "colon": "colon_alon.npz"}


def load_gene_dataset(name: str, raw_dir: str | Path = RAW_DIR) -> dict:
    """Load one gene data set.

    Parameters
    ----------
    name : {"golub", "colon"}
    raw_dir : str or Path
        Folder holding the ``.npz`` files.

    Returns
    -------
    dict
        ``X`` float64 (n, d) raw expression, ``y`` int (n,), ``label_names`` (2,),
        ``feature_names`` (d,) and, for golub, ``split`` ("train"/"test", the original 38/34 split).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown gene data set {name!r}; choose one of {sorted(DATASETS)}.")
    with np.load(Path(raw_dir) / DATASETS[name], allow_pickle=False) as data:
        out = {
            "X": data["X"].astype(np.float64),
            "y": data["y"].astype(np.int64),
            "label_names": data["label_names"],
        }
        if name == "golub":
            out["feature_names"] = data["gene_accession"]
            out["split"] = data["split"]
        else:
            out["feature_names"] = data["gene_names"]
    return out


def log2_clip(X, clip: float = 20.0) -> np.ndarray:
    """``log2(max(x, clip))``, the documented extra gene experiment (MeMd spec Sect. 5.2).

    Parameters
    ----------
    X : array-like
        Raw expression (may be negative).
    clip : float, default=20.0
        Positive lower clip c; record it with the results.
    """
    if not clip > 0:
        raise ValueError(f"clip must be positive for a logarithm; got {clip!r}.")
    return np.log2(np.maximum(np.asarray(X, dtype=np.float64), clip))
