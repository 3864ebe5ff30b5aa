"""The claim checker: each kind's verdicts on tables built so that the answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from multiview_lab import formatting as fmt
from multiview_lab.reproduction.claims import (
    DIRECTION,
    FAILS,
    NOT_RUN,
    REPRODUCED,
    ClaimError,
    evaluate_claim,
    evaluate_claims,
    expand_reference,
    repetitions,
)

KEYS = {"t": ["dataset", "method", "task", "draw", "n"]}


def results(offsets: dict[str, float], noise: float = 0.01, draws: int = 10, seed: int = 0):
    """2 tasks x ``draws`` draws x 2 sizes; ``score`` = 0.5 + offset + n / 1000 + noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for method, off in offsets.items():
        for n in (100, 500):
            for draw in range(draws):
                for task in (0, 1):
                    rows.append(
                        {
                            "dataset": "D",
                            "method": method,
                            "task": task,
                            "draw": draw,
                            "n": n,
                            "score": 0.5 + off + n / 1000 + noise * rng.standard_normal(),
                            "seed": draw,
                        }
                    )
    return pd.DataFrame(rows)


def claim(**kw):
    return {"id": "c", "claim": "a claim", "table": "t", **kw}


def check(c, table):
    return evaluate_claim("paper", c, {"t": table}, KEYS)


def test_value_within_and_outside_tolerance():
    t = results({"A": 0.0}, noise=0.0)
    where = {"method": "A", "n": 500}
    ok = check(claim(kind="value", where=where, metric="score", paper=1.0, tolerance=0.01,
                     repeat_key="draw", average_over=["task"]), t)  # fmt: skip
    assert ok.verdict == REPRODUCED and ok.n == 10
    assert ok.values["mean"] == pytest.approx(1.0)
    off = check(claim(kind="value", where=where, metric="score", paper=1.02, tolerance=0.01,
                      repeat_key="draw", average_over=["task"]), t)  # fmt: skip
    assert off.verdict == FAILS
    assert off.values["diff"] == pytest.approx(-0.02)


def test_a_claims_note_is_kept_with_its_verdict_on_one_line():
    # how a claim is read (a threshold of ours, a test the paper does not name) goes with the
    # verdict into the report; a folded YAML block's line breaks become spaces
    t = results({"A": 0.0}, noise=0.0)
    c = claim(kind="value", where={"method": "A", "n": 500}, metric="score", paper=1.0,
              tolerance=0.01, repeat_key="draw", average_over=["task"],
              note="our threshold:\n  1 % of the score")  # fmt: skip
    assert check(c, t).note == "our threshold: 1 % of the score"
    assert check(claim(kind="value", where={"method": "Z"}, metric="score", paper=1.0,
                       tolerance=0.01, note="n"), t).note == "n"  # fmt: skip
    assert check({k: v for k, v in c.items() if k != "note"}, t).note == ""


def test_repetitions_average_then_group_and_refuse_hidden_keys():
    t = results({"A": 0.0, "B": 0.1})
    reps = repetitions(t[t["n"] == 500], "score", ["method"], "draw", ["task"], KEYS["t"])
    expected = t[t["n"] == 500].groupby(["draw", "method"])["score"].mean().unstack()
    pd.testing.assert_frame_equal(reps, expected, check_names=False)
    with pytest.raises(ClaimError, match=r"vary in \['task'\]"):
        repetitions(t[t["n"] == 500], "score", ["method"], "draw", [], KEYS["t"])
    with pytest.raises(ClaimError, match=r"vary in \['n'\]"):
        check(claim(kind="value", where={"method": "A"}, metric="score", paper=1.0,
                    tolerance=0.1, repeat_key="draw", average_over=["task"]), t)  # fmt: skip


def test_missing_table_rows_or_methods_are_not_run():
    t = results({"A": 0.0})
    value = dict(kind="value", metric="score", paper=1.0, tolerance=0.1, repeat_key="draw")
    assert evaluate_claim("p", claim(**value), {}, KEYS).verdict == NOT_RUN
    assert evaluate_claim("p", claim(**value), {"t": None}, KEYS).verdict == NOT_RUN
    assert check(claim(where={"n": 1000}, **value), t).verdict == NOT_RUN
    assert check(claim(where={"nope": 1}, **value), t).verdict == NOT_RUN
    better = claim(kind="better", where={"n": 500}, metric="score", method="A", than=["Z"],
                   repeat_key="draw", average_over=["task"])  # fmt: skip
    out = check(better, t)
    assert out.verdict == NOT_RUN and "Z" in out.detail


@pytest.mark.parametrize(
    ("gap", "expected"), [(0.05, REPRODUCED), (0.002, DIRECTION), (-0.05, FAILS)]
)
def test_better_paired_wilcoxon(gap, expected):
    t = results({"A": gap, "B": 0.0}, noise=0.01, draws=12, seed=3)
    c = claim(kind="better", where={"n": 500}, metric="score", method="A", than=["B"],
              test="wilcoxon", alpha=0.02, repeat_key="draw", average_over=["task"])  # fmt: skip
    assert check(c, t).verdict == expected


def test_better_lower_is_better_and_ranksum_matches_scipy():
    t = results({"A": -0.05, "B": 0.0}, noise=0.01, draws=12, seed=4)
    c = claim(kind="better", where={"n": 500}, metric="score", method="A", than=["B"],
              greater_is_better=False, test="ranksum", alpha=0.02, repeat_key="draw",
              average_over=["task"])  # fmt: skip
    out = check(c, t)
    assert out.verdict == REPRODUCED
    reps = repetitions(t[t["n"] == 500], "score", ["method"], "draw", ["task"], KEYS["t"])
    p = stats.mannwhitneyu(-reps["A"], -reps["B"], alternative="greater").pvalue
    assert f"p = {p:.2g}" in out.detail


def test_relation_with_expression_and_rounding_tolerance():
    t = pd.DataFrame({"risk": [0.1, 0.2, 0.3 + 1e-15], "bound": [0.2, 0.25, 0.3]})
    keys = {"t": []}
    holds = evaluate_claim("p", claim(kind="relation", lhs="risk", op="<=", rhs="bound"),
                           {"t": t}, keys)  # fmt: skip
    assert holds.verdict == REPRODUCED and holds.n == 3
    strict = evaluate_claim("p", claim(kind="relation", lhs="risk", op="<", rhs="bound"),
                            {"t": t}, keys)  # fmt: skip
    assert strict.verdict == FAILS and strict.values["fraction"] == pytest.approx(2 / 3)
    expr = evaluate_claim(
        "p", claim(kind="relation", lhs="1 - bound", op=">=", rhs=0.7, min_fraction=0.6),
        {"t": t}, keys,
    )  # fmt: skip
    assert expr.verdict == REPRODUCED  # 0.8, 0.75 >= 0.7; 0.7 >= 0.7


def test_trend_monotone_noisy_and_reversed():
    t = results({"A": 0.0}, noise=0.0)
    up = claim(kind="trend", where={"method": "A"}, method="A", metric="score", along="n",
               direction="increasing", repeat_key="draw", average_over=["task"])  # fmt: skip
    assert check(up, t).verdict == REPRODUCED
    assert check({**up, "direction": "decreasing"}, t).verdict == FAILS
    # three sizes, the middle one below the first: up overall (Spearman > 0) but not monotone
    wobble = pd.concat([t, t[t["n"] == 100].assign(n=300, score=lambda f: f["score"] - 0.1)])
    assert check(up, wobble).verdict == DIRECTION
    # flat within atol is measured from the best earlier value: three steps up of .006 each
    # (each within atol = .01, together .018) are not "decreasing within .01"
    drift = pd.concat([t.assign(n=k, score=0.5 + 0.006 * k) for k in range(4)])
    down = {**up, "direction": "decreasing", "atol": 0.01}
    assert check(down, drift).verdict == FAILS
    assert check({**down, "atol": 0.02}, drift).verdict == REPRODUCED
    # the values, in order of n; a long series (100 iterations) is shortened, all kept in values
    out = check(up, t)
    means = out.values["means"]
    assert out.ours == ", ".join(f"{k}: {fmt.number(v)}" for k, v in means.items())
    long = pd.concat([t.assign(n=t["n"] * 1000 + i, score=t["score"] + i) for i in range(20)])
    out = check(up, long)
    # scores up to ~20 here: about 4 significant digits, so 2 decimals (4 below 10)
    assert max(out.values["means"].values()) > 10
    shown = [f"{k}: {fmt.number(v, 2)}" for k, v in out.values["means"].items()]
    assert len(shown) == 20 * t["n"].nunique()
    assert out.ours == ", ".join([*shown[:3], "…", *shown[-2:]]) + f" ({len(shown)} values of n)"


def test_trend_ends_compares_a_trajectorys_start_and_end():
    # a weight that falls fast, then creeps back up a little over a long plateau (as GBC's
    # noisy-source weight does): not monotone, and Spearman's rho is positive, but it ends
    # well below its start
    its = np.arange(301)
    weight = np.where(its < 30, 0.5 - 0.17 * its / 30, 0.33 + 0.014 * (its - 30) / 270)
    t = pd.concat(
        [pd.DataFrame({"dataset": "D", "method": "A", "task": 0, "n": 0, "draw": r,
                       "iteration": its, "weight": weight + 0.001 * r}) for r in range(3)]
    )  # fmt: skip
    keys = {"t": [*KEYS["t"], "iteration"]}
    down = claim(kind="trend", method="A", metric="weight", along="iteration",
                 direction="decreasing", repeat_key="draw")  # fmt: skip
    whole = evaluate_claim("w", down, {"t": t}, keys)
    assert whole.verdict == FAILS and "Spearman ρ = +" in whole.detail
    ends = evaluate_claim("w", {**down, "ends": True}, {"t": t}, keys)
    assert ends.verdict == REPRODUCED and ends.n == 3
    assert ends.detail.startswith("weight from .5010 at iteration 0 to .3450 at iteration 300;")
    assert "over the whole series: 30 of 300 steps decreasing" in ends.detail
    # the end must be past the start by more than atol, in the claim's direction
    assert evaluate_claim("w", {**down, "ends": True, "atol": 0.2}, {"t": t}, keys).verdict == (
        FAILS
    )
    up = {**down, "ends": True, "direction": "increasing"}
    assert evaluate_claim("w", up, {"t": t}, keys).verdict == FAILS


def test_trend_points_by_a_setting_whose_along_value_varies_per_split():
    # Three settings whose m differs a little per split (as a trace rule's rank does), the
    # metric falling with the setting but offset per split. Pooled, each (split, setting) is a
    # point and the split offsets break the order; with points_by, each setting is one point at
    # its mean m, averaged over the splits, and the fall is exact.
    offset = {0: 0.0, 1: 0.3, 2: 0.15}
    rows = [
        {"dataset": "D", "method": "A", "task": 0, "draw": r, "n": 0, "setting": f"s{v}",
         "m": 100 * (v + 1) + r, "score": offset[r] - 0.1 * v}
        for v in range(3) for r in range(3)
    ]  # fmt: skip
    t = pd.DataFrame(rows)
    keys = {"t": [*KEYS["t"], "setting"]}
    down = claim(kind="trend", method="A", metric="score", along="m", direction="decreasing",
                 repeat_key="draw", average_over=["setting"])  # fmt: skip
    pooled = evaluate_claim("p", down, {"t": t}, keys)
    assert pooled.verdict != REPRODUCED and len(pooled.values["means"]) == 9
    out = evaluate_claim("p", {**down, "points_by": "setting"}, {"t": t}, keys)
    assert out.verdict == REPRODUCED and out.n == 3
    assert out.values["means"] == pytest.approx({101.0: 0.15, 201.0: 0.05, 301.0: -0.05})
    # points_by alone also covers the setting's key column (no need to list it twice)
    no_avg = {k: v for k, v in down.items() if k != "average_over"}
    assert evaluate_claim("p", {**no_avg, "points_by": "setting"}, {"t": t}, keys).verdict == (
        REPRODUCED
    )
    with pytest.raises(ClaimError, match="points_by"):
        evaluate_claim("p", {**down, "points_by": "nope"}, {"t": t}, keys)


def test_numbers_show_about_four_significant_digits():
    # a CPU-seconds value claim: 984.67 ± 1.15 against 50 (not 984.6667 ± 1.1547)
    t = pd.DataFrame({"dataset": "D", "method": "A", "task": 0, "n": 0, "draw": range(3),
                      "score": [984.0, 984.0, 986.0]})  # fmt: skip
    c = claim(kind="value", metric="score", paper=50, tolerance=10, repeat_key="draw")
    out = check(c, t)
    assert out.ours == "984.7 ± 1.2" and "ours − paper = +934.7 " in out.detail
    assert check({**c, "paper": 0.5}, t.assign(score=t["score"] / 1000)).ours == ".9847 ± .0012"


def test_rank_among_methods():
    t = results({"A": 0.02, "B": 0.03, "C": 0.0}, noise=0.0)
    c = claim(kind="rank", where={"n": 500}, method="A", metric="score", at_most=2,
              repeat_key="draw", average_over=["task"])  # fmt: skip
    assert check(c, t).verdict == REPRODUCED and check(c, t).values["rank"] == 2
    assert check({**c, "at_most": 1}, t).verdict == FAILS
    assert check({**c, "among": ["A", "C"], "at_most": 1}, t).verdict == REPRODUCED
    # the detail lists the means in rank order and says which end rank 1 is
    assert check(c, t).detail.startswith("score means, highest (rank 1) first: B ")
    low = check({**c, "greater_is_better": False}, t)
    assert low.values["rank"] == 2 and low.detail.startswith(
        "score means, lowest (rank 1) first: C "
    )


def test_reference_expands_to_cells_and_significance():
    reference = {
        "source": "Table 1",
        "tolerance": {"score": 0.01},
        "values": [
            {"dataset": "D", "method": "A", "n": 500, "score": 1.02, "score_std": 0.01,
             "score_worse": False},
            {"dataset": "D", "method": "B", "n": 500, "score": 0.95, "score_worse": True},
        ],
    }  # fmt: skip
    c = {"id": "t1", "kind": "reference", "claim": "{method} {metric}", "table": "t",
         "reference": "x.reference", "repeat_key": "draw", "average_over": ["task"],
         "note": "read off the table"}  # fmt: skip
    claims = expand_reference(c, reference)
    assert [x["kind"] for x in claims] == ["value", "value", "better"]
    assert {x["note"] for x in claims} == {"read off the table"}  # each cell carries the note
    assert claims[0]["claim"] == "A score" and claims[0]["paper_std"] == 0.01
    assert claims[2]["method"] == "A" and claims[2]["than"] == ["B"]
    t = results({"A": 0.02, "B": -0.05}, noise=0.001)
    out = evaluate_claims({"p": [c]}, {"t": t}, KEYS, {"x.reference": reference})
    assert list(out["verdict"]) == [REPRODUCED, REPRODUCED, REPRODUCED]
    assert list(out["note"]) == ["read off the table"] * 3
    with pytest.raises(ClaimError, match="not a parameter block"):
        evaluate_claims({"p": [c]}, {"t": t}, KEYS, {})


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"kind": "guess"}, "kind 'guess'"),
        ({"kind": "value", "metric": "s", "paper": 1, "tolerance": 0.1, "typo": 1}, r"\['typo'\]"),
        ({"kind": "value", "metric": "s"}, r"missing key\(s\) \['paper', 'tolerance'\]"),
        ({"kind": "relation", "lhs": "a", "op": "=<", "rhs": 1}, "op '=<'"),
        ({"kind": "better", "metric": "s", "method": "A", "than": ["B"], "test": "t"}, "test"),
    ],
)
def test_bad_claims_are_errors_that_name_the_problem(entry, message):
    with pytest.raises(ClaimError, match=message):
        check(claim(**entry), results({"A": 0.0}))
