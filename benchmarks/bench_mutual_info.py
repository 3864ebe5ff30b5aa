"""Mutual information of MeMd's NB-mutual-info baseline: vectorised vs scikit-learn (not a test).

On the real gene sets (golub 72 x 7129, colon 62 x 2000, raw and log2-clipped), for training
folds like the paper protocol's (the outer 10-fold CV's training parts and the inner 5-fold
CV's parts of them), computes ``mutual_info_classif`` and
:func:`multiview_lab.memd.baselines.mutual_info` with the same seed, checks that the scores
are identical (bit for bit) and prints the CPU time of each and their ratio.

Run from the project root::

    nice -n 10 .venv/bin/python benchmarks/bench_mutual_info.py [--folds 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.feature_selection import mutual_info_classif
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from multiview_lab.data.genes import load_gene_dataset, log2_clip
from multiview_lab.memd.baselines import mutual_info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=2, help="outer folds per data set")
    args = parser.parse_args()
    rows = []
    for source in ("golub", "colon"):
        raw = load_gene_dataset(source)
        for transform in ("raw", "log2"):
            X = np.asarray(raw["X"], dtype=float)
            X = log2_clip(X) if transform == "log2" else X
            y = np.asarray(raw["y"])
            outer = StratifiedKFold(10, shuffle=True, random_state=0)
            for f, (train, _) in enumerate(outer.split(X, y)):
                if f >= args.folds:
                    break
                inner = StratifiedKFold(5, shuffle=True, random_state=f)
                parts = [train, *(train[a] for a, _ in inner.split(X[train], y[train]))][:3]
                for rows_ in parts:
                    seed = 1000 + f
                    with threadpool_limits(1):
                        start = time.process_time()
                        ref = mutual_info_classif(X[rows_], y[rows_], random_state=seed)
                        t_ref = time.process_time() - start
                        start = time.process_time()
                        got = mutual_info(X[rows_], y[rows_], random_state=seed)
                        t_got = time.process_time() - start
                    rows.append((f"{source}_{transform}", rows_.size, np.array_equal(ref, got),
                                 t_ref, t_got))  # fmt: skip
    print(f"{'data set':12} {'rows':>5} {'identical':>9} {'sklearn s':>10} {'ours s':>8} ratio")
    for name, n, same, t_ref, t_got in rows:
        print(f"{name:12} {n:5d} {str(same):>9} {t_ref:10.2f} {t_got:8.2f} {t_ref / t_got:5.1f}x")
    same = sum(r[2] for r in rows)
    t_ref, t_got = sum(r[3] for r in rows), sum(r[4] for r in rows)
    print(
        f"\n{same}/{len(rows)} identical; scikit-learn {t_ref:.1f} CPU s, vectorised "
        f"{t_got:.1f} CPU s: {t_ref / t_got:.1f}x faster."
    )


if __name__ == "__main__":
    main()
