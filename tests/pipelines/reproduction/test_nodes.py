"""The reproduction report's measured cost of each pipeline's results."""

import pandas as pd
import pytest

from multiview_lab.pipelines.reproduction.nodes import measure_costs, write_report


def _results():
    """Two units of 10 and 20 CPU s with two score rows each (e.g. two feature counts), one
    unit with a shared CV of 100 CPU s on its rows, and one unit cached before the record."""
    rows = []
    for method, seed, fit, cpu, shared in (
        ("A", 1, 0.5, 10.0, None),
        ("A", 2, 0.7, 20.0, 100.0),
        ("B", 1, 0.2, None, None),
    ):
        for k in (10, 20):
            rows.append(
                {"method": method, "seed": seed, "k": k, "fit_time_s": fit, "cpu_time_s": cpu,
                 "shared_cv_cpu_time_s": shared}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _verdicts(**columns):
    """A verdict table with the report's columns: ``columns`` (one list each, ``paper``
    included) and empty text, n = 0 and *not run* elsewhere."""
    rows = len(columns["paper"])
    defaults = {"source": "", "paper_value": "", "ours": "", "n": 0, "verdict": "not run",
                "detail": "", "group": ""}  # fmt: skip
    return pd.DataFrame({**{k: [v] * rows for k, v in defaults.items()}, **columns})


def test_costs_count_each_unit_once_and_each_shared_cv_once():
    shared = _results()
    costs = measure_costs(
        {"p.results": ["method", "seed", "k"], "p.other": ["split"], "q.results": ["x"]},
        **{"p.results": shared, "p.other": pd.DataFrame({"split": [0]}), "q.results": None},
    )
    assert costs.to_dict("records") == [
        {
            "pipeline": "p",
            "table": "p.results",
            "units": 3,
            "measured": 2,
            # 10 + 20 + the shared CV's 100 counted once, not once per score row
            "cpu_hours": pytest.approx((10 + 20 + 100) / 3600),
        }
    ]


def test_a_second_reading_of_a_units_fit_is_not_counted_again():
    # PB-MVBoost-final-rho is PB-MVBoost's fit read with another vote: its rows repeat the
    # unit's seed and measured times under another method name (2026-12-04: Table 1's cost read
    # 3.05 CPU-hours over 4,400 units, of which 0.39 and 400 were these rows counted twice)
    table = _results()
    reading = table[table["method"] == "A"].assign(method="A-final-vote")
    costs = measure_costs({"p.results": []}, **{"p.results": pd.concat([table, reading])})
    assert costs["units"].item() == 3 and costs["measured"].item() == 2
    assert costs["cpu_hours"].item() == pytest.approx((10 + 20 + 100) / 3600)
    # units without a measured fit time stay apart by method (nothing to tell them by)
    blank = table.assign(fit_time_s=None, cpu_time_s=None, shared_cv_cpu_time_s=None)
    other = blank[blank["method"] == "A"].assign(method="C")  # seeds 1 and 2, like A's
    costs = measure_costs({"p.results": []}, **{"p.results": pd.concat([blank, other])})
    assert costs["units"].item() == 5 and costs["measured"].item() == 0  # A 2, B 1, C 2


def test_the_report_states_each_papers_measured_cost():
    verdicts = _verdicts(paper=["p1", "p2"], claim=["c", "d"])
    papers = {"p1": {"pipeline": "p"}, "p2": {"pipeline": "q"}}
    costs = measure_costs({"p.results": []}, **{"p.results": _results()})
    md, page = write_report(verdicts, papers, costs)
    assert "measured cost 0.04 CPU-hours over 2 units, 1 units without a record" in md
    assert "measured cost 0.04 CPU-hours" in page
    old = measure_costs({"p.results": []}, **{"p.results": _results().assign(cpu_time_s=None)})
    assert "cost not recorded" in write_report(verdicts, papers, old)[0]


def test_a_long_value_of_ours_wraps_so_the_verdict_column_stays_on_the_page():
    # a trend claim's ours lists every step (e.g. 100 iterations of the C-bound); in a cell that
    # cannot wrap it widened the table past the page and pushed the verdicts out of view
    series = ", ".join(f"{i}: .{2500 - i:04d}" for i in range(1, 101))
    verdicts = _verdicts(paper=["p1"], claim=["decreases"], ours=[series], n=[1],
                         verdict=["reproduced"])  # fmt: skip
    page = write_report(verdicts, {"p1": {"pipeline": "p"}}, None)[1]
    cell = page[page.index(series) - 40 : page.index(series)]
    assert 'class="ours"' in cell
    style = page[page.index("<style>") : page.index("</style>")]
    rule = style[style.index("td.ours{") :].split("}")[0]
    assert "nowrap" not in rule and "max-width" in rule


def test_a_claims_note_is_shown_under_it_in_both_reports():
    # the conf's notes say how a claim is read ("drastic" as K <= 10 % of d); they reached
    # neither report before, so a reader saw a verdict without the reading behind it
    verdicts = _verdicts(paper=["p1", "p1"], claim=["K is small", "plain"],
                         note=["read as K <= 10 % of d & <d>", ""])  # fmt: skip
    md, page = write_report(verdicts, {"p1": {"pipeline": "p"}}, None)
    assert "| K is small<br>*read as K <= 10 % of d & <d>* |" in md
    assert "| plain |" in md
    assert (
        '<td>K is small<div class="note">read as K &lt;= 10 % of d &amp; &lt;d&gt;</div></td>'
        in page
    )
    assert "<td>plain</td>" in page
    # a verdict table written before notes existed still renders
    assert "| K is small |" in write_report(verdicts.drop(columns="note"), {"p1": {}}, None)[0]


def test_figures_of_a_pipeline_that_never_ran_are_named_not_shown_as_broken_images():
    verdicts = _verdicts(paper=["p1", "p2"], claim=["c", "d"])
    papers = {
        "p1": {"pipeline": "p", "figures": {"Figure 2": "p/figures/f2.png"}},
        "p2": {"pipeline": "q", "figures": {"Figure 5": "q/f5.png"}},
    }
    info = {"env": "paper", "git_commit": "abc", "finished_at": "now"}
    md, page = write_report(verdicts, papers, None, **{"p.run_info": info, "q.run_info": None})
    assert '<img src="../p/figures/f2.png"' in page and "[Figure 2](../p/figures/f2.png)" in md
    assert "q/f5.png" not in page and "q/f5.png" not in md
    assert "Figure 5 (not produced here: the pipeline has not run in this project)" in page
    assert "Figures: Figure 5 (not produced here" in md


def test_a_figure_the_latest_run_did_not_write_is_named_missing_not_linked(tmp_path):
    # a partial run (e.g. --to-outputs of some tables) leaves some of a paper's figures unwritten
    (tmp_path / "p" / "figures").mkdir(parents=True)
    (tmp_path / "p" / "figures" / "f2.png").write_bytes(b"png")
    verdicts = _verdicts(paper=["p1"], claim=["c"])
    papers = {"p1": {"pipeline": "p",
                     "figures": {"Figure 2": "p/figures/f2.png", "Figure 3": "p/f3.png"}}}  # fmt: skip
    info = {"p.run_info": {"env": "paper", "git_commit": "abc", "finished_at": "now"}}
    md, page = write_report(verdicts, papers, None, figures_dir=str(tmp_path), **info)
    assert '<img src="../p/figures/f2.png"' in page and "[Figure 2](../p/figures/f2.png)" in md
    assert "p/f3.png" not in page and "p/f3.png" not in md
    assert "Figure 3 (not written by the pipeline&#x27;s latest run)" in page
    assert "Figure 3 (not written by the pipeline's latest run)" in md
    # without a folder to look in, every figure is linked (the earlier behaviour)
    md, page = write_report(verdicts, papers, None, **info)
    assert '<img src="../p/f3.png"' in page


def test_the_env_column_names_a_pipeline_that_never_ran_not_run_and_unrecorded_runs_unknown():
    """A paper whose pipeline left no results and no run record shows "not run" as its env;
    results without a run record are "unknown"; a recorded run names its env."""
    from multiview_lab.pipelines.reproduction.nodes import check_claims

    claim = {"id": "c", "kind": "value", "claim": "A's score", "metric": "score",
             "paper": 0.5, "tolerance": 0.1, "where": {"method": "A"}, "repeat_key": "seed"}  # fmt: skip
    papers = {
        name: {"pipeline": name, "claims": [{**claim, "table": f"{name}.results"}]}
        for name in ("ran", "unrecorded", "never")
    }
    table = pd.DataFrame({"method": ["A", "A"], "seed": [1, 2], "score": [0.5, 0.55]})
    verdicts = check_claims(
        papers,
        {f"{name}.results": ["method", "seed"] for name in papers},
        **{"ran.results": table, "ran.run_info": {"env": "paper"}},
        **{"unrecorded.results": table, "unrecorded.run_info": None},
        **{"never.results": None, "never.run_info": None},
    )
    env = dict(zip(verdicts["paper"], verdicts["env"], strict=True))
    assert env == {"ran": "paper", "unrecorded": "unknown", "never": "not run"}
    assert verdicts.set_index("paper").loc["never", "verdict"] == "not run"
    # the report's summary table says the same
    infos = {"ran.run_info": {"env": "paper"}, "unrecorded.run_info": None, "never.run_info": None}
    md, page = write_report(verdicts, papers, None, **infos)
    assert "| never | not run |" in md and "| unrecorded | unknown |" in md
    assert "<td>not run</td>" in page


def test_the_provenance_line_renders_its_markdown_in_the_html():
    verdicts = _verdicts(paper=["p1"], claim=["c"])
    info = {"env": "paper", "git_commit": "abc", "finished_at": "now",
            "runtime_params": {"p": {"n": [5]}}}  # fmt: skip
    md, page = write_report(verdicts, {"p1": {"pipeline": "p"}}, None, **{"p.run_info": info})
    assert "env **paper**" in md and "with `--params` p.n=[5]" in md
    assert "env <b>paper</b>" in page and "with <code>--params</code> p.n=[5]" in page
    assert "`" not in page.split("<body>")[-1] and "**" not in page
