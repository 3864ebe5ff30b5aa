"""On-demand speed / communication / memory checks of ADMM-MVFS (not a test).

(a) mfeat (6 views, 2000 samples, 10 classes, standardised): wall time of the ADMM (local backend)
    and of centralised RFS to reach the same objective, J ≤ J*(1 + 1e-6), J* the best objective
    either solver reaches; ratio ADMM / RFS for the default solver choices and two variants.
(b) synthetic n=20000, V=4, d_v=500, C=10 on a 2-worker LocalCluster: per-iteration time of the Dask
    backend against the local backend, bytes the driver sends / receives per iteration (also with
    d_v=250, to show they do not depend on d_v), and the driver's peak memory while the views are
    generated on the workers (the driver never holds them).

Run:  .venv/bin/python benchmarks/bench_mvfs.py [--mfeat-dir DIR] [--rfs-iter N] [--skip-a] [--skip-b]
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from multiview_lab.data.mfeat import MFEAT_VIEWS, load_mfeat
from multiview_lab.mvfs import ADMMMultiviewFeatureSelector, RFSSelector

TARGET = 1e-6


def time_to(history, target):
    """Seconds (and iterations) until the objective first reaches ``target``."""
    hit = np.flatnonzero(history["objective"] <= target)
    return (history["time"][hit[0]], int(hit[0]) + 1) if hit.size else (np.inf, None)


def bench_mfeat(mfeat_dir: Path, lam_frac: float, rfs_iter: int) -> None:
    views, y = load_mfeat(mfeat_dir, MFEAT_VIEWS)
    Xs = list(views.values())
    print(f"(a) mfeat: n={y.size}, d_v={[X.shape[1] for X in Xs]}, lam_frac={lam_frac}", flush=True)
    # RFS converges linearly and slowly near the optimum: give it enough IRLS iterations to
    # reach the 1e-6 target itself, so its time to target is measured rather than bounded.
    rfs = RFSSelector(lam_frac=lam_frac, tol=1e-12, max_iter=rfs_iter).fit(Xs, y)
    print(f"    RFS: {rfs.n_iter_} iterations, {rfs.history_['time'][-1]:.1f} s", flush=True)
    tight = {"eps_abs": 1e-12, "eps_rel": 0.0, "tol": 0.0, "lam_frac": lam_frac}
    configs = {
        "default (balancing, 1 IRLS step, warm start)": {"max_iter": 3000},
        "fixed rho=1 (no balancing)": {"max_iter": 3000, "residual_balancing": False},
        "5 IRLS steps per iteration": {"max_iter": 1000, "inner_iters": 5},
    }
    runs = {
        name: ADMMMultiviewFeatureSelector(**tight, **kw).fit(Xs, y) for name, kw in configs.items()
    }
    J_star = min(
        [rfs.history_["objective"].min()] + [r.history_["objective"].min() for r in runs.values()]
    )
    gaps = (1e-3, 1e-4, 1e-5, TARGET)
    print(
        f"    J* = {J_star:.10g} (best objective of all runs); seconds [iterations] to J*(1+gap):"
    )
    print("    " + "solver".ljust(48) + "".join(f"gap {g:.0e}".rjust(18) for g in gaps))
    t_rfs = [time_to(rfs.history_, J_star * (1 + g)) for g in gaps]
    table = {"RFS (centralised, IRLS)": t_rfs} | {
        f"ADMM {name}": [time_to(sel.history_, J_star * (1 + g)) for g in gaps]
        for name, sel in runs.items()
    }
    for name, row in table.items():
        cells = "".join(f"{t:10.2f} [{it if it else '-':>5}]" for t, it in row)
        print("    " + name.ljust(48) + cells)
    for name, row in list(table.items())[1:]:
        ratios = "".join(
            f"{t / tr:18.2f}" if np.isfinite(tr) and np.isfinite(t) else "n/a".rjust(18)
            for (t, _), (tr, _) in zip(row, t_rfs, strict=True)
        )
        print("    " + f"ratio {name} / RFS".ljust(48) + ratios)
    gap_rfs = rfs.history_["objective"][-1] / J_star - 1
    print(f"    RFS after {rfs.n_iter_} iterations: relative gap {gap_rfs:.2e}")
    for name, sel in runs.items():
        per_it = 1e3 * np.median(np.diff(sel.history_["time"]))
        print(f"    ADMM {name}: {per_it:.2f} ms/iteration, final rho {sel.history_['rho'][-1]:g}")
    per_it_rfs = 1e3 * np.median(np.diff(rfs.history_["time"]))
    print(f"    RFS: {per_it_rfs:.2f} ms/iteration", flush=True)


def make_view(seed: int, n: int, d: int, n_classes: int, n_informative: int = 5) -> np.ndarray:
    """One synthetic view; runs on a Dask worker so that the driver never holds it."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) * n_classes // n
    X = rng.standard_normal((n, d))
    X[:, :n_informative] += 1.5 * rng.standard_normal((n_classes, n_informative))[y]
    return X


def bench_dask(n: int, n_views: int, d: int, n_classes: int, n_iter: int) -> None:
    from distributed import Client, LocalCluster

    y = np.arange(n) * n_classes // n
    fixed = {"lam_frac": 0.1, "max_iter": n_iter, "tol": 0.0, "eps_abs": 0.0, "eps_rel": 0.0}
    print(f"(b) synthetic: n={n}, V={n_views}, d_v={d}, C={n_classes}, {n_iter} iterations")
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()
        futures = [client.submit(make_view, v, n, d, n_classes, pure=False) for v in range(n_views)]
        dask = ADMMMultiviewFeatureSelector(**fixed, backend="dask", client=client).fit(futures, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        del futures
        tracemalloc.start()
        narrow = ADMMMultiviewFeatureSelector(
            **{**fixed, "max_iter": 5}, backend="dask", client=client
        ).fit(
            [client.submit(make_view, v, n, d // 2, n_classes, pure=False) for v in range(n_views)],
            y,
        )
        _, peak_narrow = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    Xs = [make_view(v, n, d, n_classes) for v in range(n_views)]
    local = ADMMMultiviewFeatureSelector(**fixed).fit(Xs, y)

    t_dask = np.median(np.diff(dask.history_["time"]))
    t_local = np.median(np.diff(local.history_["time"]))
    view_mb = Xs[0].nbytes / 2**20
    diff = max(np.abs(a - b).max() for a, b in zip(local.W_, dask.W_, strict=True))
    print(
        f"    per iteration: local {1e3 * t_local:.1f} ms, dask {1e3 * t_dask:.1f} ms -> dask/local {t_dask / t_local:.2f}"
    )
    print(
        f"    setup + {n_iter} iterations: local {local.history_['time'][-1]:.1f} s, dask {dask.history_['time'][-1]:.1f} s"
    )
    print(f"    max |W_local - W_dask| = {diff:.2e}")
    mib = 2**20

    def per_it(sel, key):
        return sel.history_[key][1:].mean() / mib

    print(
        f"    MiB per iteration: driver sent {per_it(dask, 'bytes_sent'):.2f}, driver received "
        f"{per_it(dask, 'bytes_received'):.2f}, worker-to-worker {per_it(dask, 'bytes_peer'):.2f}"
        f" (V*n*C*8 = {n_views * n * n_classes * 8 / mib:.2f}); with d_v={d // 2}: "
        f"{per_it(narrow, 'bytes_sent'):.2f}, {per_it(narrow, 'bytes_received'):.2f}, "
        f"{per_it(narrow, 'bytes_peer'):.2f}"
    )
    print(
        f"    driver during the dask fit: traced peak {peak / 2**20:.1f} MiB (d_v={d // 2}: "
        f"{peak_narrow / 2**20:.1f} MiB), max RSS "
        f"{rss0:.0f} -> {rss1:.0f} MiB; one view is {view_mb:.1f} MiB, all views "
        f"{n_views * view_mb:.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_dir = Path(__file__).resolve().parents[1] / "data" / "01_raw" / "mfeat"
    parser.add_argument("--mfeat-dir", type=Path, default=default_dir)
    parser.add_argument("--lam-frac", type=float, default=0.1)
    parser.add_argument("--rfs-iter", type=int, default=1500)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=500)
    parser.add_argument("--n-iter", type=int, default=30)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--skip-a", action="store_true")
    parser.add_argument("--skip-b", action="store_true")
    args = parser.parse_args()
    t0 = time.perf_counter()
    # One BLAS thread in the driver, like each Dask worker: on a shared 2-core machine a threaded
    # OpenBLAS spinning against other processes made small products up to 20x slower.
    with threadpool_limits(args.blas_threads):
        if not args.skip_a:
            bench_mfeat(args.mfeat_dir, args.lam_frac, args.rfs_iter)
        if not args.skip_b:
            bench_dask(args.n, 4, args.d, 10, args.n_iter)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
