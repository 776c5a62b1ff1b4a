"""Peak memory of a fit on scipy.sparse X against the same fit on X.toarray()
(docs/python.md, "Sparse X"): a TF-IDF-like table, ``density x d`` distinct random columns
a row (seed 0, uniform values) with its rows scaled to unit l2 norm, the label whether a
row's sum over the first half of the columns is above the median; ``MKLClassifier(kernels=
["linear:norm=trace", "rbf:norm=trace"], learner="lp-mkl", C=10)``, then ``predict`` on
100 rows. Each case runs in a fresh process and reports its peak resident memory
(``ru_maxrss``), the peak of Python's allocations (tracemalloc: numpy's arrays, not the
Rust core's) and the seconds of fit + predict; ``auto`` is ``MKLClassifier(random_state=0)``
on the sparse rows (the sparse dictionary, C and p selected); ``baseline`` the process
with the packages imported and the sparse table made, without a fit.

Run from the repository root in the package's virtual environment:

    python benches/python/sparse_memory.py [--n 1000] [--d 50000] [--density 0.001]
"""

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc


def table(n, d, density):
    """``round(density d)`` distinct columns per row drawn with numpy's seeded generator,
    uniform values, rows scaled to unit norm (scipy.sparse.random draws its positions from
    a permutation of all n d cells: 400 MB at 1,000 x 50,000, before any fit)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(0)
    k = max(1, round(density * d))
    cols = np.concatenate([np.sort(rng.choice(d, k, replace=False)) for _ in range(n)])
    indptr = np.arange(n + 1) * k
    X = normalize(sp.csr_matrix((rng.random(n * k), cols, indptr), shape=(n, d)))
    s = np.asarray(X[:, : d // 2].sum(axis=1)).ravel()
    return X, s > np.median(s)


def case(mode, n, d, density):
    from multikernel import MKLClassifier

    X, y = table(n, d, density)
    if mode == "dense":
        X = X.toarray()
    if mode == "baseline":  # the interpreter, the packages and the sparse table: no fit
        print(json.dumps({
            "mode": mode,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }), flush=True)
        return
    t = time.perf_counter()
    tracemalloc.start()
    if mode == "auto":
        clf = MKLClassifier(random_state=0)
    else:
        clf = MKLClassifier(
            kernels=["linear:norm=trace", "rbf:norm=trace"], learner="lp-mkl", C=10.0
        )
    clf.fit(X, y)
    clf.predict(X[:100])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seconds = time.perf_counter() - t
    print(json.dumps({
        "mode": mode,
        "n": n,
        "d": d,
        "density": density,
        "dense_x_mb": round(n * d * 8 / 2**20, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_python_alloc_mb": round(peak / 2**20, 1),
        "seconds": round(seconds, 2),
        "train_accuracy": round(clf.score(X, y), 4),
        "kernels": clf.kernels_,
    }), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--d", type=int, default=50000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--case", choices=["baseline", "sparse", "dense", "auto"])
    args = ap.parse_args()
    if args.case:
        return case(args.case, args.n, args.d, args.density)
    for mode in ("baseline", "sparse", "dense", "auto"):
        subprocess.run(
            [sys.executable, __file__, "--case", mode, "--n", str(args.n), "--d", str(args.d),
             "--density", str(args.density)],
            check=True,
        )


if __name__ == "__main__":
    main()
