"""On-demand memory and time of a MIMLGPClassifier fit against bags x labels (not a test).

Fits MIML-GP on seeded synthetic bags (3 instances of 5 features per bag, each label shifting
the instances of its positive bags) at a few sizes ``n`` (bags) x ``Q`` (labels), for each of
the three computational paths, and prints wall time, the ``tracemalloc`` peak, the estimate
:func:`multiview_lab.miml.gp.estimate_fit_memory` that ``fit`` compares with
``max_memory_gb`` before any large allocation, and the growth exponent of the measured peak
in ``n Q`` between consecutive sizes:

* full rank (``low_rank="none"``, or ``"eig"`` when the rank of ``K_sum`` exceeds
  ``full_rank_above * n``): dense ``Qn x Qn`` matrices, memory **O((n Q)^2)** (three of them:
  ``3 (nQ)^2 x 8`` bytes), time O((n Q)^3) per Newton step. The issue's 200 bags x 200 labels
  is 38.4e9 bytes (35.8 GiB) by this count (it grew past 19 GB before it was killed), 80 x 80
  about 1 GB;
* standard likelihood (always dense): O((n Q)^2) too, about five ``Qn x Qn`` matrices;
* low rank (``low_rank="eig"``, ``full_rank_above=None``): ``Qm x Qm`` matrices, memory
  O((m Q)^2 + Q^3) with ``m`` the rank kept of ``K_sum``, so growing with ``Q^2`` but not
  with ``n^2`` (``m`` grows slowly with ``n``).

Every fit runs ``--max-em`` EM loops with ``delta`` = the median instance distance on one BLAS
thread. The default sizes take 20-60 s on one core (``--sizes ... 200x20`` adds a fit of about a
minute on the full-rank path and several on the standard one)::

    nice -n 10 .venv/bin/python benchmarks/bench_miml_memory.py
    .venv/bin/python benchmarks/bench_miml_memory.py --sizes 50x10 100x20 --paths full
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from multiview_lab.miml.gp import MIMLGPClassifier, estimate_fit_memory

PATHS = {
    "full": {"low_rank": "none"},
    "standard": {"likelihood": "standard"},
    "low-rank": {"low_rank": "eig", "full_rank_above": None},
}


def synthetic_bags(n: int, Q: int, *, size: int = 3, d: int = 5, seed: int = 0):
    """``n`` bags of ``size`` instances and an ``(n, Q)`` label matrix with every label both
    present and absent."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, Q)) < 0.3).astype(int)
    Y[rng.integers(n, size=Q), np.arange(Q)] = 1
    Y[(rng.integers(n, size=Q)), np.arange(Q)] = 0
    Y[:, Y.sum(axis=0) == 0] = 0
    centres = rng.normal(size=(Q, d)) * 2.0
    shift = Y @ centres / np.maximum(Y.sum(axis=1, keepdims=True), 1)
    bags = [rng.normal(size=(size, d)) + shift[i] for i in range(n)]
    return bags, Y


def measure(n: int, Q: int, path: str, max_em: int, seed: int = 0) -> dict:
    """Fit once; wall time, tracemalloc peak (bytes), the estimate and the rank used."""
    bags, Y = synthetic_bags(n, Q, seed=seed)
    est = MIMLGPClassifier(
        delta="median", max_em=max_em, n_mc=50, max_memory_gb=None, random_state=seed,
        **PATHS[path],
    )  # fmt: skip
    tracemalloc.start()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_em is reached on purpose
        est.fit(bags, Y)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    n_inst = sum(len(b) for b in bags)
    rank = est.m_ if est.P_ is not None else None
    likelihood = "standard" if path == "standard" else "collective"
    estimate = estimate_fit_memory(n, Q, n_inst, likelihood=likelihood, rank=rank)
    return {"seconds": seconds, "peak": peak, "estimate": estimate, "m": est.m_}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", nargs="+", default=["25x10", "50x10", "50x20", "100x20"],
        help="n_bags x n_labels, e.g. 50x10",
    )  # fmt: skip
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    ap.add_argument("--max-em", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.sizes]
    print("| path | n bags | Q labels | nQ | m | time s | peak MB | estimate MB | est/peak "
          "| growth exponent of peak in nQ |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with threadpool_limits(1):
        for path in args.paths:
            prev = None
            for n, Q in sizes:
                r = measure(n, Q, path, args.max_em, args.seed)
                slope = ""
                if prev is not None and n * Q != prev[0]:
                    slope = f"{np.log(r['peak'] / prev[1]) / np.log(n * Q / prev[0]):.2f}"
                prev = (n * Q, r["peak"])
                print(
                    f"| {path} | {n} | {Q} | {n * Q} | {r['m']} | {r['seconds']:.2f} "
                    f"| {r['peak'] / 2**20:.1f} | {r['estimate'] / 2**20:.1f} "
                    f"| {r['estimate'] / r['peak']:.2f} | {slope} |",
                    flush=True,
                )
    print(f"\nprocess max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    for n, Q in [(80, 80), (200, 200)]:
        gb = estimate_fit_memory(n, Q, 3 * n) / 2**30
        print(f"full-rank estimate for {n} bags x {Q} labels: {gb:.1f} GB")


if __name__ == "__main__":
    main()
