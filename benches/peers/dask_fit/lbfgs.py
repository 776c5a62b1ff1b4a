"""fit_dask with the batch CRF (`learner="lbfgs"`: at each point L-BFGS evaluates, every
partition's CRF losses and gradient sum on its worker, added on the client in partition
order) against the fit in one process: TWT tagging (folds 0-7 of the shipped treebank, or
of both shipped treebanks with `--corpora web wiki`, as `multikernel convert` writes their
columns) with a shipped CRF++ template file, scored on folds 8-9.

Prints, for the one-process fit and for `fit_dask` with `--partitions` partitions on a
LocalCluster of each of `--workers` process workers (one thread each): the seconds, the
evaluations, the held-out token accuracy, the bytes per evaluation that crossed the network
(the weights out to every worker, the partitions' gradient sums back), each worker's
seconds, and whether the model's bytes equal the one process's (they must with 1
partition; with more, the sums add in another grouping, so the bits may part while the
optimum is the same).

    python benches/peers/dask_fit/lbfgs.py [--templates small|redundant] [--C 1]
        [--max-iter 100] [--workers 1 2] [--partitions 4] [--corpora web wiki]

Needs the package (maturin develop --release), dask[distributed], and the command line
(cargo build --release) for the conversion: MULTIKERNEL_BIN, else target/release/multikernel.
"""

import argparse
import time

import dask.bag as db
from report import cluster, mean
from run import ROOT, columns

from multikernel import SequenceTagger
from multikernel._dask_parts import fit_tagger_dask


def accuracy(est, test):
    X, y = test
    got = est.predict(X)
    right = sum(a == b for s, t in zip(got, y) for a, b in zip(s, t))
    return 100 * right / sum(map(len, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--templates", choices=["small", "redundant"], default="small")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--corpora", nargs="+", default=["web"], choices=["web", "wiki"])
    a = ap.parse_args()
    train, test = ([], []), ([], [])
    for corpus in a.corpora:
        for into, folds in ((train, "0,1,2,3,4,5,6,7"), (test, "8,9")):
            X, y = columns(folds, corpus)
            into[0].extend(X)
            into[1].extend(y)
    templates = ROOT / "data" / "tagging" / f"twt-upos-{a.templates}.templates"
    settings = dict(learner="lbfgs", templates=str(templates), C=a.C, max_iter=a.max_iter)
    n = len(train[0])
    t0 = time.perf_counter()
    one = SequenceTagger(**settings).fit(*train)
    seconds = time.perf_counter() - t0
    want = one.tagger_.to_bytes()
    print(f"one process, every core: {n} sentences, {seconds:.1f} s; held-out "
          f"{accuracy(one, test):.2f}; {one.fit_notes_[0]}", flush=True)
    for w in a.workers:
        with cluster(w) as client:
            for parts in sorted({1, a.partitions}):
                size = -(-n // parts)
                stats = {}
                t0 = time.perf_counter()
                est = fit_tagger_dask(
                    SequenceTagger(**settings), db.from_sequence(train[0], partition_size=size),
                    db.from_sequence(train[1], partition_size=size), client, stats=stats,
                )
                seconds = time.perf_counter() - t0
                evals = len(stats["evaluation_seconds"])
                print(
                    f"fit_dask workers={w} partitions={parts}: {seconds:.1f} s (setup "
                    f"{stats['setup_seconds']:.1f} s; {evals} evaluations, "
                    f"{sum(stats['evaluation_seconds']):.1f} s); per evaluation "
                    f"{mean(stats['point_bytes']) / 1e6:.1f} MB of weights out (all "
                    f"workers), {mean(stats['gradient_bytes']) / 1e6:.1f} MB of gradients "
                    f"in; held-out {accuracy(est, test):.2f}; same bytes: "
                    f"{est.tagger_.to_bytes() == want}; {est.fit_notes_[0]}",
                    flush=True,
                )
                for worker, (ready, work, tasks) in sorted(stats["worker_seconds"].items()):
                    print(f"  worker {worker}: {tasks} tasks, {ready:.1f} s compiling, "
                          f"{work:.1f} s computing", flush=True)


if __name__ == "__main__":
    main()
