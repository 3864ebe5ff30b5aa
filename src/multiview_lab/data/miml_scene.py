"""Loader of the MIML scene data (Zhou & Zhang): 2000 images, bags of 9 x 15, 5 labels.

Raw file ``data/01_raw/miml_scene/miml_scene.npz`` (see ``data/01_raw/README.md``): ``bags``
float64 (2000, 9, 15), ``targets`` int8 (2000, 5) in {0, 1}, ``label_names``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_BAGS, N_INSTANCES, N_FEATURES, N_LABELS = 2000, 9, 15, 5


def load_miml_scene(path: str | Path) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    """Read the scene npz file.

    Parameters
    ----------
    path : str or Path
        ``miml_scene.npz``.

    Returns
    -------
    bags : list of ndarray of shape (9, 15)
        One float64 array per image.
    targets : ndarray of shape (2000, 5)
        Label sets in {0, 1} (int8).
    label_names : list of str
        ``['desert', 'mountains', 'sea', 'sunset', 'trees']``.
    """
    with np.load(Path(path), allow_pickle=False) as z:
        bags, targets, names = z["bags"], z["targets"], z["label_names"]
    if bags.ndim != 3 or targets.shape != (bags.shape[0], len(names)):
        raise ValueError(
            f"{path}: expected bags (n, n_i, d) and targets (n, Q); got {bags.shape} and "
            f"{targets.shape}."
        )
    return list(bags.astype(np.float64)), targets.astype(np.int8), [str(s) for s in names]
