"""scikit-learn's estimator check suite on every public estimator: the pass counts, in a table.

Usage::

    .venv/bin/python benchmarks/sklearn_checks.py            # every estimator
    .venv/bin/python benchmarks/sklearn_checks.py MVBoostClassifier MeMdClassifier

Each estimator is checked as the test suite checks it (``tests/*/test_sklearn_contract.py``:
the instance and the expected failures that its family's test declares, through
``SKLEARN_CHECK_INSTANCES`` and ``expected_failed_checks`` in ``multiview_lab.testing``),
with the legacy checks on. A check counts as passed, failed, expected to fail (xfail) or
skipped; the table prints one row per estimator and the failures' names, so that a change
that breaks the contract shows which check it broke.
"""

from __future__ import annotations

import argparse
import time
import warnings

from sklearn.utils.estimator_checks import check_estimator

from multiview_lab.testing import SKLEARN_CHECK_INSTANCES, expected_failed_checks


def count(estimator) -> dict[str, object]:
    """Run the check suite on ``estimator`` and count the outcomes."""
    expected = expected_failed_checks(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(
            estimator,
            legacy=True,
            expected_failed_checks=expected,
            on_skip=None,
            on_fail=None,
        )
    status = [r["status"] for r in results]
    return {
        "passed": status.count("passed"),
        "failed": status.count("failed"),
        "xfail": status.count("xfail"),
        "skipped": status.count("skipped"),
        "total": len(status),
        "failures": sorted({r["check_name"] for r in results if r["status"] == "failed"}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="estimator class names (default: all)")
    args = parser.parse_args()
    instances = [
        est
        for est in SKLEARN_CHECK_INSTANCES()
        if not args.names or type(est).__name__ in args.names
    ]
    print("| estimator | passed | expected failures | failed | skipped | total | s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    failures = {}
    for est in instances:
        start = time.perf_counter()
        c = count(est)
        name = type(est).__name__
        print(
            f"| {name} | {c['passed']} | {c['xfail']} | {c['failed']} | {c['skipped']} "
            f"| {c['total']} | {time.perf_counter() - start:.1f} |",
            flush=True,
        )
        if c["failures"]:
            failures[name] = c["failures"]
    for name, checks in failures.items():
        print(f"\n{name} fails: {', '.join(checks)}")


if __name__ == "__main__":
    main()
