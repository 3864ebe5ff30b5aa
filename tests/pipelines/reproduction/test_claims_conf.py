"""The claims of ``conf/base/parameters_reproduction.yml`` as conf: each one well formed, on a
declared table of its own paper's pipeline, and checkable (no ClaimError) on a synthetic results
table that has every key column varying: a claim that averages over a key it does not name fails
here rather than in a paper run."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from multiview_lab.reproduction.claims import (
    NOT_RUN,
    VERDICTS,
    check_claim_spec,
    evaluate_claims,
)
from tests.conftest import PROJECT_ROOT

CONF = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters_reproduction.yml").read_text())[
    "reproduction"
]
PAPERS = CONF["papers"]
TABLES = CONF["tables"]
# MLflow param names (the figure keys are logged as reproduction.papers.<p>.figures.<key>)
_MLFLOW_NAME = re.compile(r"[\w\-. :/]+", re.ASCII)


def _claims(kind_not: str | None = "reference"):
    return [
        pytest.param(paper, c, id=f"{paper}/{c['id']}")
        for paper, spec in PAPERS.items()
        for c in spec["claims"]
        if c.get("kind") != kind_not
    ]


@pytest.mark.parametrize(("paper", "claim"), _claims(kind_not=None))
def test_claim_is_well_formed_on_a_declared_table_of_its_pipeline(paper, claim):
    check_claim_spec(claim)
    assert claim["table"] in TABLES, f"{claim['table']} is not in reproduction.tables"
    assert claim["table"].partition(".")[0] == PAPERS[paper]["pipeline"]
    if claim["kind"] != "reference":  # a reference block carries its own source
        assert claim.get("source"), "every claim cites the paper's table / figure / section"
    if claim["kind"] == "value":
        assert float(claim["tolerance"]) > 0
    figure = claim.get("figure")
    if figure:
        assert not figure.startswith(("/", "data/", "../")), "relative to data/08_reporting"


@pytest.mark.parametrize("paper", list(PAPERS))
def test_paper_entry(paper):
    spec = PAPERS[paper]
    assert spec.get("title") and spec.get("reference") and spec.get("pipeline")
    ids = [c["id"] for c in spec["claims"]]
    assert len(ids) == len(set(ids)), "claim ids are unique within a paper"
    for name, path in (spec.get("figures") or {}).items():
        assert _MLFLOW_NAME.fullmatch(name), f"figure key {name!r} is not a valid MLflow name"
        assert not path.startswith(("/", "data/", "../"))


def _columns_used(claim) -> set[str]:
    used = {claim[k] for k in ("metric", "along") if k in claim}
    for side in ("lhs", "rhs"):
        if isinstance(claim.get(side), str):
            used |= set(re.findall(r"[A-Za-z_]\w*", claim[side])) - {"abs"}
    return used | set(claim.get("where") or {})


def _synthetic_tables(seed: int = 0) -> dict[str, pd.DataFrame]:
    """Per declared table: the cartesian product of its key columns (the values the claims
    name, else two defaults) with random metrics; non-key ``where`` columns cycle through the
    values named."""
    rng = np.random.default_rng(seed)
    claims = [c for spec in PAPERS.values() for c in spec["claims"] if c["kind"] != "reference"]
    out = {}
    for table, keys in TABLES.items():
        on = [c for c in claims if c["table"] == table]
        values: dict[str, list] = {k: [] for k in keys}
        fixed: dict[str, list] = {}
        for c in on:
            for col, v in (c.get("where") or {}).items():
                vs = v if isinstance(v, list) else [v]
                if col in values:
                    values[col] += [x for x in vs if x not in values[col]]
                else:
                    fixed.setdefault(col, [])
                    fixed[col] += [x for x in vs if x not in fixed[col]]
            if "method" in values:
                for m in [c.get("method"), *(c.get("than") or []), *(c.get("among") or [])]:
                    if m is not None and m not in values["method"]:
                        values["method"].append(m)
        for vs in values.values():
            if len(vs) < 2:
                vs += [x for x in (0, 1) if x not in vs][: 2 - len(vs)]
        frame = pd.DataFrame(list(itertools.product(*values.values())), columns=list(values))
        extra = set().union(*(_columns_used(c) for c in on)) - set(keys) if on else set()
        for col in sorted(extra):
            if col in fixed:
                frame[col] = np.resize(np.array(fixed[col], dtype=object), len(frame))
            else:
                frame[col] = rng.uniform(0.1, 1.0, len(frame))
        out[table] = frame
    return out


def test_every_claim_is_checkable_on_tables_where_every_key_varies():
    claims = {p: [c for c in s["claims"] if c["kind"] != "reference"] for p, s in PAPERS.items()}
    verdicts = evaluate_claims(claims, _synthetic_tables(), TABLES)  # a ClaimError fails here
    assert verdicts["verdict"].isin(VERDICTS).all()
    not_run = verdicts[verdicts["verdict"] == NOT_RUN]
    assert not_run.empty, not_run[["paper", "id", "detail"]].to_string()


def test_a_papers_protocol_note_is_shown_for_its_env_only():
    """``protocol_notes`` (env -> text) says, beside the results' env, what that env's
    protocol cuts from the paper's (gbc's paper env)."""
    from multiview_lab.pipelines.reproduction.nodes import _provenance

    notes = PAPERS["gbc"]["protocol_notes"]
    assert set(notes) == {"base", "paper"}
    info = {"env": "paper", "git_commit": "abc", "finished_at": "now"}
    text = _provenance(info, notes)
    assert "env **paper**" in text and "this env's protocol: the paper's splits" in text
    assert "once per data set, setting and size on split 0" in text
    assert "this env's protocol" not in _provenance({**info, "env": "smoke"}, notes)


def test_a_run_with_runtime_params_says_so():
    """A paper env run with ``--params`` (e.g. PB-MVBoost's Table 1 alone, n = 500) is not the
    env's own protocol: the provenance line names every override."""
    from multiview_lab.pipelines.reproduction.nodes import _provenance

    info = {"env": "paper", "git_commit": "abc", "finished_at": "now"}
    assert "--params" not in _provenance(info)
    given = {"pbmvboost": {"protocol": {"n_train": [500], "n_draws": 20}}}
    text = _provenance({**info, "runtime_params": given})
    assert "with `--params` pbmvboost.protocol.n_train=[500], pbmvboost.protocol.n_draws=20" in text
    assert "not the env's own protocol" in text
    from multiview_lab.pipelines.reproduction.nodes import _env_label

    assert _env_label(info) == "paper" and _env_label(None) == "unknown"
    assert _env_label({**info, "runtime_params": given}) == "paper (with --params)"
    assert _env_label({**info, "partial": {"node_names": ["x"]}}) == "paper (partial)"
    # execution settings (here the unit cache of another worktree) change how a run ran, not
    # what it computed: named, but not marked as another protocol
    cache = {"execution": {"cache_dir": "/x/unit_cache", "n_jobs": 1}}
    text = _provenance({**info, "runtime_params": cache})
    assert "execution.cache_dir=/x/unit_cache, execution.n_jobs=1 (how it ran" in text
    assert "not the env's own protocol" not in text
    assert _env_label({**info, "runtime_params": cache}) == "paper"
    both = _provenance({**info, "runtime_params": {**given, **cache}})
    assert "pbmvboost.protocol.n_draws=20 (not the env's own protocol)" in both
    assert "execution.n_jobs=1 (how it ran" in both
    assert _env_label({**info, "runtime_params": {**given, **cache}}) == "paper (with --params)"
