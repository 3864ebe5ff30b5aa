"""Nodes of the ``miml`` pipeline on small synthetic bags: splits, n_jobs invariance, tables,
figures and bad input."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from multiview_lab.data.corel import COREL_CATEGORIES
from multiview_lab.miml.metrics import one_minus_average_precision
from multiview_lab.pipelines.miml.nodes import (
    corel_report,
    evaluate_corel,
    evaluate_scene,
    make_splits,
    plot_figure3,
    plot_label_covariance,
    prepare_corel,
    prepare_scene,
    run_figure3,
    summarise_corel,
)

NAMES = ["a", "b", "c"]


def _bags(rng, Y, d=4):
    """Bags of 2-4 instances; each present label shifts one instance along its own axis."""
    bags = []
    for labels in Y:
        bag = rng.normal(size=(int(rng.integers(2, 5)), d))
        for s in np.flatnonzero(labels):
            bag[int(rng.integers(bag.shape[0])), s] += 3.0
        bags.append(bag)
    return bags


@pytest.fixture(scope="module")
def scene():
    rng = np.random.default_rng(0)
    Y = (rng.random((60, 3)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    return prepare_scene((_bags(rng, Y), Y, NAMES), {"max_bags": None})


@pytest.fixture(scope="module")
def corel():
    rng = np.random.default_rng(1)
    raw = []
    for _ in COREL_CATEGORIES:
        y = (np.arange(40) < 12).astype(np.int8)
        raw.append((_bags(rng, y[:, None], d=3), y))
    return prepare_corel({"tasks": ["African", "Food"]}, *raw)


PROTOCOL = {"n_folds": 3, "folds_run": [0, 2], "corel_repeats": 2, "seed": 0, "n_jobs": 1}
FIGURE3 = {
    "n_repeats": 1,
    "max_bags": 40,
    "params": {"delta": 2.0, "max_em": 5, "full_rank_above": None},
    "variants": [{"low_rank": "eig", "trace_frac": 0.5}, {"low_rank": "eig", "trace_frac": 1.0}],
}
METHODS = {
    "GP": {"estimator": "MIMLGPClassifier", "params": {"delta": "median", "max_em": 5}},
    "GP-identity": {
        "estimator": "MIMLGPClassifier",
        "params": {"delta": "median", "fix_Kf": "identity"},
    },
    "kNN": {"estimator": "MIMLkNN", "params": {"n_references": 3, "n_citers": 5}},
}
COREL_METHODS = {
    "collective": {"estimator": "MIMLGPClassifier", "params": {"delta": "median", "max_em": 5}},
    "standard": {
        "estimator": "MIMLGPClassifier",
        "params": {"likelihood": "standard", "delta": "median", "max_em": 2},
    },
}


@pytest.fixture(scope="module")
def splits(scene, corel):
    return make_splits(scene, corel, PROTOCOL, FIGURE3)


def test_splits_are_seeded_partitions(scene, corel, splits):
    again = make_splits(scene, corel, PROTOCOL, FIGURE3)
    for a, b in zip(splits["train_idx"], again["train_idx"], strict=True):
        np.testing.assert_array_equal(a, b)
    cv = splits[splits["study"] == "scene"]
    assert cv["split"].tolist() == [0, 2]
    for tr, te in zip(cv["train_idx"], cv["test_idx"], strict=True):
        assert np.intersect1d(tr, te).size == 0 and tr.size + te.size == 60
    co = splits[splits["study"] == "corel"]
    assert sorted(co["dataset"].unique()) == ["African", "Food"] and len(co) == 4
    for tr, te in zip(co["train_idx"], co["test_idx"], strict=True):
        assert tr.size == te.size == 20 and np.intersect1d(tr, te).size == 0
    f3 = splits[splits["study"] == "figure3"].iloc[0]
    assert f3["train_idx"].size == f3["test_idx"].size == 20  # a 50/50 split of 40 bags
    # the splits of one study do not move when another study changes
    other = make_splits(scene, corel, {**PROTOCOL, "corel_repeats": 1}, FIGURE3)
    np.testing.assert_array_equal(
        other[other["study"] == "scene"]["test_idx"].iloc[1], cv["test_idx"].iloc[1]
    )


def test_evaluate_scene_is_independent_of_n_jobs(scene, splits):
    protocol = {**PROTOCOL, "log_models": {"methods": ["GP"]}}
    seq, cov_seq, models = evaluate_scene(scene, splits, METHODS, protocol)
    par, cov_par, _ = evaluate_scene(scene, splits, METHODS, {**protocol, "n_jobs": 2})
    metrics = ["hamming_loss", "one_error", "coverage", "ranking_loss"]
    metrics += ["one_minus_average_precision"]
    pd.testing.assert_frame_equal(
        seq[["fold", "method", *metrics]], par[["fold", "method", *metrics]]
    )
    assert len(seq) == 2 * 3 and set(seq["method"]) == set(METHODS)
    assert seq[metrics].apply(lambda c: c.between(0, 3)).all().all()
    # K^f per (method, fold) for the GP models only; identity stays the identity
    assert set(cov_seq) == {"GP", "GP-identity"} and set(cov_seq["GP"]) == {"fold0", "fold2"}
    np.testing.assert_allclose(cov_seq["GP-identity"]["fold0"], np.eye(3))
    np.testing.assert_array_equal(cov_seq["GP"]["fold2"], cov_par["GP"]["fold2"])
    # the model of the first fold run is kept, and it is the one that produced the K^f
    assert list(models) == ["GP_scene_fold0"]
    np.testing.assert_array_equal(models["GP_scene_fold0"].Kf_, cov_seq["GP"]["fold0"])
    # the learnt model ranks better than chance on these separable bags
    assert seq.loc[seq["method"] == "GP", "one_minus_average_precision"].max() < 0.35


def test_evaluate_scene_scores_one_fold_like_a_direct_fit(scene, splits):
    """The row of a unit equals fitting the estimator by hand on standardised bags."""
    from multiview_lab.evaluation import build_estimator, stable_seed
    from multiview_lab.miml.protocol import standardize_bags

    res, _, models = evaluate_scene(scene, splits, {"GP": METHODS["GP"]}, PROTOCOL)
    assert models == {}
    s = splits[splits["study"] == "scene"].iloc[0]
    train, test = standardize_bags(
        [scene["bags"][i] for i in s["train_idx"]], [scene["bags"][i] for i in s["test_idx"]]
    )
    model = build_estimator(METHODS["GP"], random_state=stable_seed("scene", 0, "GP", base=0))
    model.fit(train, scene["Y"][s["train_idx"]])
    expected = one_minus_average_precision(scene["Y"][s["test_idx"]], model.decision_function(test))
    assert res.loc[0, "one_minus_average_precision"] == pytest.approx(expected, abs=1e-12)


def test_evaluate_corel_and_report(corel, splits):
    res = evaluate_corel(corel, splits, COREL_METHODS, PROTOCOL)
    again = evaluate_corel(corel, splits, COREL_METHODS, {**PROTOCOL, "n_jobs": 2})
    pd.testing.assert_series_equal(res["accuracy"], again["accuracy"])
    assert len(res) == 2 * 2 * 2 and res["accuracy"].between(0, 1).all()
    assert (res["n_test"] == 20).all()
    assert res["balanced_accuracy"].between(0, 1).all()
    assert np.allclose(res["majority_accuracy"], 0.7, atol=0.2)  # 12 of 40 bags positive
    summary, md, metrics = corel_report(res, {"confidence": 0.95})
    assert set(summary["method"]) == {"collective", "standard"}
    assert md.startswith("| task | collective | standard |")
    assert "| task | always-negative | collective (balanced) | standard (balanced) |" in md
    assert "corel/African/standard/accuracy_mean" in metrics
    assert all(isinstance(v, float) for v in metrics.values())


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


def test_figure3_exact_and_full_rank_variant_agree(scene, splits):
    study = run_figure3(scene, splits, FIGURE3, PROTOCOL)
    assert study["variant"].tolist() == ["exact", "v0", "v1"]
    by = study.set_index("variant")
    assert by.loc["v0", "m"] < by.loc["v1", "m"] == by.loc["exact", "m"] == 20
    # trace_frac = 1 keeps every eigenpair: the low-rank path equals the exact one (spec test 7)
    assert by.loc["v1", "rel_error_F"] < 1e-8 and by.loc["v1", "rel_error_Kf"] < 1e-8
    assert by.loc["v0", "rel_error_F"] > 1e-6
    fig = plot_figure3(study)
    assert len(fig.axes) == 3
    plt.close(fig)


def test_label_covariance_heatmap(scene):
    Kf = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.2], [0.0, -0.2, 1.5]])
    fig = plot_label_covariance({"GP": {"fold0": Kf, "fold1": Kf}}, scene, {"method": "GP"})
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "$K^f$ (label covariance)",
        "label correlation",
    ]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), Kf)
    plt.close(fig)
    with pytest.raises(ValueError, match="learned no K"):
        plot_label_covariance({"GP": {"fold0": Kf}}, scene, {"method": "kNN"})


def test_prepare_scene_slice_is_seeded(scene):
    raw = (scene["bags"], scene["Y"], NAMES)
    a = prepare_scene(raw, {"max_bags": 30, "seed": 3})
    b = prepare_scene(raw, {"max_bags": 30, "seed": 3})
    assert len(a["bags"]) == 30 and a["Y"].shape == (30, 3)
    np.testing.assert_array_equal(a["Y"], b["Y"])
    with pytest.raises(ValueError, match="max_bags"):
        prepare_scene(raw, {"max_bags": 1000})
    with pytest.raises(ValueError, match="disagree"):
        prepare_scene((scene["bags"][:5], scene["Y"], NAMES), {})


def test_bad_input(scene, corel, splits):
    raw = [(corel["African"]["bags"], corel["African"]["y"])] * len(COREL_CATEGORIES)
    with pytest.raises(ValueError, match="non-empty subset"):
        prepare_corel({"tasks": ["Horses"]}, *raw)
    with pytest.raises(ValueError, match="one raw task per category"):
        prepare_corel({"tasks": ["African"]}, *raw[:3])
    with pytest.raises(ValueError, match="folds_run"):
        make_splits(scene, corel, {**PROTOCOL, "folds_run": [5]}, FIGURE3)
    with pytest.raises(ValueError, match="n_folds"):
        make_splits(scene, corel, {**PROTOCOL, "n_folds": 1}, FIGURE3)
    with pytest.raises(ValueError, match="No method registered"):
        evaluate_scene(scene, splits, {}, PROTOCOL)
    with pytest.raises(ValueError, match="needs an 'estimator'"):
        evaluate_scene(scene, splits, {"x": {"params": {}}}, PROTOCOL)
    with pytest.raises(ValueError, match="Unknown estimator"):
        evaluate_scene(scene, splits, {"x": {"estimator": "NoSuchThing"}}, PROTOCOL)
    with pytest.raises(ValueError, match="No 'corel' split"):
        evaluate_corel(corel, splits[splits["study"] != "corel"], COREL_METHODS, PROTOCOL)
    with pytest.raises(ValueError, match="variants"):
        run_figure3(scene, splits, {**FIGURE3, "variants": []}, PROTOCOL)
    with pytest.raises(ValueError, match="collective"):
        run_figure3(scene, splits, {**FIGURE3, "params": {"likelihood": "standard"}}, PROTOCOL)
    with pytest.raises(ValueError, match="confidence"):
        summarise_corel(
            pd.DataFrame(
                {
                    "dataset": ["T"],
                    "method": ["m"],
                    "split": [0],
                    "accuracy": [1.0],
                    "fit_time_s": [0.1],
                }
            ),
            1.5,
        )
