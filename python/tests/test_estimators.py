"""The estimators on the shipped tables: labels of any type, shapes, the fitted
attributes, scikit-learn's pipeline and grid search, model bytes, errors."""

import numpy as np
import pytest
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_score,
    train_test_split,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import multikernel
from multikernel import MKLClassifier, MKLRegressor, Model


def test_default_classifier_learns_sonar(sonar):
    X, y = sonar
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    clf = MKLClassifier(random_state=0).fit(Xtr, ytr)
    assert clf.score(Xte, yte) > 0.75
    assert set(clf.classes_) == set(y)
    assert clf.n_features_in_ == X.shape[1]
    # The selection's choice among its candidates: one dictionary kernel (squared or hinge
    # loss), the uniform sum, or lp-MKL's learned combination.
    assert clf.learner_ in ("lp-mkl", "simplemkl")
    assert clf.selection_["headline"].startswith("selected ")  # e.g. "selected svm rbf..."
    assert clf.C_ in (0.1, 1.0, 10.0, 100.0, 1000.0)
    assert len(clf.kernels_) == len(clf.kernel_weights_)
    assert len(clf.kernels_) in (1, len(multikernel.dictionary(60)))
    assert np.all(clf.kernel_weights_ >= 0)
    assert "MKL" in clf.summary_


def _check_cv_results(est, minimize):
    r = est.cv_results_
    n = len(r["candidate"])
    assert n > 1
    assert all(len(col) == n for col in r.values())
    # Exactly one chosen candidate, the one the model was refitted with.
    assert sum(r["chosen"]) == 1
    i = r["chosen"].index(True)
    assert r["status"][i].startswith("chosen: ")
    assert r["param_C"][i] == est.C_
    assert r["candidate"][i] in est.selection_["why"]
    for k in range(n):
        folds = r["fold_scores"][k]
        assert r["n_folds"][k] == len(folds)
        if r["mean_test_score"][k] is None:
            assert r["status"][k].startswith(("stopped", "skipped"))
            continue
        # Brute force: the mean and scikit-learn's std of the fold scores.
        assert r["mean_test_score"][k] == pytest.approx(sum(folds) / len(folds))
        m = sum(folds) / len(folds)
        sd = (sum((v - m) ** 2 for v in folds) / len(folds)) ** 0.5
        assert r["std_test_score"][k] == pytest.approx(sd)
        assert r["n_fits"][k] >= len(folds)
    # Rank 1 holds the best mean of the candidates scored on every fold (5 folds, 15 on
    # tables of at most 500 rows: 3 partitions).
    most = max(r["n_folds"])
    assert most in (5, 15)
    full = [k for k in range(n) if r["n_folds"][k] == most]
    best = (min if minimize else max)(r["mean_test_score"][k] for k in full)
    top = [k for k in range(n) if r["rank_test_score"][k] == 1]
    assert top and all(r["mean_test_score"][k] == best for k in top)
    assert all(r["rank_test_score"][k] == n for k in range(n) if k not in full)


@pytest.mark.slow
def test_cv_results_of_the_selection(sonar, boston, selected_regressor_on_boston):
    X, y = sonar
    clf = MKLClassifier(random_state=0).fit(X, y)
    _check_cv_results(clf, minimize=False)
    kinds = set(clf.cv_results_["kind"])
    assert {"single kernel", "single kernel, hinge loss", "uniform sum"} <= kinds
    assert "learned combination" in kinds
    X, y = boston
    reg = selected_regressor_on_boston  # MKLRegressor(random_state=0).fit(X, y)
    _check_cv_results(reg, minimize=True)
    assert "single kernel, hinge loss" not in reg.cv_results_["kind"]
    # No selection among candidates: no cv_results_.
    fixed = MKLClassifier(C=1.0, learner="lp-mkl").fit(X[:60], (y[:60] > 20).astype(int))
    assert not hasattr(fixed, "cv_results_")


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["rock", "mine"]),
        np.array([3, 17]),
        np.array([-1.0, 2.0]),
        np.array([True, False]),
    ],
)
def test_labels_of_any_type(sonar, labels):
    X, y = sonar
    yy = np.where(y == y[0], labels[0], labels[1])
    clf = MKLClassifier(C=10.0, learner="lp-mkl").fit(X, yy)
    pred = clf.predict(X)
    assert pred.dtype == yy.dtype
    assert set(pred) <= set(labels)
    assert np.mean(pred == yy) > 0.9
    # Binary: a positive decision value means classes_[1].
    f = clf.decision_function(X)
    assert f.shape == (X.shape[0],)
    np.testing.assert_array_equal(pred, clf.classes_[(f > 0).astype(int)])


def test_multiclass_decision_values_pick_the_prediction(glass):
    X, y = glass
    clf = MKLClassifier(C=10.0, learner="online", random_state=1).fit(X, y)
    f = clf.decision_function(X)
    assert f.shape == (X.shape[0], len(clf.classes_))
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[f.argmax(axis=1)])
    assert clf.score(X, y) > 0.6


def test_predict_proba_only_with_the_logistic_loss(glass, sonar):
    X, y = glass
    assert not hasattr(MKLClassifier(), "predict_proba")
    clf = MKLClassifier(learner="online", loss="logistic", C=10.0, random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], len(clf.classes_))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    Xb, yb = sonar
    clf = MKLClassifier(learner="online", loss="logistic", C=10.0).fit(Xb, yb)
    Pb = clf.predict_proba(Xb)
    np.testing.assert_allclose(Pb[:, 1], 1 / (1 + np.exp(-clf.decision_function(Xb))))


@pytest.mark.slow
def test_regressor_on_boston(boston):
    X, y = boston
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    reg = MKLRegressor(random_state=0).fit(Xtr, ytr)
    assert reg.score(Xte, yte) > 0.7
    assert reg.predict(Xte).dtype == np.float64


@pytest.mark.parametrize(
    "params",
    [
        dict(learner="gomp", C=10.0, max_kernels=5),
        dict(learner="mirror-descent", degree=2, max_iter=200, C=10.0),
        dict(learner="ucd", degree=2, max_iter=200, C=10.0),
        dict(learner="poly", degree=2, C=10.0),
        dict(learner="online", regularizer="l2", kernels=["rbf", "linear"], C=10.0),
        dict(learner="lp-mkl", p=1.0, kernels=["rbf", "linear", "poly:degree=2"], C=10.0),
        pytest.param(
            dict(learner="simplemkl", kernels=["rbf", "linear", "poly:degree=2"], C=10.0),
            marks=pytest.mark.slow,
        ),
        dict(learner="gauss-seidel", epsilon=0.2, max_iter=50, C=10.0),
    ],
)
def test_every_learner(boston, params):
    X, y = boston
    reg = MKLRegressor(random_state=0, **params).fit(X, y)
    assert reg.learner_ == params["learner"]
    assert reg.score(X, y) > 0.5
    back = Model.from_bytes(reg.model_.to_bytes())
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))


def test_pipeline_and_grid_search(sonar):
    X, y = sonar
    pipe = make_pipeline(StandardScaler(), MKLClassifier(learner="lp-mkl", random_state=0))
    # sonar's rows are grouped: unshuffled folds score near chance for every model.
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = GridSearchCV(
        pipe, {"mklclassifier__C": [1.0, 100.0], "mklclassifier__p": [1.0, 2.0]}, cv=cv
    )
    grid.fit(X, y)
    assert grid.best_score_ > 0.7
    assert set(grid.best_params_) == {"mklclassifier__C", "mklclassifier__p"}
    scores = cross_val_score(MKLClassifier(C=10.0, learner="lp-mkl"), X, y, cv=cv)
    assert scores.mean() > 0.7


def test_same_random_state_same_model_bytes(glass):
    X, y = glass
    a = MKLClassifier(learner="online", C=10.0, random_state=7).fit(X, y)
    b = MKLClassifier(learner="online", C=10.0, random_state=7).fit(X, y)
    c = MKLClassifier(learner="online", C=10.0, random_state=8).fit(X, y)
    assert a.model_.to_bytes() == b.model_.to_bytes()
    assert a.model_.to_bytes() != c.model_.to_bytes()  # the shuffles differ


def test_input_layouts_give_the_same_predictions(sonar):
    X, y = sonar
    clf = MKLClassifier(C=10.0, learner="lp-mkl").fit(X, y)
    ref = clf.decision_function(X)
    np.testing.assert_array_equal(clf.decision_function(np.asfortranarray(X)), ref)
    np.testing.assert_array_equal(clf.decision_function(X.tolist()), ref)
    strided = np.repeat(X, 2, axis=1)[:, ::2]
    np.testing.assert_array_equal(clf.decision_function(strided), ref)


def test_library_errors_map_to_python_exceptions(sonar):
    X, y = sonar
    with pytest.raises(ValueError, match="kernel"):
        MKLClassifier(kernels=["rbf:gamma=oops"], C=1.0).fit(X, y)
    with pytest.raises(ValueError, match="eta0 is a setting of the online learner"):
        MKLClassifier(learner="lp-mkl", eta0=0.5, C=1.0).fit(X, y)
    with pytest.raises(MemoryError, match="memory limit"):
        MKLClassifier(learner="lp-mkl", C=1.0, memory_limit_gb=1e-6).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        MKLRegressor(learner="online", loss="hinge", C=1.0).fit(X, y.astype(str) == "R")
    with pytest.raises(ValueError, match="model <bytes>"):
        Model.from_bytes(b'{"format": "something-else"}')
    clf = MKLClassifier(C=1.0, learner="lp-mkl").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :10])
    with pytest.raises(TypeError, match="C-contiguous"):
        clf.model_.predict(np.asfortranarray(X))
    # A failed fit leaves a fitted estimator as it was.
    before = clf.model_.to_bytes()
    with pytest.raises(ValueError):
        clf.set_params(kernels=["nope"]).fit(X, y)
    assert clf.model_.to_bytes() == before


def test_an_unknown_keyword_names_the_estimator():
    for est in (MKLClassifier, MKLRegressor):
        with pytest.raises(TypeError, match=rf"{est.__name__}.__init__\(\) got an unexpected keyword argument 'foo'"):
            est(foo=1)
    assert MKLClassifier(C=2.0).get_params()["C"] == 2.0


def test_a_categorical_column_is_named():
    X = [[0.5, "a"], [1.5, "b"], [2.5, "a"], [3.5, "b"]]
    y = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="column 1 holds 'a', not a number; encode"):
        MKLClassifier(C=1.0).fit(X, y)
    with pytest.raises(ValueError, match="column 1 holds 'a'"):
        MKLRegressor(C=1.0).fit(X, [0.0, 1.0, 2.0, 3.0])
    import pandas as pd
    frame = pd.DataFrame({"size": [0.5, 1.5, 2.5, 3.5], "colour": ["red", "blue"] * 2})
    with pytest.raises(ValueError, match="column 'colour' holds 'red'"):
        MKLClassifier(C=1.0).fit(frame, y)


def test_verbose_prints_progress_to_stderr(sonar, capsys):
    X, y = sonar
    MKLClassifier(learner="online", C=1.0, epochs=3, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "[multikernel] epoch 3/3" in err


def test_kernel_helpers():
    assert multikernel.parse_kernel("rbf") == "rbf"
    with pytest.raises(ValueError):
        multikernel.parse_kernel("no-such-kernel")
    assert len(multikernel.dictionary(3)) == len(set(multikernel.dictionary(3)))


def test_the_gil_is_released_while_rust_trains(glass):
    # A fit in another thread; this thread keeps running Python meanwhile. With the GIL
    # held for the whole fit this loop could not run until the fit ended.
    import threading

    X, y = glass
    clf = MKLClassifier(learner="online", kernels=["rbf", "linear"], C=1.0, epochs=500)
    worker = threading.Thread(target=clf.fit, args=(X, y))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    assert hasattr(clf, "model_")
    assert ticks > 10_000


def test_simplemkl_with_one_kernel_is_scikit_learns_svc(sonar):
    """One kernel: the weight is 1 and the model is the SVM (SMO against libsvm, both at
    tolerance 1e-3): the same predictions, decision values within 1e-2."""
    from sklearn.svm import SVC

    X, y = sonar
    X = StandardScaler().fit_transform(X)
    sigma2 = 30.0
    ours = MKLClassifier(
        learner="simplemkl", kernels=[f"rbf:sigma2={sigma2},norm=none"], C=3.0,
        standardize=False,
    ).fit(X, y)
    svc = SVC(kernel="rbf", gamma=1 / (2 * sigma2), C=3.0, tol=1e-3).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, svc.classes_)
    np.testing.assert_allclose(ours.kernel_weights_, [1.0])
    f, g = ours.decision_function(X), svc.decision_function(X)
    assert np.max(np.abs(f - g)) < 1e-2, np.max(np.abs(f - g))
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))


def test_wrapper_settings_belong_to_the_wrappers(sonar):
    X, y = sonar
    with pytest.raises(ValueError, match="epsilon is a setting of the simplemkl"):
        MKLClassifier(learner="lp-mkl", epsilon=0.1, C=1.0).fit(X, y)
    clf = MKLClassifier(learner="gauss-seidel", C=1.0, kernels=["rbf", "linear"]).fit(X, y)
    assert clf.learner_ == "gauss-seidel"
    assert abs(clf.kernel_weights_.sum() - 1.0) < 1e-9
    assert "Gauss-Seidel" in clf.summary_


def test_random_fourier_kernels_through_the_estimator(sonar):
    # rbf:approx=rff,dim=D: the online learner trains the map as an explicit group (no
    # support rows), near the exact kernel's accuracy; pickled and reloaded it predicts the
    # same; the same random_state gives the same map and model bytes.
    import pickle

    X, y = sonar
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    exact = MKLClassifier(learner="online", kernels=["rbf", "linear"], C=10.0, random_state=1)
    approx = MKLClassifier(
        learner="online",
        kernels=["rbf:approx=rff,dim=2048", "linear"],
        C=10.0,
        random_state=1,
    )
    exact.fit(Xtr, ytr)
    approx.fit(Xtr, ytr)
    assert approx.score(Xte, yte) > exact.score(Xte, yte) - 0.1
    assert "~rff2048" in approx.kernels_[0]
    back = pickle.loads(pickle.dumps(approx))
    np.testing.assert_array_equal(back.decision_function(Xte), approx.decision_function(Xte))
    again = MKLClassifier(**approx.get_params()).fit(Xtr, ytr)
    assert again.model_.to_bytes() == approx.model_.to_bytes()
    with pytest.raises(ValueError, match="rbf only"):
        MKLClassifier(learner="online", kernels=["linear:approx=rff"], C=1.0).fit(Xtr, ytr)
