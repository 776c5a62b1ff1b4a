"""scikit-learn's estimator checks over both estimators, with each learner named (the
wrappers among them; the online learner with the logistic loss also gives predict_proba),
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
    MKLRegressor(learner="gauss-seidel", C=10.0),
]

# Checks expected to fail, with why (none so far).
EXPECTED_FAILED = {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED)
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
