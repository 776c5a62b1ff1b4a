"""fit_dask for a tagger against the fit in one process: TWT part-of-speech tagging (folds
0-7 of the shipped Turkish Web Treebank, as `multikernel convert` writes its columns) with
the redundant CRF++ templates, multi-template learning (`learner="mtl"`) at a tolerance that
makes the fit last about a minute in one process. Prints the seconds of the fit in one
process (every core, then one thread) and of `fit_dask` on a LocalCluster of 1 and 2 process
workers (one thread each), the seconds in the separations (the loss-augmented decoding on
the workers, with the network), the bytes that crossed the network per cut (the loop's step
broadcast to every worker, the partitions' sums gathered), each worker's seconds (compiling
its partitions and moving its replica of the point, decoding), and whether every model's
bytes equal the one-process model's.

    python benches/peers/dask_fit/run.py [--eps 0.002] [--workers 1 2] [--partitions 4]
        [--corpora web wiki]

`--corpora web wiki` trains on the folds of both shipped Turkish treebanks (web, then wiki:
3,881 sentences, 2.5 times the tokens), where the decoding weighs more against the
working set than on TWT alone.

Needs the package (maturin develop) and the command line (cargo build --release) for the
conversion: MULTIKERNEL_BIN, else target/release/multikernel.
"""

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import dask.bag as db
from report import cluster, report

from multikernel import SequenceTagger
from multikernel._dask_parts import fit_tagger_dask

ROOT = Path(__file__).resolve().parents[3]
TREEBANKS = {
    "web": ROOT / "data" / "treebank" / "tr-web.conllu.gz",
    "wiki": ROOT / "data" / "treebank" / "tr-wiki.conllu.gz",
}
TEMPLATES = ROOT / "data" / "tagging" / "twt-upos-redundant.templates"


def columns(folds, corpus="web"):
    """Sentences of the folds of a shipped treebank as `multikernel convert` writes them:
    (tokens, labels)."""
    binary = os.environ.get("MULTIKERNEL_BIN", str(ROOT / "target" / "release" / "multikernel"))
    out = Path(tempfile.mkdtemp(prefix="dask-fit-")) / "train.txt"
    subprocess.run([binary, "convert", "--data", str(TREEBANKS[corpus]), "--folds", folds, "--out",
                    str(out)], check=True, capture_output=True)
    X, y, toks = [], [], []
    for line in out.read_text(encoding="utf-8").splitlines() + [""]:
        if line.strip():
            toks.append(line.split())
        elif toks:
            X.append([t[:-1] for t in toks])
            y.append([t[-1] for t in toks])
            toks = []
    return X, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=0.002)
    ap.add_argument("--folds", default="0,1,2,3,4,5,6,7")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--skip-one-thread", action="store_true")
    ap.add_argument("--corpora", nargs="+", default=["web"], choices=sorted(TREEBANKS),
                    help="the treebanks whose folds train (web and wiki: 2.5 times the "
                         "tokens; a fit of several minutes)")
    a = ap.parse_args()
    X, y = [], []
    for corpus in a.corpora:
        Xc, yc = columns(a.folds, corpus)
        X += Xc
        y += yc
    settings = dict(learner="mtl", templates=str(TEMPLATES), eps=a.eps)
    t0 = time.perf_counter()
    one = SequenceTagger(**settings).fit(X, y)
    print(f"one process, every core: {len(X)} sentences, {time.perf_counter() - t0:.1f} s; "
          f"{one.fit_notes_[0]}", flush=True)
    want = one.tagger_.to_bytes()
    if not a.skip_one_thread:
        t0 = time.perf_counter()
        single = SequenceTagger(n_jobs=1, **settings).fit(X, y)
        print(f"one process, one thread: {time.perf_counter() - t0:.1f} s, same bytes: "
              f"{single.tagger_.to_bytes() == want}", flush=True)
    for w in a.workers:
        with cluster(w) as client:
            size = -(-len(X) // a.partitions)
            Xb = db.from_sequence(X, partition_size=size)
            yb = db.from_sequence(y, partition_size=size)
            stats = {}
            t0 = time.perf_counter()
            est = fit_tagger_dask(SequenceTagger(**settings), Xb, yb, client, stats=stats)
            report(w, time.perf_counter() - t0, stats, est.tagger_.to_bytes() == want,
                   est.fit_notes_[0])

if __name__ == "__main__":
    main()
