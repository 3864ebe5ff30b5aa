"""MLflow hooks: a run interrupted by SIGTERM or Ctrl-C ends KILLED, not RUNNING or FINISHED,
and so does the nested run of every method whose training node had finished.

Real processes and a real SQLite store: the child starts a run through the project hooks and
is then interrupted the way a user or a scheduler would interrupt ``kedro run``.
"""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import mlflow
import pytest

START_RUN = textwrap.dedent(
    """
    from pathlib import Path
    from multiview_lab.hooks import MlflowHooks

    class Pipeline:  # what the hooks read of a pipeline
        nodes = []
        def inputs(self):
            return set()

    def start_run(name):
        hooks = MlflowHooks()
        hooks._project_path = Path.cwd()
        hooks.before_pipeline_run({"pipeline_names": [name], "run_id": "x"}, Pipeline(), {})
        return hooks
    """
)
"""The preamble of the child processes: ``start_run(name)`` opens a run through the hooks."""

CHILD = START_RUN + textwrap.dedent(
    """
    import functools, os, signal, sys, time
    import pandas as pd
    from kedro.pipeline import Node
    from multiview_lab.pipelines.training.nodes import train_method

    hooks = start_run("interrupted")
    if sys.argv[2] == "with-method":  # a method's training node finished: its run is open
        func = functools.update_wrapper(
            functools.partial(train_method, method="A", pipeline="p", make_task=None),
            train_method,
        )
        inputs = ["p.datasets", "p.splits", "params:p.methods", "params:p.protocol", "params:x"]
        node = Node(func, inputs, "p.a.units", name="train", namespace="p.a")
        units = {"method": "A", "results": pd.DataFrame({"accuracy": [1.0]}), "models": {}}
        hooks.after_node_run(node=node, inputs={}, outputs={"p.a.units": units})
    print("started", flush=True)
    if sys.argv[1] == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        raise KeyboardInterrupt
    time.sleep(30)
    """
)


# SIGTERM with a method's nested run open, Ctrl-C with the parent alone
@pytest.mark.parametrize(("how", "runs"), [("sigterm", "with-method"), ("keyboard", "parent")])
def test_interrupted_run_is_marked_killed(tmp_path, how, runs):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, how, runs],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "started" in proc.stdout, proc.stderr
    # SIGTERM exits with 128 + 15; an uncaught KeyboardInterrupt re-raises SIGINT (-2)
    assert proc.returncode == (128 + signal.SIGTERM if how == "sigterm" else -signal.SIGINT)
    mlflow.set_tracking_uri(uri)
    found = mlflow.search_runs(experiment_names=["interrupted"], output_format="list")
    # the parent, and the run of the method whose training node had finished
    assert sorted(r.info.run_name == "A" for r in found) == (
        [False, True] if runs == "with-method" else [False]
    )
    assert [r.info.status for r in found] == ["KILLED"] * len(found)
    assert all("interrupted" in r.data.tags["error"] for r in found)
    assert all(r.info.end_time is not None for r in found)


def test_metric_series_are_logged_at_their_steps(tmp_path):
    from multiview_lab.hooks import _log_metrics

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    mlflow.set_experiment("series")
    with mlflow.start_run() as run:
        _log_metrics(mlflow, {"fig/A/acc": [[150, 0.9], [500, 0.95], [200, 0.92]], "plain": 0.5})
    client = mlflow.MlflowClient()
    history = client.get_metric_history(run.info.run_id, "fig/A/acc")
    assert sorted((m.step, m.value) for m in history) == [(150, 0.9), (200, 0.92), (500, 0.95)]
    assert client.get_run(run.info.run_id).data.metrics == {"fig/A/acc": 0.95, "plain": 0.5}


def test_provenance_names_the_runner_class_and_the_commit(tmp_path):
    from multiview_lab.hooks import _git_state, _runner_name

    assert _runner_name("<kedro.runner.sequential_runner.SequentialRunner object at 0x1>") == (
        "SequentialRunner"
    )
    assert _git_state(tmp_path) == {"git.commit": "unknown (not a git checkout)"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f.txt").write_text("a")
    subprocess.run([*git, "-C", str(tmp_path), "add", "f.txt"], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "c"], check=True)
    state = _git_state(tmp_path)
    assert len(state["git.commit"]) == 40 and state["git.dirty"] == "false"
    (tmp_path / "f.txt").write_text("b")
    assert _git_state(tmp_path)["git.dirty"] == "true"


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import mlflow
    from multiview_lab.hooks import open_tracking_store

    go = Path(sys.argv[2])
    while not go.exists():  # start together, so that the initialisations overlap
        time.sleep(0.005)
    open_tracking_store(mlflow, "sqlite:///" + sys.argv[1])
    print("ok", flush=True)
    """
)


def test_runs_started_together_on_a_fresh_store_all_succeed(tmp_path):
    """Two ``kedro run`` started together on a fresh project both create MLflow's SQLite
    tables; unserialised, most of them fail in alembic's migration (measured: 11 of 15
    processes, 3 at a time). Three processes released at once must all open the store."""
    db, go = tmp_path / "mlflow.db", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(db), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0 and out.strip() == "ok", err[-2000:]
    mlflow.set_tracking_uri(f"sqlite:///{db}")
    assert mlflow.get_experiment_by_name("Default") is not None


KILLED_CHILD = START_RUN + textwrap.dedent(
    """
    import logging, os, signal, sys

    logging.basicConfig(level=logging.INFO)
    hooks = start_run(sys.argv[1])
    print("started", flush=True)
    if sys.argv[2] == "sigkill":  # no handler runs: the run stays RUNNING
        os.kill(os.getpid(), signal.SIGKILL)
    import mlflow
    if sys.argv[2] == "wait":  # alive until the test kills it
        sys.stdin.read()
    hooks._end_run(mlflow, "FINISHED")
    """
)


def _child(tmp_path, env, *args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_a_run_left_running_by_a_killed_process_is_marked_killed_by_the_next(tmp_path):
    """SIGKILL (or a machine stop) runs no exit handler: the run stays RUNNING until the next
    run on the machine finds its process gone. A run whose process is alive is left alone."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    killed = _child(tmp_path, env, "killed", "sigkill")
    out, err = killed.communicate(timeout=120)
    assert killed.returncode == -signal.SIGKILL and "started" in out, err[-2000:]
    mlflow.set_tracking_uri(uri)

    def run_of(experiment):
        (run,) = mlflow.search_runs(experiment_names=[experiment], output_format="list")
        return run

    assert run_of("killed").info.status == "RUNNING"
    alive = _child(tmp_path, env, "alive", "wait")  # the next run
    assert alive.stdout.readline().strip() == "started"
    run = run_of("killed")
    assert run.info.status == "KILLED" and run.info.end_time is not None
    assert f"pid {killed.pid} " in run.data.tags["error"]
    # a run started while another is alive leaves it alone
    later = _child(tmp_path, env, "later", "finish")
    out, err = later.communicate(timeout=120)
    assert later.returncode == 0, err[-2000:]
    assert "marked KILLED" not in err
    assert run_of("alive").info.status == "RUNNING"
    assert run_of("later").info.status == "FINISHED"
    out, err = alive.communicate(input="", timeout=120)
    assert alive.returncode == 0 and "was left RUNNING" in err  # it said what it did
    assert run_of("alive").info.status == "FINISHED"


def test_orphaned_runs_are_told_by_boot_id_and_pid_reuse(tmp_path):
    """The process of a run is gone after a reboot (another boot id) and when its pid now
    names a process started after the run; another host's runs are not judged."""
    import platform

    from multiview_lab.hooks import _boot_id, orphaned, process_tags

    now_ms = int(__import__("time").time() * 1000)
    mine = process_tags()  # this (alive) process, started before now
    assert orphaned(mine, now_ms) is None
    if _boot_id():
        assert "boot" in orphaned({**mine, "kedro.boot_id": "an-earlier-boot"}, now_ms)
    newer = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        reused = {**mine, "kedro.pid": str(newer.pid)}
        if Path("/proc").is_dir():  # a run started 60 s before its pid's process
            assert "newer process" in orphaned(reused, now_ms - 60_000)
        assert orphaned(reused, now_ms + 60_000) is None
    finally:
        newer.communicate(input="", timeout=60)
    assert "no longer exists" in orphaned({**mine, "kedro.pid": str(newer.pid)}, now_ms)
    assert orphaned({**mine, "kedro.host": platform.node() + "-other"}, now_ms) is None


def test_only_a_store_on_this_machines_disk_has_its_orphans_closed():
    from multiview_lab.hooks import local_store

    assert local_store("sqlite:////tmp/mlflow.db") and local_store("file:///tmp/mlruns")
    assert local_store("mlruns") and local_store("/abs/mlruns")
    assert not local_store("http://tracking:5000") and not local_store("databricks://x")
    assert not local_store("postgresql://u@host/db")


def test_a_run_relabels_the_pipelines_whose_results_or_reports_it_writes(tmp_path):
    """run_info.json follows the files the reproduction reads: a run that rewrote one results
    table (07_model_output, e.g. ``--to-outputs=miml.reuters_timing``) or a report relabels
    its pipeline; one that prepared data only (05_model_input) or wrote outside the project
    does not."""
    from kedro.io import DataCatalog, MemoryDataset
    from kedro.pipeline import Node, Pipeline
    from kedro_datasets.pandas import CSVDataset

    from multiview_lab.hooks import written_pipelines

    data = tmp_path / "data"

    def csv(path):
        return CSVDataset(filepath=str(path))

    catalog = DataCatalog(
        {
            "timing": csv(data / "07_model_output/miml/reuters_timing.csv"),
            "table": csv(data / "08_reporting/memd/summary.csv"),
            "splits": csv(data / "05_model_input/gbc/splits.csv"),
            "outside": csv(tmp_path.parent / "elsewhere/08_reporting/mvfs/x.csv"),
            "loose": csv(data / "07_model_output/x.csv"),
            "memory": MemoryDataset(),
        }
    )

    def pipe(*outputs):
        return Pipeline([Node(lambda: [1] * len(outputs), None, list(outputs), name="n")])

    assert written_pipelines(pipe("timing", "memory"), catalog, tmp_path) == {"miml"}
    assert written_pipelines(pipe("table", "splits"), catalog, tmp_path) == {"memd"}
    assert written_pipelines(pipe("splits", "outside", "loose"), catalog, tmp_path) == set()


def test_run_note_says_what_a_paper_env_runs_of_each_pipelines_protocol():
    """The run's note (MLflow's description) is the pipeline's text, then the env's, or the
    pipeline's own note for that env: gbc's paper env says it runs a stated part of the paper's
    protocol; a pipeline whose paper env is the whole protocol, or another env, does not."""
    import yaml

    from multiview_lab.hooks import MlflowHooks
    from multiview_lab.pipeline_registry import register_pipelines

    root = Path(__file__).resolve().parents[1]
    hooks = MlflowHooks()
    hooks._config = yaml.safe_load((root / "conf/base/mlflow.yml").read_text())
    descriptions = hooks._config["descriptions"]
    gbc_paper = hooks._run_description(["gbc"], "paper")
    assert gbc_paper.startswith("Gradient Boosting Consensus")
    paragraphs = gbc_paper.split("\n\n")
    assert len(paragraphs) == 2 and paragraphs[1].startswith("A stated part of the paper's")
    assert "Self-GBDT on 1" in paragraphs[1]
    pbmvboost_paper = hooks._run_description(["pbmvboost"], "paper").split("\n\n")
    assert pbmvboost_paper[1] == descriptions["envs"]["paper"] and len(pbmvboost_paper) == 2
    assert "stated part" not in hooks._run_description(["gbc"], "base")
    both = hooks._run_description(["gbc", "pbmvboost", "memd"], "paper").split("\n\n")
    assert both[3:] == [paragraphs[1], descriptions["envs"]["paper"]]  # each note once
    assert "NOT the paper's full protocol" in hooks._run_description(["gbc"], "base")
    # every pipeline and env named exists, so that a typo cannot silently drop a note
    envs = {p.name for p in (root / "conf").iterdir() if p.is_dir()}
    for pipeline, by_env in descriptions["env_by_pipeline"].items():
        assert pipeline in register_pipelines() and set(by_env) <= envs


class _Foreign:
    """A class outside the packages the hooks let skops trust."""


def test_trusted_types_are_skops_own_and_listed_once_per_type_set(monkeypatch):
    """The types skops must trust are the ones skops lists; a model whose objects have the types
    of one already listed takes that list without a second skops dump; a model of other types,
    or holding a foreign one, gets its own (or is refused)."""
    import numpy as np
    import skops.io as sio
    from sklearn.tree import DecisionTreeClassifier

    from multiview_lab.estimators import PBMVBoostClassifier
    from multiview_lab.hooks import _reachable_types, _trusted_types

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    views = [rng.normal(size=(60, 3)) + y[:, None] for _ in range(2)]
    first = PBMVBoostClassifier(n_estimators=3, random_state=0).fit(views, y)
    second = PBMVBoostClassifier(n_estimators=5, random_state=1).fit(views, 1 - y)
    tree = DecisionTreeClassifier(random_state=0).fit(views[0], y)
    assert _reachable_types(first) == _reachable_types(second) != _reachable_types(tree)

    dumps = []
    real_dumps = sio.dumps
    monkeypatch.setattr(sio, "dumps", lambda obj: dumps.append(obj) or real_dumps(obj))
    known = {}
    for model in (first, second, tree):
        listed = _trusted_types(model, known)
        assert sorted(listed) == sorted(sio.get_untrusted_types(data=real_dumps(model)))
    assert [type(m) for m in dumps] == [PBMVBoostClassifier, DecisionTreeClassifier]
    assert len(known) == 2

    tree.foreign_ = _Foreign()
    with pytest.raises(ValueError, match="untrusted types.*_Foreign"):
        _trusted_types(tree, known)
