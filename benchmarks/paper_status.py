"""Where a long run stands: per method, the units done, waiting and left, and what they cost.

A paper protocol runs for hours, over several sessions, resuming from its unit cache
(``execution.cache_dir``) and from the unit archive kept in the repository
(``execution.archive_dir``, ``results/units``). This script asks the engine
(:func:`multiview_lab.protocol.cache_status`) what ``kedro run --pipelines=NAME --env=ENV``
would find in a project's cache and archive, without running anything: it prepares the
pipeline's data in a temporary copy of this checkout's conf and raw data, keys every unit as
the run does, and looks each one up in ``--project``'s cache and archive. The
preparation runs with ``execution.cache_only``: an engine stage upstream of training (MVFS's
λ CV) is read from the run's cache, and a pipeline whose upstream stage is not complete yet
is reported as such instead of being computed.

Per method it prints the units (cached / waiting for their group's shared inner CV / to run),
the shared CVs (cached / total), the measured CPU-hours of what is cached (the ``cpu_time_s``
every unit records) and a projection of what is left: per cost group, the mean measured cost
of its cached units (and CVs) times its units (and CVs) left; a group with none cached is
costed from the method's groups of other sizes (:class:`multiview_lab.protocol.costs.CostModel`).

Usage (from the checkout the run uses, so the code keys match)::

    .venv/bin/python benchmarks/paper_status.py --project /path/to/run --pipelines gbc [--env paper]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")

from _stages import REPETITION_KEYS, prepare_stages, stage_units  # noqa: E402

from multiview_lab.formatting import count  # noqa: E402
from multiview_lab.protocol import cache_status  # noqa: E402
from multiview_lab.protocol.costs import CostModel  # noqa: E402
from multiview_lab.protocol.engine import cost_group  # noqa: E402
from multiview_lab.protocol.sharing import apply_protocol_sharing  # noqa: E402


def stage_status(stage: dict, store: dict) -> pd.DataFrame:
    """:func:`cache_status` of every enabled method of one training stage, method by method
    as the training nodes run them (so every key matches the run's), in the run's cache and
    archive (``store``: ``cache_dir`` and ``archive_dir``)."""
    execution = {**stage["execution"], **store, "cache_only": False}
    protocol = stage["protocol"]
    frames = []
    # the enabled methods this stage's task runs (the registry may hold others), in order
    names = list(dict.fromkeys(method.name for _, method, _ in stage_units(stage)[0]))
    for name in names:
        frame = cache_status(
            stage["make_task"](protocol),
            stage["datasets"],
            stage["splits"],
            {name: apply_protocol_sharing(stage["methods"][name], protocol)},
            execution=execution,
            keep_models=protocol.get("keep_models"),
            label=f"{stage['label']} {name}",
        )
        frames.append(frame.assign(stage_name=stage["label"]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _projected_s(frame: pd.DataFrame, group_keys: list[str]) -> float:
    """CPU seconds left: per cost group, its units left times its cached units' mean measured
    cost; a group with none measured from its neighbours in size, or at the method's mean
    (:class:`~multiview_lab.protocol.costs.CostModel`)."""
    done = (frame["status"] == "cached") & frame["cpu_time_s"].notna()
    if not done.any():
        return float("nan")
    keys = [k for k in group_keys if k in frame.columns]
    groups = [cost_group(dict(zip(keys, row, strict=True)))  # the engine's groups, as its ETA
              for row in frame[keys].itertuples(index=False)]  # fmt: skip
    pairs = zip(groups, frame["cpu_time_s"], done, strict=True)
    model = CostModel((g, c) for g, c, d in pairs if d)
    left = Counter(g for g, s in zip(groups, frame["status"], strict=True) if s != "cached")
    return model.projected(left)


def _projected_cvs_s(cvs: pd.DataFrame, group_keys: list[str]) -> float:
    """CPU seconds left of the shared CVs: a CV some of whose grid points are cached at the
    mean cost of those points; the others as :func:`_projected_s` projects units."""
    if "grid_points" not in cvs:
        return _projected_s(cvs, group_keys)
    begun = (cvs["status"] != "cached") & (cvs["grid_points_cached"] > 0) & (cvs["cpu_time_s"] > 0)
    part = cvs[begun]
    per_point = part["cpu_time_s"] / part["grid_points_cached"]
    total = float((per_point * (part["grid_points"] - part["grid_points_cached"])).sum())
    rest = cvs[~begun]
    if (rest["status"] != "cached").any():
        total += _projected_s(rest, group_keys)
    return total


def _partial_s(cvs: pd.DataFrame) -> float:
    """CPU seconds of the cached grid points of the shared CVs still to run."""
    left = cvs[cvs["status"] != "cached"]
    return float(left["cpu_time_s"].fillna(0.0).sum()) if len(left) else 0.0


def _points(cvs: pd.DataFrame) -> str:
    """``cached/total`` grid points of the shared CVs still to run ("" when there are none)."""
    left = cvs[cvs["status"] != "cached"]
    if not len(left) or "grid_points" not in left:
        return ""
    return f"{int(left['grid_points_cached'].sum())}/{int(left['grid_points'].sum())}"


def summarise(status: pd.DataFrame) -> pd.DataFrame:
    """One row per (stage, method): counts, measured and projected CPU-hours."""
    rows = []
    for (stage, method), frame in status.groupby(["stage_name", "method"], sort=False):
        units = frame[frame["stage"] == "unit"]
        cvs = frame[frame["stage"] == "shared CV"]
        group_keys = [
            c
            for c in units.columns
            if c not in REPETITION_KEYS | {"method", "seed", "stage", "status", "cpu_time_s",
                                           "stage_name", "grid_points", "grid_points_cached"}
        ]  # fmt: skip
        counts = units["status"].value_counts()
        done = frame[frame["status"] == "cached"]
        left_s = _projected_s(units, group_keys) + (
            _projected_cvs_s(cvs, group_keys) if len(cvs) else 0.0
        )
        rows.append(
            {
                "stage": stage,
                "method": method,
                "units": len(units),
                "cached": int(counts.get("cached", 0)),
                "waiting": int(counts.get("waiting", 0)),
                "to_run": int(counts.get("to run", 0)),
                "shared_cvs": f"{int((cvs['status'] == 'cached').sum())}/{len(cvs)}"
                if len(cvs)
                else "",
                # the grid points already cached of the shared CVs still to run
                "cv_points": _points(cvs),
                "unmeasured": int(done["cpu_time_s"].isna().sum()),
                # with the grid points already scored of the shared CVs still to run
                "done_cpu_h": (float(done["cpu_time_s"].sum()) + _partial_s(cvs)) / 3600,
                "left_cpu_h": left_s / 3600,
            }
        )
    return pd.DataFrame(rows)


def _store(project: Path, env: str) -> dict[str, str | None]:
    """The run's unit cache and archive: its conf's ``execution.cache_dir`` and
    ``execution.archive_dir`` in ``env``, under ``project``."""
    from kedro.config import OmegaConfigLoader

    loader = OmegaConfigLoader(conf_source=str(project / "conf"), base_env="base",
                               default_run_env=env)  # fmt: skip
    execution = loader["parameters"].get("execution") or {}
    store: dict[str, str | None] = {}
    for key in ("cache_dir", "archive_dir"):
        folder = execution.get(key)
        store[key] = str(project / folder) if folder else None  # an absolute folder stays
    if not any(store.values()):
        raise SystemExit(
            f"{project} ({env}): neither execution.cache_dir nor archive_dir is set: there is "
            "no cache."
        )
    return store


def _incomplete(exc: BaseException):
    """The :class:`CacheIncompleteError` behind ``exc`` (Kedro may wrap it), or None."""
    from multiview_lab.protocol import CacheIncompleteError

    while exc is not None:
        if isinstance(exc, CacheIncompleteError):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True, help="the run's project folder")
    parser.add_argument("--pipelines", nargs="+", required=True)
    parser.add_argument("--env", default="paper")
    parser.add_argument("--out", type=Path, default=None, help="write the per-unit table (csv)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="paper_status_"))
    quiet = tmp / "logging.yml"
    quiet.write_text(  # the preparation's own logs are not this script's output: warnings only
        "version: 1\ndisable_existing_loggers: False\nhandlers:\n  console:\n"
        "    class: logging.StreamHandler\nroot:\n  handlers: [console]\n  level: WARNING\n"
        "loggers:\n  kedro: {level: CRITICAL}\n  kedro_viz: {level: ERROR}\n"
        "  multiview_lab: {level: WARNING}\n"
    )
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")  # its store's table creation
    import multiview_lab.settings  # noqa: F401 - its warning filters, before conf is read

    os.environ["KEDRO_LOGGING_CONFIG"] = str(quiet)
    from tests.conftest import make_project_copy

    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp / 'mlflow.db'}"
    raw = [p.name for p in (ROOT / "data" / "01_raw").iterdir() if p.name != "README.md"]
    frames = []
    try:
        copy = make_project_copy(tmp / "project", raw)
        for name in args.pipelines:
            store = _store(args.project, args.env)
            only = {"execution": {**store, "cache_only": True}}
            try:
                stages = prepare_stages(copy, name, args.env, only)
            except Exception as exc:  # noqa: BLE001 - reported, then the next pipeline
                cause = _incomplete(exc)
                if cause is None:
                    raise
                print(f"{name}: a stage upstream of training is not complete: {cause}")
                continue
            labels = [s["label"] for s in stages]
            for stage in stages:
                # two stages of one registry (GBC's sizes and number-of-sources studies) are
                # told apart by their protocol block
                own = stage["label"] if labels.count(stage["label"]) == 1 else stage["protocol_key"]
                stage["label"] = f"{name}/{own}"
                frames.append(stage_status(stage, store))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    frames = [f for f in frames if len(f)]
    if not frames:
        return
    status = pd.concat(frames, ignore_index=True)
    if args.out:
        status.to_csv(args.out, index=False)
    table = summarise(status)
    fmt = {"float_format": lambda v: f"{v:.3g}", "index": False}
    print(f"\n{args.project} ({args.env} env): cached units and shared CVs, measured CPU-hours")
    print("(done) and a projection from the cached units' cost per group and size (left; ? = none")
    print("measured):")
    shown = table.assign(left_cpu_h=table["left_cpu_h"].map(lambda v: "?" if pd.isna(v) else v))
    print(shown.to_string(**fmt))
    total = table[["units", "cached", "done_cpu_h", "left_cpu_h"]].sum()
    unknown = table[(table["cached"] < table["units"]) & table["left_cpu_h"].isna()]
    print(
        f"\nTotal: {int(total['cached'])}/{int(total['units'])} units cached, "
        f"{total['done_cpu_h']:.2f} CPU-h measured, about {total['left_cpu_h']:.2f} CPU-h left "
        f"(about {total['left_cpu_h'] / 2:.1f} h on 2 cores)"
        + (
            f", not counting {count(len(unknown), 'method')} with nothing measured yet "
            "(benchmarks/bench_paper_cost.py projects those)."
            if len(unknown)
            else "."
        )
    )


if __name__ == "__main__":
    main()
