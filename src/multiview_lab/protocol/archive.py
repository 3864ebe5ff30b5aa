"""The unit archive: finished units of long runs, kept as text in the repository.

The unit cache (``execution.cache_dir``) keeps every finished unit as a joblib file on the
machine that ran it. A paper protocol takes longer than one working session on 2 cores, and a
machine's files do not outlive it, so a run's progress must travel with the code: the archive
holds the same results as JSON lines that git keeps, gzip-compressed (``.jsonl.gz``: a paper
run's lines are tens of MB as text, a tenth of it compressed; plain ``.jsonl`` files are read
and written too), one finished unit (or shared inner CV) per line, under the key the engine gave it (:func:`multiview_lab.protocol.cache.unit_key`:
the unit, its data, its settings and its code). The engine reads an archive folder
(``execution.archive_dir``, read only) as a second cache: a unit whose key is there is not
computed again, whatever machine computed it.

What is kept: the result rows (scores, chosen parameters, timings and the measured CPU
seconds), the unit's extra tables and a shared CV's choice. What is not: fitted models (large,
and pickles of code). A unit whose model the run keeps (``keep_models``) is therefore computed
again even when archived, which costs one unit per method.

Every value is written so that it reads back identical (Python and numpy scalars, strings,
None, NaN, lists and dicts of them, numpy arrays of numbers, booleans or such objects, and
data frames with their dtypes, e.g. a column of feature rankings); :func:`archive_cache`
checks this for every entry before it writes anything. Each file starts with a header line
(format version, the commit of the code that computed its units, when it was written).

Command line (``--help`` for the options)::

    python -m multiview_lab.protocol.archive data/02_intermediate/unit_cache \\
        results/units/memd-paper-2e7a8d3.jsonl.gz
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import io
import json
import logging
import math
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from multiview_lab.protocol.unit import UnitResult

logger = logging.getLogger(__name__)

SUFFIXES = (".jsonl", ".jsonl.gz")
"""The names of archive files: JSON lines, plain or gzip-compressed."""

FORMAT = 2
"""Version of the line format (the header's ``archive`` field) that this code writes: 2 added
numpy arrays, so that code reading only 1 refuses a file holding them instead of misreading."""

READS = (1, 2)
"""The formats this code reads (each a subset of the next)."""


class ArchiveError(ValueError):
    """An entry that cannot be archived exactly, or an archive file that cannot be read."""


# ---------------------------------------------------------------------------------------------
# values <-> JSON


def _encode_value(value: Any, where: str) -> Any:
    """A JSON value that :func:`_decode_value` turns back into ``value`` (numpy scalars carry
    their dtype; non-finite floats and tuples are tagged)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.generic):
        item = value.item()
        if isinstance(item, float) and not math.isfinite(item):
            item = repr(item)
        return {"__np__": value.dtype.str, "v": item}
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, list):
        return [_encode_value(v, where) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [_encode_value(v, where) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ArchiveError(f"{where}: a dict with non-string keys cannot be archived.")
        if any(k.startswith("__") for k in value):
            raise ArchiveError(f"{where}: a dict key starting with '__' is reserved.")
        return {k: _encode_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return {"__frame__": _encode_frame(value, where)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufO":
            raise ArchiveError(f"{where}: a {value.dtype} array cannot be archived.")
        items = value.ravel().tolist() if value.dtype.kind != "O" else list(value.ravel())
        return {
            "__ndarray__": value.dtype.str,
            "shape": list(value.shape),
            "data": [_encode_value(v, f"{where}[]") for v in items],
        }
    raise ArchiveError(f"{where}: a {type(value).__name__} cannot be archived.")


def _decode_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__np__" in value:
        item = value["v"]
        if isinstance(item, str):
            item = float(item)
        return np.dtype(value["__np__"]).type(item)
    if "__float__" in value:
        return float(value["__float__"])
    if "__tuple__" in value:
        return tuple(_decode_value(v) for v in value["__tuple__"])
    if "__frame__" in value:
        return _decode_frame(value["__frame__"])
    if "__ndarray__" in value:
        return _decode_array(value)
    return {k: _decode_value(v) for k, v in value.items()}


def _decode_array(spec: Mapping[str, Any]) -> np.ndarray:
    dtype, items = np.dtype(spec["__ndarray__"]), [_decode_value(v) for v in spec["data"]]
    if dtype.kind == "O":  # element by element: a list element must stay one object
        out = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            out[i] = item
    else:
        out = np.array(items, dtype=dtype)
    return out.reshape(spec["shape"])


def _encode_frame(frame: pd.DataFrame, where: str) -> dict[str, Any]:
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0:
        frame = frame.reset_index(drop=True)
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns) or list(frame.columns) != columns:
        raise ArchiveError(f"{where}: a data frame's columns must be distinct strings.")
    dtypes = [str(t) for t in frame.dtypes]
    data = {c: [_encode_value(v, f"{where}[{c}]") for v in frame[c].tolist()] for c in columns}
    return {"columns": columns, "dtypes": dtypes, "data": data}


def _decode_frame(spec: Mapping[str, Any]) -> pd.DataFrame:
    columns = {
        name: pd.Series([_decode_value(v) for v in spec["data"][name]], dtype=dtype)
        for name, dtype in zip(spec["columns"], spec["dtypes"], strict=True)
    }
    return pd.DataFrame(columns, columns=list(spec["columns"]))


def encode(result: Any, where: str = "entry") -> dict[str, Any]:
    """A cache entry as a JSON-ready dict: a :class:`~multiview_lab.protocol.unit.UnitResult`
    (its model left out), a shared inner CV's ``{"params", "scores", "cpu_time_s"}`` or one of
    its grid points' ``{"point", "score", "cpu_time_s", "computed_for"}``."""
    if isinstance(result, UnitResult):
        return {
            "kind": "unit",
            "rows": _encode_value(list(result.rows), f"{where}.rows"),
            "extras": _encode_value(dict(result.extras or {}), f"{where}.extras"),
        }
    if isinstance(result, Mapping) and {"params", "scores"} <= set(result):
        return {"kind": "tune", **_encode_value(dict(result), where)}
    if isinstance(result, Mapping) and {"point", "score"} <= set(result):
        return {"kind": "tune point", **_encode_value(dict(result), where)}
    raise ArchiveError(
        f"{where}: not a unit result, a shared inner CV or one of its grid points "
        f"({type(result).__name__})."
    )


def decode(entry: Mapping[str, Any]) -> Any:
    """The cache entry :func:`encode` wrote (a unit's model is None)."""
    entry = dict(entry)
    kind = entry.pop("kind", None)
    if kind == "unit":
        return UnitResult(
            rows=_decode_value(entry["rows"]), extras=_decode_value(entry["extras"]), model=None
        )
    if kind in ("tune", "tune point"):
        return _decode_value(entry)
    raise ArchiveError(f"unknown archive entry kind {kind!r}.")


def same(a: Any, b: Any) -> bool:
    """Whether two entries are identical: the same types, the same values (NaN equal to NaN,
    floats bit for bit), data frames with the same columns, dtypes and values."""
    if isinstance(a, UnitResult) or isinstance(b, UnitResult):
        return (
            isinstance(a, UnitResult)
            and isinstance(b, UnitResult)
            and same(a.rows, b.rows)
            and same(a.extras or {}, b.extras or {})
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and same(list(a.ravel()), list(b.ravel()))
    if isinstance(a, pd.DataFrame):
        if list(a.columns) != list(b.columns) or list(a.dtypes) != list(b.dtypes):
            return False
        return len(a) == len(b) and all(same(a[c].tolist(), b[c].tolist()) for c in a.columns)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | np.floating):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return bool(a == b)


# ---------------------------------------------------------------------------------------------
# reading


def _open_lines(path: str | os.PathLike):
    """An archive file opened as text, decompressed on the fly if its name ends in ``.gz``."""
    return (gzip.open if str(path).endswith(".gz") else open)(path, "rt", encoding="utf-8")


def _write_lines(path: Path, lines: list[str]) -> None:
    """Write ``lines`` to ``path`` atomically (a failure leaves the old file, never half of a
    new one); gzip-compressed if its name ends in ``.gz``, with no time stamp or name in the
    gzip header, so the same lines always give the same bytes."""
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
            gz.write(data)
        data = buffer.getvalue()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _files(archive_dir: str | os.PathLike) -> tuple[tuple[str, int, int], ...]:
    root = Path(archive_dir)
    if not root.is_dir():
        raise ArchiveError(f"execution.archive_dir {str(root)!r} is not a folder.")
    paths = sorted(p for suffix in SUFFIXES for p in root.rglob(f"*{suffix}"))
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)


@lru_cache(maxsize=4)
def _index(files: tuple[tuple[str, int, int], ...]) -> dict[str, str]:
    """Key -> the entry's JSON text, over every archive file (a later file's entry wins)."""
    index: dict[str, str] = {}  # the entries' JSON text: decoded only when looked up
    for path, _, _ in files:
        try:
            with _open_lines(path) as f:
                _index_lines(index, path, f)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ArchiveError(f"{path}: unreadable ({exc}).") from exc
    return index


def _index_lines(index: dict[str, str], path: str, lines: Iterable[str]) -> None:
    """Add the entries of one archive file's lines to ``index`` (its header is checked)."""
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ArchiveError(f"{path}, line {number}: not JSON ({exc}).") from exc
        if "archive" in record:  # the header
            if record["archive"] not in READS:
                raise ArchiveError(
                    f"{path}: archive format {record['archive']!r}; this code reads "
                    f"{', '.join(map(str, READS))}."
                )
            continue
        try:
            index[record["key"]] = json.dumps(record["entry"])
        except KeyError as exc:
            raise ArchiveError(f"{path}, line {number}: no {exc} field.") from exc


class Archive:
    """The entries of every ``*.jsonl`` and ``*.jsonl.gz`` file under a folder (read once per process and file
    version), looked up by key."""

    def __init__(self, archive_dir: str | os.PathLike) -> None:
        self.root = Path(archive_dir)
        self._index = _index(_files(archive_dir))

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def keys(self) -> Iterable[str]:
        return self._index.keys()

    def get(self, key: str) -> Any | None:
        """The entry of ``key`` (a unit's model is None), or None."""
        text = self._index.get(key)
        return None if text is None else decode(json.loads(text))


# ---------------------------------------------------------------------------------------------
# writing


def _git(folder: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout


def _git_commit(folder: Path) -> str | None:
    """The commit of ``folder``'s checkout; an :class:`ArchiveError` if its ``src/`` has
    uncommitted changes to tracked files (the units may then be another code's than the
    commit's, and the header would say otherwise)."""
    commit = (_git(folder, "rev-parse", "HEAD") or "").strip() or None
    if commit is None:
        return None
    changed = _git(folder, "status", "--porcelain", "--untracked-files=no", "--", ":/src")
    if changed and changed.strip():
        files = ", ".join(line[3:] for line in changed.splitlines()[:5])
        raise ArchiveError(
            f"{folder}: its checkout has uncommitted changes to the code ({files}), so its "
            f"units may not be those of commit {commit[:12]}: commit them first, or pass the "
            "commit of the code that computed the units (--commit)."
        )
    return commit


def _full_commit(folder: Path, commit: str) -> str:
    """``commit`` as the full hash when ``folder``'s repository knows it (an abbreviation such
    as the 7 characters of an archive file's name), else as given."""
    full = _git(folder, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    return full.strip() if full and full.strip() else commit


def archive_cache(
    cache_dir: str | os.PathLike,
    target: str | os.PathLike,
    *,
    commit: str | None = None,
    note: str = "",
) -> dict[str, int]:
    """Add every entry of a unit cache that the target's folder does not hold yet to the
    archive file ``target`` (created, or rewritten with the new lines after its own).

    Every entry is encoded, decoded and compared with the original before anything is
    written; an entry that would not read back identical raises :class:`ArchiveError` naming
    it, and the target is left as it was. ``commit`` (default: the git commit of
    ``cache_dir``'s checkout, which must have no uncommitted change to ``src/``) goes in the
    header: the code that computed the units, which is where a run resumed in a later session
    should run if the code has changed since. A file
    holds the units of one commit: adding units of another commit to it is an error (write
    them to a new file).

    Returns the counts ``{"added", "already", "unreadable"}``.
    """
    cache_dir, target = Path(cache_dir), Path(target)
    if not target.name.endswith(SUFFIXES):
        raise ArchiveError(f"{target}: an archive file ends in .jsonl.gz (or .jsonl).")
    if not cache_dir.is_dir():
        raise ArchiveError(f"{cache_dir}: no such unit cache folder.")
    import joblib

    commit = _full_commit(cache_dir, commit) if commit else _git_commit(cache_dir)
    old = []
    if target.exists():
        with _open_lines(target) as f:
            old = f.read().splitlines()
    if old:
        header = json.loads(old[0])
        if header.get("commit") != commit:
            raise ArchiveError(
                f"{target} holds units of commit {header.get('commit')}, not {commit}: archive "
                "them to a new file."
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    known = set(Archive(target.parent).keys())
    lines, counts = [], {"added": 0, "already": 0, "unreadable": 0}
    for path in sorted(cache_dir.glob("*.joblib")):
        key = path.stem
        if key in known:
            counts["already"] += 1
            continue
        try:
            value = joblib.load(path)
        except Exception as exc:  # noqa: BLE001 - a damaged entry is left out, as the engine does
            logger.warning("%s unreadable (%s): not archived.", path.name, exc)
            counts["unreadable"] += 1
            continue
        entry = encode(value, where=key)
        try:
            text = json.dumps({"key": key, "entry": entry}, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise ArchiveError(f"{key}: {exc}; nothing written.") from exc
        back = decode(json.loads(text)["entry"])
        expected = UnitResult(value.rows, value.extras) if isinstance(value, UnitResult) else value
        if not same(expected, back):
            raise ArchiveError(f"{key}: the entry does not read back identical; nothing written.")
        lines.append(text)
        counts["added"] += 1
    if not lines:
        return counts
    if old and header.get("archive") != FORMAT:  # the new lines may need this format
        old[0] = json.dumps({**header, "archive": FORMAT})
    if not old:
        header = {
            "archive": FORMAT,
            "commit": commit,
            "written": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "note": note,
        }
        old = [json.dumps(header)]
    _write_lines(target, old + lines)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m multiview_lab.protocol.archive",
        description="Add a unit cache's finished units to an archive file (JSON lines) that "
        "git can keep; the engine reads the archive's folder as execution.archive_dir.",
    )
    parser.add_argument("cache_dir", type=Path, help="the unit cache (execution.cache_dir)")
    parser.add_argument("target", type=Path, help="the archive file, e.g. results/units/x.jsonl.gz")
    parser.add_argument("--commit", help="the commit of the code (default: the cache's checkout)")
    parser.add_argument("--note", default="", help="a line for the header, e.g. the run")
    args = parser.parse_args(argv)
    try:
        counts = archive_cache(args.cache_dir, args.target, commit=args.commit, note=args.note)
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{args.target}: {counts['added']} entries added, {counts['already']} already archived, "
        f"{counts['unreadable']} unreadable."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
