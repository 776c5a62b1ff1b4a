"""The library's SMO (multikernel._core.svm_dual) against libsvm through scikit-learn, on
the same precomputed kernel: a Gaussian kernel (gamma = 1/d) on the standardized rows of
each shipped table; binary tables by SVC(kernel="precomputed"), glass by
OneVsRestClassifier of it, boston by SVR; the same C and tolerance on both sides.

Prints, per table and C, the largest difference of the training decision values, both
solvers' seconds (the solve alone, median of --repeats), our iterations and duality gap.
    benches/peers/libsvm_smo/run.sh [--tol 1e-6] [--repeats 5] [--json out.json]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from tables import read_table  # noqa: E402

from multikernel import _core  # noqa: E402

TABLES = ["sonar", "ionosphere", "breast-cancer", "pima-diabetes", "glass", "boston-housing"]


def timed(f, repeats):
    times, out = [], None
    for _ in range(repeats):
        s = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - s)
    return out, statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 100.0])
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    rows = []
    for name in TABLES:
        real = name == "boston-housing"
        X, y = read_table(name, real=real)
        Xs = StandardScaler().fit_transform(X)
        K = np.ascontiguousarray(rbf_kernel(Xs, gamma=1.0 / X.shape[1]))
        for C in a.C:
            if real:
                yt = np.ascontiguousarray(y, dtype=float)
                ours, t_ours = timed(lambda: _core.svm_dual(K, yt, kind="svr", c=C, epsilon=0.1, tol=a.tol), a.repeats)
                peer, t_peer = timed(lambda: SVR(kernel="precomputed", C=C, epsilon=0.1, tol=a.tol).fit(K, yt), a.repeats)
                diff = np.abs(K @ ours["coef"] + ours["bias"] - peer.predict(K)).max()
                gaps, iters = [ours["gap"]], [ours["iterations"]]
                t_ours = ours["seconds"] if a.repeats == 1 else t_ours
            else:
                classes = np.unique(y)
                if len(classes) == 2:
                    problems = [np.where(y == classes[1], 1.0, -1.0)]
                    peer, t_peer = timed(lambda: SVC(kernel="precomputed", C=C, tol=a.tol).fit(K, y), a.repeats)
                    peer_f = [peer.decision_function(K)]
                else:
                    problems = [np.where(y == c, 1.0, -1.0) for c in classes]
                    peer, t_peer = timed(
                        lambda: OneVsRestClassifier(SVC(kernel="precomputed", C=C, tol=a.tol)).fit(K, y),
                        a.repeats,
                    )
                    peer_f = [e.decision_function(K) for e in peer.estimators_]
                fits, t_ours = timed(
                    lambda: [_core.svm_dual(K, yy, kind="svc", c=C, tol=a.tol) for yy in problems],
                    a.repeats,
                )
                diff = max(np.abs(K @ f["coef"] + f["bias"] - pf).max() for f, pf in zip(fits, peer_f))
                gaps = [f["gap"] for f in fits]
                iters = [f["iterations"] for f in fits]
            row = dict(table=name, rows=len(y), C=C, max_abs_diff=float(diff), ours_s=t_ours,
                       libsvm_s=t_peer, iterations=int(sum(iters)), max_gap=float(max(gaps)))
            rows.append(row)
            print(f"{name:15s} C={C:<6g} max |f_ours - f_libsvm| {diff:.2e}  ours {t_ours:.4f} s "
                  f"libsvm {t_peer:.4f} s  iterations {sum(iters)}  gap {max(gaps):.2e}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
