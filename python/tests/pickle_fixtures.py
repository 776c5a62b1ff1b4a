"""Pickled estimators of every learner, checked in under ``tests/fixtures/pickles`` with what
they predicted on a small probe (issue 30). ``test_pickle_fixtures.py`` unpickles each with
today's package and checks the predictions and decision values to the bit.

The fixtures are written by this script, never by hand (from the repository's root, in the
virtual environment of ``.ci/run`` after ``maturin develop``):

    python python/tests/pickle_fixtures.py

Rewrite them only when a change is meant to change predictions, and say so in the commit.
"""

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables import read_table  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pickles"


def split(name, real=False):
    """Training rows (every third) and probe rows (the first 12 of the others)."""
    X, y = read_table(name, real=real)
    i = np.arange(len(y))
    train = i % 3 == 0
    probe = (i % 3 != 0) & (i < 18)
    return X[train], y[train], X[probe]


def kernel_list(A, B):
    """Linear and Gaussian kernel matrices between the rows of A and B (numpy, by hand)."""
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return [A @ B.T, np.exp(-np.maximum(d2, 0) / (2 * 40.0))]


def cases():
    """(name, estimator factory, table, regression?, how) for every fixture."""
    from multikernel import MKLClassifier, MKLRegressor

    return [
        ("classifier-auto", lambda: MKLClassifier(random_state=0), "glass", False, "fit"),
        ("classifier-online-logistic",
         lambda: MKLClassifier(learner="online", loss="logistic", C=10.0, random_state=1),
         "glass", False, "fit"),
        ("classifier-gomp", lambda: MKLClassifier(learner="gomp", C=10.0), "glass", False, "fit"),
        ("classifier-poly", lambda: MKLClassifier(learner="poly", degree=2, C=1.0),
         "sonar", False, "fit"),
        ("classifier-mirror-descent",
         lambda: MKLClassifier(learner="mirror-descent", degree=2, max_iter=50, random_state=2),
         "sonar", False, "fit"),
        ("classifier-simplemkl",
         lambda: MKLClassifier(learner="simplemkl", kernels=["rbf", "linear"], C=10.0),
         "ionosphere", False, "fit"),
        ("classifier-gauss-seidel",
         lambda: MKLClassifier(learner="gauss-seidel", kernels=["rbf", "linear"], C=10.0),
         "glass", False, "fit"),
        ("regressor-auto", lambda: MKLRegressor(random_state=0), "boston-housing", True, "fit"),
        ("regressor-lp-mkl", lambda: MKLRegressor(learner="lp-mkl", p=4 / 3, C=10.0),
         "boston-housing", True, "fit"),
        ("regressor-ucd",
         lambda: MKLRegressor(learner="ucd", degree=2, max_iter=50, random_state=3),
         "boston-housing", True, "fit"),
        ("regressor-partial-fit", lambda: MKLRegressor(learner="online", random_state=4),
         "boston-housing", True, "partial_fit"),
        ("classifier-precomputed-lp-mkl",
         lambda: MKLClassifier(kernels="precomputed", C=10.0), "sonar", False, "precomputed"),
        ("classifier-precomputed-simplemkl",
         lambda: MKLClassifier(kernels="precomputed", learner="simplemkl", C=10.0),
         "sonar", False, "precomputed"),
    ]


def outputs(est, probe):
    """Predictions and decision values (or values for a regressor) on the probe."""
    pred = est.predict(probe)
    dec = est.decision_function(probe) if hasattr(est, "decision_function") else pred
    return np.asarray(pred), np.asarray(dec, dtype=np.float64)


def main():
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, make, table, real, how in cases():
        Xtr, ytr, Xp = split(table, real)
        est = make()
        if how == "fit":
            est.fit(Xtr, ytr)
            probe = Xp
        elif how == "partial_fit":
            for k in range(0, len(ytr), 40):
                est.partial_fit(Xtr[k:k + 40], ytr[k:k + 40])
            probe = Xp
        else:
            est.fit(kernel_list(Xtr, Xtr), ytr)
            probe = kernel_list(Xp, Xtr)
        (FIXTURES / f"{name}.pkl").write_bytes(pickle.dumps(est))
        # The outputs of the pickle as read back, as the test computes them.
        back = pickle.loads((FIXTURES / f"{name}.pkl").read_bytes())
        pred, dec = outputs(back, probe)
        arrays = {"predict": pred, "decision": dec}
        if how == "precomputed":
            arrays.update({f"kernel{m}": k for m, k in enumerate(probe)})
        else:
            arrays["X"] = probe
        np.savez(FIXTURES / f"{name}.npz", **arrays)
        print(name, type(est).__name__, est.model_.summary().learner
              if hasattr(est.model_, "summary") else "")


if __name__ == "__main__":
    main()
