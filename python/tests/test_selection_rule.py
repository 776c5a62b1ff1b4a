"""The command line and the Python estimators apply one rule for whether the built-in
selection runs and over which learners (the library's ``estimator::selection_plan``): the
same request through ``multikernel train`` and through ``MKLRegressor`` /
``MKLClassifier`` gives the same model file, byte for byte (learner, C, kernels, weights,
the selection's record).

A setting that restates the task's default (``loss="squared"`` on a regression,
``"hinge"`` on classes) is no choice of the online learner: both run the full selection.
Another value (``epochs=5``), a step size or a named learner limits it as on the command
line; with C given nothing is selected."""

import csv
import subprocess

import numpy as np
import pandas as pd
import pytest

from multikernel import MKLClassifier, MKLRegressor
from tables import UCI

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("multikernel_bin")]

ROWS = 90


def head_table(name, rows, path):
    """The first ``rows`` rows of a shipped table, written to ``path``; its features as a
    DataFrame (the column names go into the model file) and its last column."""
    with open(UCI / f"{name}.csv", newline="") as f:
        table = list(csv.reader(f))
    header, body = table[0], [r for r in table[1:] if r][:rows]
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([header, *body])
    X = pd.DataFrame([[float(v) for v in r[:-1]] for r in body], columns=header[:-1])
    return X, [r[-1] for r in body]


# (the Python keywords, the same request as flags)
REGRESSION = [
    ({}, []),
    # The case: the regression's default loss, restated.
    ({"loss": "squared"}, ["--loss", "squared"]),
    ({"epochs": 5}, ["--epochs", "5"]),
    ({"loss": "squared", "eta0": 0.5}, ["--loss", "squared", "--eta0", "0.5"]),
    ({"learner": "lp-mkl"}, ["--algo", "lp-mkl"]),
    ({"C": 10.0, "loss": "squared"}, ["--C", "10", "--loss", "squared"]),
]
CLASSES = [
    ({"loss": "hinge"}, ["--loss", "hinge"]),
    ({"loss": "logistic"}, ["--loss", "logistic"]),
]


def same_model(multikernel_bin, tmp_path, estimator, table, task, keywords, flags):
    data = tmp_path / "train.csv"
    X, y = head_table(table, ROWS, data)
    if task == "regression":
        y = np.array([float(v) for v in y])
    out = tmp_path / "cli.model"
    run = subprocess.run(
        [str(multikernel_bin), "train", "--task", task, "--data", str(data), "--seed", "0",
         "--out", str(out), *flags],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    fitted = estimator(random_state=0, **keywords).fit(X, y)
    assert fitted.model_.to_bytes() == out.read_bytes(), (keywords, flags)
    return fitted


@pytest.mark.parametrize("keywords,flags", REGRESSION, ids=[str(k) for k, _ in REGRESSION])
def test_a_regression_request_gives_the_command_lines_model(
    multikernel_bin, tmp_path, keywords, flags
):
    fitted = same_model(
        multikernel_bin, tmp_path, MKLRegressor, "boston-housing", "regression", keywords, flags
    )
    if keywords == {"loss": "squared"}:
        # The full selection: more than the online learner's candidates were scored.
        kinds = set(fitted.cv_results_["kind"])
        assert "uniform sum" in kinds, kinds


@pytest.mark.parametrize("keywords,flags", CLASSES, ids=[str(k) for k, _ in CLASSES])
def test_a_classification_request_gives_the_command_lines_model(
    multikernel_bin, tmp_path, keywords, flags
):
    same_model(multikernel_bin, tmp_path, MKLClassifier, "ionosphere", "binary", keywords, flags)
