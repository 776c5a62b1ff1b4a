"""fit_dask with the online learner (`learner="online"`: each partition's pass of SPOM from
the loop's state, the passes mixed each epoch, iterative parameter mixing) against the fit
in one process, on TWT folds 0-7 (tagging: the redundant CRF++ templates over the columns
`multikernel convert` writes; parsing: the default arc templates), scored on folds 8-9.

Prints, for the one-process fit and for `fit_dask` with 1 partition and with `--partitions`
partitions on a LocalCluster of each of `--workers` process workers (one thread each): the
seconds, the held-out score (tagging: token accuracy; parsing: UAS), the bytes per epoch
that crossed the network (the loop's state out to every worker, the partitions' passes
back), and whether the model's bytes equal the one process's (they must with 1 partition;
with more, the mix is another model, the same on any number of workers).

    python benches/peers/dask_fit/online.py [--task tagging|parsing] [--epochs 10]
        [--workers 1 2] [--partitions 4] [--corpora web wiki]

`--corpora web wiki` (parsing) trains on folds 0-7 of both shipped Turkish treebanks and
scores on their folds 8-9.

Needs the package (maturin develop --release), dask[distributed], and for tagging the
command line (cargo build --release) for the conversion: MULTIKERNEL_BIN, else
target/release/multikernel.
"""

import argparse
import time

import dask.bag as db
from parser import blocks
from report import cluster, mean
from run import TEMPLATES, columns

from multikernel import DependencyParser, SequenceTagger
from multikernel._dask_parts import fit_parser_dask, fit_tagger_dask


def score(est, task, test):
    """Held-out token accuracy (tagging) or UAS (parsing), percent."""
    if task == "tagging":
        X, y = test
        got = est.predict(X)
        right = sum(a == b for s, t in zip(got, y) for a, b in zip(s, t))
        return 100 * right / sum(map(len, y))
    return 100 * est.score(test)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=["tagging", "parsing"], default="tagging")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--corpora", nargs="+", default=["web"], choices=["web", "wiki"],
                    help="parsing: the treebanks whose folds train and score")
    a = ap.parse_args()
    settings = dict(learner="online", epochs=a.epochs, random_state=0)
    if a.task == "tagging":
        train, test = columns("0,1,2,3,4,5,6,7"), columns("8,9")
        settings["templates"] = str(TEMPLATES)
        make, fit = SequenceTagger, fit_tagger_dask
        n = len(train[0])
    else:
        train = [b for c in a.corpora for b in blocks(set(range(8)), c)]
        test = [b for c in a.corpora for b in blocks({8, 9}, c)]
        make, fit = DependencyParser, fit_parser_dask
        n = len(train)

    def model_bytes(est):
        return (est.tagger_ if a.task == "tagging" else est.parser_).to_bytes()

    t0 = time.perf_counter()
    one = make(**settings).fit(*(train if a.task == "tagging" else (train,)))
    seconds = time.perf_counter() - t0
    want = model_bytes(one)
    print(f"one process, every core: {n} sentences, {a.epochs} epochs, {seconds:.1f} s; "
          f"held-out {score(one, a.task, test):.2f}; {one.fit_notes_[0]}", flush=True)
    for w in a.workers:
        with cluster(w) as client:
            for parts in sorted({1, a.partitions}):
                size = -(-n // parts)
                if a.task == "tagging":
                    bags = (db.from_sequence(train[0], partition_size=size),
                            db.from_sequence(train[1], partition_size=size))
                else:
                    bags = (db.from_sequence(train, partition_size=size),)
                stats = {}
                t0 = time.perf_counter()
                est = fit(make(**settings), *bags, client, stats=stats)
                seconds = time.perf_counter() - t0
                busy = sum(s[1] for s in stats["worker_seconds"].values())
                print(
                    f"fit_dask workers={w} partitions={stats['partitions']}: {seconds:.1f} s "
                    f"(setup {stats['setup_seconds']:.1f} s, epochs "
                    f"{sum(stats['epoch_seconds']):.1f} s, workers' passes {busy:.1f} s); "
                    f"held-out {score(est, a.task, test):.2f}; per epoch "
                    f"{mean(stats['state_bytes'][1:]) / 1e6:.2f} MB of state out (all "
                    f"workers), {mean(stats['pass_bytes']) / 1e6:.2f} MB of passes in; "
                    f"same bytes as one process: {model_bytes(est) == want}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
