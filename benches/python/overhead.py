"""Measurements of the Python package (BENCHMARKS.md, "Python package"):

1. overhead: ``MKLClassifier().fit(X, y)`` (``MKLRegressor`` on boston) against the same fit
   through the low-level binding call ``multikernel._core.fit``, median of ``--runs`` runs
   each, on the shipped UCI tables;
2. copies: peak resident memory of ``predict`` on a C-contiguous 200,000 x 100 float64 array
   against the array's size (each case in a fresh process; a Fortran-ordered array, which
   must be converted, for contrast);
3. interrupt latency: seconds from SIGINT to the KeyboardInterrupt, per learner.

Run from the repository root in the package's virtual environment (docs/python.md):
    python benches/python/overhead.py [--runs 20] [--json out.json]
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from tables import read_table  # noqa: E402

TABLES = [
    ("sonar", False),
    ("ionosphere", False),
    ("breast-cancer", False),
    ("pima-diabetes", False),
    ("glass", False),
    ("boston-housing", True),
]


def overhead(runs):
    from multikernel import MKLClassifier, MKLRegressor, _core

    rows = []
    for name, real in TABLES:
        X, y = read_table(name, real=real)
        Xc = np.ascontiguousarray(X, dtype=np.float64)
        if real:
            est = MKLRegressor(random_state=0)
            codes, k = np.ascontiguousarray(y, dtype=np.float64), None
        else:
            est = MKLClassifier(random_state=0)
            classes, inv = np.unique(y, return_inverse=True)
            codes, k = inv.astype(np.float64), len(classes)

        def low():
            _core.fit(Xc, codes, n_classes=k, seed=0)

        def high():
            est.fit(X, y)

        low(), high()  # warm up
        t_low, t_high = [], []
        for _ in range(runs):  # interleaved, so drifts of the machine hit both
            s = time.perf_counter()
            low()
            t_low.append(time.perf_counter() - s)
            s = time.perf_counter()
            high()
            t_high.append(time.perf_counter() - s)
        ml, mh = statistics.median(t_low), statistics.median(t_high)
        rows.append(
            dict(table=name, rows=X.shape[0], low_s=ml, estimator_s=mh, ratio=mh / ml,
                 learner=est.learner_)
        )
        print(f"{name:15s} n={X.shape[0]:4d}  binding {ml:.4f} s  estimator {mh:.4f} s  "
              f"ratio {mh / ml:.3f}  ({est.learner_})", flush=True)
    return rows


COPY_CASE = """
import sys, numpy as np
from multikernel import MKLClassifier

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

rng = np.random.default_rng(0)
order = sys.argv[1]
# The same values; the Fortran-ordered array is the transpose of a C-ordered one (no copy).
X = rng.standard_normal((200_000, 100)) if order == "C" else rng.standard_normal((100, 200_000)).T
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
clf = MKLClassifier(learner="lp-mkl", kernels=["rbf"], C=1.0).fit(X[:200], y[:200])
clf.predict(X[:10])  # every import and first-call allocation before the measurement
open("/proc/self/clear_refs", "w").write("5")  # resets the peak (VmHWM) to the current RSS
before = status("VmRSS")
pred = clf.predict(X)
peak = status("VmHWM")
print(before, peak, X.nbytes, float((pred == y).mean()))
"""


def copies():
    """Peak resident memory during predict above the resident memory just before it."""
    out = {}
    for order in ("C", "F"):
        r = subprocess.run([sys.executable, "-c", COPY_CASE, order], capture_output=True,
                           text=True, check=True)
        before, peak, nbytes, acc = r.stdout.split()
        before, peak, nbytes = int(before), int(peak), int(nbytes)
        out[order] = dict(array_mb=nbytes / 1e6, rss_before_mb=before / 1e6,
                          peak_during_mb=peak / 1e6, extra_mb=(peak - before) / 1e6,
                          accuracy=float(acc))
        print(f"predict on a {order}-ordered 200000 x 100 array ({nbytes / 1e6:.0f} MB): "
              f"resident {before / 1e6:.0f} MB before, peak {peak / 1e6:.0f} MB during "
              f"(+{(peak - before) / 1e6:.0f} MB)", flush=True)
    return out


def latency(repeats):
    from sklearn.datasets import make_classification, make_regression

    from multikernel import MKLClassifier, MKLRegressor

    Xc, yc = make_classification(n_samples=2000, n_features=20, random_state=0)
    Xr, yr = make_regression(n_samples=2000, n_features=20, noise=1.0, random_state=0)
    cases = [
        ("online, 5000 epochs", MKLClassifier(learner="online", kernels=["rbf", "linear"],
                                              epochs=5000, C=1.0), Xc, yc),
        ("online, built-in selection", MKLClassifier(learner="online", epochs=5000), Xc, yc),
        ("lp-mkl p=1, dictionary", MKLRegressor(learner="lp-mkl", p=1.0, C=1000.0), Xr, yr),
        ("gomp, 400 kernels", MKLRegressor(learner="gomp", kernels=["perfeature:rbf"],
                                           max_kernels=400, C=1.0), Xr, yr),
        ("mirror-descent, 10^6 iterations", MKLRegressor(learner="mirror-descent", degree=3,
                                                         max_iter=1_000_000, C=1.0), Xr, yr),
    ]
    out = []
    for name, est, X, y in cases:
        lat, finished = [], 0
        for _ in range(repeats):
            sent = {}

            def fire():
                sent["t"] = time.perf_counter()
                os.kill(os.getpid(), signal.SIGINT)

            timer = threading.Timer(1.0, fire)
            timer.start()
            try:
                est.fit(X, y)
                finished += 1
                timer.cancel()
            except KeyboardInterrupt:
                lat.append(time.perf_counter() - sent["t"])
        row = dict(case=name, interrupts=len(lat), finished_before=finished,
                   median_s=statistics.median(lat) if lat else None,
                   max_s=max(lat) if lat else None)
        out.append(row)
        print(f"{name:34s} interrupted {len(lat)}/{repeats}: latency median "
              f"{row['median_s']:.3f} s, max {row['max_s']:.3f} s", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", choices=["overhead", "copies", "latency"])
    a = ap.parse_args()
    result = {}
    if a.only in (None, "overhead"):
        result["overhead"] = overhead(a.runs)
    if a.only in (None, "copies"):
        result["copies"] = copies()
    if a.only in (None, "latency"):
        result["latency"] = latency(a.repeats)
    if a.json:
        a.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
