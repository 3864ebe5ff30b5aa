"""evaluate_methods: seeded units give the same results whatever n_jobs; models kept as asked."""

import numpy as np
import pandas as pd
import pytest

from multiview_lab.pipelines.pbmvboost.nodes import (
    draw_training_samples,
    evaluate_methods,
    plot_figure4,
)


@pytest.fixture(scope="module")
def views():
    rng = np.random.default_rng(0)
    y_train, y_test = rng.integers(0, 3, 400), rng.integers(0, 3, 150)

    def make(y):
        base = np.eye(3)[y] * 40
        return [
            (base @ rng.normal(size=(3, 12)) + rng.normal(0, 30, (len(y), 12))).astype(np.float32)
            for _ in range(3)
        ]

    return {
        "SYN": {
            "X_train": make(y_train),
            "X_test": make(y_test),
            "y_train": y_train,
            "y_test": y_test,
        }
    }


METHODS = {
    "PB-MVBoost": {
        "estimator": "PBMVBoostClassifier",
        "params": {"n_estimators": 5, "max_depth": 2},
        "trajectory": True,
    },
    "MVBoost": {"estimator": "MVBoostClassifier", "params": {"n_estimators": 5, "max_depth": 2}},
}


def _run(views, n_jobs):
    protocol = {
        "datasets": ["SYN"],
        "tasks": [0, 1],
        "n_train": [60],
        "n_draws": 2,
        "seed": 3,
        "n_jobs": n_jobs,
        "log_models": {"methods": ["PB-MVBoost"], "draws": [0]},
    }
    draws = draw_training_samples(views, protocol)
    return evaluate_methods(views, draws, METHODS, protocol)


def test_results_do_not_depend_on_n_jobs(views):
    r1, t1, m1 = _run(views, 1)
    r2, t2, m2 = _run(views, 2)
    cols = [c for c in r1.columns if c != "fit_time_s"]
    pd.testing.assert_frame_equal(r1[cols], r2[cols])
    pd.testing.assert_frame_equal(t1, t2)
    assert (
        sorted(m1) == sorted(m2) == ["PB-MVBoost_SYN_digit0_draw0", "PB-MVBoost_SYN_digit1_draw0"]
    )
    assert len(r1) == 2 * 2 * 2
    assert r1["accuracy"].between(0, 1).all() and (r1["fit_time_s"] > 0).all()
    assert set(t1["iteration"]) == set(range(1, 6))
    fig = plot_figure4(t1, {"method": "PB-MVBoost"})
    assert len(fig.axes) == 3


def test_unknown_method_option_is_a_clear_error(views):
    protocol = {"datasets": ["SYN"], "tasks": [0], "n_train": [60], "n_draws": 1, "n_jobs": 1}
    draws = draw_training_samples(views, protocol)
    bad = {"X": {"estimator": "PBMVBoostClassifier", "params": {"n_estimator": 5}}}
    with pytest.raises(ValueError, match="Unknown parameter"):
        evaluate_methods(views, draws, bad, protocol)
    with pytest.raises(ValueError, match="No method"):
        evaluate_methods(views, draws, {}, protocol)


def _protocol(**extra):
    base = {"datasets": ["SYN"], "tasks": [0, 1], "n_train": [60], "n_draws": 2, "seed": 3}
    return {**base, "n_jobs": 1, **extra}


def test_a_reading_scores_like_a_model_fitted_with_its_options(views):
    """A reading re-scores the fitted model with prediction-time options: same rows as a
    method fitted with those options (everything but the shared fit time)."""
    params = {"n_estimators": 5, "max_depth": 2}
    shared = {
        "PB": {
            "estimator": "PBMVBoostClassifier",
            "params": params,
            "readings": {"PB-final": {"vote": "final_rho"}},
        }
    }
    separate = {
        "PB": {"estimator": "PBMVBoostClassifier", "params": params},
        "PB-final": {"estimator": "PBMVBoostClassifier", "params": {**params, "vote": "final_rho"}},
    }
    draws = draw_training_samples(views, _protocol())
    a = evaluate_methods(views, draws, shared, _protocol())[0]
    b = evaluate_methods(views, draws, separate, _protocol())[0]
    keys = ["method", "task", "draw"]
    a, b = a.sort_values(keys, ignore_index=True), b.sort_values(keys, ignore_index=True)
    cols = [c for c in b.columns if c != "fit_time_s"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert (a[a["method"] == "PB"]["accuracy"].to_numpy() != 0).all()


def test_readings_reject_training_options_and_name_clashes(views):
    draws = draw_training_samples(views, _protocol())
    bad = {"PB": {**METHODS["PB-MVBoost"], "readings": {"PB-deep": {"max_depth": 4}}}}
    with pytest.raises(ValueError, match="only the prediction-time parameters"):
        evaluate_methods(views, draws, bad, _protocol())
    clash = {**METHODS, "PB-MVBoost": {**METHODS["PB-MVBoost"], "readings": {"MVBoost": {}}}}
    with pytest.raises(ValueError, match="repeat a method"):
        evaluate_methods(views, draws, clash, _protocol())


def test_unit_cache_resumes_and_recomputes_on_change(views, tmp_path, monkeypatch):
    """With cache_dir, finished units are stored; a second run loads them (no refit) and gives
    the same tables; other settings are not served from the cache."""
    from multiview_lab.pipelines.pbmvboost import nodes

    protocol = _protocol(cache_dir=str(tmp_path / "cache"), n_jobs=1)
    draws = draw_training_samples(views, protocol)
    r1, t1, _ = evaluate_methods(views, draws, METHODS, protocol)
    assert len(list((tmp_path / "cache").glob("*.joblib"))) == len(draws) * len(METHODS)
    assert not list((tmp_path / "cache").glob("*.tmp"))
    calls = []
    original = nodes._fit_and_score
    monkeypatch.setattr(nodes, "_fit_and_score", lambda *a: calls.append(a) or original(*a))
    r2, t2, _ = evaluate_methods(views, draws, METHODS, protocol)
    assert calls == []  # every unit came from the cache
    pd.testing.assert_frame_equal(r1, r2)
    pd.testing.assert_frame_equal(t1, t2)
    changed = {**METHODS, "MVBoost": {**METHODS["MVBoost"], "params": {"n_estimators": 3}}}
    evaluate_methods(views, draws, changed, protocol)
    assert len(calls) == len(draws)  # only the changed method was refitted


def test_unit_cache_recomputes_only_the_methods_whose_code_changed(views, tmp_path, monkeypatch):
    """The cache key holds the code each method runs: an edit of the tree baselines' module
    refits MV-MV's units and serves PB-MVBoost's and MVBoost's from the cache."""
    from multiview_lab.pipelines.pbmvboost import nodes

    methods = {**METHODS, "MV-MV": {"estimator": "MVMVClassifier", "params": {"max_depth": 2}}}
    protocol = _protocol(cache_dir=str(tmp_path / "cache"), n_jobs=1)
    draws = draw_training_samples(views, protocol)
    evaluate_methods(views, draws, methods, protocol)
    calls = []
    original_fit, original_code = nodes._fit_and_score, nodes.code_fingerprint
    monkeypatch.setattr(nodes, "_fit_and_score", lambda *a: calls.append(a) or original_fit(*a))
    edited = "multiview_lab.pbmvboost.baselines"
    monkeypatch.setattr(
        nodes,
        "code_fingerprint",
        lambda *m: original_code(*m) + ("-edited" if edited in m else ""),
    )
    evaluate_methods(views, draws, methods, protocol)
    assert len(calls) == len(draws) and {a[0]["method"] for a in calls} == {"MV-MV"}
