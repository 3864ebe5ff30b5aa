"""Cost of the PB-MVBoost paper protocol, method by method, against its 45-minute goal (not a test).

The paper protocol (``kedro run --pipeline=pbmvboost --env=paper``) runs every registered method
of ``conf/base/parameters_pbmvboost.yml`` on 2 data sets x 10 one-vs-all tasks x 20 draws at
each n in {150, 200, 250, 300, 500, 800, 1000}: 2,800 (data set, task, draw, n) draws of 10
fits. This script times one *unit* per method and size exactly as the pipeline runs it
(``_fit_and_score``: fit on the draw, score the 10,000 test images, PB-MVBoost's readings and
trajectory), on one draw of MNIST1, and projects the protocol's wall time with 2 workers
(sizes not timed are interpolated linearly in n).

Baseline timed in the same run: the V*T = 400 depth-2 scikit-learn trees a boosting method fits
(the same weighted fits, uniform weights), the floor of 4 of the 10 methods as long as they use
scikit-learn's trees. Each method's time is printed as a ratio to it. The goal of the issue
is the protocol in <= 45 min on 2 cores, i.e. about 1.93 s of CPU per draw of 10 fits.

Run: ``.venv/bin/python benchmarks/bench_pbmvboost_protocol.py [--sizes 150 500 1000]``
on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import yaml
from sklearn.tree import DecisionTreeClassifier

from multiview_lab.pipelines.pbmvboost import nodes

ROOT = Path(__file__).resolve().parents[1]
PAPER_SIZES = (150, 200, 250, 300, 500, 800, 1000)
DRAWS_PER_SIZE = 2 * 10 * 20  # data sets x tasks x draws
GOAL_S = 45 * 60
WORKERS = 2


def tree_floor(Xs, y, seed, T=100):
    """Seconds to fit the V*T depth-2 trees of a boosting method (uniform weights)."""
    weights = np.full(y.shape[0], 1.0 / y.shape[0])
    start = time.perf_counter()
    for t in range(T):
        for X in Xs:
            DecisionTreeClassifier(max_depth=2, random_state=seed + t).fit(
                X, y, sample_weight=weights
            )
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 500, 1000])
    parser.add_argument("--task", type=int, default=3)
    parser.add_argument("--draw", type=int, default=0)
    args = parser.parse_args()
    # Fusion_Cq^all's excluded (gamma, mu) warnings belong to the run's log; here only timings.
    logging.getLogger("multiview_lab").setLevel(logging.ERROR)

    params = yaml.safe_load((ROOT / "conf/base/parameters_pbmvboost.yml").read_text())
    params = params["pbmvboost"]
    with np.load(ROOT / "data/01_raw/mnist.npz") as z:
        mnist = {k: z[k] for k in z.files}
    data = {**params["data"], "datasets": {"MNIST1": params["data"]["datasets"]["MNIST1"]}}
    views = nodes.build_views(mnist, data)["MNIST1"]
    y_test = np.where(views["y_test"] == args.task, 1, -1)
    methods = params["methods"]

    per_draw = {}
    print(f"{'n':>5} {'method':<22} {'unit s':>8} {'/ trees':>8}")
    for n in args.sizes:
        protocol = {**params["protocol"], "datasets": ["MNIST1"], "tasks": [args.task]}
        protocol.update(n_train=[n], n_draws=args.draw + 1)
        d = nodes.draw_training_samples({"MNIST1": views}, protocol).iloc[args.draw]
        idx = np.asarray(d["indices"], dtype=int)
        y = np.where(views["y_train"][idx] == args.task, 1, -1)
        floor = tree_floor([X[idx] for X in views["X_train"]], y, int(d["seed"]))
        print(f"{n:>5} {'(V*T trees, baseline)':<22} {floor:>8.2f} {1.0:>8.2f}")
        total = 0.0
        for method, spec in methods.items():
            unit = {"dataset": "MNIST1", "method": method, "task": args.task,
                    "draw": args.draw, "n_train": n, "seed": int(d["seed"])}  # fmt: skip
            start = time.perf_counter()
            nodes._fit_and_score(
                unit, spec, views["X_train"], idx, y, views["X_test"], y_test, "error", False
            )
            seconds = time.perf_counter() - start
            total += seconds
            print(f"{n:>5} {method:<22} {seconds:>8.2f} {seconds / floor:>8.2f}")
        per_draw[n] = total
        print(f"{n:>5} {'all methods':<22} {total:>8.2f} {total / floor:>8.2f}")

    sizes = np.array(sorted(per_draw))
    costs = np.array([per_draw[n] for n in sizes])
    projected = sum(np.interp(n, sizes, costs) for n in PAPER_SIZES) * DRAWS_PER_SIZE / WORKERS
    budget = GOAL_S * WORKERS / (DRAWS_PER_SIZE * len(PAPER_SIZES))
    print(
        f"\nprojected paper protocol on {WORKERS} workers: {projected / 3600:.2f} h "
        f"= {projected / GOAL_S:.1f} x the 45-min goal "
        f"(goal budget {budget:.2f} s of CPU per draw of all methods)"
    )


if __name__ == "__main__":
    main()
