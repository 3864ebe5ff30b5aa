"""Evaluation helpers shared by every method's pipeline (no Kedro, no MLflow here).

A method's pipeline produces a *results table*: one row per evaluation unit (e.g. one data set,
method, one-vs-all task and random draw), key columns and one column per metric. The functions
below turn such tables into the reported summaries:

* :func:`summarise` averages over inner keys (e.g. the one-vs-all tasks of one draw), then gives
  mean, standard deviation and count over the repetitions (e.g. random training draws);
* :func:`flag_significance` marks, within each column of a table, the methods significantly worse
  than the best one by a Wilcoxon rank-sum test (as PB-MVBoost's Table 1 does);
* :func:`build_estimator` instantiates an estimator registered by name in configuration;
* :func:`unit_key`, :func:`array_fingerprint` and :func:`code_fingerprint` name a finished
  unit's result in the unit cache of :mod:`multiview_lab.protocol` (the unit, its data and the
  code it runs), so an interrupted reproduction resumes where it stopped and never reuses a
  result computed by other code or on other data.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import json
import logging
import os
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ranksums

logger = logging.getLogger(__name__)


def resolve_estimator_class(name: str) -> type:
    """Return the estimator class registered under ``name``.

    ``name`` is either a public name of :mod:`multiview_lab.estimators` (``"PBMVBoostClassifier"``)
    or a dotted path (``"sklearn.svm.LinearSVC"``).
    """
    if "." not in name:
        module = importlib.import_module("multiview_lab.estimators")
        if not hasattr(module, name):
            raise ValueError(
                f"Unknown estimator {name!r}: not in multiview_lab.estimators; use a public "
                "name from that module or a dotted path such as 'sklearn.svm.LinearSVC'."
            )
        return getattr(module, name)
    module_name, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"Cannot import estimator {name!r}: {exc}") from exc


def _param_names(cls: type) -> list[str]:
    """The constructor parameters of ``cls`` (as scikit-learn's ``get_params`` lists them),
    read from its signature: classes with required parameters (``Pipeline``,
    ``OneVsRestClassifier``) need not be instantiated to be checked."""
    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in signature.parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _is_spec(value: Any) -> bool:
    return (
        isinstance(value, Mapping) and "estimator" in value and isinstance(value["estimator"], str)
    )


def _build_value(value: Any, random_state: int | None) -> Any:
    """A parameter value with its nested estimator specs built (see :func:`build_estimator`)."""
    if _is_spec(value):
        return build_estimator(value, random_state=random_state)
    if isinstance(value, list | tuple):
        items = [_build_value(v, random_state) for v in value]
        # a Pipeline step written [name, spec] in YAML becomes the (name, estimator) pair
        if len(value) == 2 and isinstance(value[0], str) and _is_spec(value[1]):
            return tuple(items)
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def build_estimator(spec: Mapping[str, Any], random_state: int | None = None):
    """Instantiate ``spec = {"estimator": name, "params": {...}}``.

    ``random_state`` is set when the estimator accepts it and the spec does not fix it.
    Unknown parameters raise ``ValueError`` naming them. A parameter whose value is itself a
    spec (a mapping with a string ``estimator``), or a list holding specs, is built first, with
    the same ``random_state``: meta-estimators are written in conf as, e.g.,

    .. code-block:: yaml

        estimator: sklearn.multiclass.OneVsRestClassifier
        params: {estimator: {estimator: MVMVClassifier, params: {max_depth: cv}}}

    and a ``sklearn.pipeline.Pipeline`` takes ``steps: [[name, spec], ...]``.
    """
    if "estimator" not in spec:
        raise ValueError(f"A method spec needs an 'estimator' entry; got keys {sorted(spec)}.")
    cls = resolve_estimator_class(spec["estimator"])
    params = dict(spec.get("params") or {})
    valid = _param_names(cls) if hasattr(cls, "get_params") else []
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"Unknown parameter(s) {unknown} for {cls.__name__}; valid: {sorted(valid)}."
        )
    params = {k: _build_value(v, random_state) for k, v in params.items()}
    if random_state is not None and "random_state" in valid and "random_state" not in params:
        params["random_state"] = random_state
    return cls(**params)


def estimator_modules(spec: Any) -> tuple[str, ...]:
    """The project modules defining the estimators a method spec builds, nested ones included
    (a meta-estimator's ``estimator``, a Pipeline's steps), for the unit cache's code key.

    Estimators of other packages (scikit-learn's ``OneVsRestClassifier``, ``Pipeline``, ...)
    are left out: their code is covered by the library versions in :func:`code_fingerprint`,
    and compiled modules have no source to read.
    """
    root = __name__.partition(".")[0]
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            name = value.get("estimator")
            if isinstance(name, str):
                module = resolve_estimator_class(name).__module__
                if module.partition(".")[0] == root and module not in found:
                    found.append(module)
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)

    walk(spec)
    return tuple(found)


def _module_file(name: str) -> Path | None:
    """The ``.py`` file of module ``name``, or None (not a module, or not Python source)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # e.g. "a.b" where module "a" is not a package
        return None
    origin = getattr(spec, "origin", None)
    return Path(origin) if origin and origin.endswith(".py") else None


def _parse_module(name: str) -> tuple[Path, ast.Module]:
    file = _module_file(name)
    if file is None:
        raise ValueError(f"{name!r} is not a module with Python source.")
    return file, ast.parse(file.read_bytes(), filename=str(file))


def _package_of(name: str, file: Path) -> str:
    return name if file.name == "__init__.py" else name.rpartition(".")[0]


def _resolve_from(package: str, node: ast.ImportFrom, alias: ast.alias) -> tuple[str, str | None]:
    """Where ``from <node.module> import <alias>`` (in ``package``) leads: ``(submodule, None)``
    when the name is a module, else ``(module, name)``."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        prefix = ".".join(parts[: len(parts) - node.level + 1])
        base = f"{prefix}.{base}" if base else prefix
    if alias.name == "*":
        return base, None
    sub = f"{base}.{alias.name}"
    return (sub, None) if _module_file(sub) is not None else (base, alias.name)


def _imports_of(name: str, file: Path, tree: ast.Module) -> list[tuple[str, str | None]]:
    """``(module, imported name or None)`` for every import statement of a module, those inside
    functions included."""
    package = _package_of(name, file)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [_resolve_from(package, node, alias) for alias in node.names]
    return found


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_all(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
        "__all__"
    ]


def _reexported(tree: ast.Module) -> dict[str, ast.ImportFrom] | None:
    """If a module only re-exports names (docstring, imports, ``__all__``: a package's
    ``__init__`` or :mod:`multiview_lab.estimators`), name -> the import that brings it;
    otherwise None."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update({alias.asname or alias.name: node for alias in node.names})
        elif not (isinstance(node, ast.Import) or _is_docstring(node) or _is_all(node)):
            return None
    return names


def _code_of(name: str) -> bytes:
    """What a module's code *does*: its syntax tree without docstrings, comments, layout or
    line numbers. Editing a module's documentation or formatting leaves it unchanged."""
    _, tree = _parse_module(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if node.body and _is_docstring(node.body[0]):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False).encode()


@cache
def code_closure(*modules: str) -> tuple[str, ...]:
    """The modules whose code runs when ``modules`` run: themselves and, recursively, every
    module of the same top-level packages that they import (read from their source; imports
    inside functions count, imports made by name at run time do not).

    A name imported from a module that only re-exports names (a package ``__init__``,
    :mod:`multiview_lab.estimators`) leads to the module that defines it, not to everything
    the re-exporting module imports: PB-MVBoost's code does not depend on MeMd's.
    """
    roots = {name.partition(".")[0] for name in modules}
    done: set[tuple[str, str | None]] = set()
    closure: set[str] = set()
    todo: list[tuple[str, str | None]] = [(name, None) for name in modules]
    while todo:
        name, attr = todo.pop()
        if name.partition(".")[0] not in roots or name in closure or (name, attr) in done:
            continue
        done.add((name, attr))
        file, tree = _parse_module(name)
        exports = _reexported(tree) if attr is not None else None
        if exports is not None and attr in exports:  # follow the one name, not the module
            node = exports[attr]
            alias = next(a for a in node.names if (a.asname or a.name) == attr)
            todo.append(_resolve_from(_package_of(name, file), node, alias))
        else:
            closure.add(name)
            todo += _imports_of(name, file, tree)
    return tuple(sorted(closure))


@cache
def code_fingerprint(*modules: str) -> str:
    """Digest of the code of :func:`code_closure` ``(*modules)`` and of the numpy, scipy
    and scikit-learn versions: what a result computed by that code depends on. A change to a
    module that ``modules`` do not run leaves it unchanged, and so does an edit of docstrings,
    comments or layout (the code is read as its syntax tree, :func:`_code_of`)."""
    import scipy
    import sklearn

    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{np.__version__} {scipy.__version__} {sklearn.__version__}".encode())
    for name in code_closure(*modules):
        digest.update(name.encode())
        digest.update(_code_of(name))
    return digest.hexdigest()


def array_fingerprint(*arrays: np.ndarray) -> str:
    """Digest of the shapes, dtypes and bytes of ``arrays``."""
    digest = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.shape}{a.dtype}".encode())
        digest.update(a.data)
    return digest.hexdigest()


def unit_key(*parts: Any) -> str:
    """Digest of JSON-serialisable ``parts`` (dict keys sorted), the name of a cached result."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


def cache_path(cache_dir: str | os.PathLike, key: str) -> Path:
    """Where the unit cache in ``cache_dir`` stores the result of ``key``."""
    return Path(cache_dir) / f"{key}.joblib"


def stable_seed(*keys: Any, base: int = 0) -> int:
    """A 31-bit seed from ``base`` and any hashable keys, identical across processes and runs.

    Python's ``hash`` is salted per process; CRC-32 of the keys' ``repr`` is not.
    """
    text = "|".join(repr(k) for k in (base, *keys))
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def summarise(
    results: pd.DataFrame,
    group_by: Sequence[str],
    metrics: Sequence[str],
    repeat_key: str | None = None,
    average_over: Sequence[str] = (),
) -> pd.DataFrame:
    """Mean, standard deviation and count of each metric.

    Parameters
    ----------
    results : DataFrame
        One row per evaluation unit.
    group_by : list of str
        Key columns of the summary rows (e.g. ``["dataset", "method"]``).
    metrics : list of str
        Metric columns to summarise.
    repeat_key : str or None
        Column indexing repetitions (e.g. ``"draw"``). The standard deviation is taken over
        repetitions after averaging over ``average_over``; its count is reported as
        ``n_<repeat_key>s``.
    average_over : list of str
        Keys averaged within one repetition first (e.g. the one-vs-all ``"task"``).

    Returns
    -------
    DataFrame
        Columns ``group_by``, then ``<metric>_mean`` and ``<metric>_std`` (sample standard
        deviation, ``ddof=1``; 0 for a single repetition) per metric, then the count.
    """
    missing = [c for c in (*group_by, *metrics, *average_over) if c not in results.columns]
    if repeat_key is not None and repeat_key not in results.columns:
        missing.append(repeat_key)
    if missing:
        raise ValueError(f"results table lacks column(s) {missing}; has {list(results.columns)}.")
    if results.empty:
        raise ValueError("results table is empty: nothing to summarise.")
    unit = [*group_by, *([repeat_key] if repeat_key else []), *average_over]
    if average_over and results.duplicated(subset=unit).any():
        raise ValueError(
            f"results table has several rows per evaluation unit {unit}: a key column is missing."
        )
    group_by = list(group_by)
    metrics = list(metrics)
    per_repeat = results
    if repeat_key is not None:
        inner = [*group_by, repeat_key]
        per_repeat = results.groupby(inner, sort=False, dropna=False)[metrics].mean().reset_index()
    grouped = per_repeat.groupby(group_by, sort=False, dropna=False)[metrics]
    mean = grouped.mean()
    std = grouped.std(ddof=1).fillna(0.0)
    out = pd.DataFrame(index=mean.index)
    for m in metrics:
        out[f"{m}_mean"] = mean[m]
        out[f"{m}_std"] = std[m]
    count_name = f"n_{repeat_key}s" if repeat_key else "n"
    out[count_name] = grouped.size()
    return out.reset_index()


def flag_significance(
    results: pd.DataFrame,
    summary: pd.DataFrame,
    column_keys: Sequence[str],
    method_key: str,
    metrics: Sequence[str],
    repeat_key: str,
    alpha: float = 0.02,
    higher_is_better: bool | Mapping[str, bool] = True,
    contenders: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Mark results significantly worse than the best of their column (Wilcoxon rank-sum).

    Within each column (one value of ``column_keys``, e.g. one data set) and for each metric, the
    best method is the one with the best mean among ``contenders`` (default: every method; a
    paper's table takes the best among its own methods, and rows added beside them should not
    move it). Every other method's per-repetition values are compared with the best method's
    by :func:`scipy.stats.ranksums`; the result is flagged (``<metric>_worse = True``) when its
    mean is worse and ``p < alpha``. The best method, and any row better than it, is never
    flagged. The p-values are reported as ``<metric>_p``.

    Returns
    -------
    DataFrame
        ``summary`` with ``<metric>_worse`` and ``<metric>_p`` columns added.
    """
    summary = summary.copy()
    eligible = np.ones(len(summary), dtype=bool)
    if contenders is not None:
        eligible = summary[method_key].isin(list(contenders)).to_numpy()
        if not eligible.any():
            raise ValueError(
                f"contenders {list(contenders)}: none is a method of the summary "
                f"{sorted(summary[method_key].unique())}."
            )
        absent = sorted(set(contenders) - set(summary[method_key]))
        if absent:  # e.g. a run with fewer methods registered
            logger.warning("contenders %s have no results; the others compete.", absent)
    group_cols = [*column_keys, method_key, repeat_key]
    per_repeat = results.groupby(group_cols, sort=False)[list(metrics)].mean().reset_index()
    for metric in metrics:
        better_high = (
            higher_is_better[metric] if isinstance(higher_is_better, Mapping) else higher_is_better
        )
        worse = np.zeros(len(summary), dtype=bool)
        pvals = np.full(len(summary), np.nan)
        columns = summary.groupby(list(column_keys), sort=False) if column_keys else [((), summary)]
        for key, block in columns:
            means = block[f"{metric}_mean"][eligible[summary.index.get_indexer(block.index)]]
            if means.empty:
                continue
            best_idx = means.idxmax() if better_high else means.idxmin()
            best_method = block.loc[best_idx, method_key]
            key = key if isinstance(key, tuple) else (key,)
            mask = np.ones(len(per_repeat), dtype=bool)
            for col, val in zip(column_keys, key, strict=True):
                mask &= (per_repeat[col] == val).to_numpy()
            col_rows = per_repeat[mask]
            best_vals = col_rows.loc[col_rows[method_key] == best_method, metric].to_numpy()
            for idx in block.index:
                if idx == best_idx:
                    continue
                method = summary.loc[idx, method_key]
                vals = col_rows.loc[col_rows[method_key] == method, metric].to_numpy()
                if len(vals) < 2 or len(best_vals) < 2:
                    continue
                pos = summary.index.get_loc(idx)
                is_worse = (
                    summary.loc[idx, f"{metric}_mean"] < summary.loc[best_idx, f"{metric}_mean"]
                    if better_high
                    else summary.loc[idx, f"{metric}_mean"]
                    > summary.loc[best_idx, f"{metric}_mean"]
                )
                if not (is_worse or eligible[pos]):
                    continue  # a non-contender beating the best: not flagged, like the best
                p = ranksums(vals, best_vals).pvalue
                pvals[pos] = p
                worse[pos] = bool(is_worse and p < alpha)
        summary[f"{metric}_worse"] = worse
        summary[f"{metric}_p"] = pvals
    return summary
