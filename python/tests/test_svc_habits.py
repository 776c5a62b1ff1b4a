"""SVC's habits (issue 51): one 2-D precomputed Gram matrix as one kernel, kernel functions
(callables) as SVC takes them, and ``n_jobs`` on every estimator (the same model whatever
the number of threads)."""

import pickle
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV

import treebank
from multikernel import (
    DependencyParser,
    MKLClassifier,
    MKLRegressor,
    SequenceTagger,
    _core,
)

SIGMA2 = 40.0


def linear(A, B):
    """The linear kernel, a module-level function (so it pickles)."""
    return np.asarray(A) @ np.asarray(B).T


def gaussian(A, B):
    return rbf_kernel(A, B, gamma=1 / (2 * SIGMA2))


def letters(A, B):
    """A kernel on strings: the dot product of their letter counts."""

    def counts(words):
        return np.array([[w.count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for w in words])

    return counts(A) @ counts(B).T.astype(float)


def wrong_shape(A, B):
    return linear(A, B)[:, :-1]


def not_finite(A, B):
    K = linear(A, B)
    K[2, 3] = np.nan
    return K


def threads_seen(A, B, seen):
    """The linear kernel, noting the threads a core call made now would use."""
    seen.append(_core.current_threads())
    return linear(A, B)


# -- one 2-D Gram matrix ------------------------------------------------------------------


def test_one_gram_matrix_is_the_one_element_list(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    K, K_test = gaussian(Xtr, Xtr), gaussian(Xte, Xtr)
    for est in (MKLClassifier(kernels="precomputed", C=10.0),
                MKLClassifier(kernels="precomputed", learner="simplemkl", C=10.0)):
        one = clone(est).fit(K, ytr)
        listed = clone(est).fit([K], ytr)
        assert one.model_.to_bytes() == listed.model_.to_bytes()
        np.testing.assert_array_equal(one.predict(K_test), listed.predict([K_test]))
        np.testing.assert_array_equal(
            one.decision_function(K_test), listed.decision_function([K_test])
        )
        assert one.n_features_in_ == len(ytr) and one.n_kernels_in_ == 1
    # Nested lists of numbers are one matrix too; so for the regressor.
    y = (ytr == ytr[0]).astype(float)
    reg = MKLRegressor(kernels="precomputed", C=1.0)
    nested = clone(reg).fit(K.tolist(), y).predict(K_test)
    np.testing.assert_array_equal(nested, clone(reg).fit([K], y).predict([K_test]))


def test_grid_search_cuts_the_gram_matrix_as_for_svc(sonar_split):
    # pairwise: each fold trains on K[train][:, train] and scores K[test][:, train].
    Xtr, _, ytr, _ = sonar_split
    K = gaussian(Xtr, Xtr)
    search = GridSearchCV(MKLClassifier(kernels="precomputed"), {"C": [1.0, 10.0]}, cv=3)
    search.fit(K, ytr)
    assert search.best_score_ > 0.6
    assert search.best_estimator_.n_features_in_ == len(ytr)


def test_wrong_gram_shapes_say_what_was_expected(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    n = len(ytr)
    clf = MKLClassifier(kernels="precomputed", C=1.0)
    with pytest.raises(ValueError, match=rf"must be square, n x n .* got shape \({n}, 60\)"):
        clf.fit(Xtr, ytr)  # rows, not a Gram matrix
    with pytest.raises(ValueError, match=r"the training Gram matrix \(n x n.*shape \(9,\)"):
        clf.fit(np.ones(9), ytr)
    with pytest.raises(ValueError, match=r"shape \(1, 2, 2, 2\)"):
        clf.fit(np.ones((1, 2, 2, 2)), ytr)
    with pytest.raises(ValueError, match=r"y has 3 values for kernel matrices of"):
        clf.fit(gaussian(Xtr, Xtr), ytr[:3])
    clf.fit(gaussian(Xtr, Xtr), ytr)
    with pytest.raises(ValueError, match=rf"shape \(n_test, {n}\).*got shape \(5, {n - 1}\)"):
        clf.predict(gaussian(Xte[:5], Xtr[:-1]))
    with pytest.raises(ValueError, match=rf"trained on 1 kernel matrix; got 2 .*n_test x {n}"):
        clf.predict([gaussian(Xte, Xtr)] * 2)
    with pytest.raises(ValueError, match=rf"the test-by-train Gram matrix \(n_test x {n}\)"):
        clf.predict(np.ones(n))


# -- kernel functions ---------------------------------------------------------------------


def test_a_kernel_function_is_its_precomputed_gram_matrix(sonar_split):
    Xtr, Xte, ytr, yte = sonar_split
    common = dict(learner="lp-mkl", C=10.0, random_state=0)
    fn = MKLClassifier(kernels=linear, **common).fit(Xtr, ytr)
    pre = MKLClassifier(kernels="precomputed", **common).fit(Xtr @ Xtr.T, ytr)
    np.testing.assert_array_equal(fn.decision_function(Xte), pre.decision_function(Xte @ Xtr.T))
    np.testing.assert_array_equal(fn.predict(Xte), pre.predict(Xte @ Xtr.T))
    assert fn.kernels_ == ["linear"]
    assert fn.X_fit_ is Xtr and not hasattr(fn, "n_features_in_")
    # The library's own linear kernel on the raw rows: the same model, to round-off.
    rows = MKLClassifier(kernels="linear", standardize=False, **common).fit(Xtr, ytr)
    np.testing.assert_allclose(fn.decision_function(Xte), rows.decision_function(Xte), atol=1e-7)
    # A list of functions is the list of their matrices, names in the model.
    both = MKLClassifier(kernels=[linear, gaussian], **common).fit(Xtr, ytr)
    listed = MKLClassifier(kernels="precomputed", **common).fit(
        [Xtr @ Xtr.T, gaussian(Xtr, Xtr)], ytr
    )
    np.testing.assert_array_equal(
        both.decision_function(Xte), listed.decision_function([Xte @ Xtr.T, gaussian(Xte, Xtr)])
    )
    assert sorted(both.kernels_) == ["gaussian", "linear"]
    assert both.score(Xte, yte) > 0.7


def test_kernel_functions_see_x_as_given():
    words = ["banana", "bandana", "cabana", "anagram", "fizz", "buzz", "jazz", "fuzz"] * 3
    y = [0, 0, 0, 0, 1, 1, 1, 1] * 3
    clf = MKLClassifier(kernels=letters, C=10.0).fit(words, y)
    assert clf.predict(["savanna", "pizzazz"]).tolist() == [0, 1]
    assert clf.X_fit_ == words


def test_kernel_functions_pickle_clone_and_grid_search(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    clf = MKLClassifier(kernels=[linear, partial(rbf_kernel, gamma=0.01)], C=1.0)
    copy = clone(clf).get_params()["kernels"]  # the partial deep-copied, as for SVC
    assert copy[0] is linear and copy[1].func is rbf_kernel
    assert copy[1].keywords == {"gamma": 0.01}
    clf.fit(Xtr, ytr)
    assert clf.kernels_ and set(clf.kernels_) == {"linear", "rbf_kernel"}
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(Xte), clf.decision_function(Xte))
    search = GridSearchCV(MKLRegressor(kernels=gaussian), {"C": [0.1, 10.0]}, cv=3)
    search.fit(Xtr, (ytr == ytr[0]).astype(float))
    assert search.best_estimator_.kernels is gaussian


def test_bad_kernel_functions_are_named(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    n = len(ytr)
    with pytest.raises(
        ValueError,
        match=rf"kernel 0 \(wrong_shape\): the training Gram matrix f\(X, X\) must be a "
        rf"matrix of shape \({n}, {n}\) .* returned shape \({n}, {n - 1}\)",
    ):
        MKLClassifier(kernels=wrong_shape, C=1.0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match=r"kernel 1 \(not_finite\): .* holds nan at \[2, 3\]"):
        MKLClassifier(kernels=[linear, not_finite], C=1.0).fit(Xtr, ytr)
    with pytest.raises(TypeError, match="not both"):
        MKLClassifier(kernels=["rbf", linear], C=1.0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="learner='online' computes its own kernels"):
        MKLClassifier(kernels=linear, learner="online", C=1.0).fit(Xtr, ytr)
    assert not hasattr(MKLClassifier(kernels=linear), "partial_fit")
    clf = MKLClassifier(kernels=linear, C=1.0).fit(Xtr, ytr)
    clf.kernels = wrong_shape  # changed after fit: predict's matrix is refused
    with pytest.raises(ValueError, match=rf"f\(X, X_fit_\) must be a matrix of shape \(5, {n}\)"):
        clf.predict(Xte[:5])
    rows = MKLClassifier(kernels="linear", C=1.0).fit(Xtr, ytr).set_params(kernels=linear)
    with pytest.raises(ValueError, match="trained on rows .fit again"):
        rows.predict(Xte)


# -- n_jobs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "est",
    [
        MKLClassifier(learner="online", kernels=["linear", "rbf"], C=10.0, random_state=0),
        MKLClassifier(learner="lp-mkl", C=10.0, random_state=0),
        MKLRegressor(learner="gomp", C=10.0, random_state=0),
    ],
    ids=["online", "lp-mkl", "gomp-regressor"],
)
def test_n_jobs_gives_the_same_model(sonar_split, est):
    Xtr, Xte, ytr, _ = sonar_split
    y = ytr if isinstance(est, MKLClassifier) else (ytr == ytr[0]).astype(float)
    fits = [clone(est).set_params(n_jobs=n).fit(Xtr, y) for n in (1, 2, -1, None)]
    for fit in fits[1:]:
        assert fit.model_.to_bytes() == fits[0].model_.to_bytes()
        np.testing.assert_array_equal(fit.predict(Xte), fits[0].predict(Xte))


def test_n_jobs_gives_the_same_tagger_and_parser():
    sentences = treebank.blocks(0)[:40]
    # Words (integer ids: no multi-word ranges), their UPOS the labels.
    rows = [[line.split("\t") for line in s.splitlines()] for s in sentences]
    rows = [[c for c in s if c[0].isdigit()] for s in rows]
    X = [[{"w": c[1].lower(), "suf": c[1][-3:], "bias": 1.0} for c in s] for s in rows]
    y = [[c[3] for c in s] for s in rows]
    taggers = [
        SequenceTagger(learner="online", C=1.0, epochs=3, random_state=0, n_jobs=n).fit(X, y)
        for n in (1, 2)
    ]
    assert taggers[0].tagger_.to_bytes() == taggers[1].tagger_.to_bytes()
    assert taggers[0].predict(X) == taggers[1].predict(X)
    parsers = [
        DependencyParser(C=1.0, epochs=2, random_state=0, n_jobs=n).fit(sentences)
        for n in (1, 2)
    ]
    assert parsers[0].parser_.to_bytes() == parsers[1].parser_.to_bytes()
    assert parsers[0].predict(sentences) == parsers[1].predict(sentences)


def test_n_jobs_sets_the_threads_of_each_call(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    default = _core.current_threads()
    seen = []
    clf = MKLClassifier(kernels=partial(threads_seen, seen=seen), C=1.0, n_jobs=1)
    clf.fit(Xtr, ytr)
    clf.set_params(n_jobs=2).predict(Xte)
    clf.set_params(n_jobs=None).predict(Xte)
    assert seen == [1, 2, default]
    assert _core.current_threads() == default
    with _core.Threads(3) as pool:
        assert pool.threads == 3 and _core.current_threads() == 3
        with _core.Threads(None):
            assert _core.current_threads() == default
        assert _core.current_threads() == 3
    assert _core.current_threads() == default


@pytest.mark.parametrize(
    "est", [MKLClassifier, MKLRegressor, SequenceTagger, DependencyParser]
)
def test_n_jobs_is_a_parameter_of_every_estimator(est):
    assert est().get_params()["n_jobs"] is None
    assert est(n_jobs=-1).get_params()["n_jobs"] == -1
    with pytest.raises(ValueError, match="n_jobs = 0: a positive number of threads, -1"):
        _core.Threads(0)


def test_pickles_from_before_n_jobs_read_it_as_none():
    fixtures = Path(__file__).parent / "fixtures" / "pickles"
    old = pickle.loads((fixtures / "classifier-auto.pkl").read_bytes())
    probe = np.load(fixtures / "classifier-auto.npz")
    assert "n_jobs" not in vars(old) and old.get_params()["n_jobs"] is None
    assert repr(old) == "MKLClassifier(random_state=0)"
    np.testing.assert_array_equal(old.predict(probe["X"]), probe["predict"])


def test_bad_n_jobs_are_refused(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    with pytest.raises(ValueError, match="n_jobs = 0: a positive number of threads"):
        MKLClassifier(C=1.0, n_jobs=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="The 'n_jobs' parameter of MKLClassifier must be"):
        MKLClassifier(C=1.0, n_jobs=1.5).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="at most 1024 threads"):
        SequenceTagger(C=1.0, n_jobs=10**6).fit([[{"a": "b"}]], [["X"]])
