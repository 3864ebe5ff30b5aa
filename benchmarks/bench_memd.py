"""MeMd speed / memory check on the full 20 Newsgroups training set (not a test).

Builds W (normalised term frequencies, vocabulary from the 11,314 by-date training documents:
65,253 words) once, then times rank + fit + predict (on the 7,532 test documents) of

* MeMd at a fixed K (JS and J criteria; exponential and gaussian families), and
* ``SelectKBest(chi2, k=K)`` + ``MultinomialNB`` on the same sparse matrix,

and prints the time ratio against the target (MeMd <= 1.5x the reference) and the peak traced
memory of each (``tracemalloc``, in a separate run from the timing). MeMd with K chosen by the
80/20 rule (MeMd spec Sect. 3.1) is timed as well, for information.

Run from the project root::

    nice -n 10 .venv/bin/python benchmarks/bench_memd.py [--k 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline

from multiview_lab.data.newsgroups import build_task, read_corpus
from multiview_lab.memd import MeMdClassifier

TARGET_RATIO = 1.5


def run_once(model, X_train, y_train, X_test, y_test) -> float:
    model.fit(X_train, y_train)
    return float(np.mean(model.predict(X_test) == y_test))


def best_time(factory, data, repeats: int) -> tuple[float, float]:
    times, accuracy = [], np.nan
    for _ in range(repeats):
        start = time.perf_counter()
        accuracy = run_once(factory(), *data)
        times.append(time.perf_counter() - start)
    return min(times), accuracy


def peak_memory(factory, data) -> float:
    tracemalloc.start()
    try:
        run_once(factory(), *data)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10_000, help="fixed K for the timed comparison")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    task = build_task(read_corpus(), "all_20", vocab_fit="train")
    train = task["subset"] == "train"
    X, y = task["X"], task["y"]
    data = (X[train], y[train], X[~train], y[~train])
    print(
        f"20NG by-date: train {data[0].shape}, nnz {data[0].nnz:,}; test {data[2].shape[0]} docs "
        f"(built in {time.perf_counter() - start:.1f} s)"
    )

    k = args.k
    reference = (
        "SelectKBest(chi2)+MultinomialNB",
        lambda: make_pipeline(SelectKBest(chi2, k=k), MultinomialNB()),
    )
    candidates = [
        (
            "MeMd-JS exponential",
            lambda: MeMdClassifier("JS", family="exponential", mean_smoothing=1e-2, k=k),
        ),
        (
            "MeMd-J exponential",
            lambda: MeMdClassifier("J", family="exponential", mean_smoothing=1e-2, k=k),
        ),
        (
            "MeMd-JS gaussian",
            lambda: MeMdClassifier("JS", family="gaussian", var_smoothing=1e-3, k=k),
        ),
        (
            "MeMd-J gaussian",
            lambda: MeMdClassifier("J", family="gaussian", var_smoothing=1e-3, k=k),
        ),
    ]
    ref_time, ref_acc = best_time(reference[1], data, args.repeats)
    ref_mem = peak_memory(reference[1], data)
    print(f"\nK = {k}; best of {args.repeats}; time = rank + fit + predict(test)")
    print(f"{'model':40s} {'time s':>8s} {'ratio':>6s} {'peak MiB':>9s} {'test acc':>8s}")
    print(f"{reference[0]:40s} {ref_time:8.3f} {1.0:6.2f} {ref_mem:9.1f} {ref_acc:8.4f}")
    for name, factory in candidates:
        seconds, accuracy = best_time(factory, data, args.repeats)
        memory = peak_memory(factory, data)
        ratio = seconds / ref_time
        flag = "ok" if ratio <= TARGET_RATIO else f"ABOVE target {TARGET_RATIO}"
        print(f"{name:40s} {seconds:8.3f} {ratio:6.2f} {memory:9.1f} {accuracy:8.4f}  {flag}")

    selected = (
        "MeMd-JS exponential, K by 80/20 rule",
        lambda: MeMdClassifier("JS", family="exponential", mean_smoothing=1e-2, random_state=0),
    )
    start = time.perf_counter()
    model = selected[1]().fit(data[0], data[1])
    accuracy = float(np.mean(model.predict(data[2]) == data[3]))
    seconds = time.perf_counter() - start
    print(
        f"{selected[0]:40s} {seconds:8.3f} {seconds / ref_time:6.2f} {'':9s} {accuracy:8.4f}"
        f"  (K = {model.k_}, eps = {model.epsilon_:.3g}, {len(model.val_curve_['k'])} grid values)"
    )


if __name__ == "__main__":
    main()
