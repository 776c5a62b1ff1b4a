"""The tables shipped in data/uci, read without pandas or pytest (the tests, the benches
and the peer scripts share it)."""

import csv
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
UCI = ROOT / "data" / "uci"


def read_table(name, real=False):
    """Features (float64) and the last column (str, or float64 with ``real``)."""
    with open(UCI / f"{name}.csv", newline="") as f:
        rows = list(csv.reader(f))
    body = [r for r in rows[1:] if r]
    X = np.array([[float(v) for v in r[:-1]] for r in body])
    y = np.array([r[-1] for r in body])
    return X, (y.astype(float) if real else y)
