"""The table selection talks (issue 51): at verbose=1 its progress in fits from the start,
at verbose=0 one line only when it ran long."""

import re

import numpy as np
from sklearn.datasets import make_classification

import multikernel._estimators as estimators
from multikernel import MKLClassifier


def _table():
    return make_classification(n_samples=120, n_features=5, random_state=0)


def test_verbose_prints_the_selections_fits_from_the_first_to_the_last(capsys):
    X, y = _table()
    MKLClassifier(random_state=0, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    fits = re.findall(r"\[multikernel\] selection: (\d+)/(\d+) fits", err)
    assert fits, err
    assert fits[0][0] == "0", "the first line comes before any fit"
    done, planned = map(int, fits[-1])
    assert done == planned > 0, "the last line is the whole selection"
    steps = [int(d) for d, _ in fits]
    assert steps == sorted(steps)
    # The selection's lines come before the refit's and the choice.
    assert err.index("selection:") < err.index("[multikernel] selected")


def test_quiet_unless_the_selection_ran_long(capsys, monkeypatch):
    X, y = _table()
    MKLClassifier(random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(estimators, "LONG_SELECTION_SECONDS", 0.0)
    clf = MKLClassifier(random_state=0).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("[multikernel] the selection took ")
    assert clf.selection_["headline"] in lines[0]
    # A learner and C given run no selection: nothing to say.
    MKLClassifier(learner="lp-mkl", p=2, C=1.0, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


def test_progress_changes_nothing_in_the_model():
    X, y = _table()
    quiet = MKLClassifier(random_state=0).fit(X, y)
    loud = MKLClassifier(random_state=0, verbose=1).fit(X, y)
    assert quiet.model_.to_bytes() == loud.model_.to_bytes()
    assert np.array_equal(quiet.predict(X), loud.predict(X))


def test_a_given_c_selects_the_default_s_learner_at_that_c(sonar_split):
    """A C given with learner="auto" runs the selection on that one C (issue 51): the
    learner, kernel and p it chooses there are those the default would fit at that C, so
    a search over C tunes the default's learner (not, as before, the online learner)."""
    Xtr, Xte, ytr, yte = sonar_split
    default = MKLClassifier(random_state=0).fit(Xtr, ytr)
    at_c = MKLClassifier(C=default.C_, random_state=0).fit(Xtr, ytr)
    assert at_c.selection_ is not None and at_c.C_ == default.C_
    assert [line for line in at_c.selection_["lines"] if "C=" in line]
    assert at_c.learner_ == default.learner_ == "lp-mkl"
    # Every candidate was scored at that C only (None: stopped or skipped); here the
    # default's chosen candidate leads at its C, so the choice is the default's.
    assert all(c in (None, default.C_) for c in at_c.cv_results_["param_C"])
    assert at_c.selection_["setting"] == default.selection_["setting"]
    np.testing.assert_allclose(
        at_c.decision_function(Xte), default.decision_function(Xte), rtol=1e-9, atol=1e-12
    )
    # A learner named with C: no selection.
    named = MKLClassifier(learner="online", C=1.0, random_state=0).fit(Xtr, ytr)
    assert named.selection_ is None and named.learner_ == "online"
