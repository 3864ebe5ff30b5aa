"""Names of finished units in the unit cache of :mod:`multiview_lab.protocol`.

:func:`unit_key` names a unit's result by everything it depends on: the unit, its data
(:func:`array_fingerprint`) and the code it runs (:func:`code_fingerprint` of the modules of
:func:`code_closure`). An interrupted reproduction therefore resumes where it stopped and never
reuses a result computed by other code or on other data. This module is run by the engine, not
by a unit: it is in no unit's code closure, so editing it re-keys nothing.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np


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
