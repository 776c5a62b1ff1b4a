"""What 2 workers can gain at most on this machine in a parser's (or a tagger's) separation,
with no Dask at all: one process (one thread) separating all the sentences at a fixed point against two
processes (one thread each) separating a half each at the same time. Each process compiles
its sentences first, as a `fit_dask` worker does (`CompiledPart`), and then times
`--repeats` separations of them, the work a worker does at every cut. A `fit_dask`
separation is this plus the messages, so its speed-up with 2 workers stays below this
ratio.

    python benches/peers/dask_fit/ceiling.py [--corpora web wiki] [--trials 5]
        [--task parsing|tagging]

`--task tagging`: the tagger of run.py (the redundant CRF++ templates over the columns
`multikernel convert` writes; needs the command line, as run.py does) at a fixed point.

Prints each trial's seconds and ratio (the one process's seconds over the slower half's),
then the median ratio. Needs the package (maturin develop --release).
"""

import argparse
import multiprocessing as mp
import statistics
import time

from parser import TREEBANKS, blocks

FMT = ("parser", None, None, False)


def tagger_fmt():
    """What the tagger's partitions hold: run.py's columns and templates."""
    from run import TEMPLATES

    return ("tagger", TEMPLATES.read_text(encoding="utf-8"), str(TEMPLATES), None)


def separations(featurizer, sentences, repeats, start, queue, fmt=FMT):
    """Compiles ``sentences`` (a parser's blocks, or a tagger's (columns, labels) pairs)
    against ``featurizer``, waits for ``start``, then times ``repeats`` separations at a
    fixed point."""
    import numpy as np

    from multikernel import _core, _dask_parts

    with _core.Threads(1):
        if fmt[0] == "parser":
            feat = _core.ParseFeaturizer(featurizer)
            compiled = _dask_parts._compile(sentences, None, fmt, feat)
        else:
            feat = _core.PartFeaturizer(featurizer)
            xs = [x for x, _ in sentences]
            ys = [y for _, y in sentences]
            compiled = _dask_parts._compile(xs, ys, fmt, feat)
        w = np.sin(np.arange(feat.dim, dtype=np.float64)) * 1e-2
        start.wait()
        started = time.perf_counter()
        for _ in range(repeats):
            compiled.separate_point(w, 0)
        queue.put(time.perf_counter() - started)


def featurizer_of(X, fmt=FMT):
    """The featurizer one process builds from ``X`` (bytes)."""
    from multikernel import _core, _dask_parts

    if fmt[0] == "tagger":
        counts = _dask_parts._part_counts([x for x, _ in X], [y for _, y in X], fmt)
        return _core.merge_tag_counts([counts])[0]
    values = _core.merge_parse_values([_dask_parts._parse_values(X, FMT)])
    keys = _core.merge_parse_keys([_dask_parts._parse_keys(X, FMT, values)])
    featurizer, _ = _core.parse_featurizer(values, keys, templates=None, templates_origin=None,
                                           projective=False)
    return featurizer


def timed(ctx, featurizer, halves, repeats, fmt=FMT):
    """Seconds of each process of ``halves`` (lists of sentences), timed together."""
    queue = ctx.Queue()
    start = ctx.Barrier(len(halves) + 1)
    procs = [ctx.Process(target=separations, args=(featurizer, h, repeats, start, queue, fmt))
             for h in halves]
    for p in procs:
        p.start()
    start.wait()
    seconds = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    return seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", nargs="+", default=["web", "wiki"], choices=sorted(TREEBANKS))
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--task", choices=["parsing", "tagging"], default="parsing")
    a = ap.parse_args()
    if a.task == "parsing":
        fmt = FMT
        X = [b for corpus in a.corpora for b in blocks(set(range(8)), corpus)]
    else:
        from run import columns

        fmt = tagger_fmt()
        X = [pair for corpus in a.corpora
             for pair in zip(*columns("0,1,2,3,4,5,6,7", corpus))]
    featurizer = featurizer_of(X, fmt)
    # As the benchmarks' 4 partitions fall on 2 workers: partitions 0 and 2, 1 and 3.
    q = -(-len(X) // 4)
    parts = [X[i * q:(i + 1) * q] for i in range(4)]
    halves = [parts[0] + parts[2], parts[1] + parts[3]]
    ctx = mp.get_context("spawn")
    ratios = []
    for trial in range(a.trials):
        (one,) = timed(ctx, featurizer, [X], a.repeats, fmt)
        two = timed(ctx, featurizer, halves, a.repeats, fmt)
        ratios.append(one / max(two))
        print(f"trial {trial}: one process {one:.2f} s; two at once {two[0]:.2f} s and "
              f"{two[1]:.2f} s; ratio {ratios[-1]:.2f}", flush=True)
    print(f"median ratio {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max "
          f"{max(ratios):.2f}) over {a.trials} trials of {a.repeats} separations", flush=True)


if __name__ == "__main__":
    main()
