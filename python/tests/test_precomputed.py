"""kernels="precomputed": the MKLpy users' path. Kernel matrices in place of X (train-by-
train in fit, test-by-train in predict); the same model as the rows path when the matrices
are the library's own kernels."""

import pickle

import numpy as np
import pytest
from sklearn.metrics.pairwise import (
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from sklearn.preprocessing import StandardScaler

from multikernel import MKLClassifier, MKLRegressor

SIGMA2 = 40.0


def kernel_list(A, B):
    """rbf:sigma2=40, linear and poly:degree=2 (offset 1), as the library defines them."""
    return [
        rbf_kernel(A, B, gamma=1 / (2 * SIGMA2)),
        linear_kernel(A, B),
        polynomial_kernel(A, B, degree=2, gamma=1.0, coef0=1.0),
    ]


def test_mklpy_style_code_runs_with_the_import_changed(sonar_split):
    Xtr, Xte, ytr, yte = sonar_split
    KLtr, KLte = kernel_list(Xtr, Xtr), kernel_list(Xte, Xtr)
    clf = MKLClassifier(kernels="precomputed", random_state=0).fit(KLtr, ytr)
    assert clf.score(KLte, yte) > 0.75
    assert clf.learner_ == "lp-mkl"
    assert clf.kernels_ == ["K0", "K1", "K2"]
    assert clf.kernel_weights_.shape == (3,)
    assert clf.selection_["headline"].startswith("selected lp-mkl")
    # A 3-D array works as the list does.
    np.testing.assert_array_equal(
        clf.decision_function(np.stack(KLte)), clf.decision_function(KLte)
    )


def test_precomputed_matrices_give_the_rows_path_model(sonar_split):
    Xtr, Xte, ytr, yte = sonar_split
    common = dict(learner="lp-mkl", C=10.0, p=4 / 3)
    rows = MKLClassifier(
        kernels=[f"rbf:sigma2={SIGMA2}", "linear", "poly:degree=2,offset=1"],
        standardize=False,
        **common,
    ).fit(Xtr, ytr)
    pre = MKLClassifier(kernels="precomputed", **common).fit(kernel_list(Xtr, Xtr), ytr)
    np.testing.assert_allclose(
        pre.decision_function(kernel_list(Xte, Xtr)), rows.decision_function(Xte), atol=1e-7
    )
    # (The rows model lists its kernels by weight, largest first.)
    np.testing.assert_allclose(
        np.sort(pre.kernel_weights_), np.sort(rows.kernel_weights_), atol=1e-9
    )


def test_regression_multiclass_and_pickling(boston, glass):
    # Standardized: a degree-2 polynomial kernel of boston's raw columns reaches 5e10, which
    # no ridge solve in double precision survives (the rows path with standardize=False
    # fails the same way).
    X, y = boston
    X = StandardScaler().fit_transform(X)
    reg = MKLRegressor(kernels="precomputed", C=10.0).fit(kernel_list(X, X), y)
    assert reg.score(kernel_list(X, X), y) > 0.8
    back = pickle.loads(pickle.dumps(reg))
    K5 = kernel_list(X[:5], X)
    np.testing.assert_array_equal(back.predict(K5), reg.predict(K5))
    Xg, yg = glass
    Xg = StandardScaler().fit_transform(Xg)
    clf = MKLClassifier(kernels="precomputed", C=10.0).fit(kernel_list(Xg, Xg), yg)
    f = clf.decision_function(kernel_list(Xg, Xg))
    assert f.shape == (len(yg), len(clf.classes_))
    assert clf.score(kernel_list(Xg, Xg), yg) > 0.7


def test_bad_kernel_matrices_are_refused(sonar_split):
    Xtr, Xte, ytr, yte = sonar_split
    KL = kernel_list(Xtr, Xtr)
    clf = MKLClassifier(kernels="precomputed", C=1.0)
    # A 2-D X is one Gram matrix (as SVC(kernel="precomputed")): rows are not square.
    with pytest.raises(ValueError, match=r"must be square, n x n .*got shape \(145, 60\)"):
        clf.fit(Xtr, ytr)
    with pytest.raises(TypeError, match="list of kernel matrices"):
        clf.fit({"K": KL[0]}, ytr)
    with pytest.raises(ValueError, match="at least one kernel matrix"):
        clf.fit([], ytr)
    asym = KL[0].copy()
    asym[3, 1] += 1.0
    with pytest.raises(ValueError, match="kernel 0 is not symmetric"):
        clf.fit([asym], ytr)
    with pytest.raises(ValueError, match="n x n"):
        clf.fit([KL[0], KL[1][:, :-1]], ytr)
    with pytest.raises(ValueError, match="learner='gomp'"):
        MKLClassifier(kernels="precomputed", learner="gomp").fit(KL, ytr)
    clf.fit(KL, ytr)
    with pytest.raises(ValueError, match="one column per training row"):
        clf.predict([K[:, :-1] for K in kernel_list(Xte, Xtr)])
    with pytest.raises(ValueError, match="kernel matrices"):
        clf.predict(kernel_list(Xte, Xtr)[:2])
    with pytest.raises(ValueError, match="kernel matrices"):
        clf.model_.predict(Xte)  # a precomputed model does not take rows


def test_indefinite_kernel_matrices_are_refused(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    KL = kernel_list(Xtr, Xtr)
    sig = sigmoid_kernel(Xtr, gamma=1.0 / Xtr.shape[1], coef0=1.0)  # not a kernel
    clf = MKLClassifier(kernels="precomputed", C=1.0)
    with pytest.raises(ValueError, match=r"kernel 2 \(K2\) is not positive semidefinite: "
                       r"smallest eigenvalue -"):
        clf.fit([KL[0], KL[1], sig], ytr)
    bad = np.eye(len(ytr))
    bad[0, 1] = bad[1, 0] = 2.0  # eigenvalues -1, 3, 1, ...
    with pytest.raises(ValueError, match=r"smallest eigenvalue -1\.000 \(largest 3\.000\)"):
        MKLClassifier(kernels="precomputed").fit([bad], ytr)
    # Valid kernels pass, float32-computed ones (round-off of order 1e-8) included.
    Xs = Xtr.astype(np.float32)
    clf.fit([rbf_kernel(Xs, gamma=1 / (2 * SIGMA2)).astype(np.float64),
             linear_kernel(Xs).astype(np.float64), bad + np.eye(len(ytr))], ytr)
