"""A fit that stops at its iteration limit warns with scikit-learn's ConvergenceWarning (as
SVC and LogisticRegression do), names the estimator, its learner and what lets it converge;
a converged fit, or one that did its planned epochs, does not warn. The model stays usable."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from multikernel import DependencyParser, MKLClassifier, SequenceTagger

from treebank import blocks


def tagged(n=40):
    """Feature dicts and UPOS tags of the first ``n`` sentences of TWT fold 0."""
    X, y = [], []
    for block in blocks(0)[:n]:
        words = [c.split("\t") for c in block.splitlines() if c.split("\t")[0].isdigit()]
        X.append([{"w": c[1].lower(), "s": c[1][-2:]} for c in words])
        y.append([c[3] for c in words])
    return X, y


def convergence_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = fit()
    return fitted, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.parametrize("learner, advice", [("mtl", "eps"), ("lbfgs", "max_iter")])
def test_a_tagger_at_its_iteration_limit_warns(learner, advice):
    X, y = tagged()
    tagger, caught = convergence_warnings(
        lambda: SequenceTagger(learner=learner, C=1.0, max_iter=2, random_state=0).fit(X, y)
    )
    assert tagger.fit_status_ == "iteration limit"
    assert len(caught) == 1, [str(w.message) for w in caught]
    text = str(caught[0].message)
    assert "SequenceTagger" in text and f"({learner})" in text and advice in text, text
    assert len(tagger.predict(X[:3])) == 3


def test_a_converged_tagger_and_the_online_epochs_do_not_warn():
    X, y = tagged()
    converged, caught = convergence_warnings(
        lambda: SequenceTagger(learner="lbfgs", C=1.0, max_iter=500).fit(X, y)
    )
    assert converged.fit_status_ == "converged" and caught == []
    online, caught = convergence_warnings(
        lambda: SequenceTagger(C=1.0, epochs=2, random_state=0).fit(X, y)
    )
    assert online.fit_status_ == "completed" and caught == []


def test_a_parser_at_its_iteration_limit_warns():
    train = blocks(0)[:30]
    parser, caught = convergence_warnings(
        lambda: DependencyParser(learner="mtl", C=1.0, max_iter=2).fit(train)
    )
    assert parser.fit_status_ == "iteration limit"
    assert len(caught) == 1 and "DependencyParser (mtl)" in str(caught[0].message)
    assert caught[0].filename == __file__


def test_a_table_learner_at_its_iteration_limit_warns():
    X, y = make_classification(n_samples=120, n_features=6, random_state=0)
    capped, caught = convergence_warnings(
        lambda: MKLClassifier(learner="simplemkl", C=1.0, max_iter=1).fit(X, y)
    )
    assert capped.fit_status_ == "iteration limit"
    assert len(caught) == 1
    assert "MKLClassifier (simplemkl)" in str(caught[0].message)
    assert "max_iter" in str(caught[0].message) and "tol" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller's fit, as scikit-learn's
    assert np.mean(capped.predict(X) == y) > 0.5
    free, caught = convergence_warnings(lambda: MKLClassifier(C=1.0).fit(X, y))
    assert free.fit_status_ != "iteration limit" and caught == []
