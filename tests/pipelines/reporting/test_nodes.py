"""The shared reporting nodes."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.pipelines.reporting.nodes import (
    compare_with_reference,
    figure_metrics,
    figure_tables,
    plot_figures,
    summarise_results,
    summary_to_markdown,
    summary_to_metrics,
)

REPORTING = {
    "group_by": ["dataset", "method"],
    "metrics": ["accuracy"],
    "repeat_key": "draw",
    "average_over": ["task"],
    "significance": {"column_keys": ["dataset"], "method_key": "method", "alpha": 0.02},
    "figures": [
        {"name": "acc_vs_n", "x": "n", "y": "accuracy", "hue": "method", "facet": "dataset"},
        {"name": "bars", "kind": "bar", "x": "dataset", "y": ["accuracy"], "query": "n == 10"},
    ],
}


@pytest.fixture
def results():
    rows = []
    for method, base in (("Good (x)", 0.9), ("Bad", 0.5)):
        for draw in range(6):
            for task in range(2):
                for n in (10, 20):
                    rows.append(
                        {
                            "dataset": "D",
                            "method": method,
                            "draw": draw,
                            "task": task,
                            "n": n,
                            "accuracy": base + 0.01 * draw + 0.001 * n,
                        }
                    )
    return pd.DataFrame(rows)


def test_summary_markdown_and_metrics(results):
    only_n = results[results["n"] == 10].drop(columns="n")
    summary = summarise_results(only_n, REPORTING)
    assert list(summary["method"]) == ["Good (x)", "Bad"]
    assert summary.set_index("method").loc["Bad", "accuracy_worse"]
    md = summary_to_markdown(summary, REPORTING)
    assert "| D | Bad | .5350 ± .0187 ↓ |" in md
    assert "Wilcoxon" in md
    metrics = summary_to_metrics(summary, REPORTING)
    assert metrics["D/Good _x_/accuracy_mean"] == pytest.approx(0.935)
    assert set(metrics) == {
        f"D/{m}/accuracy_{s}" for m in ("Good _x_", "Bad") for s in ("mean", "std")
    }


def test_table_columns_order(results):
    rep = {**REPORTING, "table_columns": ["method", "dataset", "n_draws"]}
    rep.pop("significance")
    summary = summarise_results(results[results["n"] == 10], rep)
    assert list(summary.columns[:3]) == ["method", "dataset", "n_draws"]
    with pytest.raises(ValueError, match="table_columns"):
        summarise_results(results[results["n"] == 10], {**rep, "table_columns": ["nope"]})


def test_line_and_bar_figures(results):
    figures = plot_figures(results, REPORTING)
    assert list(figures) == ["acc_vs_n.png", "bars.png"]
    ax = figures["acc_vs_n.png"].axes[0]
    assert len(ax.lines) >= 2
    legend = figures["acc_vs_n.png"].legends[0]  # one figure legend, not one per panel
    assert sorted(t.get_text() for t in legend.get_texts()) == ["Bad", "Good (x)"]
    bars = figures["bars.png"].axes[0].patches
    assert [round(b.get_height(), 4) for b in bars] == [0.935, 0.535]  # n == 10 only


def test_line_figure_styles_are_distinct_and_the_same_in_every_panel():
    # 12 methods (more than the 10 default colours) on two data sets, listed in a different
    # order in each: every line keeps one style across panels and no two lines share one
    rows = [
        {"dataset": d, "method": f"m{m:02d}", "draw": r, "task": 0, "n": n, "accuracy": 0.5}
        for d, order in (("A", range(12)), ("B", reversed(range(12))))
        for m in order
        for r in range(2)
        for n in (10, 20)
    ]
    spec = {**REPORTING, "significance": None, "figures": [REPORTING["figures"][0]]}
    fig = plot_figures(pd.DataFrame(rows), spec)["acc_vs_n.png"]

    def styles(ax):
        return {
            c.get_label(): (
                c.lines[0].get_color(),
                c.lines[0].get_linestyle(),
                c.lines[0].get_marker(),
            )
            for c in ax.containers
        }

    left, right = (styles(ax) for ax in fig.axes)
    assert len(left) == 12
    assert left == right
    assert len(set(left.values())) == 12


def test_figure_tables_hold_the_drawn_points(results):
    tables = figure_tables(results, REPORTING)
    assert list(tables) == ["acc_vs_n", "bars"]
    line = tables["acc_vs_n"].set_index(["method", "n"])
    ax = plot_figures(results, REPORTING)["acc_vs_n.png"].axes[0]
    good = next(c for c in ax.containers if c.get_label() == "Good (x)")
    drawn = good.lines[0].get_ydata()
    assert list(drawn) == list(line.loc["Good (x)"].sort_index()["accuracy_mean"])
    # mean over draws of the per-draw task average, std over the 6 draws
    assert line.loc[("Bad", 20), "accuracy_mean"] == pytest.approx(0.545)
    assert line.loc[("Bad", 20), "accuracy_std"] == pytest.approx(0.0187083, abs=1e-6)
    assert line.loc[("Bad", 20), "n_draws"] == 6
    assert list(tables["bars"]["accuracy_mean"].round(4)) == [0.935, 0.535]


def test_figure_metrics_are_the_drawn_lines_with_the_sweep_as_step(results):
    series = figure_metrics(results, REPORTING)
    # the line figure only (bars have no step); "(" and ")" are not allowed in MLflow names
    assert sorted(series) == ["acc_vs_n/D/Bad/accuracy_mean", "acc_vs_n/D/Good _x_/accuracy_mean"]
    line = figure_tables(results, REPORTING)["acc_vs_n"].set_index(["method", "n"])
    assert series["acc_vs_n/D/Bad/accuracy_mean"] == [
        [10, line.loc[("Bad", 10), "accuracy_mean"]],
        [20, line.loc[("Bad", 20), "accuracy_mean"]],
    ]
    # a swept key that is not an integer step gives no series
    fractional = results.assign(n=results["n"] / 3)
    assert figure_metrics(fractional, {**REPORTING, "figures": REPORTING["figures"][:1]}) == {}


def test_table_query_and_bad_figure_spec(results):
    summary = summarise_results(results, {**REPORTING, "table_query": "n == 20"})
    assert summary.set_index("method").loc["Bad", "accuracy_mean"] == pytest.approx(0.545)
    with pytest.raises(ValueError, match="no results match"):
        plot_figures(
            results,
            {**REPORTING, "figures": [{"name": "f", "x": "n", "y": "accuracy", "query": "n == 3"}]},
        )
    with pytest.raises(ValueError, match="kind must be"):
        plot_figures(
            results,
            {**REPORTING, "figures": [{"name": "f", "kind": "pie", "x": "n", "y": "accuracy"}]},
        )


def test_markdown_shows_a_dash_for_missing_metrics(results):
    import numpy as np

    only = results[results["n"] == 10].copy()
    only.loc[only["method"] == "Bad", "accuracy"] = np.nan
    rep = {k: v for k, v in REPORTING.items() if k != "significance"}
    md = summary_to_markdown(summarise_results(only, rep), rep)
    assert "| D | Bad | – |" in md


def test_markdown_digits_per_metric(results):
    only = results[results["n"] == 10].drop(columns="n")
    rep = {k: v for k, v in REPORTING.items() if k != "significance"}
    summary = summarise_results(only, rep)
    assert "| D | Bad | .54 ± .02 |" in summary_to_markdown(summary, {**rep, "digits": 2})
    assert "| D | Bad | .5 ± .0 |" in summary_to_markdown(
        summary, {**rep, "digits": {"accuracy": 1}}
    )
    with pytest.raises(ValueError, match="not in reporting.metrics"):
        summary_to_markdown(summary, {**rep, "digits": {"f1": 1}})


def _reference(values, tolerance=None):
    return {
        "group_by": ["dataset", "method", "n"],
        "metrics": ["accuracy", "f1"],
        "reference": {"source": "Paper, Table 1", "tolerance": tolerance or {}, "values": values},
    }


@pytest.fixture
def summary():
    return pd.DataFrame(
        {
            "dataset": ["D", "D", "E"],
            "method": ["A", "B", "A"],
            "n": [500, 500, 500],
            "accuracy_mean": [0.95, 0.90, 0.80],
            "accuracy_std": [0.01, 0.02, 0.03],
            "f1_mean": [0.70, 0.60, 0.50],
            "f1_std": [0.05, 0.04, 0.03],
            "accuracy_worse": [False, True, False],
            "f1_worse": [False, True, False],
        }
    )


def test_reference_comparison_differences_and_flags(summary):
    values = [
        {"dataset": "D", "method": "A", "n": 500, "accuracy": 0.945, "f1": 0.80,
         "accuracy_std": 0.002, "accuracy_worse": False},
        {"dataset": "D", "method": "B", "n": 500, "accuracy": 0.92, "f1": 0.61,
         "accuracy_std": 0.001, "accuracy_worse": False},
    ]  # fmt: skip
    table, md = compare_with_reference(
        summary, _reference(values, tolerance={"accuracy": 0.01, "f1": 0.03})
    )
    assert list(table["method"]) == ["A", "B"]  # one row per record, in their order
    assert table["accuracy_diff"].tolist() == pytest.approx([0.005, -0.02])
    assert table["f1_diff"].tolist() == pytest.approx([-0.10, -0.01])
    assert table["accuracy_beyond"].tolist() == [False, True]
    assert table["f1_beyond"].tolist() == [True, False]
    assert table["accuracy_ours_std"].tolist() == [0.01, 0.02]
    assert table["accuracy_published_std"].tolist() == [0.002, 0.001]
    # Significance is set side by side where the reference gives it (accuracy, not f1).
    assert table["accuracy_worse_ours"].tolist() == [False, True]
    assert table["accuracy_worse_published"].tolist() == [False, False]
    assert "f1_worse_ours" not in table
    assert "| D | A | 500 | .9500 ± .0100 (.9450 ± .0020) | .7000 ± .0500 (.8000) * |" in md
    assert "| D | B | 500 | .9000 ± .0200 ↓ (.9200 ± .0010) * | .6000 ± .0400 (.6100) |" in md
    assert "Paper, Table 1" in md and "accuracy 0.01" in md


def test_reference_comparison_without_tolerance_flags_nothing(summary):
    values = [{"dataset": "D", "method": "A", "n": 500, "accuracy": 0.5}]
    table, _ = compare_with_reference(summary, _reference(values))
    assert not table["accuracy_beyond"].any()
    assert table["accuracy_diff"].tolist() == pytest.approx([0.45])


def test_reference_record_without_result_is_kept_and_logged(summary, caplog):
    values = [
        {"dataset": "D", "method": "A", "n": 500, "accuracy": 0.95},
        {"dataset": "D", "method": "Missing", "n": 500, "accuracy": 0.9},
    ]
    with caplog.at_level("WARNING"):
        table, md = compare_with_reference(
            summary, _reference(values, tolerance={"accuracy": 0.01})
        )
    assert table["accuracy_ours"].isna().tolist() == [False, True]
    assert not table["accuracy_beyond"].iloc[1]  # no result: nothing to flag
    assert "| D | Missing | 500 | – (.9000) |" in md
    assert "Missing" in caplog.text


def test_reference_with_no_matching_result_says_nothing_was_compared(summary, caplog):
    """A smoke run (n = 100) against a paper's table at n = 500: nothing is compared, and the
    log says so and why, instead of "0 of N cells differ"."""
    values = [{"dataset": "D", "method": "A", "n": 100, "accuracy": 0.95, "f1": 0.7}]
    with caplog.at_level("INFO"):
        table, _ = compare_with_reference(summary, _reference(values, {"accuracy": 0.01}))
    assert table["accuracy_ours"].isna().all() and not table["accuracy_beyond"].any()
    assert "nothing compared" in caplog.text and "n ['100'] vs ['500']" in caplog.text
    assert "differ beyond" not in caplog.text
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    caplog.clear()
    values[0]["n"] = 500
    with caplog.at_level("INFO"):
        compare_with_reference(summary, _reference(values, {"accuracy": 0.01}))
    assert "0 of 2 compared cells differ beyond their tolerance" in caplog.text


def test_reference_keys_match_whatever_their_type(summary):
    values = [{"dataset": "D", "method": "A", "n": "500", "accuracy": 0.95}]
    table, _ = compare_with_reference(summary, _reference(values))
    assert table["accuracy_ours"].tolist() == [0.95]


@pytest.mark.parametrize(
    ("values", "tolerance", "match"),
    [
        ([{"dataset": "D", "method": "A", "n": 500, "precision": 0.9}], {}, "precision"),
        ([{"dataset": "D", "accuracy": 0.9}], {}, "several rows per reference key"),
        ([{"method": "A", "n": 500, "accuracy": 0.9}] * 2, {}, "repeats"),
        ([{"dataset": "D", "method": "A", "n": 500, "accuracy": 0.9}], {"f1": 0.1}, "f1"),
        ([], {}, "must list"),
    ],
)
def test_reference_bad_configuration(summary, values, tolerance, match):
    with pytest.raises(ValueError, match=match):
        compare_with_reference(summary, _reference(values, tolerance))


def test_significance_best_is_taken_among_contenders():
    rng = np.random.default_rng(0)
    levels = {"Top": 0.95, "Extra": 0.99, "Low": 0.80, "ExtraLow": 0.70}
    rows = [
        {"dataset": "D", "method": m, "draw": d, "task": 0, "accuracy": v + 0.001 * rng.random()}
        for m, v in levels.items()
        for d in range(8)
    ]
    results = pd.DataFrame(rows)
    reporting = {**REPORTING, "figures": []}
    everyone = summarise_results(results, reporting).set_index("method")
    # Without contenders, "Extra" is the best and flags "Top".
    assert everyone.loc["Top", "accuracy_worse"] and not everyone.loc["Extra", "accuracy_worse"]
    reporting["significance"] = {**REPORTING["significance"], "contenders": ["Top", "Low"]}
    table = summarise_results(results, reporting)
    assert list(table["method"]) == list(everyone.index)  # rows keep their order
    flags = table.set_index("method")["accuracy_worse"]
    # Top is the best contender: not flagged; Low is flagged against it. Extra beats every
    # contender: not flagged; ExtraLow is flagged against the best contender.
    assert flags.to_dict() == {"Top": False, "Extra": False, "Low": True, "ExtraLow": True}
    p = table.set_index("method")["accuracy_p"]
    assert np.isnan(p["Top"]) and np.isnan(p["Extra"]) and p["Low"] < 0.02
    reporting["significance"]["contenders"] = ["Top", "Low", "Absent"]  # absent: logged
    assert summarise_results(results, reporting)["accuracy_worse"].tolist() == flags.tolist()
    reporting["significance"]["contenders"] = ["Nobody"]
    with pytest.raises(ValueError, match="Nobody"):
        summarise_results(results, reporting)


def _rows(methods, datasets=("A",), xs=(10, 20), value=None):
    """Results of ``methods`` (name -> accuracy at x), two draws each."""
    return pd.DataFrame(
        [
            {
                "dataset": d,
                "method": m,
                "draw": r,
                "task": 0,
                "n": x,
                "accuracy": f(d, x) + 0.01 * r,
            }
            for d in datasets
            for m, f in methods.items()
            for r in range(2)
            for x in xs
        ]
    )


def _renderer_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return renderer


def test_legend_lies_outside_every_panel(results):
    """The legend hides no data: its box overlaps no panel's box."""
    for name, fig in plot_figures(results, REPORTING).items():
        renderer = _renderer_boxes(fig)
        legend = fig.legends[0].get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible():
                assert not legend.overlaps(ax.get_window_extent(renderer)), name


def test_many_panels_wrap_into_rows():
    methods = {"M": lambda d, x: 0.5}
    rows = _rows(methods, datasets=tuple("ABCDEFG"))
    spec = {**REPORTING, "significance": None, "figures": [REPORTING["figures"][0]]}
    fig = plot_figures(rows, spec)["acc_vs_n.png"]
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 7
    assert fig.axes[0].get_gridspec().get_geometry() == (3, 3)  # 7 panels, 3 per row
    assert len({round(ax.get_position().y0, 3) for ax in visible}) == 3
    spec["figures"] = [{**REPORTING["figures"][0], "columns": 4}]
    fig = plot_figures(rows, spec)["acc_vs_n.png"]
    assert fig.axes[0].get_gridspec().get_geometry() == (2, 4)


def test_identical_series_are_marked_in_the_legend_or_the_panel():
    # "Twin" equals "Base" in both data sets: marked in the legend; "Local" equals "Base" in
    # data set A only: named in A's title, not in the legend
    methods = {
        "Base": lambda d, x: 0.001 * x,
        "Twin": lambda d, x: 0.001 * x,
        "Local": lambda d, x: 0.001 * x + (0.0 if d == "A" else 0.2),
        "Other": lambda d, x: 0.5,
    }
    rows = _rows(methods, datasets=("A", "B"))
    spec = {**REPORTING, "significance": None, "figures": [REPORTING["figures"][0]]}
    fig = plot_figures(rows, spec)["acc_vs_n.png"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["Base", "Twin (= Base)", "Local", "Other"]
    titles = [ax.get_title() for ax in fig.axes]
    assert "identical: Base = Twin = Local" in titles[0]
    assert "identical" not in titles[1]
    # bars: the same rule
    bar = {"name": "b", "kind": "bar", "x": "dataset", "y": ["accuracy"], "query": "n == 10"}
    fig = plot_figures(rows, {**spec, "figures": [bar]})["b.png"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[1] == "Twin (= Base)" and "Other" in labels


def test_a_one_point_sweep_is_drawn_as_points_on_its_own_tick():
    rows = _rows({"M": lambda d, x: 0.5, "N": lambda d, x: 0.7}, xs=(100,))
    spec = {**REPORTING, "significance": None, "figures": [REPORTING["figures"][0]]}
    ax = plot_figures(rows, spec)["acc_vs_n.png"].axes[0]
    for container in ax.containers:
        assert container.lines[0].get_linestyle() == "None"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["100"]
    # a sweep keeps its lines
    ax = plot_figures(_rows({"M": lambda d, x: 0.5}), spec)["acc_vs_n.png"].axes[0]
    assert ax.containers[0].lines[0].get_linestyle() == "-"


def test_axis_titles_are_words_and_math():
    rows = _rows({"M": lambda d, x: 0.5}).rename(columns={"n": "lam"})
    rows["fit_time_s"] = 1.0
    spec = {
        **REPORTING,
        "metrics": ["accuracy", "fit_time_s"],
        "significance": None,
        "figures": [
            {"name": "l", "x": "lam", "y": "accuracy", "facet": "dataset"},
            {"name": "b", "kind": "bar", "x": "dataset", "y": ["fit_time_s"]},
        ],
    }
    figures = plot_figures(rows, spec)
    assert figures["l.png"].axes[0].get_xlabel() == r"$\lambda$"
    assert figures["b.png"].axes[0].get_title() == "fit time (s)"
    spec["labels"] = {"fit_time_s": "training time (s)"}
    assert plot_figures(rows, spec)["b.png"].axes[0].get_title() == "training time (s)"


def test_one_repetition_has_no_std_and_the_paper_layout_bolds_the_best():
    rows = _rows(
        {"Good": lambda d, x: 0.9 if d == "A" else 0.6, "Bad": lambda d, x: 0.5},
        datasets=("A", "B"),
        xs=(10,),
    )
    rep = {
        **REPORTING,
        "significance": None,
        "metrics": ["accuracy", "error"],
        "paper_table": {"columns": ["dataset"]},
    }
    rows["error"] = 1 - rows["accuracy"]
    one = rows[rows["draw"] == 0]
    md = summary_to_markdown(summarise_results(one, rep), rep)
    assert "| A | Good | .9000 ± – | .1000 ± – |" in md
    assert "± .0000" not in md and "one repetition" in md
    md = summary_to_markdown(summarise_results(rows, rep), rep)
    layout = md.split("In the paper's layout")[1].splitlines()
    assert "| method | A accuracy | A error | B accuracy | B error |" in layout
    good = next(line for line in layout if line.startswith("| Good |"))
    bad = next(line for line in layout if line.startswith("| Bad |"))
    # the best accuracy is the highest, the best error the lowest
    assert (
        good
        == "| Good | **.9050 ± .0071** | **.0950 ± .0071** | **.6050 ± .0071** | **.3950 ± .0071** |"
    )
    assert "**" not in bad
    with pytest.raises(ValueError, match="several values"):
        summary_to_markdown(
            summarise_results(rows, rep),
            {**rep, "paper_table": {"columns": []}},
        )


def test_bars_stay_distinguishable_beyond_ten_methods():
    methods = {f"m{i:02d}": (lambda d, x, i=i: 0.5 + 0.01 * i) for i in range(12)}
    rows = _rows(methods, xs=(10,))
    bar = {"name": "b", "kind": "bar", "x": "dataset", "y": ["accuracy"]}
    fig = plot_figures(rows, {**REPORTING, "significance": None, "figures": [bar]})["b.png"]
    looks = {
        (tuple(np.round(c.patches[0].get_facecolor(), 3)), c.patches[0].get_hatch())
        for c in fig.axes[0].containers
        if hasattr(c, "patches")
    }
    assert len(looks) == 12
