"""Nodes of the ``miml`` pipeline on small synthetic bags: data preparation, the three split
tables, the COREL table, the Figure 3 study from fits, the heat map and bad input."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.model_selection import KFold

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.evaluation import stable_seed
from multiview_lab.pipelines.miml.nodes import make_splits, prepare_corel, prepare_scene
from multiview_lab.pipelines.miml.report import (
    corel_report,
    figure3_study,
    plot_figure3,
    plot_label_covariance,
    summarise_corel,
    table4,
)
from tests.pipelines.miml.conftest import FIGURE3, NAMES, PROTOCOL


def test_scene_splits_are_the_seeded_kfold(scene, corel, splits):
    cv, _, _ = splits
    assert list(cv.columns) == ["dataset", "fold", "seed", "train", "test"]
    assert cv["fold"].tolist() == [0, 2] and set(cv["dataset"]) == {"scene"}
    # the folds of sklearn's shuffled KFold seeded with stable_seed("scene", "kfold")
    folds = list(
        KFold(3, shuffle=True, random_state=stable_seed("scene", "kfold")).split(np.arange(60))
    )
    for row in cv.itertuples():
        np.testing.assert_array_equal(row.train, folds[row.fold][0])
        np.testing.assert_array_equal(row.test, folds[row.fold][1])
        assert row.seed == stable_seed("scene", row.fold)  # the seed every method gets
    again = make_splits(scene, corel, PROTOCOL, FIGURE3)[0]
    np.testing.assert_array_equal(again["test"].iloc[1], cv["test"].iloc[1])
    # the splits of one study do not move when another study changes
    other = make_splits(scene, corel, {**PROTOCOL, "corel_repeats": 1}, FIGURE3)[0]
    np.testing.assert_array_equal(other["test"].iloc[1], cv["test"].iloc[1])


def test_corel_and_figure3_splits_are_seeded_halves(splits):
    _, co, f3 = splits
    assert list(co.columns) == ["dataset", "split", "seed", "train", "test"]
    assert co["dataset"].tolist() == ["African", "African", "Food", "Food"]
    rng = np.random.default_rng(stable_seed("corel", "Food"))
    for row in co[co["dataset"] == "Food"].itertuples():
        perm = rng.permutation(40)  # one generator per task, one permutation per repeat
        np.testing.assert_array_equal(row.train, np.sort(perm[:20]))
        np.testing.assert_array_equal(row.test, np.sort(perm[20:]))
        assert row.seed == stable_seed("corel", "Food", row.split)
    assert co["seed"].nunique() == 4
    row = f3.iloc[0]
    assert row["repeat"] == 0 and row["seed"] == stable_seed("figure3", 0)
    assert row["train"].size == row["test"].size == 20  # a 50/50 split of a 40-bag pool
    assert np.intersect1d(row["train"], row["test"]).size == 0


def test_summarise_corel_t_interval():
    res = pd.DataFrame(
        {
            "dataset": ["T"] * 3 + ["U"],
            "method": ["m"] * 4,
            "split": [0, 1, 2, 0],
            "accuracy": [0.8, 0.9, 0.7, 0.6],
            "fit_time_s": [1.0] * 4,
        }
    )
    out = summarise_corel(res).set_index("dataset")
    half = stats.t.ppf(0.975, 2) * 0.1 / np.sqrt(3)
    assert out.loc["T", "accuracy_mean"] == pytest.approx(0.8)
    assert out.loc["T", "accuracy_ci_half"] == pytest.approx(half)
    assert out.loc["T", "accuracy_ci_low"] == pytest.approx(0.8 - half)
    assert out.loc["U", "accuracy_ci_half"] == 0.0 and out.loc["U", "n_splits"] == 1


def test_corel_report_tables_and_metrics():
    res = pd.DataFrame(
        {
            "dataset": ["African"] * 4,
            "method": ["collective", "standard"] * 2,
            "split": [0, 0, 1, 1],
            "accuracy": [0.9, 0.8, 0.7, 0.8],
            "balanced_accuracy": [0.6, 0.5, 0.5, 0.5],
            "majority_accuracy": [0.95] * 4,
        }
    )
    summary, md, metrics = corel_report(res, {"confidence": 0.95})
    assert summary["method"].tolist() == ["collective", "standard"]
    assert md.startswith("| task | collective | standard |")
    assert "| African | **.8000 ± 1.2706** | **.8000 ± .0000** |" in md
    assert "| African | .9500 | .5500 | .5000 |" in md
    assert metrics["corel/African/collective/balanced_accuracy_mean"] == pytest.approx(0.55)
    assert all(isinstance(v, float) for v in metrics.values())


def _figure3_inputs():
    Kf, F = np.array([[2.0, 0.5], [0.5, 1.0]]), np.arange(6.0).reshape(3, 2)
    results = pd.DataFrame(
        [
            {"dataset": "scene", "method": m, "repeat": 0, "seed": 7, "rank_m": rank,
             "fit_time_s": t, "score_time_s": 0.1, "cpu_time_s": t / 2, "n_em_iter": 5.0,
             "delta": 1.0,
             "hamming_loss": 0.2, "one_error": 0.3, "coverage": 1.0, "ranking_loss": 0.1,
             "one_minus_average_precision": 0.2, "hamming_loss_top_fallback": 0.2}
            for m, rank, t in (("exact", 20, 2.0), ("half", 5, 0.5), ("full", 20, 1.0))
        ]
    )  # fmt: skip
    fits = pd.DataFrame(
        [
            {"dataset": "scene", "method": "exact", "repeat": 0, "Fsum": F, "Kf": Kf},
            {"dataset": "scene", "method": "half", "repeat": 0, "Fsum": 2 * F, "Kf": Kf + 1},
            {"dataset": "scene", "method": "full", "repeat": 0, "Fsum": F, "Kf": Kf},
        ]
    )
    return results, fits


def test_figure3_study_sets_every_fit_beside_the_exact_one():
    results, fits = _figure3_inputs()
    study = figure3_study(results, fits, FIGURE3).set_index("variant")
    assert study.index.tolist() == ["exact", "half", "full"]
    assert study.loc["exact", "rel_error_F"] == study.loc["full", "rel_error_Kf"] == 0.0
    assert study.loc["half", "rel_error_F"] == pytest.approx(1.0)  # ||2F - F|| / ||F||
    Kf = fits.loc[0, "Kf"]
    assert study.loc["half", "rel_error_Kf"] == pytest.approx(2 / np.linalg.norm(Kf))
    assert study.loc["half", "m"] == 5.0 and study.loc["half", "fit_time_s"] == 0.5
    assert study.loc["half", "cpu_time_s"] == 0.25
    fig = plot_figure3(study.reset_index(), FIGURE3)
    assert len(fig.axes) == 3
    np.testing.assert_allclose(fig.axes[0].lines[0].get_xdata(), [5.0, 20.0])  # by rank m
    # panel (c): CPU seconds (the wall seconds of parallel workers vary with the load)
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), [0.25, 0.5])
    assert fig.axes[2].get_title() == "(c) training time (CPU s)"
    plt.close(fig)
    fig = plot_figure3(study.reset_index().drop(columns="cpu_time_s"), FIGURE3)
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), [0.5, 1.0])  # older results
    plt.close(fig)
    with pytest.raises(ValueError, match="exact model"):
        figure3_study(results, fits, {**FIGURE3, "reference": "none-such"})
    bad = {"exact": {"params": {"likelihood": "standard"}}, "half": {}}
    with pytest.raises(ValueError, match="collective"):
        figure3_study(results, fits, {"methods": bad})


def test_label_covariance_heatmap(scene):
    Kf = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.2], [0.0, -0.2, 1.5]])
    i, j = np.indices(Kf.shape)
    table = pd.concat(
        [
            pd.DataFrame(
                {"method": "GP", "fold": f, "i": i.ravel(), "j": j.ravel(), "value": v.ravel()}
            )
            for f, v in ((0, Kf - 0.1), (1, Kf + 0.1))
        ]
    )
    fig = plot_label_covariance(table, scene, {"method": "GP"})
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "$K^f$ (label covariance)",
        "label correlation",
    ]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), Kf)  # the mean over folds
    assert "mean over 2 fold(s)" in fig.texts[0].get_text()
    plt.close(fig)
    with pytest.raises(ValueError, match="learned no K"):
        plot_label_covariance(table, scene, {"method": "kNN"})


def test_prepare_scene_slice_is_seeded(scene):
    data = scene["scene"]
    raw = (data["bags"], data["Y"], NAMES)
    a, b = (prepare_scene(raw, {"max_bags": 30, "seed": 3})["scene"] for _ in range(2))
    assert len(a["bags"]) == 30 and a["Y"].shape == (30, 3) and a["label_names"] == NAMES
    np.testing.assert_array_equal(a["Y"], b["Y"])
    with pytest.raises(ValueError, match="max_bags"):
        prepare_scene(raw, {"max_bags": 1000})
    with pytest.raises(ValueError, match="disagree"):
        prepare_scene((data["bags"][:5], data["Y"], NAMES), {})


def test_bad_input(scene, corel):
    raw = [(corel["African"]["bags"], corel["African"]["y"])] * len(COREL_CATEGORIES)
    with pytest.raises(ValueError, match="non-empty subset"):
        prepare_corel({"tasks": ["Horses"]}, *raw)
    with pytest.raises(ValueError, match="one raw task per category"):
        prepare_corel({"tasks": ["African"]}, *raw[:3])
    with pytest.raises(ValueError, match="folds_run"):
        make_splits(scene, corel, {**PROTOCOL, "folds_run": [5]}, FIGURE3)
    with pytest.raises(ValueError, match="n_folds"):
        make_splits(scene, corel, {**PROTOCOL, "n_folds": 1}, FIGURE3)
    with pytest.raises(ValueError, match="confidence"):
        summarise_corel(
            pd.DataFrame({"dataset": ["T"], "method": ["m"], "split": [0], "accuracy": [1.0]}),
            1.5,
        )


def test_figure3_study_needs_a_fit_of_every_method():
    results, fits = _figure3_inputs()
    with pytest.raises(ValueError, match=r"\['half'\] kept no F_sum"):
        figure3_study(results, fits[fits["method"] != "half"], FIGURE3)


def test_table4_summarises_both_timing_studies_and_names_a_skipped_one():
    reporting = {
        "group_by": ["dataset", "method"],
        "metrics": ["fit_cpu_s", "score_cpu_s"],
        "repeat_key": "fold",
        "digits": 2,
    }
    scene = pd.DataFrame(
        {
            "dataset": "scene",
            "fold": [0, 1, 0, 1],
            "method": ["A", "A", "B", "B"],
            "fit_cpu_s": [1.0, 3.0, 0.5, 0.5],
            "score_cpu_s": [0.1, 0.1, 0.2, 0.4],
        }
    )
    reporting["figures"] = [
        {"name": "table4", "kind": "bar", "x": "dataset", "y": ["fit_cpu_s", "score_cpu_s"]}
    ]
    empty = pd.DataFrame(columns=["dataset", "method", "fit_cpu_s", "score_cpu_s"])
    summary, md, fig = table4(scene, empty, reporting)
    assert summary["method"].tolist() == ["A", "B"]
    np.testing.assert_allclose(summary["fit_cpu_s_mean"], [2.0, 0.5])
    np.testing.assert_allclose(summary["score_cpu_s_mean"], [0.1, 0.3])
    assert "| scene | A | 2.00 ± 1.41 |" in md
    heights = [[p.get_height() for p in ax.patches] for ax in fig.axes if ax.patches]
    np.testing.assert_allclose(heights, [[2.0, 0.5], [0.1, 0.3]])  # one panel per metric
    plt.close(fig)
    summary, md, fig = table4(empty, empty, reporting)
    assert summary.empty and md.startswith("No timing study ran")
    plt.close(fig)
