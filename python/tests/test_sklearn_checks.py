"""scikit-learn's estimator checks over both estimators, with each learner named (the
wrappers among them; the online learner with the logistic loss and lp-MKL with
probability=True also give predict_proba),
each with a fixed C; and the built-in selection (C=None, the defaults) under the checks
that train and refit: its choice is part of the fitted state, never of the parameters."""

import pytest
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

from multikernel import MKLClassifier, MKLRegressor

ESTIMATORS = [
    MKLClassifier(learner="lp-mkl", C=1.0),
    MKLRegressor(learner="lp-mkl", C=10.0),
    MKLClassifier(learner="online", loss="logistic", C=10.0),
    MKLClassifier(learner="gomp", C=10.0),
    MKLRegressor(learner="online", C=1.0),
    MKLRegressor(learner="poly", degree=2, C=10.0),
    MKLClassifier(learner="simplemkl", C=10.0),
    MKLClassifier(learner="lp-mkl", C=1.0, probability=True),
    MKLRegressor(learner="gauss-seidel", C=10.0),
]

# Checks expected to fail, with why (none so far).
EXPECTED_FAILED = {}


# probability=True draws its calibration folds over the rows, so a weight of 2 is not a
# repeated row: scikit-learn lists the same two checks as expected failures of
# SVC(probability=True) (its instance_generator.py, meta-issue 16298).
CALIBRATION_EXPECTED_FAILED = {
    name: "the calibration's folds are drawn over the rows: weights are not repeated rows"
    for name in (
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


# Row weights (python/tests/test_sample_weight.py): an integer weight is a repeated row in
# each learner's objective, but the standardization and the default kernels' widths and
# normalizations are computed on the rows unweighted (the online learner also visits the
# rows in a seeded order), and scipy.sparse X trains on kernel functions, which take no
# weights; MKL-GOMP and the polynomial learners refuse weights; and the class_weight check
# sets max_iter, which lp-mkl, online and gomp do not take.
WEIGHT_EXPECTED_FAILED = {
    "check_sample_weight_equivalence_on_dense_data": "standardization and the default "
    "kernels' widths and normalizations use the rows unweighted",
    "check_sample_weight_equivalence_on_sparse_data": "scipy.sparse X trains on kernel "
    "functions, which take no row weights",
}
NO_WEIGHTS_EXPECTED_FAILED = {
    **WEIGHT_EXPECTED_FAILED,
    **{
        name: "this learner refuses row weights (lp-mkl, online, simplemkl and gauss-seidel "
        "take them)"
        for name in ("check_sample_weights_list", "check_sample_weights_not_overwritten")
    },
}
MAX_ITER_EXPECTED_FAILED = {
    "check_class_weight_classifiers": "the check sets max_iter, not a setting of this learner"
}


def expected_failed(est):
    failed = dict(EXPECTED_FAILED)
    if est.learner in ("gomp", "poly", "mirror-descent", "ucd"):
        failed.update(NO_WEIGHTS_EXPECTED_FAILED)
    else:
        failed.update(WEIGHT_EXPECTED_FAILED)
    if est.learner in ("lp-mkl", "online", "gomp"):
        failed.update(MAX_ITER_EXPECTED_FAILED)
    if getattr(est, "probability", False):
        failed.update(CALIBRATION_EXPECTED_FAILED)
    return failed


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# The configurations without C: the built-in selection (seeded cross-validation over C, and
# the learner or lp-MKL's p or the online eta0) runs inside every fit: all the checks over
# them were half the Python suite's time. The checks here are those where the selection
# differs from a fixed-C fit: training on the check's table ("train"), the same model from a refit of a
# clone ("fit_idempotent"), the parameters left as given, C=None included, whatever was
# chosen ("dont_overwrite_parameters", "estimators_overwrite_params"), and the chosen model
# pickled ("estimators_pickle").
SELECTING = [MKLClassifier(), MKLRegressor(), MKLRegressor(learner="online")]
SELECTION_CHECKS = [
    pytest.param("train", marks=pytest.mark.slow),
    pytest.param("check_fit_idempotent", marks=pytest.mark.slow),
    "check_dont_overwrite_parameters",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
]


@pytest.mark.parametrize("name", SELECTION_CHECKS)
@pytest.mark.parametrize("estimator", SELECTING, ids=repr)
def test_the_built_in_selection_passes_the_checks_that_train(estimator, name):
    if name == "train":
        classifier = isinstance(estimator, MKLClassifier)
        name = "check_classifiers_train" if classifier else "check_regressors_train"
    getattr(estimator_checks, name)(type(estimator).__name__, estimator)
