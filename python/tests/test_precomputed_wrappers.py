"""kernels="precomputed" with the wrapper learners (SimpleMKL, Gauss-Seidel): the same
model as learner="simplemkl" on rows when the matrices are the library's kernels computed
in numpy; scikit-learn-style fit / predict on lists of matrices; the settings forwarded
and refused."""

import pickle

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from multikernel import MKLClassifier, MKLRegressor
from tables import read_table

SIGMA2 = 40.0
SPECS = [f"rbf:sigma2={SIGMA2}", "linear", "poly:degree=2,offset=1"]


def kernel_list(A, B):
    """The kernels of SPECS, as the library defines them, in numpy."""
    return [
        rbf_kernel(A, B, gamma=1 / (2 * SIGMA2)),
        linear_kernel(A, B),
        polynomial_kernel(A, B, degree=2, gamma=1.0, coef0=1.0),
    ]


def unit_diagonal(kernel, A, B):
    """``norm=diag``: ``K(a, b) / sqrt(K(a, a) K(b, b))``."""
    da = np.array([kernel(a[None], a[None])[0, 0] for a in A])
    db = np.array([kernel(b[None], b[None])[0, 0] for b in B])
    return kernel(A, B) / np.sqrt(np.outer(da, db))


MIXED = ["rbf:sigma2=2", "linear:norm=diag", "poly:degree=2,offset=1,norm=diag"]


def mixed_list(A, B):
    """The kernels of MIXED in numpy."""
    poly = lambda U, V: polynomial_kernel(U, V, degree=2, gamma=1.0, coef0=1.0)  # noqa: E731
    return [
        rbf_kernel(A, B, gamma=1 / (2 * 2.0)),
        unit_diagonal(linear_kernel, A, B),
        unit_diagonal(poly, A, B),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["simplemkl", "gauss-seidel"])
def test_precomputed_wrappers_give_the_rows_path_model(learner):
    X, y = read_table("ionosphere")
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    # numpy's matrices differ from the library's in the last bits, so SMO stops at another
    # point within its tolerance: at the default svm_tol (1e-3) the decision values differ
    # by up to 1e-3 (measured 4.5e-4 on sonar), at 1e-8 by 1e-8 (measured 6e-9 here).
    common = dict(learner=learner, C=10, svm_tol=1e-8)
    rows = MKLClassifier(kernels=MIXED, standardize=False, **common).fit(Xtr, ytr)
    pre = MKLClassifier(kernels="precomputed", **common).fit(mixed_list(Xtr, Xtr), ytr)
    f_pre = pre.decision_function(mixed_list(Xte, Xtr))
    f_rows = rows.decision_function(Xte)
    assert f_pre.shape == (len(yte),)
    np.testing.assert_allclose(f_pre, f_rows, atol=1e-6, rtol=0)
    np.testing.assert_allclose(pre.kernel_weights_, rows.kernel_weights_, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(pre.predict(mixed_list(Xte, Xtr)), rows.predict(Xte))
    assert pre.learner_ == learner
    assert pre.kernels_ == ["K0", "K1", "K2"]
    assert abs(pre.kernel_weights_.sum() - 1.0) < 1e-9
    # Two kernels weighted (SimpleMKL measured 0.944, 0, 0.056): not a vertex.
    assert (pre.kernel_weights_ > 0.01).sum() == 2, pre.kernel_weights_
    assert pre.settings_["C"] == "10.0000"
    assert "on precomputed kernels" in str(pre.model_)
    assert np.ptp(f_pre) > 0.1
    assert pre.score(mixed_list(Xte, Xtr), yte) > 0.85


def test_sklearn_style_fit_predict_on_lists_of_matrices(sonar_split, glass, boston):
    Xtr, Xte, ytr, yte = sonar_split
    KLtr, KLte = kernel_list(Xtr, Xtr), kernel_list(Xte, Xtr)
    # MKLpy-style: fit on the training list, predict on the test list; C selected.
    clf = MKLClassifier(kernels="precomputed", learner="simplemkl", random_state=0)
    pred = clf.fit(KLtr, ytr).predict(KLte)
    assert pred.shape == yte.shape and set(pred) <= set(ytr)
    assert clf.selection_["headline"].startswith("selected simplemkl")
    assert len(clf.selection_["lines"]) >= 5
    assert clf.C_ in (0.1, 1.0, 10.0, 100.0, 1000.0)
    np.testing.assert_array_equal(
        clf.decision_function(np.stack(KLte)), clf.decision_function(KLte)
    )
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(KLte), clf.decision_function(KLte))

    # Multiclass: one machine per class sharing the weights.
    Xg, yg = glass
    Xg = StandardScaler().fit_transform(Xg)
    g = MKLClassifier(kernels="precomputed", learner="gauss-seidel", C=10, max_iter=30)
    g.fit(kernel_list(Xg, Xg), yg)
    f = g.decision_function(kernel_list(Xg[:7], Xg))
    assert f.shape == (7, len(g.classes_))
    assert g.score(kernel_list(Xg, Xg), yg) > 0.7
    assert g.n_iter_ <= 31

    # Regression: epsilon-SVR, epsilon forwarded.
    Xb, yb = boston
    Xb = StandardScaler().fit_transform(Xb)[:200]
    yb = yb[:200]
    reg = MKLRegressor(kernels="precomputed", learner="simplemkl", C=10, epsilon=0.5)
    reg.fit(kernel_list(Xb, Xb), yb)
    assert reg.settings_["epsilon"] == "0.5000"
    assert reg.score(kernel_list(Xb, Xb), yb) > 0.7
    back = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(
        back.predict(kernel_list(Xb[:5], Xb)), reg.predict(kernel_list(Xb[:5], Xb))
    )


def test_wrapper_settings_are_forwarded_and_checked(sonar_split):
    Xtr, _, ytr, _ = sonar_split
    KL = kernel_list(Xtr, Xtr)
    # One outer iteration at most: the run stops at the iteration cap.
    one = MKLClassifier(kernels="precomputed", learner="simplemkl", C=10, max_iter=1,
                        tol=1e-12).fit(KL, ytr)
    assert one.fit_status_ == "iteration limit", one.fit_status_
    tight = MKLClassifier(kernels="precomputed", learner="simplemkl", C=10,
                          tol=1e-4, svm_tol=1e-6).fit(KL, ytr)
    assert tight.n_iter_ > one.n_iter_
    with pytest.raises(ValueError, match="p is not a setting of simplemkl"):
        MKLClassifier(kernels="precomputed", learner="simplemkl", p=2.0).fit(KL, ytr)
    with pytest.raises(ValueError, match="max_iter is not a setting of lp-mkl"):
        MKLClassifier(kernels="precomputed", max_iter=5).fit(KL, ytr)
    with pytest.raises(ValueError, match="learner='online'"):
        MKLClassifier(kernels="precomputed", learner="online").fit(KL, ytr)
    with pytest.raises(ValueError, match="tol"):
        MKLClassifier(kernels="precomputed", learner="simplemkl", tol=0.0).fit(KL, ytr)
    # An indefinite matrix is refused by name.
    bad = np.eye(len(ytr))
    bad[0, 1] = bad[1, 0] = 2.0
    with pytest.raises(ValueError, match=r"kernel 1 \(K1\) is not positive semidefinite"):
        MKLClassifier(kernels="precomputed", learner="simplemkl", C=1).fit([KL[0], bad], ytr)
