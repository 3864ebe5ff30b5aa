"""Nodes of the ``pbmvboost`` pipeline (PB-MVBoost paper, Sect. 5; spec Sect. 5).

Data flow: raw MNIST -> four-view data sets MNIST1 / MNIST2 (``03_primary``) -> seeded training
draws (``05_model_input``) -> the shared training stage (one node per registered method, run by
:func:`multiview_lab.protocol.run_experiment` with the task of :mod:`.task`) -> shared
reporting (Table 1) and Figure 4 (``08_reporting``). Methods are registered in
``parameters_pbmvboost.yml`` under ``pbmvboost.methods`` by estimator name and parameters.
"""

from __future__ import annotations

import logging
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from multiview_lab.data.mnist import extract_views  # noqa: E402
from multiview_lab.protocol import splits  # noqa: E402

logger = logging.getLogger(__name__)


def build_views(mnist: dict[str, np.ndarray], data: dict[str, Any]) -> dict[str, Any]:
    """Cut MNIST into the multiview data sets of the paper (MNIST1, MNIST2).

    Parameters
    ----------
    mnist : dict
        ``x_train`` (60000, 28, 28), ``y_train``, ``x_test`` (10000, 28, 28), ``y_test``.
    data : dict
        ``window`` (side of the windows), ``datasets``: name -> ``{"corners": [[r, c], ...]}``
        and optionally ``max_images: {train: int, test: int}`` to keep only the first images
        (smoke runs; ``null`` keeps all).

    Returns
    -------
    dict
        name -> ``{"X_train": [view, ...], "X_test": [view, ...], "y_train", "y_test"}`` with
        float32 views of shape (n, window**2), pixel values 0..255.
    """
    for key in ("x_train", "y_train", "x_test", "y_test"):
        if key not in mnist:
            raise ValueError(f"MNIST archive lacks {key!r}; has {sorted(mnist)}.")
    for split in ("train", "test"):
        x, y = mnist[f"x_{split}"], mnist[f"y_{split}"]
        if x.ndim != 3 or x.shape[0] != y.shape[0]:
            raise ValueError(f"MNIST {split}: images {x.shape} and labels {y.shape} do not match.")
    limit = data.get("max_images") or {}
    keep = {split: slice(None, limit.get(split)) for split in ("train", "test")}
    out = {}
    for name, spec in data["datasets"].items():
        out[name] = {
            "X_train": extract_views(
                mnist["x_train"][keep["train"]], spec["corners"], data["window"]
            ),
            "X_test": extract_views(mnist["x_test"][keep["test"]], spec["corners"], data["window"]),
            "y_train": np.asarray(mnist["y_train"][keep["train"]]),
            "y_test": np.asarray(mnist["y_test"][keep["test"]]),
        }
        logger.info(
            "%s: %d views of %d features, %d train / %d test images.",
            name,
            len(out[name]["X_train"]),
            out[name]["X_train"][0].shape[1],
            out[name]["y_train"].shape[0],
            out[name]["y_test"].shape[0],
        )
    return out


def draw_training_samples(views: dict[str, Any], protocol: dict[str, Any]) -> pd.DataFrame:
    """Seeded training draws, one per (data set, task, draw, n), as the spec's Sect. 5.2 says.

    ``train_sampling="random"`` draws ``n`` images uniformly from the 60,000 training images
    (natural class proportions, ~10 % positives); ``"balanced"`` draws ``n/2`` images of the
    task's digit and ``n/2`` from the other digits. Seed = hash(base seed, data set, task, draw,
    n), so every unit is reproducible on its own, whatever the order or parallelism.

    Returns
    -------
    DataFrame
        The split table: ``dataset, task, draw, n_train, seed, train`` (indices into the
        training images) and ``test`` (``None``: the 10,000 test images).
    """
    sampling = protocol.get("train_sampling", "random")
    if sampling not in ("random", "balanced"):
        raise ValueError(f"train_sampling must be 'random' or 'balanced'; got {sampling!r}.")
    for name in protocol["datasets"]:
        if name not in views:
            raise ValueError(f"Unknown data set {name!r}; built: {sorted(views)}.")
    rows = []
    # n outermost: units run in this order, so the first size listed is complete first.
    for n in protocol["n_train"]:
        for name in protocol["datasets"]:
            y = views[name]["y_train"]
            for task in protocol["tasks"]:
                if not np.any(y == task):
                    raise ValueError(f"Task {task!r}: no training image has this label.")
                keys = {"dataset": name, "task": int(task)}
                seeds = [
                    splits.seed_of(name, task, draw, n, base=protocol.get("seed", 0))
                    for draw in range(protocol["n_draws"])
                ]
                draws = [
                    splits.random_draw(
                        y.shape[0],
                        n,
                        seed,
                        **({"y": y, "positive": task} if sampling == "balanced" else {}),
                    )
                    for seed in seeds
                ]
                for row in splits.split_rows(keys, draws, seeds, index="draw"):
                    rows.append({**row, "n_train": int(n)})
    table = splits.split_table(rows)
    return table[["dataset", "task", "draw", "n_train", "seed", "train", "test"]]


def plot_figure4(trajectories: pd.DataFrame, figure: dict[str, Any]) -> plt.Figure:
    """The paper's Figure 4: train/test accuracy and F1 and the empirical training C-bound
    over the boosting iterations, averaged over the one-vs-all tasks and draws, per data set."""
    method = figure.get("method", "PB-MVBoost")
    data = trajectories[trajectories["method"] == method]
    if data.empty:
        raise ValueError(f"No trajectory recorded for method {method!r}: set trajectory: true.")
    datasets = sorted(data["dataset"].unique())
    fig, axes = plt.subplots(len(datasets), 3, figsize=(13, 3.4 * len(datasets)), squeeze=False)
    mean = data.groupby(["dataset", "iteration"]).mean(numeric_only=True).reset_index()
    for row, name in zip(axes, datasets, strict=True):
        block = mean[mean["dataset"] == name]
        for metric, ax in zip(("accuracy", "f1"), row[:2], strict=True):
            ax.plot(block["iteration"], block[f"train_{metric}"], label="train")
            ax.plot(block["iteration"], block[f"test_{metric}"], label="test")
            ax.set_title(f"{name}: {'accuracy' if metric == 'accuracy' else 'F1'}")
            ax.legend()
        row[2].plot(block["iteration"], block["train_cbound"], color="tab:red")
        row[2].set_title(f"{name}: empirical multiview C-bound (train)")
        for ax in row:
            ax.set_xlabel("iteration t")
            ax.grid(alpha=0.3)
    fig.suptitle(f"{method}: Figure 4 (mean over tasks and draws)")
    fig.tight_layout()
    return fig
