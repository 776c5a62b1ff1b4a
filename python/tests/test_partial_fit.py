"""partial_fit: the online learner chunk by chunk over explicit kernel maps (the library's
pipeline::table::incremental), against the whole-table fit, through pickling, and its
refusals."""

import json
import pickle

import numpy as np
import pytest
from sklearn.model_selection import train_test_split
from tables import read_table

from multikernel import IncrementalFit, MKLClassifier, MKLRegressor

KERNELS = ["rbf:scale=1,approx=rff,dim=256", "rbf:scale=4,approx=rff,dim=256"]


def split(name, real=False):
    X, y = read_table(name, real=real)
    return train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=None if real else y
    )


def stream(est, X, y, epochs=5, chunks=5, seed=0, pickle_at=None, **first):
    """``epochs`` passes of partial_fit over shuffled chunks; with ``pickle_at`` the
    estimator goes through pickle before that call."""
    rng = np.random.default_rng(seed)
    call = 0
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(X)), chunks):
            if call == pickle_at:
                est = pickle.loads(pickle.dumps(est))
            est.partial_fit(X[idx], y[idx], **first)
            call += 1
    return est


def test_chunks_reach_the_whole_table_fit():
    Xtr, Xte, ytr, yte = split("breast-cancer")
    full = MKLClassifier(
        learner="online", kernels=KERNELS, C=10.0, epochs=5, random_state=0
    ).fit(Xtr, ytr)
    est = MKLClassifier(learner="online", kernels=KERNELS, C=10.0, random_state=0)
    est = stream(est, Xtr, ytr, classes=np.unique(ytr), n_rows=len(Xtr))
    assert est.incremental_.rows_seen == 5 * len(Xtr)
    assert abs(est.score(Xte, yte) - full.score(Xte, yte)) <= 0.03
    assert est.score(Xte, yte) >= 0.93
    assert est.learner_ == "online"
    assert est.n_features_in_ == Xtr.shape[1]
    assert list(est.classes_) == sorted(set(ytr))
    assert len(est.kernels_) == 2 and est.kernel_weights_.shape == (2,)
    assert est.n_iter_ == 25


def test_regressor_chunks():
    Xtr, Xte, ytr, yte = split("boston-housing", real=True)
    full = MKLRegressor(
        learner="online", kernels=KERNELS, C=10.0, epochs=5, random_state=0
    ).fit(Xtr, ytr)
    est = stream(
        MKLRegressor(kernels=KERNELS, C=10.0, random_state=0), Xtr, ytr, n_rows=len(Xtr)
    )
    assert est.score(Xte, yte) >= full.score(Xte, yte) - 0.1
    assert est.score(Xte, yte) > 0.6


def test_pickling_mid_stream_changes_nothing():
    Xtr, Xte, ytr, _ = split("ionosphere")
    make = lambda: MKLClassifier(kernels=KERNELS, C=10.0, random_state=3)  # noqa: E731
    classes = np.unique(ytr)
    a = stream(make(), Xtr, ytr, epochs=2, classes=classes)
    b = stream(make(), Xtr, ytr, epochs=2, classes=classes, pickle_at=4)
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))
    assert a.incremental_.rows_seen == b.incremental_.rows_seen
    # The fit itself round-trips through its bytes.
    fit = IncrementalFit.from_bytes(a.incremental_.to_bytes())
    assert fit.to_bytes() == a.incremental_.to_bytes()


def test_multiclass_and_labels_of_any_type():
    Xtr, Xte, ytr, yte = split("glass")
    labels = np.array(["g" + v for v in ytr], dtype=object)
    est = MKLClassifier(kernels=KERNELS, C=10.0, random_state=0)
    est = stream(est, Xtr, labels, epochs=3, classes=np.unique(labels))
    pred = est.predict(Xte)
    assert set(pred) <= set(np.unique(labels))
    assert np.mean(pred == np.array(["g" + v for v in yte])) > 0.5
    assert est.decision_function(Xte).shape == (len(Xte), len(np.unique(labels)))


def test_unknown_class_in_a_later_chunk_raises_and_changes_nothing():
    Xtr, _, ytr, _ = split("ionosphere")
    est = MKLClassifier(kernels=KERNELS, random_state=0)
    est.partial_fit(Xtr[:50], ytr[:50], classes=np.unique(ytr))
    before = est.incremental_.to_bytes()
    bad = ytr[50:80].copy()
    bad[3] = "zzz"
    with pytest.raises(ValueError, match="not in classes"):
        est.partial_fit(Xtr[50:80], bad)
    assert est.incremental_.to_bytes() == before
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(Xtr[50:80], ytr[50:80], classes=["bad", "good", "x"])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(Xtr[50:80, :5], ytr[50:80])
    assert est.incremental_.to_bytes() == before


def test_classes_are_required_on_the_first_call():
    Xtr, _, ytr, _ = split("ionosphere")
    with pytest.raises(ValueError, match="classes must be given"):
        MKLClassifier(kernels=KERNELS).partial_fit(Xtr[:50], ytr[:50])


def test_exact_kernels_and_other_learners_are_refused():
    Xtr, _, ytr, _ = split("ionosphere")
    with pytest.raises(ValueError, match="explicit map"):
        MKLClassifier(kernels="rbf").partial_fit(
            Xtr[:50], ytr[:50], classes=np.unique(ytr)
        )
    with pytest.raises(ValueError, match="explicit map"):
        MKLRegressor(kernels=["linear", "poly:degree=2"]).partial_fit(
            Xtr[:50], np.arange(50.0)
        )
    assert not hasattr(MKLClassifier(learner="lp-mkl"), "partial_fit")
    assert not hasattr(MKLClassifier(kernels="precomputed"), "partial_fit")
    with pytest.raises(ValueError, match="online learner"):
        MKLClassifier(p=2.0).partial_fit(Xtr[:50], ytr[:50], classes=np.unique(ytr))


def test_fit_resets_the_stream():
    Xtr, Xte, ytr, _ = split("ionosphere")
    est = MKLClassifier(learner="online", kernels=KERNELS, C=10.0, random_state=0)
    est.partial_fit(Xtr[:60], ytr[:60], classes=np.unique(ytr))
    assert hasattr(est, "incremental_")
    est.fit(Xtr, ytr)
    assert not hasattr(est, "incremental_")
    ref = MKLClassifier(learner="online", kernels=KERNELS, C=10.0, random_state=0)
    np.testing.assert_array_equal(
        est.decision_function(Xte), ref.fit(Xtr, ytr).decision_function(Xte)
    )
    # A partial_fit after fit starts a new stream (with the classes of the fit).
    est.partial_fit(Xtr[:60], ytr[:60])
    assert est.incremental_.rows_seen == 60
    assert list(est.classes_) == list(np.unique(ytr))


def test_default_kernels_and_n_rows():
    Xtr, _, ytr, _ = split("ionosphere")
    est = MKLClassifier(random_state=0)
    est.partial_fit(Xtr[:100], ytr[:100], classes=np.unique(ytr))
    assert len(est.kernels_) == 3 and all("rff1024" in k for k in est.kernels_)
    assert est.incremental_.lambda_ == pytest.approx(1 / 100)
    est = MKLClassifier(C=2.0, random_state=0)
    est.partial_fit(Xtr[:100], ytr[:100], classes=np.unique(ytr), n_rows=1000)
    assert est.incremental_.lambda_ == pytest.approx(1 / 2000)


def test_mixing_two_fits():
    Xtr, Xte, ytr, yte = split("breast-cancer")
    codes = (ytr == np.unique(ytr)[1]).astype(np.float64)
    Xtr = np.ascontiguousarray(Xtr)
    start = IncrementalFit.start(
        Xtr[:40], codes[:40], kernels=KERNELS, n_classes=2, c=10.0, n_rows=len(Xtr)
    )
    assert start.rows_seen == 0
    half = len(Xtr) // 2
    a, b = pickle.loads(pickle.dumps(start)), pickle.loads(pickle.dumps(start))
    a.partial_fit(np.ascontiguousarray(Xtr[:half]), codes[:half])
    b.partial_fit(np.ascontiguousarray(Xtr[half:]), codes[half:])
    mixed = IncrementalFit.mix([a, b])
    assert mixed.rows_seen == len(Xtr)
    model = mixed.model()
    acc = np.mean(model.predict(np.ascontiguousarray(Xte)) == (yte == np.unique(ytr)[1]))
    assert acc > 0.9
    # The model records the rows of one pass (n_rows), one epoch and the C given.
    settings = dict(json.loads(model.summary_json())["settings"])
    assert float(settings["C"]) == pytest.approx(10.0)
    assert int(settings["epochs"]) == 1
    with pytest.raises(ValueError):
        IncrementalFit.mix([])
