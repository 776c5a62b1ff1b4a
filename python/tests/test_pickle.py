"""Pickling goes through the model's bytes (the versioned model-file format): a fitted
estimator unpickles in a fresh process and predicts identically, without refitting."""

import pickle
import subprocess
import sys
import copy

import numpy as np
import pytest
from sklearn.base import clone

from multikernel import MKLClassifier, MKLRegressor, Model


# A fresh Python process each: seconds (slow). The last estimator is the session's
# MKLRegressor(random_state=0) fitted on boston (conftest.py).
@pytest.mark.slow
@pytest.mark.parametrize(
    "make, table",
    [
        (lambda: MKLClassifier(random_state=0), "glass"),
        (lambda: MKLClassifier(learner="online", loss="logistic", C=10.0), "glass"),
        (lambda: MKLClassifier(learner="gomp", C=10.0), "glass"),
        (lambda: MKLClassifier(learner="poly", degree=2, C=1.0), "sonar"),
        ("selected_regressor_on_boston", "boston"),
    ],
)
def test_unpickles_in_a_fresh_process_and_predicts_the_same(tmp_path, request, make, table):
    X, y = request.getfixturevalue(table)
    clf = request.getfixturevalue(make) if isinstance(make, str) else make().fit(X, y)
    f = clf.decision_function(X) if hasattr(clf, "decision_function") else clf.predict(X)
    path = tmp_path / "clf.pkl"
    path.write_bytes(pickle.dumps(clf))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "f.npy", f)
    np.save(tmp_path / "pred.npy", clf.predict(X))
    script = f"""
import pickle, numpy as np
clf = pickle.loads(open({str(path)!r}, "rb").read())
X = np.load({str(tmp_path / "X.npy")!r})
f = clf.decision_function(X) if hasattr(clf, "decision_function") else clf.predict(X)
assert np.array_equal(f, np.load({str(tmp_path / "f.npy")!r}))
assert np.array_equal(clf.predict(X), np.load({str(tmp_path / "pred.npy")!r}, allow_pickle=True))
print("same")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "same"


def test_the_pickle_holds_the_model_bytes(boston):
    X, y = boston
    reg = MKLRegressor(learner="lp-mkl", C=10.0).fit(X, y)
    state = pickle.dumps(reg)
    assert reg.model_.to_bytes() in state  # the versioned format, not a refit recipe
    back = pickle.loads(state)
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))
    assert back.model_.to_bytes() == reg.model_.to_bytes()
    np.testing.assert_array_equal(copy.deepcopy(reg).predict(X), reg.predict(X))
    fresh = clone(reg)
    assert not hasattr(fresh, "model_")


def test_model_bytes_are_a_model_file(tmp_path, boston):
    X, y = boston
    reg = MKLRegressor(learner="gomp", C=10.0, max_kernels=3).fit(X, y)
    raw = reg.model_.to_bytes()
    assert raw.startswith(b"{") and b'"format":"multikernel-model"' in raw.replace(b" ", b"")
    back = Model.from_bytes(raw)
    assert back.task == "regression"
    assert back.n_features == X.shape[1]
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))
