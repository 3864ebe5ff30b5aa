"""The experiment engine: units, seed policy, n_jobs invariance, cache, tuning, failures."""

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from multiview_lab.protocol import ViewsTask, engine, parse_methods, run_experiment
from multiview_lab.protocol.unit import TIMING_COLUMNS
from tests.protocol.conftest import METHODS

TIMING = list(TIMING_COLUMNS)


def _run(data, split_table, methods=METHODS, task=None, **execution):
    return run_experiment(
        task or ViewsTask(), data, split_table, methods, execution={"n_jobs": 1, **execution}
    )


def test_units_are_split_times_method_with_the_split_seed(data, split_table):
    out = _run(data, split_table)
    r = out.results
    assert len(r) == len(split_table) * len(METHODS)
    assert list(r.columns[:5]) == ["dataset", "method", "repeat", "fold", "seed"]
    # every method gets the split's seed: the paired design of the five papers
    for _, split in split_table.iterrows():
        rows = r[(r["repeat"] == split["repeat"]) & (r["fold"] == split["fold"])]
        assert set(rows["seed"]) == {split["seed"]} and list(rows["method"]) == list(METHODS)
    assert r["accuracy"].between(0.5, 1).all() and (r["fit_time_s"] > 0).all()
    # the kept models: the first unit of every method, fitted with the split's seed
    assert sorted(out.models) == ["logreg_SYN_repeat0_fold0", "tree_SYN_repeat0_fold0"]
    tree = out.models["tree_SYN_repeat0_fold0"]
    assert tree.estimator_.random_state == split_table["seed"].iloc[0]


def test_results_do_not_depend_on_n_jobs(data, split_table):
    a = _run(data, split_table, n_jobs=1).results
    b = _run(data, split_table, n_jobs=2).results
    pd.testing.assert_frame_equal(a.drop(columns=TIMING), b.drop(columns=TIMING))


def test_scores_equal_a_direct_fit(data, split_table):
    """A unit is exactly: build with the split's seed, fit on its training rows, score."""
    r = _run(data, split_table).results
    split = split_table.iloc[4]
    method = parse_methods(METHODS)["tree"]
    model = method.build(random_state=int(split["seed"]))
    Xs, y = data["SYN"]["X"], data["SYN"]["y"]
    model.fit([X[split["train"]] for X in Xs], y[split["train"]])
    acc = np.mean(model.predict([X[split["test"]] for X in Xs]) == y[split["test"]])
    row = r[
        (r["method"] == "tree") & (r["repeat"] == split["repeat"]) & (r["fold"] == split["fold"])
    ]
    assert row["accuracy"].item() == pytest.approx(acc, abs=0)


def test_unit_cache_resumes_and_refits_only_what_changed(data, split_table, tmp_path, monkeypatch):
    cache = str(tmp_path / "cache")
    first = _run(data, split_table, cache_dir=cache)
    assert first.n_cached == 0
    assert len(list((tmp_path / "cache").glob("*.joblib"))) == len(split_table) * 2
    again = _run(data, split_table, cache_dir=cache)
    assert again.n_cached == len(split_table) * 2
    pd.testing.assert_frame_equal(first.results, again.results)
    changed = {**METHODS, "tree": {**METHODS["tree"], "params": {
        "estimator": "sklearn.tree.DecisionTreeClassifier", "params": {"max_depth": 2}}}}  # fmt: skip
    assert _run(data, split_table, changed, cache_dir=cache).n_cached == len(split_table)
    # an edit of the code a method runs re-keys that method's units only
    methods = {**METHODS, "mvmv": {"estimator": "MVMVClassifier", "params": {"max_depth": 2}}}
    data = {"SYN": {**data["SYN"], "y": (data["SYN"]["y"] == 0).astype(int)}}  # MV-MV: binary
    _run(data, split_table, methods, cache_dir=cache)
    original = engine.code_fingerprint
    edited = "multiview_lab.pbmvboost.baselines"
    monkeypatch.setattr(
        engine, "code_fingerprint", lambda *m: original(*m) + ("-edited" if edited in m else "")
    )
    out = _run(data, split_table, methods, cache_dir=cache)
    assert out.n_cached == 2 * len(split_table)  # tree and logreg from the cache, MV-MV refitted
    assert _run(data, split_table, methods, cache_dir=cache).n_cached == 3 * len(split_table)


class _FailingTask(ViewsTask):
    fail_on: tuple = ()

    def fit(self, model, data, split, method):
        if (split["repeat"], split["fold"]) in _FailingTask.fail_on:
            raise FloatingPointError("diverged")
        super().fit(model, data, split, method)


def test_a_failed_unit_names_itself_and_finished_units_stay_cached(data, split_table, tmp_path):
    cache = str(tmp_path / "cache")
    _FailingTask.fail_on = ((1, 2),)
    with pytest.raises(RuntimeError, match=r"diverged.*|unit .* failed") as err:
        _run(data, split_table, task=_FailingTask(), cache_dir=cache)
    assert "rerun to resume" in str(err.value)
    done = len(list((tmp_path / "cache").glob("*.joblib")))
    assert 0 < done < len(split_table) * 2
    _FailingTask.fail_on = ()
    resumed = _run(data, split_table, task=_FailingTask(), cache_dir=cache)
    assert resumed.n_cached == done
    assert not list((tmp_path / "cache").glob("*.tmp"))


def test_tune_matches_scikit_learn_grid_search(data, split_table):
    """``tune:`` chooses like GridSearchCV with the same stratified folds and seed."""
    grid = [1, 2, 4, 8]
    methods = {
        "tree": {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
            "tune": {"grid": {"params": [{"max_depth": d} for d in grid]}, "folds": 3},
        }
    }
    r = _run(data, split_table, methods).results
    Xs, y = data["SYN"]["X"], data["SYN"]["y"]
    for (_, split), (_, row) in zip(split_table.iterrows(), r.iterrows(), strict=True):
        seed = int(split["seed"])
        search = GridSearchCV(
            DecisionTreeClassifier(random_state=seed),
            {"max_depth": grid},
            cv=StratifiedKFold(3, shuffle=True, random_state=seed),
        ).fit(np.hstack(Xs)[split["train"]], y[split["train"]])
        assert row["cv_accuracy"] == pytest.approx(search.best_score_, abs=1e-12)


def test_registry_errors_name_the_problem(data, split_table):
    cases = [
        ({"m": {"params": {}}}, "needs an 'estimator'"),
        ({"m": {"estimator": "NoSuchClassifier"}}, "Unknown estimator"),
        ({"m": {"estimator": "ConcatViews", "params": {"n_trees": 3}}}, "Unknown parameter"),
        ({"m": {"estimator": "ConcatViews", "trajectory": True}}, "unknown key"),
        ({"m": {"estimator": "ConcatViews", "tune": {"grid": {}}}}, "tune.grid"),
        ({"m": {"estimator": "ConcatViews", "tune": {"grid": {"a": [1]}, "cv": 3}}}, "tune key"),
        ({}, "no method registered"),
    ]
    for methods, message in cases:
        with pytest.raises(ValueError, match=message):
            _run(data, split_table, methods)
    with pytest.raises(ValueError, match="execution.backend"):
        _run(data, split_table, backend="spark")
    with pytest.raises(ValueError, match="not prepared"):
        run_experiment(ViewsTask(), {}, split_table, METHODS)


def test_a_damaged_cache_entry_is_recomputed(data, split_table, tmp_path):
    cache = tmp_path / "cache"
    first = _run(data, split_table, cache_dir=str(cache))
    victim = sorted(cache.glob("*.joblib"))[0]
    victim.write_bytes(b"not a joblib file")
    again = _run(data, split_table, cache_dir=str(cache))
    assert again.n_cached == len(split_table) * 2 - 1
    pd.testing.assert_frame_equal(
        first.results.drop(columns=TIMING), again.results.drop(columns=TIMING)
    )


def test_a_disabled_method_is_not_run(data, split_table):
    methods = {**METHODS, "logreg": {**METHODS["logreg"], "enabled": False}}
    r = _run(data, split_table, methods).results
    assert set(r["method"]) == {"tree"}
    with pytest.raises(ValueError, match="disabled"):
        _run(data, split_table, {"logreg": methods["logreg"]})


def test_cache_key_covers_what_a_unit_runs_not_the_scheduler():
    """A paper run resumes over sessions: editing the engine's scheduling, cache or progress
    code must not re-key its units, editing the unit's own code must."""
    from multiview_lab.protocol.cache import code_closure
    from multiview_lab.protocol.unit import run_unit

    closure = code_closure(
        run_unit.__module__, "multiview_lab.pipelines.pbmvboost.task", "multiview_lab.pbmvboost"
    )
    assert "multiview_lab.protocol.unit" in closure
    assert "multiview_lab.protocol.tasks" in closure
    assert "multiview_lab.protocol.engine" not in closure
    assert "multiview_lab.protocol.execution" not in closure
    # nor the reporting helpers or the cache's own code: the spec builder is the only project
    # code between a conf entry and its estimator
    assert "multiview_lab.specs" in closure
    assert "multiview_lab.evaluation" not in closure
    assert "multiview_lab.protocol.cache" not in closure
    # a shared inner CV (tune.once_per) is keyed by its computation, not by the grouping
    from multiview_lab.protocol.tuning import run_tune_point

    shared = code_closure(run_tune_point.__module__, "multiview_lab.pipelines.gbc.task")
    assert {"multiview_lab.protocol.tuning", "multiview_lab.protocol.unit"} <= set(shared)
    assert "multiview_lab.protocol.sharing" not in shared
    assert "multiview_lab.protocol.engine" not in shared


def test_no_task_puts_the_engine_in_its_units_keys():
    """Every task the pipelines run lives in a module whose code closure leaves out the engine
    and the cache code (MVFS's λ CV task once lived beside the node that calls the engine, so
    an engine edit re-keyed its units)."""
    import dataclasses
    import importlib
    import inspect
    import pkgutil

    import multiview_lab.pipelines as pipelines
    from multiview_lab.protocol.cache import code_closure
    from multiview_lab.protocol.tasks import Task

    tasks = set()
    for info in pkgutil.walk_packages(pipelines.__path__, f"{pipelines.__name__}."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Task) and dataclasses.is_dataclass(cls):
                tasks.add(cls)
    modules = {cls.__module__ for cls in tasks if cls.__module__.startswith(pipelines.__name__)}
    assert "multiview_lab.pipelines.mvfs.task" in modules and len(modules) >= 6
    for name in sorted(modules):
        closure = code_closure(name)
        assert "multiview_lab.protocol.engine" not in closure, name
        assert "multiview_lab.protocol.cache" not in closure, name


def test_cache_key_covers_nested_estimators_and_skips_library_ones(data, split_table, tmp_path):
    """A scikit-learn meta-estimator around a project estimator (the benchmark's one-vs-rest
    methods, a Pipeline) is cached, keyed by the project estimator's code; library code is
    covered by the library versions (its compiled modules have no source to read)."""
    from multiview_lab.specs import estimator_modules

    ovr = {
        "estimator": "sklearn.multiclass.OneVsRestClassifier",
        "params": {"estimator": {"estimator": "MVMVClassifier"}},
    }
    assert estimator_modules(ovr) == ("multiview_lab.pbmvboost.baselines",)
    pipe = {
        "estimator": "sklearn.pipeline.Pipeline",
        "params": {"steps": [["scale", {"estimator": "sklearn.preprocessing.StandardScaler"}]]},
    }
    assert estimator_modules(pipe) == ()
    concat = {
        "estimator": "ConcatViews",
        "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
    }
    methods = {"pipe": {**pipe, "params": {"steps": [["concat", concat]]}}}
    cache = str(tmp_path / "cache")
    first = _run(data, split_table, methods, cache_dir=cache)
    again = _run(data, split_table, methods, cache_dir=cache)
    assert again.n_cached == len(first.results) == len(split_table)


def _tree_grid(once_per=None):
    tune = {"grid": {"params": [{"max_depth": d} for d in (1, 2, 4, 8)]}, "folds": 3}
    if once_per is not None:
        tune["once_per"] = once_per
    return {
        "tree": {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
            "tune": tune,
        },
        "logreg": METHODS["logreg"],
    }


def test_once_per_tunes_on_each_groups_first_split_and_reuses_its_choice(
    data, split_table, tmp_path
):
    """``tune.once_per``: one inner CV per group, on its first split (the same choice as an
    unshared ``tune`` there), and every unit of the group fitted with that choice."""
    every = _run(data, split_table, _tree_grid()).results
    shared = _run(data, split_table, _tree_grid(["dataset", "repeat"])).results
    tree, tree_every = (r[r["method"] == "tree"].reset_index(drop=True) for r in (shared, every))
    Xs, y = data["SYN"]["X"], data["SYN"]["y"]
    X = np.hstack(Xs)
    for repeat in (0, 1):
        rows = tree[tree["repeat"] == repeat]
        ref = tree_every[(tree_every["repeat"] == repeat) & (tree_every["fold"] == 0)].iloc[0]
        assert (rows["tuned_on"] == "fold=0").all()
        assert (rows["cv_accuracy"] == ref["cv_accuracy"]).all()  # one CV, the reference's
        # the reference's choice, refitted on every split of the group with its own seed
        seed0 = int(split_table[(split_table["repeat"] == repeat)].iloc[0]["seed"])
        split0 = split_table[(split_table["repeat"] == repeat)].iloc[0]
        search = GridSearchCV(
            DecisionTreeClassifier(random_state=seed0),
            {"max_depth": [1, 2, 4, 8]},
            cv=StratifiedKFold(3, shuffle=True, random_state=seed0),
        ).fit(X[split0["train"]], y[split0["train"]])
        depth = search.best_params_["max_depth"]
        for _, split in split_table[split_table["repeat"] == repeat].iterrows():
            row = rows[rows["fold"] == split["fold"]].iloc[0]
            clf = DecisionTreeClassifier(max_depth=depth, random_state=int(split["seed"]))
            clf.fit(X[split["train"]], y[split["train"]])
            expected = np.mean(clf.predict(X[split["test"]]) == y[split["test"]])
            assert row["accuracy"] == pytest.approx(expected, abs=1e-12)
        assert rows[rows["fold"] == 0].iloc[0]["accuracy"] == ref["accuracy"]
    # the shared CV's CPU seconds: once per group, on its reference unit's rows
    assert (tree["shared_cv_cpu_time_s"].notna() == (tree["fold"] == 0)).all()
    assert (tree["shared_cv_cpu_time_s"].dropna() > 0).all()
    untouched = shared[shared["method"] == "logreg"].drop(columns=TIMING).reset_index(drop=True)
    expected = every[every["method"] == "logreg"].drop(columns=TIMING).reset_index(drop=True)
    pd.testing.assert_frame_equal(untouched[expected.columns], expected)
    assert untouched["tuned_on"].isna().all()

    cache = str(tmp_path / "cache")
    first = run_experiment(
        ViewsTask(), data, split_table, _tree_grid(["dataset", "repeat"]),
        execution={"n_jobs": 2, "cache_dir": cache},
    )  # fmt: skip
    n_units = 2 * len(split_table)
    # + 2 shared CVs and their 4 grid points each
    assert len(list((tmp_path / "cache").glob("*.joblib"))) == n_units + 2 + 2 * 4
    again = run_experiment(
        ViewsTask(), data, split_table, _tree_grid(["dataset", "repeat"]),
        execution={"n_jobs": 1, "cache_dir": cache},
    )  # fmt: skip
    assert again.n_cached == n_units
    timing = [*TIMING, "shared_cv_cpu_time_s"]
    pd.testing.assert_frame_equal(
        again.results.drop(columns=timing), first.results.drop(columns=timing)
    )
    pd.testing.assert_frame_equal(first.results.drop(columns=timing), shared.drop(columns=timing))
    # a rerun from the cache reports the cached costs, not the cost of reading them
    pd.testing.assert_series_equal(again.results["cpu_time_s"], first.results["cpu_time_s"])


def test_once_per_errors_name_the_key(data, split_table):
    with pytest.raises(ValueError, match=r"tune.once_per names \['train_pct'\]"):
        _run(data, split_table, _tree_grid(["dataset", "train_pct"]))
    with pytest.raises(ValueError, match="tune.once_per must be a split-table key"):
        _run(data, split_table, _tree_grid([1]))


def test_the_protocols_tune_once_per_reaches_every_tuned_method(data, split_table):
    """``protocol.tune_once_per`` (the shared training node) shares the inner CV of every tuned
    method that does not set its own ``once_per``; untuned methods are not touched."""
    from multiview_lab.pipelines.training.nodes import train_method

    def run(method, protocol):
        return train_method(
            data, split_table, _tree_grid(), protocol, {"n_jobs": 1},
            method=method, pipeline="test", make_task=lambda _: ViewsTask(),
        )["results"]  # fmt: skip

    shared = run("tree", {"tune_once_per": ["dataset", "repeat"]})
    assert (shared["tuned_on"] == "fold=0").all()
    assert shared.groupby("repeat")["cv_accuracy"].nunique().eq(1).all()
    per_unit = run("tree", {})
    assert "tuned_on" not in per_unit
    assert per_unit.groupby("repeat")["cv_accuracy"].nunique().gt(1).any()
    assert "tuned_on" not in run("logreg", {"tune_once_per": ["dataset", "repeat"]})


def test_tuned_on_names_every_key_outside_the_group():
    from multiview_lab.protocol.sharing import tuned_on

    ref = {"dataset": "mfeat", "method": "GBC", "setting": "uniform", "train_pct": 10,
           "split": 0, "seed": 7}  # fmt: skip
    assert tuned_on(ref, ["dataset", "setting", "train_pct"]) == "split=0"
    assert tuned_on(ref, "train_pct") == "dataset=mfeat, setting=uniform, split=0"


def test_cpu_time_is_the_units_computation_inner_cv_included(data, split_table):
    """``cpu_time_s`` counts the CPU a unit uses (every inner-CV fit and the final fit), not the
    time it waits: the cost of a paper run measured whatever else shares the cores."""
    from tests.protocol.slow_task import BusyViewsTask, SlowViewsTask

    one = split_table.iloc[:1]
    tuned = {
        "tree": {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.tree.DecisionTreeClassifier"},
            "tune": {"grid": {"params": [{"max_depth": d} for d in (1, 2)]}, "folds": 2},
        },
        "logreg": METHODS["logreg"],
    }
    r = _run(data, one, tuned, task=BusyViewsTask(cpu_seconds=0.05)).results.set_index("method")
    assert r.loc["tree", "cpu_time_s"] >= 5 * 0.05  # 2 points x 2 folds + the final fit
    assert 0.05 <= r.loc["logreg", "cpu_time_s"] < 5 * 0.05
    waits = _run(data, one, METHODS, task=SlowViewsTask(seconds=0.3)).results
    assert (waits["fit_time_s"] >= 0.3).all() and (waits["cpu_time_s"] < 0.25).all()


def test_the_measured_cost_sums_every_unit_and_shared_cv_cached_or_not(
    data, split_table, tmp_path, caplog
):
    """``ExperimentResult.cpu_seconds``: the recorded cost of every unit and shared CV of the
    results, also when they come from the cache (a run resumed over sessions reports the
    protocol's whole cost); the log's last line says it."""
    import logging

    methods = _tree_grid(["dataset", "repeat"])
    cache = str(tmp_path / "cache")
    first = _run(data, split_table, methods, cache_dir=cache)
    r = first.results
    expected = r["cpu_time_s"].sum() + r["shared_cv_cpu_time_s"].sum()
    assert first.cpu_seconds == pytest.approx(expected) and first.n_unmeasured == 0
    assert r["shared_cv_cpu_time_s"].notna().sum() == 2  # one per repeat
    with caplog.at_level(logging.INFO, logger="multiview_lab.protocol.engine"):
        again = _run(data, split_table, methods, cache_dir=cache)
    assert again.n_cached == len(r) and again.cpu_seconds == pytest.approx(first.cpu_seconds)
    assert "from the cache" in caplog.text and "measured cost of all of them" in caplog.text


def test_cache_status_says_what_a_run_would_find_without_running(data, split_table, tmp_path):
    """A paper run resumed over sessions: which units and shared CVs are done, which wait for
    their group's CV, which remain, and what the done ones cost, as the run itself keys them."""
    from multiview_lab.protocol import cache_status

    methods = _tree_grid(["dataset", "repeat"])
    cache = tmp_path / "cache"
    execution = {"n_jobs": 1, "cache_dir": str(cache)}
    before = cache_status(ViewsTask(), data, split_table, methods, execution=execution)
    assert not cache.exists()  # nothing ran
    shared, units = (before[before["stage"] == s] for s in ("shared CV", "unit"))
    assert len(shared) == 2 and (shared["status"] == "to run").all()
    assert len(units) == 2 * len(split_table)
    assert (units[units["method"] == "tree"]["status"] == "waiting").all()
    assert (units[units["method"] == "logreg"]["status"] == "to run").all()

    first = run_experiment(ViewsTask(), data, split_table, methods, execution=execution)
    done = cache_status(ViewsTask(), data, split_table, methods, execution=execution)
    assert (done["status"] == "cached").all()
    measured = done["cpu_time_s"].sum()
    assert measured == pytest.approx(first.cpu_seconds)
    # one unit lost: it alone is to run
    victim = sorted(cache.glob("*.joblib"), key=lambda p: p.stat().st_mtime)[-1]
    victim.unlink()
    after = cache_status(ViewsTask(), data, split_table, methods, execution=execution)
    assert (after["status"] == "to run").sum() == 1
    with pytest.raises(ValueError, match="cache_dir"):
        cache_status(ViewsTask(), data, split_table, methods, execution={"n_jobs": 1})


def test_cache_only_computes_nothing_and_names_what_is_missing(data, split_table, tmp_path):
    from multiview_lab.protocol import CacheIncompleteError

    cache = tmp_path / "cache"
    execution = {"n_jobs": 1, "cache_dir": str(cache), "cache_only": True}
    with pytest.raises(CacheIncompleteError, match="0 of 2 shared inner CVs in the cache"):
        run_experiment(ViewsTask(), data, split_table, _tree_grid(["dataset", "repeat"]),
                       execution=execution)  # fmt: skip
    with pytest.raises(
        CacheIncompleteError, match=f"0 of {2 * len(split_table)} units in the cache"
    ):
        run_experiment(ViewsTask(), data, split_table, METHODS, execution=execution)
    assert not cache.exists()
    full = _run(data, split_table, METHODS, cache_dir=str(cache))
    again = run_experiment(ViewsTask(), data, split_table, METHODS, execution=execution)
    assert again.n_cached == len(full.results)
    with pytest.raises(ValueError, match="cache_only needs execution.cache_dir"):
        _run(data, split_table, METHODS, cache_only=True)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_warnings_of_units_are_logged_once_per_site_and_counted(data, split_table, caplog, n_jobs):
    """A warning every unit raises reaches the console as two lines per method (its first
    occurrence, then how many units raised it), not one per unit from every worker."""
    import logging
    import warnings

    from tests.protocol.slow_task import WarningViewsTask

    caplog.set_level(logging.WARNING, logger="multiview_lab.protocol.unit_warnings")
    with warnings.catch_warnings(record=True) as leaked:
        warnings.simplefilter("always")
        out = run_experiment(
            WarningViewsTask(), data, split_table, {"tree": METHODS["tree"]},
            execution={"n_jobs": n_jobs}, label="syn tree",
        )  # fmt: skip
    assert len(out.results) == 6
    assert [w for w in leaked if "stopped early" in str(w.message)] == []
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4, lines  # two sites: first occurrence + summary each
    every = [m for m in lines if "stopped early" in m]
    assert "UserWarning (protocol/slow_task.py:" in every[0] and "in unit dataset=SYN" in every[0]
    assert every[1].startswith("syn tree: 6 of 6 units computed raised UserWarning")
    special = [m for m in lines if "fold 0 is special" in m]
    assert special[1].startswith("syn tree: 2 of 6 units computed raised RuntimeWarning")


def test_an_ignore_filter_still_silences_a_units_warning(data, split_table, caplog):
    import logging
    import warnings

    from tests.protocol.slow_task import WarningViewsTask

    caplog.set_level(logging.WARNING, logger="multiview_lab.protocol.unit_warnings")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        _run(data, split_table, {"tree": METHODS["tree"]}, task=WarningViewsTask())
    assert caplog.records == []


def test_the_eta_costs_each_unit_left_by_its_group():
    """Units of a run differ in cost by orders of magnitude (memd: gene sets, then text): the
    ETA costs each unit left at its group's mean recorded CPU (cached units included), at the
    run's wall-per-CPU rate, instead of the mean time per unit so far."""
    cheap = engine.cost_group({"dataset": "genes", "fold": 0, "seed": 1, "method": "SVM"})
    dear = engine.cost_group({"dataset": "text", "fold": 3, "seed": 2, "method": "SVM"})
    assert cheap == engine.cost_group({"dataset": "genes", "fold": 7, "seed": 5, "method": "SVM"})
    new = (("dataset", "images"),)
    progress = engine._Progress("t", [cheap] * 3 + [dear] * 2 + [new], known=[(dear, 100.0)])
    progress.tick(cheap, 1.0)  # 1 CPU s done; say 0.5 s of wall: 2 workers
    # left: 2 cheap (1 s each) + 2 dear (100 s each, from the cache) + 1 of a group with no
    # record (the mean of all recorded: (1 + 100) / 2)
    assert progress.eta(0.5) == pytest.approx(0.5 * (2 * 1.0 + 2 * 100.0 + 50.5))
    fresh = engine._Progress("t", [cheap] * 4)  # nothing recorded yet: time per unit
    fresh.tick(cheap, None)
    assert fresh.eta(2.0) == pytest.approx(6.0)


def test_progress_lines_are_spaced_and_the_last_unit_always_logs(monkeypatch, caplog):
    """A run of quick units logs its last unit only, not one line per unit; a slow run logs
    every ~5 % of its units (here 2 of 40), and a long gap gets a line whatever the count."""
    clock = {"now": 0.0}
    monkeypatch.setattr(engine.time, "perf_counter", lambda: clock["now"])

    def lines(n, seconds_per_unit):
        caplog.clear()
        progress = engine._Progress("t", [()] * n)
        for _ in range(n):
            clock["now"] += seconds_per_unit
            progress.tick((), seconds_per_unit)
        return [r.getMessage() for r in caplog.records if r.name == engine.logger.name]

    with caplog.at_level(logging.INFO, logger=engine.logger.name):
        quick = lines(10, 0.03)
        assert len(quick) == 1 and quick[0].startswith("t: 10/10 units")
        slow = lines(40, 3.0)  # a 5 % step (2 units) is 6 s apart
        assert [m.split()[1] for m in slow] == [f"{k}/40" for k in range(2, 41, 2)]
        sparse = lines(40, 1.0)  # 2 s per step: every 5 s at most, so steps 6, 12, ... s
        assert [m.split()[1] for m in sparse] == [f"{k}/40" for k in (6, 12, 18, 24, 30, 36, 40)]
        gap = lines(3, 61.0)  # fewer units than 20: step 1, each a minute apart
        assert len(gap) == 3
        caplog.clear()
        summed_up = engine._Progress("t", [()] * 3, log_last=False)  # the caller sums up
        for _ in range(3):
            clock["now"] += 61.0
            summed_up.tick((), 61.0)
        assert [r.getMessage().split()[1] for r in caplog.records] == ["1/3", "2/3"]
