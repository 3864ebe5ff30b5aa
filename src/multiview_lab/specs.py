"""Estimators named in configuration: a method's ``{estimator: name, params: {...}}`` entry.

* :func:`resolve_estimator_class` finds the class of a name (a public name of
  :mod:`multiview_lab.estimators`, or a dotted path such as ``sklearn.svm.LinearSVC``);
* :func:`build_estimator` instantiates a spec, nested estimator specs included;
* :func:`estimator_modules` lists the project modules a spec's estimators are defined in, for
  the unit cache's code key (:mod:`multiview_lab.protocol.cache`).

This is the only project code between a method's conf entry and its estimator that a unit
runs, so it is kept apart from the reporting and caching helpers: editing those does not
change the code key of any cached unit.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any


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
