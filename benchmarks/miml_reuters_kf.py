"""Why "learning K^f helps" does not hold on Reuters: the learned label covariance of MIML-GP
against the correlations of the labels themselves, on one fold.

Not a benchmark: an analysis behind a claim of the reproduction report (docs/results.md, miml).
It reads the miml pipeline's prepared data and splits (run the pipeline, or at least
``kedro run --pipelines=miml --to-outputs=miml.reuters_splits``, first), fits MIML-GP and
MIML-GP-special with the paper env's Reuters settings on one fold and prints

* the label frequencies and labels per document,
* the correlations between the labels on the training part,
* the correlations of the learned K^f (MIML-GP) and its diagonal, and K^f = s I of the special
  model.

Usage: ``.venv/bin/python benchmarks/miml_reuters_kf.py --project . --fold 0`` (about one
CPU-minute per model).
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from multiview_lab.estimators import MIMLGPClassifier

PAPER = {"kernel": "linear", "m_step_norm": "bags", "max_em": 500}  # conf/paper, miml.reuters


def _off_diagonal(R: np.ndarray) -> np.ndarray:
    return R[~np.eye(len(R), dtype=bool)]


def _correlation(K: np.ndarray) -> np.ndarray:
    s = np.sqrt(np.diag(K))
    return K / np.outer(s, s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=Path("."))
    parser.add_argument("--fold", type=int, default=0)
    args = parser.parse_args()
    data = pickle.loads((args.project / "data/03_primary/miml/reuters.pkl").read_bytes())
    data = data["reuters"]
    splits = pd.read_parquet(args.project / "data/05_model_input/miml/reuters_splits.parquet")
    split = splits[splits["fold"] == args.fold].iloc[0]
    train = np.asarray(split["train"])
    Y = np.asarray(data["Y"])[train]
    bags = [data["bags"][i] for i in train]
    labels = np.corrcoef(Y.T)
    np.set_printoptions(precision=2, suppress=True)
    print(f"Reuters fold {args.fold}: {len(train)} training documents, {Y.shape[1]} labels")
    print("label frequencies", Y.mean(0), f"labels per document {Y.sum(1).mean():.3f}")
    print("correlations between the labels:\n", labels)
    for name, extra in (("MIML-GP", {}), ("MIML-GP-special", {"fix_Kf": True})):
        model = MIMLGPClassifier(**PAPER, **extra, random_state=int(split["seed"]))
        start = time.process_time()
        with threadpool_limits(1):
            model.fit(bags, Y)
        R = _correlation(model.Kf_)
        print(f"\n{name}: {time.process_time() - start:.0f} CPU s")
        print("diagonal of K^f", np.diag(model.Kf_))
        if extra:
            continue
        print("correlations of the learned K^f:\n", R)
        a, b = _off_diagonal(R), _off_diagonal(labels)
        print(
            f"off-diagonal: K^f in [{a.min():+.2f}, {a.max():+.2f}], labels in "
            f"[{b.min():+.2f}, {b.max():+.2f}]; K^f > 0 where the labels are < 0 on "
            f"{int(np.sum((a > 0.1) & (b < 0)))} of {a.size} entries"
        )


if __name__ == "__main__":
    main()
