"""Shared fixtures: the tables shipped in data/uci, read without pandas."""

import csv
from pathlib import Path

import numpy as np
import pytest

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


@pytest.fixture(scope="session")
def sonar():
    return read_table("sonar")


@pytest.fixture(scope="session")
def glass():
    return read_table("glass")


@pytest.fixture(scope="session")
def boston():
    return read_table("boston-housing", real=True)
