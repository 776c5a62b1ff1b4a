"""``MKLClassifier(probability=True)``: Platt's sigmoid (``multikernel._calibration``)
against a slow twin, on degenerate input, and the calibrated ``predict_proba`` of the
estimator (libsvm's out-of-fold recipe, ``multikernel._probability``)."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.metrics import log_loss

from multikernel import MKLClassifier
from multikernel._calibration import (
    calibrated_proba,
    fit_sigmoids,
    platt_fit,
    platt_predict,
)


def slow_platt(f, y):
    """The same smoothed likelihood written out term by term, minimized by Nelder-Mead
    (no derivative) to a tight tolerance, then polished from its own end point."""
    n_pos, n_neg = int(np.sum(y)), int(np.sum(~y))
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab):
        p = 1.0 / (1.0 + np.exp(ab[0] * f + ab[1]))
        return -np.sum(t * np.log(p) + (1 - t) * np.log(1 - p))

    x = np.zeros(2)
    for _ in range(3):
        x = minimize(
            nll, x, method="Nelder-Mead",
            options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 40000, "maxfev": 80000},
        ).x
    return x


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("share", [0.5, 0.15])
def test_newton_matches_a_slow_twin(seed, share):
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.random(n) < share
    f = np.where(y, 1.0, -1.0) * rng.gamma(2.0, 0.6, n) + rng.normal(0, 1.2, n)
    A, B = platt_fit(f, y)
    np.testing.assert_allclose([A, B], slow_platt(f, y), atol=1e-6)
    assert A < 0  # a larger decision value, a larger P(y = 1)


@pytest.mark.parametrize(
    "f, y",
    [
        (np.zeros(50), np.arange(50) % 2 == 0),  # every decision value equal, 0
        (np.full(50, 3.0), np.arange(50) % 5 == 0),  # equal, not 0
        (np.linspace(-1, 1, 101), np.arange(101) == 100),  # one positive row
        (np.r_[-np.ones(40) * 5, np.ones(40) * 5], np.arange(80) >= 40),  # separable
        (np.r_[-np.ones(40) * 1e6, np.ones(3) * 1e6], np.arange(43) >= 40),  # huge, tiny class
        (np.ones(10), np.zeros(10, dtype=bool)),  # one class only
    ],
    ids=["all-zero", "all-equal", "one-positive", "separable", "huge-tiny", "one-class"],
)
def test_degenerate_input_gives_a_finite_sigmoid_without_warnings(f, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A, B = platt_fit(f, y)
        p = platt_predict(f, A, B)
    assert np.isfinite([A, B]).all()
    assert np.all((p >= 0) & (p <= 1))


def test_multiclass_rows_are_normalized_and_a_zero_row_uniform():
    f = np.array([[2.0, -1.0, -1.0], [-1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]] * 10)
    codes = np.tile([0, 1, 2], 10)
    A, B = fit_sigmoids(f, codes, 3)
    assert A.shape == B.shape == (3,)
    P = calibrated_proba(f, A, B)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(P.argmax(axis=1), codes)
    zero = calibrated_proba(np.array([[-1e6, -1e6, -1e6]]), np.ones(3), np.zeros(3))
    np.testing.assert_array_equal(zero, [[1 / 3, 1 / 3, 1 / 3]])


# -- the estimator ------------------------------------------------------------------------

BINARY = dict(learner="lp-mkl", kernels=["linear", "rbf"], C=10.0, random_state=0)


@pytest.fixture(scope="module")
def calibrated_binary(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    return MKLClassifier(probability=True, **BINARY).fit(Xtr, ytr)


def test_binary_probabilities(sonar_split, calibrated_binary):
    _, Xte, _, yte = sonar_split
    clf = calibrated_binary
    P = clf.predict_proba(Xte)
    assert P.shape == (len(yte), 2)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    agree = np.mean(clf.classes_[P.argmax(axis=1)] == clf.predict(Xte))
    assert agree >= 0.9
    assert clf.probA_.shape == clf.probB_.shape == (1,) and clf.probA_[0] < 0
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(Xte)), P)


def test_multiclass_probabilities(glass):
    X, y = glass
    clf = MKLClassifier(probability=True, learner="lp-mkl", kernels="rbf", C=10.0,
                        random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (len(y), len(clf.classes_))
    assert clf.probA_.shape == (len(clf.classes_),)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(clf.classes_[P.argmax(axis=1)] == clf.predict(X)) >= 0.9


def test_same_random_state_same_probabilities(sonar_split, calibrated_binary):
    Xtr, Xte, ytr, _ = sonar_split
    again = MKLClassifier(probability=True, **BINARY).fit(Xtr, ytr)
    np.testing.assert_array_equal(again.predict_proba(Xte), calibrated_binary.predict_proba(Xte))
    other = MKLClassifier(probability=True, **{**BINARY, "random_state": 1}).fit(Xtr, ytr)
    assert not np.array_equal(other.probB_, calibrated_binary.probB_)


def test_calibration_beats_the_raw_sigmoid_on_held_out_rows(sonar_split, calibrated_binary):
    _, Xte, _, yte = sonar_split
    clf = calibrated_binary
    f = clf.decision_function(Xte)
    raw = 1.0 / (1.0 + np.exp(-f))
    raw_loss = log_loss(yte, np.column_stack([1 - raw, raw]), labels=clf.classes_)
    assert log_loss(yte, clf.predict_proba(Xte), labels=clf.classes_) < raw_loss


def test_probability_is_a_parameter_that_clones_and_pickles(sonar_split, calibrated_binary):
    _, Xte, _, _ = sonar_split
    assert MKLClassifier().get_params()["probability"] is False
    est = MKLClassifier(probability=True, C=1.0)
    assert clone(est).get_params()["probability"] is True
    assert repr(est) == "MKLClassifier(C=1.0, probability=True)"
    back = pickle.loads(pickle.dumps(calibrated_binary))
    assert back.probability is True
    np.testing.assert_array_equal(back.predict_proba(Xte), calibrated_binary.predict_proba(Xte))
    with pytest.raises(TypeError, match=r"MKLClassifier.__init__\(\) got an unexpected"):
        MKLClassifier(probabilities=True)
    with pytest.raises(ValueError, match="'probability' parameter of MKLClassifier"):
        MKLClassifier(probability="yes", C=1.0).fit(Xte, np.arange(len(Xte)) % 2)
    # Pickles from before the parameter read it as False.
    fixtures = Path(__file__).parent / "fixtures" / "pickles"
    old = pickle.loads((fixtures / "classifier-auto.pkl").read_bytes())
    assert old.get_params()["probability"] is False and not hasattr(old, "predict_proba")


def test_predict_proba_is_there_only_with_probability_or_the_logistic_loss(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    assert not hasattr(MKLClassifier(C=1.0), "predict_proba")
    assert not hasattr(MKLClassifier(C=1.0), "predict_log_proba")
    assert hasattr(MKLClassifier(probability=True), "predict_proba")
    assert hasattr(MKLClassifier(loss="logistic"), "predict_log_proba")
    clf = MKLClassifier(learner="lp-mkl", C=1.0).fit(Xtr, ytr)
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "probA_")
    with pytest.raises(AttributeError, match="predict_proba"):
        clf.predict_proba(Xtr)


def test_the_logistic_probabilities_do_not_overflow(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    clf = MKLClassifier(learner="online", loss="logistic", kernels="linear", C=10.0,
                        random_state=0).fit(Xtr, ytr)
    far = Xte * 1e6  # decision values far beyond exp's range
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = clf.predict_proba(far)
        logP = clf.predict_log_proba(far)
    assert np.abs(clf.decision_function(far)).max() > 1000
    assert np.isfinite(P).all() and np.isfinite(logP).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(logP), P)


def linear(A, B):
    return np.asarray(A) @ np.asarray(B).T


def test_kernel_functions_calibrate_as_their_precomputed_matrices(sonar_split):
    Xtr, Xte, ytr, _ = sonar_split
    common = dict(learner="lp-mkl", C=1.0, probability=True, random_state=0)
    fn = MKLClassifier(kernels=linear, **common).fit(Xtr, ytr)
    pre = MKLClassifier(kernels="precomputed", **common).fit(Xtr @ Xtr.T, ytr)
    np.testing.assert_array_equal(fn.probA_, pre.probA_)
    np.testing.assert_array_equal(fn.predict_proba(Xte), pre.predict_proba(Xte @ Xtr.T))


class InterruptOnCall:
    """The linear kernel; its ``n``-th call raises KeyboardInterrupt (a Ctrl-C there)."""

    def __init__(self, n):
        self.n, self.calls = n, 0

    def __call__(self, A, B):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return linear(A, B)


def test_an_interrupted_or_failed_calibration_leaves_the_estimator_as_it_was(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    # Call 1 is fit's f(X, X), call 2 the calibration's.
    clf = MKLClassifier(kernels=InterruptOnCall(2), C=1.0, probability=True)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(Xtr, ytr)
    assert not hasattr(clf, "model_") and not hasattr(clf, "probA_")
    y = np.array(["a"] * (len(ytr) - 1) + ["b"])
    clf = MKLClassifier(kernels="linear", C=1.0, probability=True)
    with pytest.raises(ValueError, match="every class needs at least 2 rows"):
        clf.fit(Xtr, y)
    assert not hasattr(clf, "model_")


def test_the_selected_model_is_refitted_without_a_selection(sonar_split):
    from multikernel._probability import chosen_params

    Xtr, Xte, ytr, _ = sonar_split
    clf = MKLClassifier(learner="lp-mkl", probability=True, random_state=0).fit(Xtr, ytr)
    params = chosen_params(clf)
    assert params["C"] == clf.C_ and params["learner"] == "lp-mkl"
    assert params["p"] in (4 / 3, 2.0) and params["verbose"] == 0
    assert not params["probability"]
    P = clf.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_the_refits_take_the_sample_weights(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    w = np.linspace(0.5, 2.0, len(ytr))
    est = MKLClassifier(learner="lp-mkl", C=1.0, probability=True, random_state=0)
    named = clone(est).fit(Xtr, ytr, sample_weight=w)
    by_position = clone(est).fit(Xtr, ytr, w)
    plain = clone(est).fit(Xtr, ytr)
    np.testing.assert_array_equal(named.probA_, by_position.probA_)
    assert named.probA_[0] != plain.probA_[0]
