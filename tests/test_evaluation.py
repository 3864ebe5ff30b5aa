"""Shared evaluation helpers: summaries, Wilcoxon flags, estimator registry, seeds."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ranksums

from multiview_lab.evaluation import (
    build_estimator,
    flag_significance,
    stable_seed,
    summarise,
)


def _results():
    rows = []
    for method, base in (("A", 0.9), ("B", 0.8)):
        for draw in range(3):
            for task in range(2):
                rows.append(
                    {
                        "dataset": "D",
                        "method": method,
                        "draw": draw,
                        "task": task,
                        "acc": base + 0.01 * draw + 0.1 * task,
                    }
                )
    return pd.DataFrame(rows)


def test_summarise_averages_tasks_then_takes_std_over_draws():
    s = summarise(
        _results(), ["dataset", "method"], ["acc"], repeat_key="draw", average_over=["task"]
    )
    a = s[s["method"] == "A"].iloc[0]
    per_draw = np.array([0.95, 0.96, 0.97])
    assert a["acc_mean"] == pytest.approx(per_draw.mean())
    assert a["acc_std"] == pytest.approx(per_draw.std(ddof=1))
    assert a["n_draws"] == 3


def test_summarise_rejects_duplicated_units_and_missing_columns():
    r = pd.concat([_results(), _results()])
    with pytest.raises(ValueError, match="several rows per evaluation unit"):
        summarise(r, ["dataset", "method"], ["acc"], repeat_key="draw", average_over=["task"])
    with pytest.raises(ValueError, match="lacks column"):
        summarise(_results(), ["dataset", "nope"], ["acc"])


def test_wilcoxon_flags_on_hand_made_table():
    # column D1: A clearly best, B clearly worse (disjoint samples of 6 -> p = 0.0039),
    # C overlaps with A (not significant). Column D2: B best; A is worse but only 2 draws.
    rows = []
    a = [0.90, 0.91, 0.92, 0.93, 0.94, 0.95]
    b = [0.80, 0.81, 0.82, 0.83, 0.84, 0.85]
    c = [0.895, 0.915, 0.925, 0.935, 0.945, 0.905]
    for method, vals in (("A", a), ("B", b), ("C", c)):
        rows += [
            {"dataset": "D1", "method": method, "draw": i, "acc": v} for i, v in enumerate(vals)
        ]
    rows += [
        {"dataset": "D2", "method": "A", "draw": i, "acc": v} for i, v in enumerate([0.5, 0.6])
    ]
    rows += [
        {"dataset": "D2", "method": "B", "draw": i, "acc": v} for i, v in enumerate([0.7, 0.8])
    ]
    results = pd.DataFrame(rows)
    summary = summarise(results, ["dataset", "method"], ["acc"], repeat_key="draw")
    flagged = flag_significance(
        results, summary, ["dataset"], "method", ["acc"], "draw", alpha=0.02
    )
    get = flagged.set_index(["dataset", "method"])
    assert not get.loc[("D1", "A"), "acc_worse"]
    assert get.loc[("D1", "B"), "acc_worse"]
    assert get.loc[("D1", "B"), "acc_p"] == pytest.approx(ranksums(b, a).pvalue)
    assert not get.loc[("D1", "C"), "acc_worse"]
    assert not get.loc[("D2", "A"), "acc_worse"]  # p = 0.12 with two draws each
    assert not get.loc[("D2", "B"), "acc_worse"]  # the best is never flagged


def test_wilcoxon_lower_is_better():
    rows = [
        {"dataset": "D", "method": m, "draw": i, "err": v + 0.001 * i}
        for m, v in (("A", 0.1), ("B", 0.3))
        for i in range(8)
    ]
    results = pd.DataFrame(rows)
    summary = summarise(results, ["dataset", "method"], ["err"], repeat_key="draw")
    flagged = flag_significance(
        results, summary, ["dataset"], "method", ["err"], "draw", higher_is_better=False
    ).set_index("method")
    assert flagged.loc["B", "err_worse"] and not flagged.loc["A", "err_worse"]


def test_build_estimator_by_dotted_path_and_seed():
    est = build_estimator(
        {"estimator": "sklearn.tree.DecisionTreeClassifier", "params": {"max_depth": 2}},
        random_state=5,
    )
    assert est.get_params()["max_depth"] == 2 and est.get_params()["random_state"] == 5


def test_build_estimator_rejects_unknown_names_and_params():
    with pytest.raises(ValueError, match="Unknown estimator"):
        build_estimator({"estimator": "NoSuchClassifier"})
    with pytest.raises(ValueError, match="Unknown parameter"):
        build_estimator(
            {"estimator": "sklearn.tree.DecisionTreeClassifier", "params": {"depth": 2}}
        )
    with pytest.raises(ValueError, match="'estimator' entry"):
        build_estimator({"params": {}})


def test_stable_seed_is_deterministic_and_key_sensitive():
    assert stable_seed("MNIST1", 3, 0) == stable_seed("MNIST1", 3, 0)
    assert stable_seed("MNIST1", 3, 0) != stable_seed("MNIST1", 3, 1)
    assert stable_seed("MNIST1", 3, 0, base=1) != stable_seed("MNIST1", 3, 0)
    assert 0 <= stable_seed("x") < 2**31


def test_code_closure_follows_imports_not_the_whole_package():
    from multiview_lab.protocol.cache import code_closure

    cq = code_closure("multiview_lab.pbmvboost.cqboost")
    assert cq == (
        "multiview_lab.pbmvboost._boosting",  # its input checks
        "multiview_lab.pbmvboost.cqboost",
        "multiview_lab.utils.convergence",  # its iteration-limit warning counter
        "multiview_lab.utils.multiview",
        "multiview_lab.utils.validation",
    )
    assert "multiview_lab.pbmvboost.pbmvboost" not in cq
    pb = code_closure("multiview_lab.pbmvboost.pbmvboost")
    assert {"multiview_lab.pbmvboost.cbound", "multiview_lab.pbmvboost._boosting"} <= set(pb)
    assert "multiview_lab.pbmvboost.cqboost" not in pb
    # the flat namespace re-exports every estimator, so it runs them all
    everything = code_closure("multiview_lab.estimators")
    assert set(cq) | set(pb) | {"multiview_lab.memd.memd"} <= set(everything)


def test_code_fingerprint_changes_with_the_code_a_module_runs_only(tmp_path, monkeypatch):
    """A name imported from a re-exporting package leads to the module defining it; editing a
    module that is re-exported beside it but not used leaves the fingerprint unchanged."""
    from multiview_lab.protocol.cache import code_closure, code_fingerprint

    pkg = tmp_path / "fppkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        '"""Re-exports."""\nfrom fppkg.a import f\nfrom .b import g as h\n__all__ = ["f", "h"]\n'
    )
    (pkg / "a.py").write_text("def f():\n    return 1\n")
    (pkg / "b.py").write_text("def g():\n    return 2\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from fppkg import f\n\ndef run():\n    from .. import h\n    return f() + h()\n"
    )
    (pkg / "sub" / "d.py").write_text("from fppkg import f\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def fresh(*modules):
        code_closure.cache_clear()
        code_fingerprint.cache_clear()
        return code_closure(*modules), code_fingerprint(*modules)

    assert fresh("fppkg.sub.c")[0] == ("fppkg.a", "fppkg.b", "fppkg.sub.c")
    closure_d, before = fresh("fppkg.sub.d")
    assert closure_d == ("fppkg.a", "fppkg.sub.d")
    (pkg / "b.py").write_text("def g():\n    return 3\n")
    assert fresh("fppkg.sub.d")[1] == before  # b is not run by d
    (pkg / "a.py").write_text("def f():\n    return 4\n")
    changed = fresh("fppkg.sub.d")[1]
    assert changed != before
    # documentation, comments and layout are not code: the fingerprint stays
    (pkg / "a.py").write_text('"""A."""\n\n\ndef f():  # four\n    """Four."""\n    return (4)\n')
    assert fresh("fppkg.sub.d")[1] == changed
    (pkg / "a.py").write_text('"""A."""\n\n\ndef f():\n    """Four."""\n    return "4"\n')
    assert fresh("fppkg.sub.d")[1] != changed  # a string that is not a docstring is code


def test_build_estimator_builds_nested_specs_for_meta_estimators():
    ovr = build_estimator(
        {
            "estimator": "sklearn.multiclass.OneVsRestClassifier",
            "params": {"estimator": {"estimator": "MVMVClassifier", "params": {"cv": 3}}},
        },
        random_state=7,
    )
    inner = ovr.get_params()["estimator"]
    assert type(inner).__name__ == "MVMVClassifier"
    assert inner.cv == 3 and inner.random_state == 7  # the seed reaches the nested estimator
    pipe = build_estimator(
        {
            "estimator": "sklearn.pipeline.Pipeline",
            "params": {
                "steps": [
                    ["scale", {"estimator": "sklearn.preprocessing.StandardScaler"}],
                    ["svm", {"estimator": "sklearn.svm.LinearSVC", "params": {"C": 2.0}}],
                ]
            },
        },
        random_state=3,
    )
    assert [name for name, _ in pipe.steps] == ["scale", "svm"]
    assert pipe.named_steps["svm"].C == 2.0 and pipe.named_steps["svm"].random_state == 3
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['depth'\] for MVMVClassifier"):
        build_estimator(
            {
                "estimator": "sklearn.multiclass.OneVsRestClassifier",
                "params": {"estimator": {"estimator": "MVMVClassifier", "params": {"depth": 2}}},
            }
        )
    # a plain mapping without 'estimator' stays a parameter value (ConcatViews' params)
    concat = build_estimator(
        {
            "estimator": "ConcatViews",
            "params": {"estimator": "sklearn.svm.LinearSVC", "params": {"C": 0.5}},
        }  # fmt: skip
    )
    assert concat.params == {"C": 0.5}
