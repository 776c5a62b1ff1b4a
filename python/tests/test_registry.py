"""The estimators' learner keywords, their constraints and the settings ``partial_fit``
refuses come from the library's learner registry (``_core.learner_settings()``); the
command line's flags are checked against the same registry on the Rust side
(``crates/multikernel-cli/src/train.rs``, ``the_cli_flags_are_the_registry_settings``)."""

import inspect

import numpy as np
import pytest

from multikernel import INCREMENTAL_KERNELS, LEARNERS, MKLClassifier, MKLRegressor, _core
from multikernel._estimators import _NOT_ONLINE, _MKLBase
from multikernel._tagger import TAGGER_LEARNERS

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
    "n_jobs",
}


def _python_settings():
    return {s["name"]: s for s in _core.learner_settings() if s["python"]}


def test_the_keywords_are_the_registry_settings():
    settings = _python_settings()
    params = set(inspect.signature(_MKLBase.__init__).parameters) - {"self"}
    assert params - SHARED == set(settings)
    # The classifier's own keywords (SVC's) come on top of the shared ones.
    for cls, own in ((MKLClassifier, {"probability", "class_weight"}), (MKLRegressor, set())):
        assert set(cls._parameter_constraints) == params | own
        assert set(inspect.signature(cls.__init__).parameters) - {"self"} == params | own
    learners = {k for s in settings.values() for k in s["learners"]}
    # The table estimators' learners, and those of taggers only (mtl, lbfgs).
    assert learners <= set(LEARNERS) | set(TAGGER_LEARNERS)


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


def test_the_cores_doors_name_no_learner_setting():
    # Settings cross into Rust by name, as (name, text) pairs: a setting added to the
    # registry needs no edit in the doors. Their signatures hold no registry setting.
    names = {s["name"] for s in _core.learner_settings()}
    doors = [
        _core.fit,
        _core.fit_precomputed,
        _core.fit_tagger,
        _core.fit_parser,
        _core.IncrementalFit.start,
    ]
    for door in doors:
        signature = door.__text_signature__
        keywords = {p.split("=")[0].strip(" *()$") for p in signature.split(",")}
        assert "settings" in keywords, (door.__name__, signature)
        assert not keywords & names, (door.__name__, keywords & names)


def test_the_tagger_and_parser_keywords_are_the_registrys():
    from multikernel import DependencyParser, SequenceTagger

    structured = {s["name"] for s in _core.learner_settings() if s["tagger"]}
    assert structured == {s["name"] for s in _core.learner_settings() if s["parser"]}
    assert {"eta0", "epochs", "q", "max_iter"} <= structured
    for cls in (SequenceTagger, DependencyParser):
        params = set(inspect.signature(cls.__init__).parameters)
        assert structured <= params, structured - params
        assert structured <= set(cls._parameter_constraints)


def test_settings_cross_as_text_that_reads_back_exactly():
    from multikernel._estimators import _setting_text

    for v in [0.1, 1e-05, 1 / 3, 4 / 3, float("inf"), np.float64(0.3)]:
        assert float(_setting_text(v)) == float(v)
    assert _setting_text(5) == "5" and _setting_text(np.int64(7)) == "7"
    assert _setting_text(True) == "on" and _setting_text("l21") == "l21"
