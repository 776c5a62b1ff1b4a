"""multikernel.dask.fit_dask: iterative parameter mixing over the shards of a Dask cluster
(in-process LocalCluster bound to the loopback interface only)."""

import pickle

import numpy as np
import pytest
from sklearn.model_selection import train_test_split
from tables import read_table

from multikernel import MKLClassifier, MKLRegressor

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from multikernel.dask import fit_dask  # noqa: E402

KERNELS = ["rbf:scale=1,approx=rff,dim=256", "rbf:scale=4,approx=rff,dim=256"]


def data(name="breast-cancer", real=False):
    X, y = read_table(name, real=real)
    return train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=None if real else y
    )


def test_fit_dask_matches_one_learner(client):
    Xtr, Xte, ytr, yte = data()
    dX = da.from_array(Xtr, chunks=(60, -1))
    dy = da.from_array(ytr, chunks=(60,))
    est = MKLClassifier(kernels=KERNELS, C=10.0, random_state=0)
    fit_dask(est, dX, dy, client=client, epochs=5)
    assert est.learner_ == "online"
    assert est.incremental_.rows_seen == 5 * len(Xtr)
    assert list(est.classes_) == list(np.unique(ytr))
    assert est.n_features_in_ == Xtr.shape[1]
    # One learner over the same rows, chunk by chunk.
    ref = MKLClassifier(kernels=KERNELS, C=10.0, random_state=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        idx = rng.permutation(len(Xtr))
        ref.partial_fit(Xtr[idx], ytr[idx], classes=np.unique(ytr))
    assert abs(est.score(Xte, yte) - ref.score(Xte, yte)) <= 0.03
    assert est.score(Xte, yte) >= 0.93
    # The estimator pickles (with the mixed fit) and predicts the same.
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.decision_function(Xte), est.decision_function(Xte))
    # partial_fit goes on from the mixed fit.
    back.partial_fit(Xtr[:50], ytr[:50])
    assert back.incremental_.rows_seen == 5 * len(Xtr) + 50


def test_fit_dask_is_reproducible_and_takes_lists_of_shards(client):
    Xtr, Xte, ytr, _ = data()
    half = len(Xtr) // 2
    shards_x, shards_y = [Xtr[:half], Xtr[half:]], [ytr[:half], ytr[half:]]
    make = lambda: MKLClassifier(kernels=KERNELS, C=10.0, random_state=7)  # noqa: E731
    a = fit_dask(make(), shards_x, shards_y, client=client, epochs=2)
    b = fit_dask(make(), shards_x, shards_y, client=client, epochs=2)
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))
    assert a.incremental_.rows_seen == 2 * len(Xtr)


def test_fit_dask_regression(client):
    Xtr, Xte, ytr, yte = data("boston-housing", real=True)
    dX = da.from_array(Xtr, chunks=(100, -1))
    dy = da.from_array(ytr, chunks=(100,))
    est = fit_dask(
        MKLRegressor(kernels=KERNELS, C=10.0, random_state=0), dX, dy, client=client,
        epochs=5,
    )
    assert est.score(Xte, yte) > 0.6


def test_fit_dask_refusals(client):
    Xtr, _, ytr, _ = data()
    dX = da.from_array(Xtr, chunks=(100, -1))
    dy = da.from_array(ytr, chunks=(100,))
    with pytest.raises(ValueError, match="online learner"):
        fit_dask(MKLClassifier(learner="lp-mkl"), dX, dy, client=client)
    with pytest.raises(ValueError, match="explicit map"):
        fit_dask(MKLClassifier(kernels="rbf"), dX, dy, client=client, epochs=1)
    with pytest.raises(ValueError, match="not in classes"):
        fit_dask(
            MKLClassifier(kernels=KERNELS), dX, dy, client=client, epochs=1,
            classes=[np.unique(ytr)[0], "other"],
        )
    with pytest.raises(TypeError):
        fit_dask(MKLClassifier(kernels=KERNELS), "rows", dy, client=client)
