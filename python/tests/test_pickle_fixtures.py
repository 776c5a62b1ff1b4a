"""Pickles of every learner checked in under ``tests/fixtures/pickles`` (written by
``pickle_fixtures.py``, never by hand) unpickle with today's package and predict what they
predicted when written, to the bit."""

import pickle

import numpy as np
import pytest

from pickle_fixtures import FIXTURES, cases, outputs

NAMES = [c[0] for c in cases()]


@pytest.mark.parametrize("name", NAMES)
def test_checked_in_pickle_predicts_to_the_bit(name):
    est = pickle.loads((FIXTURES / f"{name}.pkl").read_bytes())
    stored = np.load(FIXTURES / f"{name}.npz", allow_pickle=False)
    if "X" in stored:
        probe = stored["X"]
    else:
        probe = [stored[f"kernel{m}"] for m in range(sum(k.startswith("kernel") for k in stored))]
    pred, dec = outputs(est, probe)
    assert pred.dtype == stored["predict"].dtype
    np.testing.assert_array_equal(pred, stored["predict"])
    # Bit for bit: the same float64 words, not merely close values.
    assert dec.shape == stored["decision"].shape
    assert dec.tobytes() == stored["decision"].tobytes()


def test_every_learner_has_a_pickle():
    from multikernel import LEARNERS

    names = " ".join(NAMES)
    for learner in LEARNERS:
        assert f"-{learner}" in names, learner
    assert all((FIXTURES / f"{n}.pkl").exists() for n in NAMES)
