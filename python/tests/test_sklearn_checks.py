"""scikit-learn's estimator checks over both estimators, with their default parameters and
with each learner named (the wrappers among them; the online learner with the logistic
loss also gives predict_proba)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from multikernel import MKLClassifier, MKLRegressor

ESTIMATORS = [
    MKLClassifier(),
    MKLRegressor(),
    MKLClassifier(learner="online", loss="logistic", C=10.0),
    MKLClassifier(learner="gomp", C=10.0),
    MKLRegressor(learner="online"),
    MKLRegressor(learner="poly", degree=2, C=10.0),
    MKLClassifier(learner="simplemkl", C=10.0),
    MKLRegressor(learner="gauss-seidel", C=10.0),
]

# Checks expected to fail, with why (none so far).
EXPECTED_FAILED = {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
