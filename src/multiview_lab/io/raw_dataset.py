"""A read-only Kedro dataset that declares raw files in the catalog and reads them with a loader.

Raw data sets often come as a folder of files with their own format (UCI text files, edge lists,
a tarball). :class:`RawDataset` keeps them visible in the catalog and in kedro-viz while the
parsing stays in a pure function of :mod:`multiview_lab.data`:

.. code-block:: yaml

    mfeat_raw:
      type: multiview_lab.io.RawDataset
      filepath: data/01_raw/mfeat
      loader: multiview_lab.data.mfeat.load_mfeat
      load_args: {}
"""

from __future__ import annotations

import importlib
from pathlib import Path, PurePosixPath
from typing import Any

from kedro.io.core import AbstractDataset, DatasetError


class RawDataset(AbstractDataset[None, Any]):
    """Raw files read by ``loader(filepath, **load_args)``; saving is refused.

    Parameters
    ----------
    filepath : str
        File or folder of the raw data.
    loader : str
        Dotted path of the loading function; it receives the path as its first argument.
    load_args : dict, optional
        Keyword arguments of the loader.
    metadata : dict, optional
        Free-form metadata; ignored by Kedro.
    """

    def __init__(
        self,
        *,
        filepath: str,
        loader: str,
        load_args: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self._filepath = PurePosixPath(filepath)
        self._loader = loader
        self._load_args = dict(load_args or {})
        self.metadata = metadata

    def _describe(self) -> dict[str, Any]:
        return {
            "filepath": str(self._filepath),
            "loader": self._loader,
            "load_args": self._load_args,
        }

    def _function(self):
        module, _, name = self._loader.rpartition(".")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise DatasetError(f"Cannot import loader {self._loader!r}: {exc}") from exc

    def load(self) -> Any:
        path = Path(str(self._filepath))
        if not path.exists():
            raise DatasetError(f"Raw data not found at {path}.")
        return self._function()(path, **self._load_args)

    def save(self, data: Any) -> None:
        raise DatasetError(f"{self._filepath} is raw data: the pipeline never writes it.")

    def _exists(self) -> bool:
        return Path(str(self._filepath)).exists()
