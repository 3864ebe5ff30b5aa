"""GBC speed on mfeat (10 classes, 5 vector sources, 2 kNN graphs): on-demand benchmark.

Prints two ratios (GBC spec §3 "Speed", issue targets):

* GBC fit time / time of its own K·p·N tree fits alone (same binned rows, same tree learner,
  random targets) — target ≤ 1.5: the consensus, graph and weight bookkeeping is cheap;
* GBC fit time / scikit-learn ``GradientBoostingClassifier`` on the joined features
  [X^(1) … X^(5), M^(6), M^(7)] with the same number of trees (n_estimators = p·N, i.e. K·p·N
  trees) — target ≤ 2.

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_gbc.py [--n-iter 20] [--labelled 0.5]``.

``--accuracy`` instead measures transductive test error on mfeat (uniform setting, 10 % and 50 %
labelled, 2 stratified splits): GBC at fixed (λ0, λ1) pairs from the spec's grid against
scikit-learn GBDT on the joined features (fixed n_estimators=100, depth 3, learning rate 0.1: no
CV, to keep it short), and prints the learned weight of the noisy graph and the final source
weights (averaged over the 10 one-against-others models).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier

from multiview_lab.data.mfeat import load_mfeat
from multiview_lab.estimators import GBCClassifier
from multiview_lab.gbc._hist_tree import HistogramTree
from multiview_lab.gbc.baselines import joined_features
from multiview_lab.gbc.graphs import knn_similarity_graph, same_label_edge_fraction

VECTOR_VIEWS = ("fou", "fac", "kar", "pix", "zer")


def load(seed: int, graph_noise: float):
    raw = Path(__file__).resolve().parents[1] / "data" / "01_raw" / "mfeat"
    views, y = load_mfeat(raw)
    Xs = [views[v] for v in VECTOR_VIEWS]
    graphs = [
        knn_similarity_graph(views["mor"], k=10),
        knn_similarity_graph(views["mor"], k=10, noise=graph_noise, random_state=seed),
    ]
    return Xs, graphs, y


def stratified_mask(y, fraction, rng):
    lab = np.zeros(y.shape[0], bool)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        lab[rng.choice(members, int(round(fraction * members.size)), replace=False)] = True
    return lab


def main(n_iter: int, labelled: float, seed: int, graph_noise: float) -> None:
    Xs, graphs, y = load(seed, graph_noise)
    n, p, K = y.shape[0], len(Xs), 10
    rng = np.random.default_rng(seed)
    lab = stratified_mask(y, labelled, rng)

    gbc = GBCClassifier(
        n_iter=n_iter, lambda0=0.1, lambda1=0.1, early_stopping=False, random_state=seed
    )
    t0 = time.perf_counter()
    gbc.fit(Xs, graphs, y, lab)
    t_gbc = time.perf_counter() - t0
    pred = gbc.predict_transductive()
    err_gbc = np.mean(pred[~lab] != y[~lab])

    # The same K·p·N tree fits alone: same binned rows (all instances are active when λ > 0).
    Xb = [b.transform(X) for b, X in zip(gbc.binners_, Xs, strict=True)]
    keys = [
        X.astype(np.int64) + np.arange(X.shape[1], dtype=np.int64) * b.n_bins_
        for X, b in zip(Xb, gbc.binners_, strict=True)
    ]
    z = rng.normal(size=n)
    t0 = time.perf_counter()
    for _ in range(K * n_iter):
        for X, k, b in zip(Xb, keys, gbc.binners_, strict=True):
            tree = HistogramTree(gbc.max_depth, b.n_bins_)
            leaves = tree.fit(X, z, k)
            tree.set_leaf_values(leaves, z)
            tree.predict_binned(X)
    t_trees = time.perf_counter() - t0

    # scikit-learn GBDT on the joined features, same number of trees (K per stage, p·N stages).
    Xj = joined_features(list(Xs), graphs, n, train_mask=lab)
    sk = GradientBoostingClassifier(
        n_estimators=p * n_iter, max_depth=gbc.max_depth, learning_rate=0.1
    )
    t0 = time.perf_counter()
    sk.fit(Xj[np.flatnonzero(lab)], y[lab])
    t_sk = time.perf_counter() - t0
    err_sk = np.mean(sk.predict(Xj[np.flatnonzero(~lab)]) != y[~lab])

    print(f"mfeat, K={K}, p={p}, q=2, N={n_iter}, labelled={labelled:.0%} ({lab.sum()} instances)")
    print(
        f"GBC fit                         : {t_gbc:8.2f} s  ({K * p * n_iter} trees, error {err_gbc:.3f})"
    )
    print(f"its K·p·N tree fits alone       : {t_trees:8.2f} s")
    print(
        f"sklearn GBDT, joined features    : {t_sk:8.2f} s  ({K * p * n_iter} trees, error {err_sk:.3f})"
    )
    print(f"ratio GBC / own tree fits       : {t_gbc / t_trees:8.2f}  (target <= 1.5)")
    print(f"ratio GBC / sklearn GBDT        : {t_gbc / t_sk:8.2f}  (target <= 2)")


def accuracy(n_iter, graph_noise, lambdas, fractions=(0.1, 0.5), splits=(0, 1), gbdt=True):
    Xs, graphs, y = load(0, graph_noise)
    same = [same_label_edge_fraction(G, y) for G in graphs]
    print(f"graphs: same-label edge fraction clean {same[0]:.3f}, noisy {same[1]:.3f}")
    n = y.shape[0]
    for frac in fractions:
        for split in splits:
            lab = stratified_mask(y, frac, np.random.default_rng(1000 + split))
            test = ~lab
            for lam0, lam1 in lambdas:
                t0 = time.perf_counter()
                m = GBCClassifier(
                    n_iter=n_iter,
                    lambda0=lam0,
                    lambda1=lam1,
                    early_stopping=False,
                    random_state=split,
                ).fit(Xs, graphs, y, lab)
                err = np.mean(m.predict_transductive()[test] != y[test])
                w = np.mean(m.source_weights_, axis=0)
                ghat = np.mean([h[-1] for h in m.graph_weights_history_], axis=0)
                print(
                    f"{frac:.0%} split {split} GBC λ0={lam0} λ1={lam1}: error {err:.4f} "
                    f"({time.perf_counter() - t0:.0f} s); w(fou,fac,kar,pix,zer)={np.round(w, 3)}; "
                    f"ŵ(clean, noisy)={np.round(ghat, 3)}",
                    flush=True,
                )
            if not gbdt:
                continue
            t0 = time.perf_counter()
            Xj = joined_features(list(Xs), graphs, n, train_mask=lab)
            sk = GradientBoostingClassifier(
                n_estimators=100, max_depth=3, learning_rate=0.1, random_state=split
            )
            sk.fit(Xj[np.flatnonzero(lab)], y[lab])
            err = np.mean(sk.predict(Xj[np.flatnonzero(test)]) != y[test])
            print(
                f"{frac:.0%} split {split} GBDT joined: error {err:.4f} ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-iter", type=int, default=20)
    parser.add_argument("--labelled", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graph-noise", type=float, default=0.2)
    parser.add_argument("--accuracy", action="store_true", help="run the error measurement")
    parser.add_argument(
        "--lambdas", default="0:0,0.01:0.01,0.1:0.1", help="λ0:λ1 pairs for --accuracy"
    )
    parser.add_argument("--fractions", default="0.1,0.5", help="labelled fractions (--accuracy)")
    parser.add_argument("--no-gbdt", action="store_true", help="skip the GBDT baseline")
    args = parser.parse_args()
    if args.accuracy:
        pairs = [tuple(float(v) for v in pair.split(":")) for pair in args.lambdas.split(",")]
        fractions = [float(f) for f in args.fractions.split(",")]
        accuracy(args.n_iter, args.graph_noise, pairs, fractions, gbdt=not args.no_gbdt)
    else:
        main(args.n_iter, args.labelled, args.seed, args.graph_noise)
