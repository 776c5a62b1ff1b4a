"""predict_dask on sentences (issue 52, item 1): a SequenceTagger trained on folds 0-7 of the
Turkish Web Treebank shipped in data/ (UPOS, feature dicts), then the test fold repeated to
``--sentences`` sentences tagged in one process (``predict``) and over a dask bag with one
and two Dask workers (a LocalCluster on the loopback interface: worker processes with one
thread each); prints seconds per run and checks that every run's tags equal ``predict``'s.

The sentences live where a cluster's data would: the test fold's CoNLL-U text is written to
one file per partition, and each partition reads its file and builds its feature dicts on
its worker (``bag.map_partitions``), so the seconds are those of reading, featurizing and
tagging on the workers plus Dask's overhead, not of shipping 100,000 dicts from the client.
Two figures per worker count: the tags kept on the workers (a count of the tokens comes
back) and the tags gathered to the client (``.compute()``: the list of label lists comes
back through Dask's serialization, which pickles a list element by element).

    python benches/peers/dask_predict/run.py [--sentences 100000] [--workers 1 2]
        [--partitions 16]

Needs the package built (``maturin develop --release``) and ``dask[distributed]``.
"""

import argparse
import gzip
import tempfile
import time
from pathlib import Path

import dask.bag as db
import distributed

from multikernel import SequenceTagger
from multikernel.dask import predict_dask

ROOT = Path(__file__).resolve().parents[3]
TREEBANK = ROOT / "data" / "treebank" / "tr-web.conllu.gz"


def blocks_of(text):
    return [b for b in text.split("\n\n") if b.strip()]


def words_tags(block):
    rows = [line.split("\t") for line in block.splitlines()]
    rows = [r for r in rows if len(r) == 10 and r[0].isdigit()]
    return [r[1] for r in rows], [r[3] for r in rows]


def sentences():
    """(fold, block, words, tags) of every TWT sentence, fold = index mod 10."""
    text = gzip.open(TREEBANK, "rt", encoding="utf-8").read()
    return [(i % 10, b, *words_tags(b)) for i, b in enumerate(blocks_of(text))]


def featurized(paths):
    """A partition's sentences as feature dicts, read from its file (on the worker)."""
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            out.extend(features(words_tags(b)[0]) for b in blocks_of(f.read()))
    return out


def features(words):
    """sklearn-crfsuite's tutorial features, over the word and its neighbours."""
    feats = []
    for i, w in enumerate(words):
        f = {
            "bias": 1.0, "w": w.lower(), "suf3": w[-3:], "suf2": w[-2:],
            "upper": w.isupper(), "title": w.istitle(), "digit": w.isdigit(),
        }
        if i > 0:
            f["-1:w"] = words[i - 1].lower()
        else:
            f["BOS"] = True
        if i + 1 < len(words):
            f["+1:w"] = words[i + 1].lower()
        else:
            f["EOS"] = True
        feats.append(f)
    return feats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--partitions", type=int, default=16)
    a = ap.parse_args()
    data = sentences()
    train = [(features(w), t) for f, _, w, t in data if f <= 7]
    test_blocks = [b for f, b, _, _ in data if f == 9]
    test = [features(words_tags(b)[0]) for b in test_blocks]
    t0 = time.perf_counter()
    est = SequenceTagger(random_state=0).fit([x for x, _ in train], [y for _, y in train])
    print(f"fit: {len(train)} sentences, {time.perf_counter() - t0:.1f} s", flush=True)
    reps = a.sentences // len(test) + 1
    X = (test * reps)[: a.sentences]
    blocks = (test_blocks * reps)[: a.sentences]
    tmp = Path(tempfile.mkdtemp(prefix="dask-predict-"))
    per = -(-len(blocks) // a.partitions)
    files = []
    for k in range(a.partitions):
        path = tmp / f"part{k:03}.conllu"
        path.write_text("\n\n".join(blocks[k * per : (k + 1) * per]) + "\n\n",
                        encoding="utf-8")
        files.append(str(path))
    t0 = time.perf_counter()
    want = est.predict(X)
    print(f"predict (one process): {len(X)} sentences, {time.perf_counter() - t0:.1f} s",
          flush=True)
    for w in a.workers:
        cluster = distributed.LocalCluster(
            n_workers=w, threads_per_worker=1, processes=True, protocol="tcp",
            host="127.0.0.1", dashboard_address="127.0.0.1:0",
        )
        client = distributed.Client(cluster)
        # The workers up, with the package imported: the seconds are the prediction's.
        client.wait_for_workers(w)
        client.run(lambda: __import__("multikernel") and None)
        bag = db.from_sequence(files, npartitions=a.partitions).map_partitions(featurized)
        tagged = predict_dask(est, bag, client=client)
        t0 = time.perf_counter()
        n = tagged.map(len).sum().compute()
        kept = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = tagged.compute()
        gathered = time.perf_counter() - t0
        print(f"predict_dask workers={w} partitions={a.partitions}: tags kept on the "
              f"workers (their count, {n} tokens) {kept:.1f} s; gathered to the client "
              f"{gathered:.1f} s, equal to predict: {got == want}", flush=True)
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
