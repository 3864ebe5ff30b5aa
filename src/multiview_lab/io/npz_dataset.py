"""A Kedro dataset for nested dictionaries and lists of numpy arrays stored in one ``.npz`` file.

Multiview data are lists of 2-D arrays (one per view), often nested in dictionaries keyed by data
set and split. :class:`NpzDataset` flattens such a structure into ``"a/b/0"`` keys, saves it with
:func:`numpy.savez_compressed` through a temporary file that is renamed into place (a failed save
never leaves a half-written artefact), and rebuilds the structure on load (integer keys become
lists).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
from kedro.io.core import AbstractDataset, DatasetError

_SEP = "/"


def _flatten(obj: Any, prefix: str = "") -> dict[str, np.ndarray]:
    if isinstance(obj, dict):
        out: dict[str, np.ndarray] = {}
        for key, value in obj.items():
            key = str(key)
            if _SEP in key or key.isdigit():
                raise DatasetError(
                    f"NpzDataset keys must not contain '{_SEP}' or be all digits; got {key!r}."
                )
            out.update(_flatten(value, f"{prefix}{key}{_SEP}"))
        return out
    if isinstance(obj, list | tuple):
        out = {}
        for i, value in enumerate(obj):
            out.update(_flatten(value, f"{prefix}{i}{_SEP}"))
        return out
    return {prefix.rstrip(_SEP): np.asarray(obj)}


def _unflatten(flat: dict[str, np.ndarray]) -> Any:
    root: dict = {}
    for key, value in flat.items():
        parts = key.split(_SEP)
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return _lists(root)


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    converted = {k: _lists(v) for k, v in node.items()}
    if converted and all(k.isdigit() for k in converted):
        return [converted[str(i)] for i in range(len(converted))]
    return converted


class NpzDataset(AbstractDataset[Any, Any]):
    """Nested dicts / lists of arrays in a compressed ``.npz`` file.

    Parameters
    ----------
    filepath : str
        Path of the ``.npz`` file.
    metadata : dict, optional
        Free-form metadata (used by the project's MLflow hooks); ignored by Kedro.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "views.npz")
    >>> ds = NpzDataset(filepath=path)
    >>> ds.save({"MNIST1": {"X_train": [np.zeros((2, 3)), np.ones((2, 1))]}})
    >>> [x.shape for x in ds.load()["MNIST1"]["X_train"]]
    [(2, 3), (2, 1)]
    """

    def __init__(self, *, filepath: str, metadata: dict[str, Any] | None = None) -> None:
        self._filepath = PurePosixPath(filepath)
        self.metadata = metadata

    def _describe(self) -> dict[str, Any]:
        return {"filepath": str(self._filepath)}

    def load(self) -> Any:
        with np.load(str(self._filepath), allow_pickle=False) as data:
            flat = {key: data[key] for key in data.files}
        if list(flat) == [""]:
            return flat[""]
        return _unflatten(flat)

    def save(self, data: Any) -> None:
        flat = _flatten(data)
        path = Path(str(self._filepath))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=path.parent)
        os.close(fd)
        try:
            np.savez_compressed(tmp, **flat)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _exists(self) -> bool:
        return Path(str(self._filepath)).exists()
