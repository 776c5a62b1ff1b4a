"""Row weights: ``fit(X, y, sample_weight=...)`` on both estimators and the classifier's
``class_weight`` (as SVC's): weights all 1 are no weights, an integer weight is the row
repeated (lp-MKL with fixed kernels and no standardization), "balanced" helps the minority
class, and bad weights raise ValueError."""

import numpy as np
import pytest

from multikernel import MKLClassifier, MKLRegressor

# Fixed kernels (no data-dependent width or normalization) and no standardization: repeating
# a row changes nothing but its share of the loss.
FIXED = dict(kernels=["rbf:sigma2=2,norm=none", "linear:norm=none"], standardize=False)


def _table(n=60, seed=0, minority=None):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 + rng.uniform(-0.5, 0.5, n) > 2.0).astype(int)
    if minority is not None:
        keep = np.flatnonzero(y == 0)
        keep = np.concatenate([keep, np.flatnonzero(y == 1)[:minority]])
        X, y = X[keep], y[keep]
    return X, y


@pytest.mark.parametrize(
    "est",
    [
        MKLClassifier(learner="lp-mkl", C=1.0),
        MKLRegressor(learner="lp-mkl", C=1.0),
        MKLClassifier(learner="simplemkl", C=10.0),
        MKLClassifier(random_state=0),  # the built-in selection
    ],
    ids=["lp-mkl", "regressor", "simplemkl", "selection"],
)
def test_weights_all_one_are_no_weights(est):
    X, y = _table()
    a = est.__class__(**est.get_params()).fit(X, y)
    b = est.__class__(**est.get_params()).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if hasattr(a, "decision_function"):
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    if est.C is not None:  # (the selection's record holds its seconds)
        assert a.model_.to_bytes() == b.model_.to_bytes()


@pytest.mark.parametrize("cls", [MKLClassifier, MKLRegressor])
def test_integer_weights_are_repeated_rows(cls):
    X, y = _table(40, seed=1)
    Xt, _ = _table(15, seed=2)
    w = np.arange(len(y)) % 4  # 0, 1, 2, 3: dropped, once, twice, three times
    weighted = cls(learner="lp-mkl", C=3.0, **FIXED).fit(X, y, sample_weight=w)
    repeated = cls(learner="lp-mkl", C=3.0, **FIXED).fit(
        np.repeat(X, w, axis=0), np.repeat(y, w)
    )
    f = "decision_function" if cls is MKLClassifier else "predict"
    np.testing.assert_allclose(
        getattr(weighted, f)(Xt), getattr(repeated, f)(Xt), atol=1e-6, rtol=0
    )


def test_class_weight_balanced_raises_the_minority_recall():
    X, y = _table(160, seed=3, minority=12)
    Xt, yt = _table(400, seed=4)
    recall = {}
    for cw in (None, "balanced"):
        clf = MKLClassifier(learner="lp-mkl", C=1.0, class_weight=cw, random_state=0)
        pred = clf.fit(X, y).predict(Xt)
        recall[cw] = np.mean(pred[yt == 1] == 1)
    assert recall["balanced"] > recall[None] + 0.05, recall


def test_class_weight_dict_multiplies_sample_weight():
    X, y = _table(40, seed=5)
    w = np.linspace(0.5, 2.0, len(y))
    by_dict = MKLClassifier(learner="lp-mkl", C=1.0, class_weight={0: 1.0, 1: 3.0})
    by_dict.fit(X, y, sample_weight=w)
    by_hand = MKLClassifier(learner="lp-mkl", C=1.0)
    by_hand.fit(X, y, sample_weight=w * np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(
        by_dict.decision_function(X), by_hand.decision_function(X), rtol=0, atol=1e-12
    )
    params = by_dict.get_params()
    assert params["class_weight"] == {0: 1.0, 1: 3.0}


@pytest.mark.parametrize(
    "weights, message",
    [
        (np.full(40, np.nan), "NaN"),
        (-np.ones(40), "negative"),
        (np.zeros(40), "positive"),
        (np.ones(39), "shape"),
    ],
    ids=["nan", "negative", "all-zero", "length"],
)
def test_bad_weights_raise_value_error(weights, message):
    X, y = _table(40, seed=6)
    with pytest.raises(ValueError, match=message):
        MKLClassifier(learner="lp-mkl", C=1.0).fit(X, y, sample_weight=weights)


def test_learners_without_weights_and_kernel_matrices_refuse_them():
    X, y = _table(40, seed=7)
    w = np.linspace(0.5, 2.0, len(y))
    with pytest.raises(ValueError, match="gomp.*row weights"):
        MKLClassifier(learner="gomp", C=1.0).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="bogus"):
        MKLClassifier(learner="lp-mkl", C=1.0, class_weight="bogus").fit(X, y)
    K = X @ X.T
    with pytest.raises(ValueError, match="kernel matrices"):
        MKLClassifier(learner="lp-mkl", kernels="precomputed", C=1.0).fit(
            K, y, sample_weight=w
        )
