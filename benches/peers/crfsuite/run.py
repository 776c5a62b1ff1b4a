"""CRFsuite (python-crfsuite) on the same tagging data and the same CRF++ templates as
`multikernel reproduce mtl`: each template expanded to feature strings exactly as CRF++ does
(`U01:value/value`, rows outside the sentence read `_B-1`, `_B+1`, ...), first-order CRF,
trained by L-BFGS with l2 (c2) and by OWL-QN with l1 (c1). The regularization constant of each
row is chosen on the development file from a grid of the same size as ours; the test file is
scored once. Prints one JSON object per row.

Usage (from the repository's root; `benches/peers/crfsuite/run.sh` makes the files):

    python run.py TRAIN DEV TEST TEMPLATES [--grid 0.01,0.1,1,10]
"""
import argparse
import json
import re
import time

import pycrfsuite

MACRO = re.compile(r"%x\[(-?\d*),(\d*)\]")


def read_columns(path):
    sents, cur = [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\r\n")
        if not line.strip():
            if cur:
                sents.append(cur)
                cur = []
            continue
        cur.append(line.split())
    if cur:
        sents.append(cur)
    return sents


def read_templates(path):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\r\n")
        if not line or line.startswith("#"):
            continue
        out.append(line)
    return out


def expand(template, sent, pos):
    def repl(m):
        row = int(m.group(1) or 0)
        col = int(m.group(2) or 0)
        i = pos + row
        if i < 0:
            return f"_B{i}"
        if i >= len(sent):
            return f"_B+{i - len(sent) + 1}"
        return sent[i][col]

    return MACRO.sub(repl, template)


def featurize(sents, unigrams):
    return [[[expand(t, s, i) for t in unigrams] for i in range(len(s))] for s in sents]


def labels(sents):
    return [[tok[-1] for tok in s] for s in sents]


def accuracy(tagger, xs, ys):
    right = total = 0
    for x, y in zip(xs, ys):
        p = tagger.tag(x)
        right += sum(a == b for a, b in zip(p, y))
        total += len(y)
    return 100.0 * right / total


def train(xs, ys, algo, c, model, max_iter):
    tr = pycrfsuite.Trainer(verbose=False)
    for x, y in zip(xs, ys):
        tr.append(x, y)
    params = {"max_iterations": max_iter, "feature.possible_transitions": True}
    if algo == "l1":
        params.update({"c1": c, "c2": 0.0})
    else:
        params.update({"c1": 0.0, "c2": c})
    tr.set_params(params)
    start = time.time()
    tr.train(model)
    return time.time() - start


def kept_templates(tagger, n_unigrams):
    info = tagger.info()
    used = set()
    for (attr, _label), w in info.state_features.items():
        if w != 0.0:
            used.add(attr.split(":", 1)[0])
    trans = any(w != 0.0 for w in info.transitions.values())
    return len(used) + int(trans), n_unigrams + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("dev")
    ap.add_argument("test")
    ap.add_argument("templates")
    ap.add_argument("--grid", default="0.01,0.1,1")
    ap.add_argument("--algos", default="l2,l1")
    ap.add_argument("--max-iter", type=int, default=200)
    ap.add_argument("--model", default="target/peers/crfsuite.model")
    a = ap.parse_args()
    templates = read_templates(a.templates)
    unigrams = [t for t in templates if t.startswith("U")]
    tr, dv, te = (read_columns(p) for p in (a.train, a.dev, a.test))
    t0 = time.time()
    xtr, xdv, xte = (featurize(s, unigrams) for s in (tr, dv, te))
    feat_seconds = time.time() - t0
    ytr, ydv, yte = labels(tr), labels(dv), labels(te)
    grid = [float(c) for c in a.grid.split(",")]
    for algo in a.algos.split(","):
        best = None
        for c in grid:
            secs = train(xtr, ytr, algo, c, a.model, a.max_iter)
            tagger = pycrfsuite.Tagger()
            tagger.open(a.model)
            dev = accuracy(tagger, xdv, ydv)
            if best is None or dev > best[0]:
                best = (dev, c, secs)
        dev, c, secs = best
        train(xtr, ytr, algo, c, a.model, a.max_iter)
        tagger = pycrfsuite.Tagger()
        tagger.open(a.model)
        kept, total = kept_templates(tagger, len(unigrams))
        print(json.dumps({
            "method": "crfsuite-lbfgs-l2" if algo == "l2" else "crfsuite-owlqn-l1",
            "templates": a.templates,
            "c": c,
            "dev_accuracy": round(dev, 2),
            "test_accuracy": round(accuracy(tagger, xte, yte), 2),
            "templates_kept": kept,
            "templates_total": total,
            "train_seconds": round(secs, 3),
            "featurize_seconds": round(feat_seconds, 3),
            "grid": grid,
        }), flush=True)


if __name__ == "__main__":
    main()
