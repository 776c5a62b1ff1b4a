"""scikit-learn's SGDClassifier over approximated Gaussian kernels, beside our online MKL
learner (SPOM) over random Fourier features, on the scale benchmark of issue 17 (generated
ringnorm written by `multikernel generate`, 10^5 to 10^7 rows).

The data are streamed: the training CSV is read in chunks of --chunk rows
(pandas.read_csv(chunksize=...)), never whole, and SGDClassifier(loss="hinge").partial_fit
sees one mapped chunk at a time, --epochs passes over the file.

What matches our run `multikernel train --kernel rbf:approx=rff,dim=1024
--kernel rbf:scale=4,approx=rff,dim=1024 --kernel rbf:scale=0.25,approx=rff,dim=1024`:

* Standardization: our trainer standardizes every feature on the training rows (population
  mean and standard deviation). Here a first pass over the training file
  (StandardScaler.partial_fit per chunk: exact population moments of the whole file) gives
  the statistics, applied to every training chunk and to the test rows. Its time is reported
  apart (prep_seconds) and also inside total_seconds.
* Kernel widths: our `rbf` without sigma2 takes the median heuristic on the standardized
  training rows, sigma2 = median_{i<j} ||x_i - x_j||^2 / 2 over the pairs of 1,000 sampled
  rows (kernel/heuristics.rs, median_sigma2), times `scale` (kernel/fitted.rs, resolve). Here
  the same median on 1,000 rows drawn (seeded) from the first chunk (the generated rows are
  independent and identically distributed, so these are a sample of the file as good as
  ours; the draws themselves differ from our ChaCha sample), and the three kernels'
  gamma = 1 / (2 sigma2) for scale = 1, 4, 0.25 (sklearn's exp(-gamma ||x - x'||^2) is our
  exp(-||x - x'||^2 / (2 sigma2))). --gammas G1,G2,G3 gives them outright (e.g. from our
  model's summary, rbf(sigma2=S): gamma = 1/(2 S)).
* Features: --map rff: three RBFSampler(gamma_m, n_components=1024) (Rahimi & Recht's
  sqrt(2/D) cos(W x + b), the construction of our approx=rff), seeds --seed, --seed+1,
  --seed+2; --map nystroem: three Nystroem(kernel="rbf", gamma_m, n_components=1024) fitted
  on 1,024 rows drawn (seeded) from the first standardized chunk. The three maps'
  outputs are concatenated: 3,072 features, float64 as ours.
* Regularization: our online learner minimizes lambda Omega(w) + (1/N) sum_i hinge_i with
  lambda = 1/(C N) (docs/cli.md, "--C and --lambda"); C = 1 by default. SGDClassifier minimizes
  (1/n) sum_i loss_i + alpha R(w) with R(w) = 1/2 ||w||^2 (penalty="l2"), so alpha plays
  lambda's role: --alpha defaults to 1/(C N) with N the training rows (C = 1). On the
  concatenated features 1/2 ||w||^2 is 1/2 sum_m ||w_m||^2, the "l2" regularizer (the
  uniform sum of the three kernels); our default with several kernels is l21sq,
  1/2 (sum_m ||w_m||)^2, which also selects among the kernels: same scale of lambda, a
  different penalty shape, as close as scikit-learn allows.
* SGD's step: scikit-learn's default learning_rate="optimal" (eta_t = 1/(alpha (t + t0)),
  Pegasos-like), shuffle within each chunk (random_state = --seed), no averaging.

Per run it prints one JSON line: rows, epochs, map, gammas, alpha, train_seconds (the
--epochs passes: read + standardize + map + partial_fit; wall clock), seconds_per_epoch,
train_cpu_seconds (process CPU time of the passes, all threads: a figure less sensitive to
other loads on the machine),
rows_per_second (rows x epochs / train_seconds), the split of train_seconds into read /
map / sgd seconds, prep_seconds (first pass: moments, heuristic, map fitting),
total_seconds, peak_rss_mb (resource.getrusage ru_maxrss), test_accuracy.

Usage: python run.py --train FILE --test FILE [--epochs 5] [--chunk 10000]
       [--map rff|nystroem] [--alpha A] [--C 1] [--gammas G1,G2,G3] [--seed 0]
       [--dim 1024] [--out results.jsonl]
"""

import argparse
import json
import resource
import sys
import time

import numpy as np
import pandas as pd
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import StandardScaler

# Our three kernels: rbf (scale 1), rbf:scale=4, rbf:scale=0.25 (multiples of sigma2).
SCALES = [1.0, 4.0, 0.25]
# Rows in the median heuristic (kernel/heuristics.rs, HEURISTIC_MAX_POINTS).
HEURISTIC_ROWS = 1000


def chunks(path, chunk):
    """(features, labels) of each chunk of the CSV: the header names the features and, last,
    the label (`multikernel generate` writes x1, ..., xd, y)."""
    for df in pd.read_csv(path, chunksize=chunk, dtype={"y": str}):
        yield df.iloc[:, :-1].to_numpy(dtype=np.float64), df.iloc[:, -1].to_numpy()


def median_sigma2(x):
    """Our median heuristic: median over pairs i < j of ||x_i - x_j||^2, halved."""
    sq = (x * x).sum(axis=1)
    d = sq[:, None] + sq[None, :] - 2.0 * x @ x.T
    iu = np.triu_indices(len(x), k=1)
    pairs = np.maximum(d[iu], 0.0)
    med = np.median(pairs)
    if med <= 0.0:
        pos = pairs[pairs > 0.0]
        return float(np.median(pos)) / 2.0 if len(pos) else 1.0
    return float(med) / 2.0


class Maps:
    """The three feature maps, applied side by side (concatenated)."""

    def __init__(self, kind, gammas, dim, seed, first):
        self.maps = []
        for m, g in enumerate(gammas):
            if kind == "rff":
                f = RBFSampler(gamma=g, n_components=dim, random_state=seed + m)
                f.fit(first[:1])  # draws W and b; only the feature count is read
            else:
                rng = np.random.default_rng(seed + m)
                rows = rng.choice(len(first), size=min(dim, len(first)), replace=False)
                f = Nystroem(kernel="rbf", gamma=g, n_components=len(rows),
                             random_state=seed + m)
                f.fit(first[np.sort(rows)])
            self.maps.append(f)
        self.n_features = self.transform(first[:1]).shape[1]

    def transform(self, x):
        if not hasattr(self, "n_features"):
            return np.hstack([f.transform(x) for f in self.maps])
        # Each map's block written in place: one chunk's features, no concatenated copy.
        z = np.empty((len(x), self.n_features))
        at = 0
        for f in self.maps:
            block = f.transform(x)
            z[:, at:at + block.shape[1]] = block
            at += block.shape[1]
        return z


def peak_rss_mb():
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=10000)
    ap.add_argument("--map", choices=["rff", "nystroem"], default="rff")
    ap.add_argument("--dim", type=int, default=1024, help="features per kernel")
    ap.add_argument("--C", type=float, default=1.0, help="our C: alpha = 1/(C N)")
    ap.add_argument("--alpha", type=float, default=None,
                    help="SGDClassifier's alpha (default 1/(C N), N training rows)")
    ap.add_argument("--gammas", default=None,
                    help="three gammas G1,G2,G3 (default: median heuristic x scales)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="append the JSON line to this file too")
    a = ap.parse_args()
    if a.epochs < 1 or a.chunk < 1 or a.dim < 1 or not a.C > 0:
        sys.exit("--epochs, --chunk, --dim and --C must be positive")

    t0 = time.perf_counter()
    # First pass: moments of every feature, row count, classes, the first chunk.
    scaler = StandardScaler()
    n, classes, first = 0, set(), None
    for x, y in chunks(a.train, a.chunk):
        scaler.partial_fit(x)
        n += len(x)
        classes.update(y.tolist())
        if first is None:
            first = x
    if first is None:
        sys.exit(f"{a.train}: no rows")
    classes = np.array(sorted(classes))
    first = scaler.transform(first)
    rng = np.random.default_rng(a.seed)
    if a.gammas:
        gammas = [float(g) for g in a.gammas.split(",")]
        if len(gammas) != len(SCALES) or not all(g > 0 for g in gammas):
            sys.exit("--gammas takes three positive numbers")
        sigma2 = None
    else:
        k = min(HEURISTIC_ROWS, len(first))
        sample = first[np.sort(rng.choice(len(first), size=k, replace=False))]
        sigma2 = median_sigma2(sample)
        gammas = [1.0 / (2.0 * s * sigma2) for s in SCALES]
    alpha = a.alpha if a.alpha is not None else 1.0 / (a.C * n)
    maps = Maps(a.map, gammas, a.dim, a.seed, first)
    del first
    prep_seconds = time.perf_counter() - t0

    clf = SGDClassifier(loss="hinge", penalty="l2", alpha=alpha, random_state=a.seed)
    cpu0 = time.process_time()
    read_s = map_s = sgd_s = 0.0
    epoch_seconds = []
    for _ in range(a.epochs):
        te = time.perf_counter()
        tr = te
        for x, y in chunks(a.train, a.chunk):
            tm = time.perf_counter()
            read_s += tm - tr
            z = maps.transform(scaler.transform(x))
            ts = time.perf_counter()
            map_s += ts - tm
            clf.partial_fit(z, y, classes=classes)
            tr = time.perf_counter()
            sgd_s += tr - ts
        epoch_seconds.append(time.perf_counter() - te)
    train_seconds = sum(epoch_seconds)
    train_cpu_seconds = time.process_time() - cpu0

    correct = total = 0
    for x, y in chunks(a.test, a.chunk):
        pred = clf.predict(maps.transform(scaler.transform(x)))
        correct += int((pred == y).sum())
        total += len(y)
    row = {
        "peer": "sklearn-sgd",
        "map": a.map,
        "train": a.train,
        "test": a.test,
        "rows": n,
        "test_rows": total,
        "features": maps.n_features,
        "epochs": a.epochs,
        "chunk": a.chunk,
        "sigma2_heuristic": sigma2,
        "gammas": gammas,
        "alpha": alpha,
        "train_seconds": round(train_seconds, 3),
        "seconds_per_epoch": [round(s, 3) for s in epoch_seconds],
        "train_cpu_seconds": round(train_cpu_seconds, 3),
        "rows_per_second": round(n * a.epochs / train_seconds, 1),
        "read_seconds": round(read_s, 3),
        "map_seconds": round(map_s, 3),
        "sgd_seconds": round(sgd_s, 3),
        "prep_seconds": round(prep_seconds, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "test_accuracy": correct / total if total else None,
        "sklearn": __import__("sklearn").__version__,
    }
    line = json.dumps(row)
    print(line, flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
