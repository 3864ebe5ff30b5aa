"""Speed of PB-MVBoost's fit against its own trees and against per-view AdaBoost (not a test).

MNIST1 (four 14x14 quarters), one one-vs-all task, a random n = 500 training draw, T = 100, V = 4,
depth-2 trees. Times (median over ``--repeats``):

* PB-MVBoost ``fit`` (default options);
* (a) fitting the same V*T weighted trees alone: the same seeds on the same distributions
  ``D_t`` (read from the fitted model), with the public ``DecisionTreeClassifier.fit`` (and, for
  reference, with ``check_input=False`` as PB-MVBoost calls it internally);
* (b) scikit-learn ``AdaBoostClassifier`` (SAMME, depth-2 trees, T = 100) fitted on each view.

Targets: PB-MVBoost / (a) <= 1.3 and PB-MVBoost / (b) <= 1.5.

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_pbmvboost.py [--digit 3] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn import config_context
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from multiview_lab.pbmvboost import PBMVBoostClassifier

MNIST = Path(__file__).resolve().parents[1] / "data" / "01_raw" / "mnist.npz"


def mnist1_views(x):
    """The four 14x14 quarters of 28x28 images, flattened row-major."""
    return [
        np.ascontiguousarray(x[:, r : r + 14, c : c + 14].reshape(x.shape[0], -1))
        for r in (0, 14)
        for c in (0, 14)
    ]


def timed(fn):
    """Run ``fn``; return ((wall seconds, CPU seconds of this process), result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - wall, time.process_time() - cpu), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--digit", type=int, default=3)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with np.load(MNIST) as z:
        rng = np.random.RandomState(args.seed)
        idx = rng.choice(z["x_train"].shape[0], args.n, replace=False)
        Xs = mnist1_views(z["x_train"][idx])
        y = np.where(z["y_train"][idx] == args.digit, 1, -1)
    Xs32 = [np.ascontiguousarray(X, dtype=np.float32) for X in Xs]
    V = len(Xs)

    def fit_pbmvboost():
        return PBMVBoostClassifier(args.T, random_state=args.seed).fit(Xs, y)

    def fit_trees(model, internal):
        """The model's V*T trees: public fit, or exactly as PB-MVBoost calls it (internal)."""
        D = model.distribution_history_
        with config_context(skip_parameter_validation=internal, assume_finite=internal):
            for t in range(model.n_iter_):
                for v in range(V):
                    DecisionTreeClassifier(
                        max_depth=2, random_state=model.estimators_[t, v].random_state
                    ).fit(Xs32[v], y, sample_weight=D[t], check_input=not internal)

    def fit_adaboost():
        for v in range(V):
            AdaBoostClassifier(
                DecisionTreeClassifier(max_depth=2),
                n_estimators=args.T,
                learning_rate=1.0,
                random_state=args.seed,
            ).fit(Xs[v], y)

    names = {
        "pbmvboost": "PB-MVBoost fit",
        "trees": f"(a) its {V * args.T} weighted trees alone, public fit",
        "trees_internal": "(a') the same trees as fitted inside PB-MVBoost",
        "adaboost": "(b) sklearn AdaBoost (SAMME) on each view",
    }
    times = {k: [] for k in names}
    fit_trees(fit_pbmvboost(), True)  # warm-up (imports, caches)
    for _ in range(args.repeats):
        t_pb, model = timed(fit_pbmvboost)
        times["pbmvboost"].append(t_pb)
        times["trees"].append(timed(lambda m=model: fit_trees(m, False))[0])
        times["trees_internal"].append(timed(lambda m=model: fit_trees(m, True))[0])
        times["adaboost"].append(timed(fit_adaboost)[0])
    med = {k: np.median(np.array(v), axis=0) for k, v in times.items()}  # (wall, cpu)

    print(
        f"MNIST1 digit {args.digit} vs all, n = {args.n}, T = {args.T}, V = {V}, depth 2; "
        f"median of {args.repeats} repeats, seconds"
    )
    print(f"  {'':52s} {'wall':>7s} {'CPU':>7s}")
    for k, label in names.items():
        print(f"  {label:52s} {med[k][0]:7.3f} {med[k][1]:7.3f}")
    for k, target in (("trees", 1.3), ("trees_internal", None), ("adaboost", 1.5)):
        ratio = med["pbmvboost"] / med[k]
        goal = f"(target <= {target})" if target else ""
        print(f"  ratio PB-MVBoost / {k:15s} wall {ratio[0]:.3f}  CPU {ratio[1]:.3f}  {goal}")


if __name__ == "__main__":
    main()
