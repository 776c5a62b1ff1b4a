"""Ctrl-C (SIGINT) during a fit raises KeyboardInterrupt once the learner has stopped at its
next poll of the observer, and leaves the estimator usable: unfitted if it was, its earlier
model otherwise. The latency is measured in benches/python/overhead.py (BENCHMARKS.md),
not here."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification

from multikernel import MKLClassifier

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)


def interrupt_after(seconds):
    timer = threading.Timer(seconds, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=1500, n_features=20, random_state=0)


def long_fit(**params):
    # Thousands of epochs: minutes if the interrupt did not work.
    base = dict(learner="online", kernels=["rbf", "linear"], epochs=5000, random_state=0)
    base.update(params)
    return MKLClassifier(**base)


def test_ctrl_c_stops_a_fit_and_leaves_an_unfitted_estimator(data):
    X, y = data
    clf = long_fit(C=1.0)
    interrupt_after(0.5)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert time.perf_counter() - start < 120  # far below the uninterrupted run
    assert not hasattr(clf, "model_")
    clf.set_params(epochs=2).fit(X[:300], y[:300])
    assert clf.predict(X[:5]).shape == (5,)


def test_ctrl_c_keeps_the_earlier_model(data):
    X, y = data
    clf = long_fit(C=1.0, epochs=2).fit(X[:300], y[:300])
    before = clf.model_.to_bytes()
    clf.set_params(epochs=5000)
    interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert clf.model_.to_bytes() == before
    assert clf.n_iter_ == 2


def test_ctrl_c_stops_the_built_in_selection(data):
    X, y = data
    clf = long_fit(C=None)  # 5-fold CV over C and eta0, each fit thousands of epochs
    interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert not hasattr(clf, "model_")


class StreamFailingOnce:
    """A stderr whose first `write` raises `error`: a KeyboardInterrupt is what Python raises
    when SIGINT's handler runs inside a Python-level `write` (a notebook's or pytest's
    stream); an ordinary exception loses that progress line, not the fit."""

    def __init__(self, error):
        self.error = error
        self.raised = False

    def write(self, text):
        if not self.raised:
            self.raised = True
            raise self.error

    def flush(self):
        pass


def test_an_interrupt_raised_while_writing_progress_stops_the_fit(data, monkeypatch):
    X, y = data
    stream = StreamFailingOnce(KeyboardInterrupt())
    monkeypatch.setattr("sys.stderr", stream)
    clf = long_fit(C=1.0, verbose=True)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert stream.raised
    assert time.perf_counter() - start < 120  # far below the uninterrupted run
    assert not hasattr(clf, "model_")


def test_a_failing_progress_stream_does_not_stop_the_fit(data, monkeypatch):
    X, y = data
    stream = StreamFailingOnce(ValueError("I/O operation on closed file"))
    monkeypatch.setattr("sys.stderr", stream)
    clf = long_fit(C=1.0, epochs=2, verbose=True).fit(X[:300], y[:300])
    assert stream.raised
    assert clf.n_iter_ == 2
