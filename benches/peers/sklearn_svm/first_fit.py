"""A scikit-learn user's first fit, side by side: `MKLClassifier()` with no settings against
`GridSearchCV(SVC(), 20-point C x gamma grid, cv=5)` on make_classification(2,000 x 20,
random_state=0), 75/25 split (random_state=0), in the same process, each fit timed with
time.perf_counter. Also the seconds until the first progress line of
`MKLClassifier(verbose=1)` reaches sys.stderr.

Runs in the environment that has the multikernel package (e.g. target/ci-venv after
`maturin develop --release`) and scikit-learn:

    python benches/peers/sklearn_svm/first_fit.py [--repeats 3]

Prints one JSON line per repeat: svc_seconds, svc_accuracy, mkl_seconds, mkl_accuracy,
mkl_learner, mkl_choice, first_line_seconds.

    python benches/peers/sklearn_svm/first_fit.py --repeats 1 --data-seeds 0 1 2 3 4

runs each on the tables of those seeds (make_classification and the split), then prints
the mean test accuracy of each over the seeds.
"""

import argparse
import io
import json
import sys
import time

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from first_table import table_and_grid
from multikernel import MKLClassifier


class FirstWrite(io.TextIOBase):
    """A stderr that remembers when its first line came and keeps the text."""

    def __init__(self, start):
        self.start, self.first, self.text = start, None, []

    def write(self, s):
        if self.first is None and s.strip():
            self.first = time.perf_counter() - self.start
        self.text.append(s)
        return len(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-seeds", type=int, nargs="+", default=[0])
    args = ap.parse_args()
    accuracies = {"svc": [], "mkl": []}
    for seed in args.data_seeds:
        for row in runs(seed, args.repeats):
            accuracies["svc"].append(row["svc_accuracy"])
            accuracies["mkl"].append(row["mkl_accuracy"])
    if len(args.data_seeds) > 1:
        print(json.dumps({
            "data_seeds": args.data_seeds,
            "svc_mean_accuracy": round(float(np.mean(accuracies["svc"])), 4),
            "mkl_mean_accuracy": round(float(np.mean(accuracies["mkl"])), 4),
        }), flush=True)


def runs(seed, repeats):
    """The side-by-side fits on the table of ``seed``, ``repeats`` times; yields each row."""
    Xtr, Xte, ytr, yte, grid = table_and_grid(seed)
    for _ in range(repeats):
        t = time.perf_counter()
        svc = GridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=5).fit(Xtr, ytr)
        svc_seconds = time.perf_counter() - t
        t = time.perf_counter()
        mkl = MKLClassifier(random_state=0).fit(Xtr, ytr)
        mkl_seconds = time.perf_counter() - t
        saved = sys.stderr
        t = time.perf_counter()
        sys.stderr = FirstWrite(t)
        try:
            MKLClassifier(random_state=0, verbose=1).fit(Xtr, ytr)
            first = sys.stderr.first
        finally:
            sys.stderr = saved
        row = {
            "data_seed": seed,
            "svc_seconds": round(svc_seconds, 2),
            "svc_accuracy": round(svc.score(Xte, yte), 4),
            "mkl_seconds": round(mkl_seconds, 2),
            "mkl_accuracy": round(mkl.score(Xte, yte), 4),
            "mkl_learner": mkl.learner_,
            "mkl_choice": mkl.selection_["headline"],
            "first_line_seconds": None if first is None else round(first, 2),
        }
        print(json.dumps(row), flush=True)
        yield row


if __name__ == "__main__":
    main()
