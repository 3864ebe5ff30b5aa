"""A read-only Kedro dataset for another pipeline's latest output, which may not exist yet.

The ``reproduction`` pipeline reads what the five method pipelines last wrote (results tables
and their ``run_info.json``). A pipeline that has never run is a claim "not run", not an error:
:class:`LatestResultsDataset` loads ``None`` for a missing file.

.. code-block:: yaml

    reproduction.pbmvboost.results:
      type: multiview_lab.io.LatestResultsDataset
      filepath: data/07_model_output/pbmvboost/results.csv
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
from kedro.io.core import AbstractDataset, DatasetError

_READERS = {".csv": pd.read_csv, ".parquet": pd.read_parquet}


class LatestResultsDataset(AbstractDataset[None, Any]):
    """A CSV / parquet table (a DataFrame) or a JSON file (its value), ``None`` when absent.

    Parameters
    ----------
    filepath : str
        The file another pipeline writes (``.csv``, ``.parquet`` or ``.json``).
    metadata : dict, optional
        Free-form metadata (e.g. the kedro-viz layer); ignored by Kedro.
    """

    def __init__(self, *, filepath: str, metadata: dict[str, Any] | None = None) -> None:
        self._filepath = PurePosixPath(filepath)
        suffix = self._filepath.suffix
        if suffix not in (*_READERS, ".json"):
            raise DatasetError(
                f"{filepath}: LatestResultsDataset reads .csv, .parquet or .json files."
            )
        self.metadata = metadata

    def _describe(self) -> dict[str, Any]:
        return {"filepath": str(self._filepath)}

    def load(self) -> Any:
        path = Path(str(self._filepath))
        if not path.is_file():
            return None
        if path.suffix == ".json":
            return json.loads(path.read_text())
        return _READERS[path.suffix](path)

    def save(self, data: Any) -> None:
        raise DatasetError(
            f"{self._filepath} is another pipeline's output: the reproduction pipeline only "
            "reads it."
        )

    def _exists(self) -> bool:
        return Path(str(self._filepath)).is_file()
