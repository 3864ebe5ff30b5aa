"""Multiview classification data sets from a user's files (no Kedro here).

One data set is a set of *views* (2-D arrays with one row per sample, dense or ``scipy.sparse``)
and one vector of class labels. :func:`load_multiview` reads it from a spec (a mapping, e.g. an
entry of ``benchmark.datasets`` in conf) in one of four formats:

``mat``
    A MATLAB ``.mat`` file (v4 to v7.2, read by :func:`scipy.io.loadmat`) holding a cell array
    of views under ``views_key`` (default ``X``) and the labels under ``labels_key`` (default
    ``Y``). A view stored features × samples is transposed when ``transpose`` is ``auto`` (the
    default: when its rows do not match the labels but its columns do) or ``true``.
``npz``
    A NumPy ``.npz`` archive: one array per view (keys ``views``, default every key but the
    labels, in the archive's order) and the labels under ``labels_key`` (default ``y``). A
    sparse view is stored as its CSR / CSC components ``<view>/data``, ``<view>/indices``,
    ``<view>/indptr``, ``<view>/shape`` (and ``<view>/format``), as :func:`save_views_npz`
    writes them.
``table``
    A parquet or CSV table (``.parquet``, ``.pq``, ``.csv``, ``.tsv``, also gzipped), one row
    per sample: ``views`` maps each view's name to its columns (a list of names, or one
    ``fnmatch`` pattern such as ``"fou_*"``) and ``label_column`` names the labels;
    ``sparse: true`` stores the views as CSR; ``read_args`` go to the pandas reader.
``text``
    One delimited text file per view (``numpy.loadtxt``: whitespace by default, ``delimiter``
    otherwise, gzipped files too) and one file of labels: ``views`` maps view names to files,
    ``labels`` names the labels' file, relative to ``path`` (a folder); ``skiprows`` skips a
    header.

``format`` may be left out when the suffix of ``path`` says it (a folder is ``text``);
``subsample`` (a row count, or ``{n, seed}``) keeps a seeded stratified subset of the rows. Every
loader returns ``{"views": [...], "y": ndarray, "view_names": [...], "source": str}``; dense
views are ``float64`` arrays, sparse ones ``float64`` CSR matrices (never densified). Every
problem (missing file or key, views whose rows differ from the labels, missing labels,
non-numeric or non-finite values) raises :class:`MultiviewFileError` naming the file and the
problem.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

logger = logging.getLogger(__name__)

_SPARSE_PARTS = ("data", "indices", "indptr", "shape")
_TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv", ".csv.gz", ".tsv.gz")


class MultiviewFileError(ValueError):
    """A multiview data file that cannot be read as views and labels (the message says why)."""


def _fail(path, problem: str):
    raise MultiviewFileError(f"{path}: {problem}")


def _existing_file(path) -> Path:
    """``path`` as a ``Path``; a clear error naming it when it is not a file."""
    path = Path(path)
    if not path.is_file():
        _fail(path, "file not found.")
    return path


def _as_view(value: Any, path, name: str, n_rows: int | None = None):
    """A view as a float64 array or CSR matrix, checked 2-D, numeric and finite."""
    if sp.issparse(value):
        view = sp.csr_matrix(value, dtype=np.float64)
        values = view.data
    else:
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind not in "biuf":
            _fail(path, f"view {name!r} is not numeric (dtype {array.dtype}).")
        if array.ndim != 2:
            _fail(path, f"view {name!r} must be 2-D (samples x features); got shape {array.shape}.")
        view = values = array.astype(np.float64)
    if view.shape[1] == 0:
        _fail(path, f"view {name!r} has no column.")
    if not np.all(np.isfinite(values)):
        bad = int(np.sum(~np.isfinite(values)))
        _fail(path, f"view {name!r} holds {bad} missing or non-finite value(s) (NaN / inf).")
    return view


def _as_labels(value: Any, path, what: str) -> np.ndarray:
    """Labels as a 1-D array (a row or column vector is flattened); missing labels fail."""
    y = np.asarray(value)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        _fail(path, f"labels {what} must be a vector (one label per sample); got shape {y.shape}.")
    if y.size == 0:
        _fail(path, f"labels {what} are empty.")
    missing = pd.isna(y) if y.dtype.kind in "fOUS" else np.zeros(y.shape, dtype=bool)
    if np.any(missing):
        rows = np.flatnonzero(missing)
        _fail(
            path,
            f"labels {what} are missing for {rows.size} sample(s) (rows {rows[:10].tolist()}"
            f"{' ...' if rows.size > 10 else ''}): every sample needs a label.",
        )
    if y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    elif y.dtype.kind in "iub":
        y = y.astype(np.int64)
    elif y.dtype.kind in "OUS":
        y = y.astype(str)
    return y


def _checked(views: Sequence, names: Sequence[str], y: np.ndarray, path) -> dict[str, Any]:
    if not views:
        _fail(path, "no view found.")
    if len(set(names)) != len(names):
        _fail(path, f"view names repeat: {list(names)}.")
    rows = {name: V.shape[0] for name, V in zip(names, views, strict=True)}
    bad = {name: n for name, n in rows.items() if n != y.shape[0]}
    if bad:
        _fail(
            path,
            f"views and labels have different numbers of rows: {y.shape[0]} labels, but rows "
            f"per view {rows}.",
        )
    return {"views": list(views), "y": y, "view_names": [str(n) for n in names],
            "source": str(path)}  # fmt: skip


def _unknown_keys(path, fmt: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        _fail(path, f"unknown key(s) {unknown} for format {fmt!r}; allowed: {sorted(allowed)}.")


# --------------------------------------------------------------------------- the formats
def load_mat(
    path: str | Path,
    *,
    views_key: str = "X",
    labels_key: str = "Y",
    view_names: Sequence[str] | None = None,
    transpose: bool | str = "auto",
) -> dict[str, Any]:
    """Views from a MATLAB cell array and labels from a ``.mat`` file (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The ``.mat`` file.
    views_key, labels_key : str
        The variables holding the cell array of views and the labels.
    view_names : list of str, optional
        Names of the views (default ``view0``, ``view1``, ...).
    transpose : {"auto", True, False}
        Whether views are stored features × samples.

    Returns
    -------
    dict
        ``views``, ``y``, ``view_names``, ``source``.
    """
    from scipy.io import loadmat

    path = _existing_file(path)
    try:
        mat = loadmat(str(path))
    except NotImplementedError:
        _fail(path, "MATLAB v7.3 (HDF5) files are not read; save it with save(..., '-v7').")
    except Exception as exc:  # noqa: BLE001 - scipy raises several kinds for a bad file
        _fail(path, f"not a readable MATLAB file ({type(exc).__name__}: {exc}).")
    variables = sorted(k for k in mat if not k.startswith("__"))
    for key in (views_key, labels_key):
        if key not in mat:
            _fail(path, f"no variable {key!r}; the file holds {variables}.")
    cells = mat[views_key]
    if isinstance(cells, np.ndarray) and cells.dtype == object:
        raw = list(cells.ravel(order="F"))
    else:
        _fail(path, f"{views_key!r} is not a cell array of views (got {type(cells).__name__} "
                    f"of dtype {getattr(cells, 'dtype', '?')}).")  # fmt: skip
    y = _as_labels(mat[labels_key], path, repr(labels_key))
    names = list(view_names) if view_names is not None else [f"view{i}" for i in range(len(raw))]
    if len(names) != len(raw):
        _fail(path, f"{len(raw)} views but {len(names)} view_names {names}.")
    if transpose not in ("auto", True, False):
        _fail(path, f"transpose must be 'auto', true or false; got {transpose!r}.")
    views = []
    for name, V in zip(names, raw, strict=True):
        V = _as_view(V, path, name)
        if transpose is True or (
            transpose == "auto" and V.shape[0] != y.shape[0] and V.shape[1] == y.shape[0]
        ):
            logger.info("%s: view %r stored features x samples %s; transposed.", path, name,
                        V.shape)  # fmt: skip
            V = V.T.tocsr() if sp.issparse(V) else np.ascontiguousarray(V.T)
        views.append(V)
    return _checked(views, names, y, path)


def save_views_npz(
    path: str | Path, views: Sequence, y, *, view_names: Sequence[str] | None = None,
    labels_key: str = "y",
) -> Path:  # fmt: skip
    """Write views (dense or sparse) and labels in the ``npz`` layout :func:`load_npz` reads.

    Returns
    -------
    Path
        The file written.
    """
    names = list(view_names) if view_names is not None else [f"view{i}" for i in range(len(views))]
    arrays: dict[str, np.ndarray] = {}
    for name, V in zip(names, views, strict=True):
        if sp.issparse(V):
            V = V.tocsr() if V.format not in ("csr", "csc") else V
            arrays.update({f"{name}/data": V.data, f"{name}/indices": V.indices,
                           f"{name}/indptr": V.indptr, f"{name}/shape": np.asarray(V.shape),
                           f"{name}/format": np.asarray(V.format)})  # fmt: skip
        else:
            arrays[name] = np.asarray(V)
    arrays[labels_key] = np.asarray(y)
    path = Path(path)
    np.savez_compressed(path, **arrays)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def load_npz(
    path: str | Path, *, views: Sequence[str] | None = None, labels_key: str = "y"
) -> dict[str, Any]:
    """Views and labels from a ``.npz`` archive (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The ``.npz`` file.
    views : list of str, optional
        The views' keys, in order (default: every key but ``labels_key``, in the archive's
        order; a sparse view's components count once).
    labels_key : str
        The labels' key.

    Returns
    -------
    dict
        ``views``, ``y``, ``view_names``, ``source``.
    """
    path = _existing_file(path)
    try:
        archive = np.load(str(path), allow_pickle=False)
    except Exception as exc:  # noqa: BLE001
        _fail(path, f"not a readable .npz archive ({type(exc).__name__}: {exc}).")
    with archive:
        keys = list(archive.files)
        available = []
        for key in keys:
            name = key.rsplit("/", 1)[0] if "/" in key else key
            if name != labels_key and name not in available:
                available.append(name)
        if labels_key not in keys:
            _fail(path, f"no labels key {labels_key!r}; the archive holds {available}.")
        names = list(views) if views is not None else available
        loaded = []
        for name in names:
            if name in keys:
                loaded.append(_as_view(archive[name], path, name))
                continue
            parts = {p: f"{name}/{p}" for p in _SPARSE_PARTS}
            if not all(k in keys for k in parts.values()):
                _fail(path, f"no view {name!r} (an array, or sparse components "
                            f"{name}/data, /indices, /indptr, /shape); the archive holds "
                            f"{available}.")  # fmt: skip
            fmt = str(archive[f"{name}/format"]) if f"{name}/format" in keys else "csr"
            if fmt not in ("csr", "csc"):
                _fail(path, f"sparse view {name!r} has format {fmt!r}; csr or csc expected.")
            matrix = (sp.csr_matrix if fmt == "csr" else sp.csc_matrix)(
                (archive[parts["data"]], archive[parts["indices"]], archive[parts["indptr"]]),
                shape=tuple(int(s) for s in archive[parts["shape"]]),
            )
            loaded.append(_as_view(matrix, path, name))
        y = _as_labels(archive[labels_key], path, repr(labels_key))
    return _checked(loaded, names, y, path)


def _read_table(path: Path, read_args: Mapping[str, Any]) -> pd.DataFrame:
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return pd.read_parquet(path, **read_args)
    sep = "\t" if name.endswith((".tsv", ".tsv.gz")) else ","
    return pd.read_csv(path, **{"sep": sep, **read_args})


def load_table(
    path: str | Path,
    *,
    views: Mapping[str, Sequence[str] | str],
    label_column: str,
    sparse: bool = False,
    read_args: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Views as groups of columns of a parquet / CSV table (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The table.
    views : dict
        View name -> its columns: a list of column names, or one ``fnmatch`` pattern.
    label_column : str
        The labels' column.
    sparse : bool
        Store the views as CSR matrices.
    read_args : dict, optional
        Keyword arguments of ``pandas.read_parquet`` / ``pandas.read_csv``.

    Returns
    -------
    dict
        ``views``, ``y``, ``view_names``, ``source``.
    """
    path = _existing_file(path)
    if not path.name.lower().endswith(_TABLE_SUFFIXES):
        _fail(path, f"a table must end with one of {list(_TABLE_SUFFIXES)}.")
    if not isinstance(views, Mapping) or not views:
        _fail(path, "'views' must map each view's name to its columns (a list or a pattern).")
    try:
        table = _read_table(path, dict(read_args or {}))
    except Exception as exc:  # noqa: BLE001
        _fail(path, f"not a readable table ({type(exc).__name__}: {exc}).")
    columns = [str(c) for c in table.columns]
    table.columns = columns
    if label_column not in columns:
        _fail(path, f"no label column {label_column!r}; columns are {columns[:20]}"
                    f"{' ...' if len(columns) > 20 else ''}.")  # fmt: skip
    out = []
    for name, spec in views.items():
        if isinstance(spec, str):
            chosen = [c for c in columns if fnmatch.fnmatchcase(c, spec) and c != label_column]
            if not chosen:
                _fail(path, f"view {name!r}: no column matches {spec!r}.")
        else:
            chosen = [str(c) for c in spec]
            missing = [c for c in chosen if c not in columns]
            if missing:
                _fail(path, f"view {name!r}: no column(s) {missing}.")
        block = table[chosen]
        text = [c for c in chosen if not pd.api.types.is_numeric_dtype(block[c])]
        if text:
            _fail(path, f"view {name!r}: column(s) {text[:10]} are not numeric.")
        X = _as_view(block.to_numpy(dtype=np.float64), path, str(name))
        out.append(sp.csr_matrix(X) if sparse else X)
    y = _as_labels(table[label_column].to_numpy(), path, f"in column {label_column!r}")
    return _checked(out, [str(n) for n in views], y, path)


def load_text(
    path: str | Path,
    *,
    views: Mapping[str, str] | Sequence[str],
    labels: str,
    delimiter: str | None = None,
    skiprows: int = 0,
) -> dict[str, Any]:
    """One delimited text file per view and one of labels (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The folder holding the files.
    views : dict or list
        View name -> file (a list of files names each view after its file).
    labels : str
        The labels' file (one label per line).
    delimiter : str, optional
        Column separator (default: any whitespace).
    skiprows : int
        Header lines to skip in every file.

    Returns
    -------
    dict
        ``views``, ``y``, ``view_names``, ``source``.
    """
    folder = Path(path)
    if not folder.is_dir():
        _fail(folder, "folder not found (format 'text' reads one file per view from a folder).")
    files = dict(views) if isinstance(views, Mapping) else {Path(f).name: f for f in views}
    if not files:
        _fail(folder, "'views' names no file.")

    def read(file: str, what: str) -> np.ndarray:
        target = folder / file
        if not target.is_file():
            _fail(target, f"{what}: file not found.")
        try:
            return np.loadtxt(target, delimiter=delimiter, skiprows=skiprows, ndmin=2,
                              dtype=np.float64 if what != "labels" else str)  # fmt: skip
        except ValueError as exc:
            _fail(target, f"{what}: not a numeric delimited text file ({exc}).")

    out = [_as_view(read(file, f"view {name!r}"), folder / file, str(name))
           for name, file in files.items()]  # fmt: skip
    raw = read(labels, "labels")
    try:
        raw = raw.astype(np.float64)
    except ValueError:
        pass  # text labels stay strings
    y = _as_labels(raw, folder / labels, "")
    return _checked(out, [str(n) for n in files], y, folder)


#: format name -> (loader, the keys its spec may have besides ``format`` and ``path``)
FORMATS = {
    "mat": (load_mat, ("views_key", "labels_key", "view_names", "transpose")),
    "npz": (load_npz, ("views", "labels_key")),
    "table": (load_table, ("views", "label_column", "sparse", "read_args")),
    "text": (load_text, ("views", "labels", "delimiter", "skiprows")),
}
#: keys of a data set's spec that are not the loader's (the pipeline reads them)
COMMON_KEYS = ("format", "path", "enabled", "subsample")


def subsample_rows(data: dict[str, Any], spec: Any, path) -> dict[str, Any]:
    """A seeded stratified subset of a loaded data set's rows (the spec's ``subsample``).

    ``spec`` is the number of rows to keep, or ``{"n": rows, "seed": seed}`` (seed 0 by
    default). Every class keeps its share of the rows (scikit-learn's stratified
    ``train_test_split``), the kept rows stay in their file order, sparse views stay sparse.
    """
    from sklearn.model_selection import train_test_split

    if isinstance(spec, Mapping):
        unknown = sorted(set(spec) - {"n", "seed"})
        if unknown or "n" not in spec:
            _fail(path, f"subsample must be a row count or {{n, seed}}; got {dict(spec)!r}.")
        n, seed = spec["n"], spec.get("seed", 0)
    else:
        n, seed = spec, 0
    y = data["y"]
    n_classes = np.unique(y).shape[0]
    if (
        isinstance(n, bool)
        or not isinstance(n, (int, np.integer))
        or not (n_classes <= n < y.shape[0])
    ):
        _fail(
            path,
            f"subsample.n must be an integer from the number of classes ({n_classes}) to "
            f"below the number of rows ({y.shape[0]}); got {n!r}.",
        )
    rows, _ = train_test_split(
        np.arange(y.shape[0]), train_size=int(n), stratify=y, random_state=int(seed)
    )
    rows = np.sort(rows)
    logger.info("%s: kept a stratified subsample of %d of %d rows", path, rows.size, y.shape[0])
    return {
        **data,
        "views": [v[rows] for v in data["views"]],
        "y": y[rows],
        "source": f"{data['source']} (stratified subsample of {rows.size} rows, seed {seed})",
    }


def infer_format(path: Path) -> str:
    """The format a path's suffix says (a folder is ``text``)."""
    name = path.name.lower()
    if path.is_dir():
        return "text"
    if name.endswith(".mat"):
        return "mat"
    if name.endswith(".npz"):
        return "npz"
    if name.endswith(_TABLE_SUFFIXES):
        return "table"
    _fail(path, f"cannot tell the format from the name: set format to one of {sorted(FORMATS)}.")


def load_multiview(spec: Mapping[str, Any], root: str | Path | None = None) -> dict[str, Any]:
    """The data set a spec names: ``{"format", "path", ...the format's keys}``.

    Parameters
    ----------
    spec : mapping
        ``path`` (relative paths are taken from ``root``), ``format`` (``mat``, ``npz``,
        ``table`` or ``text``; default: from the suffix of ``path``) and the format's keys
        (:data:`FORMATS`).
    root : str or Path, optional
        The folder relative paths start from (default: the working directory).

    Returns
    -------
    dict
        ``views``, ``y``, ``view_names``, ``source``.
    """
    if not isinstance(spec, Mapping) or "path" not in spec:
        raise MultiviewFileError(f"a data set needs at least a 'path'; got {spec!r}.")
    path = Path(str(spec["path"])).expanduser()
    if not path.is_absolute() and root is not None:
        path = Path(root) / path
    fmt = spec.get("format") or infer_format(path)
    if fmt not in FORMATS:
        _fail(path, f"unknown format {fmt!r}; formats are {sorted(FORMATS)}.")
    loader, keys = FORMATS[fmt]
    options = {k: v for k, v in spec.items() if k not in COMMON_KEYS}
    _unknown_keys(path, fmt, options, keys)
    data = loader(path, **options)
    if spec.get("subsample") is not None:
        data = subsample_rows(data, spec["subsample"], path)
    return data


class MultiviewFiles:
    """The loader of data sets named in conf, with relative paths taken from ``root``.

    It is what the catalog's raw entry of the ``benchmark`` pipeline loads (through
    :class:`multiview_lab.io.RawDataset`, ``filepath: data/01_raw``), so that a data set is
    added by a conf entry alone while the raw folder stays declared in the catalog.

    Parameters
    ----------
    root : str or Path
        The folder relative paths start from.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"MultiviewFiles({str(self.root)!r})"

    def load(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """:func:`load_multiview` of ``spec`` from :attr:`root`."""
        return load_multiview(spec, root=self.root)
