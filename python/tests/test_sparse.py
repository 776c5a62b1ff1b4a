"""scipy.sparse X (``multikernel._sparse``): the SPEC kernels computed on sparse rows are
the library's on the dense rows, nothing of size n x d is made dense, and what is not
supported says so."""

import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from multikernel import MKLClassifier, MKLRegressor
from multikernel._sparse import SPARSE_KERNELS, _median_sigma2


@pytest.fixture(scope="module")
def one_hot():
    """A one-hot table of 5 categorical columns (4 levels), 120 rows, a label of two."""
    rng = np.random.default_rng(0)
    cats = rng.integers(0, 4, size=(120, 5))
    y = np.where(cats[:, 0] + cats[:, 1] > 3, "yes", "no")
    return OneHotEncoder().fit_transform(cats).tocsr(), y


KERNELS = [
    ["linear"],
    ["rbf"],
    ["poly:degree=2"],
    ["rbf:sigma2=2,norm=trace", "linear:norm=diag", "poly:degree=3,offset=0.5,norm=trace"],
]


@pytest.mark.parametrize("kernels", KERNELS, ids=lambda k: "+".join(k))
def test_a_sparse_fit_is_the_dense_fit_of_the_same_kernels(one_hot, kernels):
    Xs, y = one_hot
    Xd = Xs.toarray()
    common = dict(kernels=kernels, learner="lp-mkl", C=1.0, standardize=False, random_state=0)
    sparse = MKLClassifier(**common).fit(Xs, y)
    dense = MKLClassifier(**common).fit(Xd, y)
    weights = dict(zip(dense.kernels_, dense.kernel_weights_))
    assert sorted(sparse.kernels_) == sorted(weights)
    np.testing.assert_allclose(
        sparse.kernel_weights_, [weights[k] for k in sparse.kernels_], atol=1e-8
    )
    np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(Xd))
    np.testing.assert_allclose(
        sparse.decision_function(Xs), dense.decision_function(Xd), rtol=0, atol=1e-8
    )
    # Dense test rows against the sparse fit: the same values.
    np.testing.assert_allclose(sparse.decision_function(Xd), sparse.decision_function(Xs))


def test_standardize_scales_without_centering(one_hot):
    Xs, y = one_hot
    scaled = StandardScaler(with_mean=False).fit_transform(Xs)
    common = dict(kernels=["linear", "rbf"], learner="lp-mkl", C=1.0, random_state=0)
    on = MKLClassifier(standardize=True, **common).fit(Xs, y)
    off = MKLClassifier(standardize=False, **common).fit(scaled, y)
    np.testing.assert_allclose(on.decision_function(Xs), off.decision_function(scaled),
                               atol=1e-10)
    # The Gaussian kernel does not see centering: the dense standardized fit's model.
    rbf = dict(kernels="rbf", learner="lp-mkl", C=1.0)
    np.testing.assert_allclose(
        MKLClassifier(**rbf).fit(Xs, y).decision_function(Xs),
        MKLClassifier(**rbf).fit(Xs.toarray(), y).decision_function(Xs.toarray()),
        atol=1e-8,
    )


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
def test_every_sparse_format_and_the_regressor(one_hot, fmt):
    Xs, y = one_hot
    X = Xs.asformat(fmt)
    reference = MKLClassifier(kernels="rbf", C=1.0).fit(Xs, y)
    clf = MKLClassifier(kernels="rbf", C=1.0).fit(X, y)
    np.testing.assert_array_equal(clf.decision_function(X), reference.decision_function(Xs))
    assert clf.n_features_in_ == Xs.shape[1] and sp.issparse(clf.X_fit_)
    t = (y == "yes").astype(float)
    reg = MKLRegressor(kernels=["linear", "rbf"], learner="lp-mkl", C=10.0).fit(X, t)
    assert reg.score(X, t) > 0.5


def test_auto_on_sparse_x_selects_on_the_sparse_dictionary(one_hot):
    Xs, y = one_hot
    clf = MKLClassifier(random_state=0).fit(Xs, y)
    assert len(clf.kernels_) == len(SPARSE_KERNELS)
    assert clf.kernels_[0] == "linear/trace"
    assert clf.selection_ is not None and clf.learner_ == "lp-mkl"
    assert clf.score(Xs, y) > 0.9
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(Xs), clf.decision_function(Xs))
    # A later dense fit forgets the sparse kernels.
    dense = clf.set_params(kernels="linear", C=1.0).fit(Xs.toarray(), y)
    assert not hasattr(dense, "sparse_kernels_") and not hasattr(dense, "X_fit_")


def test_probabilities_on_sparse_x(one_hot):
    Xs, y = one_hot
    clf = MKLClassifier(kernels="rbf", C=1.0, probability=True, random_state=0).fit(Xs, y)
    P = clf.predict_proba(Xs)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(clf.classes_[P.argmax(axis=1)] == clf.predict(Xs)) > 0.9


def test_a_tfidf_like_table_fits_without_densifying():
    n, d = 300, 20000
    X = sp.random(n, d, density=0.001, format="csr", random_state=0)
    y = np.asarray(X[:, : d // 2].sum(axis=1)).ravel() > np.median(
        np.asarray(X[:, : d // 2].sum(axis=1)).ravel()
    )
    dense_bytes = n * d * 8  # 48 MB
    tracemalloc.start()
    try:
        clf = MKLClassifier(kernels=["linear", "rbf"], learner="lp-mkl", C=10.0).fit(X, y)
        clf.predict(X[:50])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < dense_bytes / 10, (peak, dense_bytes)
    assert clf.score(X, y) > 0.6


def test_unsupported_kernels_and_learners_are_refused_by_name(one_hot):
    Xs, y = one_hot
    for kernels in ("perfeature:linear", "bspline", "rbf:approx=rff,dim=64",
                    "linear:norm=variance", ["linear", "rbf:features=0+1"]):
        clf = MKLClassifier(kernels=kernels, C=1.0)
        with pytest.raises(ValueError, match=r"not computed on scipy.sparse X \(supported: "
                                             r"linear, poly"):
            clf.fit(Xs, y)
        assert not clf.__sklearn_tags__().input_tags.sparse
    with pytest.raises(ValueError, match="unknown kernel"):
        MKLClassifier(kernels="sigmoid", C=1.0).fit(Xs, y)
    with pytest.raises(ValueError, match="learner='online' needs dense X"):
        MKLClassifier(learner="online", C=1.0).fit(Xs, y)
    with pytest.raises(TypeError, match="[Ss]parse"):
        MKLClassifier(kernels="precomputed").fit(Xs, y)
    clf = MKLClassifier(kernels="linear", C=1.0).fit(Xs, y)
    with pytest.raises(ValueError, match="X has 3 features, but the kernels were fitted on 20"):
        clf.predict(Xs[:, :3])
    assert MKLClassifier().__sklearn_tags__().input_tags.sparse
    assert not clone(MKLClassifier(learner="gomp")).__sklearn_tags__().input_tags.sparse


def test_the_median_heuristic_is_the_librarys():
    # Half the median squared distance; 0 median -> the positive ones; no pair -> 1.
    X = sp.csr_matrix(np.array([[0.0, 0], [1, 0], [0, 2], [3, 0]]))
    d = [1, 4, 9, 5, 4, 13]  # the pairs i < j
    assert _median_sigma2(X, 0) == np.median(d) / 2
    same = sp.csr_matrix(np.array([[1.0, 0]] * 5 + [[0.0, 1]]))
    assert _median_sigma2(same, 0) == 1.0  # 2 / 2, the median of the positive ones
    assert _median_sigma2(sp.csr_matrix(np.ones((3, 2))), 0) == 1.0
