"""One experiment protocol for every pipeline (no Kedro, no MLflow here).

* :mod:`~multiview_lab.protocol.splits` — the split kinds of the five papers, as one table;
* :mod:`~multiview_lab.protocol.tasks` — how a split meets an estimator and is scored;
* :mod:`~multiview_lab.protocol.registry` — the one method-registry format;
* :mod:`~multiview_lab.protocol.execution` — local joblib or Dask backends;
* :mod:`~multiview_lab.protocol.unit` — :func:`run_unit`: one method fitted on one split, scored;
* :mod:`~multiview_lab.protocol.engine` — :func:`run_experiment`, the one loop over units.
"""

from multiview_lab.protocol.engine import (
    CacheIncompleteError,
    ExperimentResult,
    cache_status,
    model_name,
    run_experiment,
)
from multiview_lab.protocol.execution import (
    DaskBackend,
    LocalBackend,
    backend_from_config,
    check_execution,
    close_backends,
)
from multiview_lab.protocol.registry import Method, parse_method, parse_methods
from multiview_lab.protocol.splits import key_columns, split_rows, split_table
from multiview_lab.protocol.tasks import (
    BagsTask,
    MatrixTask,
    Task,
    TransductiveTask,
    ViewsTask,
    classification_scores,
)
from multiview_lab.protocol.unit import TIMING_COLUMNS, UnitResult, run_unit

__all__ = [
    "BagsTask",
    "DaskBackend",
    "CacheIncompleteError",
    "ExperimentResult",
    "cache_status",
    "LocalBackend",
    "MatrixTask",
    "Method",
    "Task",
    "TransductiveTask",
    "TIMING_COLUMNS",
    "UnitResult",
    "ViewsTask",
    "backend_from_config",
    "check_execution",
    "classification_scores",
    "close_backends",
    "key_columns",
    "model_name",
    "parse_method",
    "parse_methods",
    "run_experiment",
    "run_unit",
    "split_rows",
    "split_table",
]
