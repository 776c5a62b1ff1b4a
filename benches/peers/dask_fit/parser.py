"""fit_dask for a parser against the fit in one process: TWT dependency parsing (folds 0-7 of
the shipped Turkish Web Treebank, a sentence's fold its index mod 10) with the default arc
templates, multi-template learning (`learner="mtl"`). Prints the seconds of the fit in one
process (every core) and of `fit_dask` on a LocalCluster of 1 and 2 process workers (one
thread each), the seconds in the separations, the bytes that crossed the network per cut
(the loop's step broadcast to every worker, the partitions' sums gathered) and once (the
gold arcs the relation labeler trains on), each worker's seconds, and whether every model's
bytes equal the one-process model's.

    python benches/peers/dask_fit/parser.py [--eps 0.001] [--workers 1 2] [--partitions 4]
        [--corpora web wiki]

`--corpora web wiki` trains on the folds of both shipped Turkish treebanks (web, then
Wikipedia: 3,881 sentences, 2.5 times the tokens).

Needs the package (maturin develop --release) and dask[distributed].
"""

import argparse
import gzip
import time
from pathlib import Path

import dask.bag as db
from report import cluster, report

from multikernel import DependencyParser
from multikernel._dask_parts import fit_parser_dask

ROOT = Path(__file__).resolve().parents[3]
TREEBANKS = {
    "web": ROOT / "data" / "treebank" / "tr-web.conllu.gz",
    "wiki": ROOT / "data" / "treebank" / "tr-wiki.conllu.gz",
}


def blocks(folds, corpus="web"):
    """The sentences of the folds of a shipped treebank, each its CoNLL-U lines."""
    text = gzip.open(TREEBANKS[corpus], "rt", encoding="utf-8").read()
    sentences = [b.strip("\n") + "\n\n" for b in text.split("\n\n") if b.strip()]
    return [s for i, s in enumerate(sentences) if i % 10 in folds]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=None)
    ap.add_argument("--folds", default="0,1,2,3,4,5,6,7")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--corpora", nargs="+", default=["web"], choices=sorted(TREEBANKS),
                    help="the treebanks whose folds train (web and wiki: 2.5 times the "
                         "tokens of web alone; about 6 minutes)")
    a = ap.parse_args()
    folds = {int(f) for f in a.folds.split(",")}
    X = [b for corpus in a.corpora for b in blocks(folds, corpus)]
    settings = dict(learner="mtl", eps=a.eps, random_state=0)
    t0 = time.perf_counter()
    one = DependencyParser(**settings).fit(X)
    print(f"one process, every core: {len(X)} sentences, {time.perf_counter() - t0:.1f} s; "
          f"{one.fit_notes_[0]}", flush=True)
    want = one.parser_.to_bytes()
    for w in a.workers:
        with cluster(w) as client:
            bag = db.from_sequence(X, partition_size=-(-len(X) // a.partitions))
            stats = {}
            t0 = time.perf_counter()
            est = fit_parser_dask(DependencyParser(**settings), bag, client, stats=stats)
            report(w, time.perf_counter() - t0, stats, est.parser_.to_bytes() == want,
                   est.fit_notes_[0], f"; gold arcs {stats['arcs_bytes'] / 1e6:.1f} MB once")

if __name__ == "__main__":
    main()
