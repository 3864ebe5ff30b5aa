"""The MIML tasks through the experiment engine on small synthetic bags: paired seeds, n_jobs
invariance, scores equal to a direct fit, the K^f table, the COREL scores and Figure 3."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.evaluation import build_estimator
from multiview_lab.miml import evaluate_miml, standardize_bags
from multiview_lab.miml.metrics import one_minus_average_precision
from multiview_lab.pipelines.miml.report import figure3_study
from multiview_lab.pipelines.miml.task import CorelTask, Figure3Task, SceneTask
from multiview_lab.protocol import run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.pipelines.miml.conftest import COREL_METHODS, FIGURE3, METHODS

METRICS = ["hamming_loss", "one_error", "coverage", "ranking_loss", "one_minus_average_precision"]
TIMES = list(TIMING_COLUMNS)


def _run(task, data, splits, methods, n_jobs=1, **kw):
    return run_experiment(task, data, splits, methods, execution={"n_jobs": n_jobs}, **kw)


@pytest.fixture(scope="module")
def scene_run(scene, splits):
    return _run(SceneTask(), scene, splits[0], METHODS)


def test_scene_results_do_not_depend_on_n_jobs(scene, splits, scene_run):
    par = _run(SceneTask(), scene, splits[0], METHODS, n_jobs=2)
    seq = scene_run.results
    assert list(seq.columns[:4]) == ["dataset", "method", "fold", "seed"]
    assert len(seq) == 2 * 3 and seq["method"].tolist() == ["GP", "GP-identity", "kNN"] * 2
    pd.testing.assert_frame_equal(seq.drop(columns=TIMES), par.results.drop(columns=TIMES))
    pd.testing.assert_frame_equal(
        scene_run.extras["label_covariances"], par.extras["label_covariances"]
    )
    # paired comparisons: every method gets the split's seed
    seeds = dict(zip(splits[0]["fold"], splits[0]["seed"], strict=True))
    assert (seq["seed"] == seq["fold"].map(seeds)).all()
    assert seq[METRICS].apply(lambda c: c.between(0, 3)).all().all()
    assert (seq[TIMES] > 0).all().all()
    # the fitted MIML-GP quantities are columns; the kNN has none
    gp = seq[seq["method"] == "GP"]
    assert (gp["rank_m"] <= 40).all() and (gp["n_em_iter"] <= 5).all() and (gp["delta"] > 0).all()
    assert seq.loc[seq["method"] == "kNN", ["delta", "rank_m", "n_em_iter"]].isna().all().all()
    # the learnt model ranks better than chance on these separable bags
    assert gp["one_minus_average_precision"].max() < 0.35


def test_scene_unit_scores_like_a_direct_fit_on_standardised_bags(scene, splits, scene_run):
    data, split = scene["scene"], splits[0].iloc[0]
    train, test = standardize_bags(
        [data["bags"][i] for i in split["train"]], [data["bags"][i] for i in split["test"]]
    )
    model = build_estimator(METHODS["GP"], random_state=int(split["seed"]))
    with pytest.warns(UserWarning, match="reached max_em=5 EM loops"):  # the test's short EM
        model.fit(train, data["Y"][split["train"]])
    expected = evaluate_miml(model, test, data["Y"][split["test"]])
    row = scene_run.results.iloc[0]
    assert row["method"] == "GP" and row["fold"] == split["fold"]
    for metric, value in expected.items():
        assert row[metric] == pytest.approx(value, abs=1e-12), metric
    assert row["one_minus_average_precision"] == pytest.approx(
        one_minus_average_precision(data["Y"][split["test"]], model.decision_function(test))
    )
    # its K^f is the unit's entry of the label-covariance table
    table = scene_run.extras["label_covariances"]
    block = table[(table["method"] == "GP") & (table["fold"] == split["fold"])]
    np.testing.assert_allclose(block.pivot(index="i", columns="j", values="value"), model.Kf_)


def test_label_covariances_and_models(scene_run):
    table = scene_run.extras["label_covariances"]
    assert list(table.columns) == ["dataset", "method", "fold", "i", "j", "value"]
    assert set(table["method"]) == {"GP", "GP-identity"}  # the kNN learns no K^f
    assert len(table) == 2 * 2 * 9
    ident = table[table["method"] == "GP-identity"]
    np.testing.assert_allclose(ident["value"], (ident["i"] == ident["j"]).astype(float))
    # the first fold of every method is kept, and it is the one whose K^f is in the table
    assert sorted(scene_run.models) == [
        "GP-identity_scene_fold0",
        "GP_scene_fold0",
        "kNN_scene_fold0",
    ]
    Kf = scene_run.models["GP_scene_fold0"].Kf_
    gp0 = table[(table["method"] == "GP") & (table["fold"] == 0)]
    np.testing.assert_array_equal(gp0["value"].to_numpy(), Kf.ravel())


def test_corel_scores_label_zero(corel, splits):
    out = _run(CorelTask(), corel, splits[1], COREL_METHODS)
    res = out.results
    assert len(res) == 2 * 2 * 2 and out.extras == {}
    assert list(res.columns[:4]) == ["dataset", "method", "split", "seed"]
    assert res["accuracy"].between(0, 1).all() and (res["n_test"] == 20).all()
    assert res["balanced_accuracy"].between(0, 1).all()
    split = splits[1].iloc[0]
    y = corel["African"]["y"]
    assert (
        res["majority_accuracy"].iloc[:2]
        == max(y[split["test"]].mean(), 1 - y[split["test"]].mean())
    ).all()
    # the accuracy of a unit is that of the kept model on the standardised test bags
    train, test = standardize_bags(
        [corel["African"]["bags"][i] for i in split["train"]],
        [corel["African"]["bags"][i] for i in split["test"]],
    )
    model = out.models["collective_African_split0"]
    pred = model.predict(test)[:, 0]
    assert res.loc[0, "accuracy"] == pytest.approx(np.mean(pred == y[split["test"]]))
    assert res.loc[0, "rank_m"] > 0


def test_figure3_full_rank_variant_equals_the_exact_model(scene, splits):
    out = _run(Figure3Task(), scene, splits[2], FIGURE3["methods"])
    fits = out.extras["figure3_fits"]
    assert fits["method"].tolist() == ["exact", "half", "full"]
    study = figure3_study(out.results, fits, FIGURE3).set_index("variant")
    assert (study["seed"] == splits[2]["seed"].iloc[0]).all()
    assert study.loc["half", "m"] < study.loc["full", "m"] == study.loc["exact", "m"] == 20
    # trace_frac = 1 keeps every eigenpair: the low-rank path equals the exact one (spec test 7)
    assert study.loc["full", "rel_error_F"] < 1e-8 and study.loc["full", "rel_error_Kf"] < 1e-8
    assert study.loc["half", "rel_error_F"] > 1e-6
    assert study.loc["exact", "rel_error_F"] == 0.0
