"""The estimators' learner keywords, their constraints and the settings ``partial_fit``
refuses come from the library's learner registry (``_core.learner_settings()``); the
command line's flags are checked against the same registry on the Rust side
(``crates/multikernel-cli/src/train.rs``, ``the_cli_flags_are_the_registry_settings``)."""

import inspect

import numpy as np
import pytest

from multikernel import INCREMENTAL_KERNELS, LEARNERS, MKLClassifier, MKLRegressor, _core
from multikernel._estimators import _NOT_ONLINE, _MKLBase

# Keywords every learner shares (not learner settings).
SHARED = {
    "learner",
    "kernels",
    "C",
    "fit_intercept",
    "standardize",
    "memory_limit_gb",
    "random_state",
    "verbose",
}


def _python_settings():
    return {s["name"]: s for s in _core.learner_settings() if s["python"]}


def test_the_keywords_are_the_registry_settings():
    settings = _python_settings()
    params = set(inspect.signature(_MKLBase.__init__).parameters) - {"self"}
    assert params - SHARED == set(settings)
    for cls in (MKLClassifier, MKLRegressor):
        assert set(cls._parameter_constraints) == params
    learners = {k for s in settings.values() for k in s["learners"]}
    assert learners <= set(LEARNERS) | {"mtl"}


def test_partial_fit_refuses_what_the_online_learner_does_not_take():
    settings = _python_settings()
    expected = {n for n, s in settings.items() if "online" not in s["learners"]}
    assert set(_NOT_ONLINE) == expected
    assert {"eta0", "epochs", "loss", "regularizer"}.isdisjoint(_NOT_ONLINE)
    assert "max_iter" in _NOT_ONLINE


@pytest.mark.parametrize(
    "name, bad",
    [("eta0", 0.0), ("epochs", 0), ("p", 0.5), ("max_iter", 0), ("epsilon", -1.0),
     ("loss", "hinges"), ("tol", 0.0)],
)
def test_constraints_follow_the_registry_domains(name, bad):
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=name):
        MKLClassifier(**{name: bad}).fit(X, y)


def test_a_setting_of_another_learner_names_its_owners():
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="max_iter is a setting of the mirror-descent"):
        MKLClassifier(learner="online", kernels="rbf", C=1.0, max_iter=5).fit(X, y)


def test_the_incremental_kernels_are_the_streaming_dictionary():
    assert INCREMENTAL_KERNELS == tuple(_core.streaming_kernels())
    assert len(INCREMENTAL_KERNELS) == 3
    assert all("approx=rff" in k for k in INCREMENTAL_KERNELS)
