"""What a researcher reads in the console of ``kedro run``: progress and the run's summary, no
dataset load/save chatter, no warning a user cannot act on."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_project_copy

pytestmark = pytest.mark.slow


def test_a_smoke_run_ends_with_its_summary_and_no_noise(tmp_path):
    project = make_project_copy(tmp_path / "p", ["mnist.npz"])
    kedro = Path(sys.executable).with_name("kedro")
    env = {
        **os.environ,
        "KEDRO_DISABLE_TELEMETRY": "1",
        "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}",
        "COLUMNS": "200",
    }
    proc = subprocess.run(
        [str(kedro), "run", "--pipelines=pbmvboost", "--env=smoke",
         "--params=pbmvboost.protocol.tasks=[0]"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    # one line of text: Rich wraps a long message and puts its source (hooks.py:836) at the
    # end of the first screen line, inside the message
    text = re.sub(r"\s+", " ", re.sub(r"\s\w+\.py:\d+\s", " ", out))
    assert "Run finished. Reports: data/08_reporting/pbmvboost/." in text
    assert re.search(r"MLflow run [0-9a-f]{32} \(experiment 'pbmvboost'\)", text)
    assert "make mlflow-ui" in text
    assert re.search(
        r"\(experiment 'pbmvboost'\), with a nested run for each of its 11 methods", text
    )
    # the smoke run (n = 100) has nothing to compare with the paper's n = 500
    assert "nothing compared" in text and "differ beyond" not in text
    for noise in ("Loading data from", "Saving data to", "register_new_resolver",
                  "DeprecationWarning", "deprecated", "No result for",
                  "No typed parameter",  # Kedro's validator, on every run
                  "one-vs-all: class",  # an estimator's own fit lines (n_jobs = 1 here)
                  "Logged MLflow model"):  # fmt: skip
        assert noise not in text, noise
    # each method: its start and its summary, no line per quick unit; its models in one line
    assert re.search(r"pbmvboost PB-MVBoost: \d+ units \(1 method\), 0 in the cache", text)
    assert re.search(r"pbmvboost PB-MVBoost: \d+ units done \(0 from the cache\)", text)
    assert not re.search(r"pbmvboost \S+: \d+/\d+ units", text)
    assert re.search(r"MLflow: \d+ models? of PB-MVBoost logged in its run", text)


def test_log_messages_print_as_written(capsys):
    """Kedro's RichHandler reads "[word ...]" in a message as Rich markup and drops it (a
    warning's own text, the tally's note); conf/logging.yml turns markup off."""
    import logging
    import pydoc

    import yaml

    conf = Path(__file__).parents[1] / "conf" / "logging.yml"
    config = dict(yaml.safe_load(conf.read_text())["handlers"]["rich"])
    config["rich_tracebacks"] = False
    handler = pydoc.locate(config.pop("class"))(**config)
    logger = logging.getLogger("tests.console.markup")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("x %s [further units]", "[b]y[/b]")  # short: no wrapping at 80
    finally:
        logger.removeHandler(handler)
        logging.captureWarnings(False)  # the handler turned it on
    out = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "x [b]y[/b] [further units]" in out
