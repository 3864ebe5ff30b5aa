"""The paper's two data settings (Shi et al. 2012, experiments: "uniform" and "non-overlapping";
docs/methods/gbc.md) as pure, seeded functions.

* uniform: every source holds every instance;
* non-overlapping: 30 % of the instances are deleted from ⌊p/2⌋ of the p vector sources (drawn
  independently per instance, or the same half for all with ``missing_mode="fixed_half"``);
  graph nodes are never removed.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

SETTINGS = ("uniform", "non_overlapping")
MISSING_MODES = ("per_instance", "fixed_half")


def make_instance_sets(
    n_instances: int,
    n_sources: int,
    setting: str = "uniform",
    *,
    missing_fraction: float = 0.3,
    missing_mode: str = "per_instance",
    random_state=None,
) -> list[np.ndarray]:
    """Instance sets S_1..S_p (sorted global ids) for one setting.

    Parameters
    ----------
    n_instances, n_sources : int
        n and p.
    setting : {"uniform", "non_overlapping"}
    missing_fraction : float, default=0.3
        Fraction of instances (rounded to the nearest integer count) that lose ⌊p/2⌋ sources.
    missing_mode : {"per_instance", "fixed_half"}, default="per_instance"
        Draw the ⌊p/2⌋ sources independently for every such instance, or once for all.
    random_state : int, RandomState or None

    Returns
    -------
    list of ndarray of int
        ``ids[i]`` = the global instances held by source i. Every instance stays in at least
        ⌈p/2⌉ sources.
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting={setting!r} is not one of {SETTINGS}.")
    if missing_mode not in MISSING_MODES:
        raise ValueError(f"missing_mode={missing_mode!r} is not one of {MISSING_MODES}.")
    if not 0 <= missing_fraction <= 1:
        raise ValueError(f"missing_fraction must be in [0, 1]; got {missing_fraction}.")
    present = np.ones((n_instances, n_sources), dtype=bool)
    if setting == "non_overlapping" and n_sources >= 2:
        rng = check_random_state(random_state)
        k = n_sources // 2
        n_missing = int(round(missing_fraction * n_instances))
        rows = rng.choice(n_instances, size=n_missing, replace=False)
        if missing_mode == "fixed_half":
            cols = np.tile(rng.choice(n_sources, size=k, replace=False), (n_missing, 1))
        else:
            cols = np.argsort(rng.random((n_missing, n_sources)), axis=1)[:, :k]
        present[rows[:, None], cols] = False
    return [np.flatnonzero(present[:, i]) for i in range(n_sources)]


def build_sources(views, instance_sets) -> list[tuple[np.ndarray, np.ndarray]]:
    """GBC sources ``[(X_i[S_i], S_i), ...]`` from full views (row r = global instance r)."""
    views = list(views)
    if len(views) != len(instance_sets):
        raise ValueError(f"got {len(views)} views but {len(instance_sets)} instance sets.")
    return [(np.asarray(X)[s], np.asarray(s)) for X, s in zip(views, instance_sets, strict=True)]


def noisy_copy(X, sigma: float = 1.0, random_state=None) -> np.ndarray:
    """X plus i.i.d. N(0, σ²) noise: the terrorist data's noisy second source (the paper adds the
    106 features "with a random Gaussian noise" as a source; σ = 1 is a project decision).

    Parameters
    ----------
    X : array-like of shape (n, d)
    sigma : float, default=1.0
        ``noise_sigma``.
    random_state : int, RandomState or None
    """
    X = np.asarray(X, dtype=np.float64)
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0; got {sigma}.")
    return X + check_random_state(random_state).normal(0.0, sigma, size=X.shape)


def absent_entries(
    n_instances: int,
    n_sources: int,
    setting: str = "uniform",
    *,
    missing_fraction: float = 0.3,
    missing_mode: str = "per_instance",
    random_state=None,
) -> np.ndarray:
    """Flat indices ``r·p + i`` of the (instance r, source i) records a setting deletes.

    The complement of :func:`make_instance_sets` (same arguments, same draws) as one sorted
    int64 array: empty for the uniform setting.
    """
    sets = make_instance_sets(
        n_instances,
        n_sources,
        setting,
        missing_fraction=missing_fraction,
        missing_mode=missing_mode,
        random_state=random_state,
    )
    present = np.zeros((n_instances, n_sources), dtype=bool)
    for i, s in enumerate(sets):
        present[s, i] = True
    return np.flatnonzero(~present.ravel()).astype(np.int64)
