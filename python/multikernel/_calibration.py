"""Platt scaling: class probabilities from decision values, as libsvm's ``-b 1`` (and
scikit-learn's ``SVC(probability=True)``) computes them.

Platt (1999), "Probabilistic outputs for support vector machines and comparisons to
regularized likelihood methods", fits ``P(y = 1 | f) = 1 / (1 + exp(A f + B))`` to
decision values ``f`` by maximum likelihood, with the targets smoothed to
``(N+ + 1) / (N+ + 2)`` for the positive rows and ``1 / (N- + 2)`` for the negative ones
(a prior against overfitting on separable data). Lin, Lin & Weng (2007), "A note on
Platt's probabilistic outputs for support vector machines" (Machine Learning 68), gave the
numerically careful solver used here and by libsvm (``sigmoid_train`` of svm.cpp):
Newton's method on ``(A, B)`` with a tiny ridge on the Hessian (1e-12), a backtracking
line search (Armijo, halving the step down to 1e-10), started at ``A = 0``,
``B = log((N- + 1) / (N+ + 1))``, stopped when both partial derivatives are below 1e-5 or
after 100 iterations; the losses and probabilities are evaluated in the overflow-free form
(``log(1 + exp(z))`` by ``logaddexp``, the sigmoid by ``expit``).

Several classes (one decision column per class, one-vs-rest): one sigmoid per column, and
the rows normalized to sum 1, as scikit-learn's ``CalibratedClassifierCV`` does for
one-vs-rest decision values (a row whose probabilities are all 0 becomes uniform).

Pure numpy and scipy.special; no I/O.
"""

import numpy as np
from scipy.special import expit

# libsvm's constants (svm.cpp, sigmoid_train).
MAX_ITER = 100
MIN_STEP = 1e-10
HESSIAN_RIDGE = 1e-12
GRADIENT_TOL = 1e-5


def smoothed_targets(y):
    """Platt's targets for the 0/1 labels ``y``: ``(N+ + 1) / (N+ + 2)`` for the positive
    rows, ``1 / (N- + 2)`` for the negative ones."""
    y = np.asarray(y, dtype=bool)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    return np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def negative_log_likelihood(A, B, f, t):
    """The smoothed negative log-likelihood of the sigmoid ``(A, B)`` on decision values
    ``f`` and targets ``t``: ``sum(log(1 + exp(A f + B)) - (1 - t)(A f + B))``."""
    z = A * f + B
    return float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))


def platt_fit(f, y):
    """The sigmoid ``(A, B)`` of Platt's method for decision values ``f`` (1-D) and 0/1
    labels ``y`` (1 the class whose decision value is positive), by the Newton method of
    Lin, Lin & Weng (2007). Returns two floats; always finite."""
    f = np.asarray(f, dtype=np.float64).ravel()
    y = np.asarray(y).ravel().astype(bool)
    if f.shape != y.shape:
        raise ValueError(f"{f.size} decision values for {y.size} labels")
    if f.size == 0:
        raise ValueError("Platt scaling needs at least one decision value")
    if not np.all(np.isfinite(f)):
        raise ValueError("Platt scaling needs finite decision values")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    t = smoothed_targets(y)
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    fval = negative_log_likelihood(A, B, f, t)
    for _ in range(MAX_ITER):
        z = A * f + B
        p = expit(-z)  # P(y = 1 | f)
        d2 = p * (1.0 - p)
        h11 = HESSIAN_RIDGE + float(np.dot(f * f, d2))
        h22 = HESSIAN_RIDGE + float(d2.sum())
        h21 = float(np.dot(f, d2))
        d1 = t - p
        g1 = float(np.dot(f, d1))
        g2 = float(d1.sum())
        if abs(g1) < GRADIENT_TOL and abs(g2) < GRADIENT_TOL:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= MIN_STEP:
            newA, newB = A + step * dA, B + step * dB
            newf = negative_log_likelihood(newA, newB, f, t)
            if newf < fval + 1e-4 * step * gd:
                A, B, fval = newA, newB, newf
                break
            step /= 2.0
        else:
            break  # the line search failed: libsvm stops here too
    return float(A), float(B)


def platt_predict(f, A, B):
    """``P(y = 1 | f) = 1 / (1 + exp(A f + B))``, without overflow."""
    return expit(-(A * np.asarray(f, dtype=np.float64) + B))


def fit_sigmoids(decision, codes, n_classes):
    """The sigmoids of decision values ``decision`` (``(n,)`` for two classes, positive
    for class 1; ``(n, n_classes)`` one-vs-rest otherwise) for class codes ``codes``
    (``0..n_classes``): arrays ``A``, ``B`` of one sigmoid (two classes) or one per
    class."""
    decision = np.asarray(decision, dtype=np.float64)
    codes = np.asarray(codes).ravel()
    if decision.ndim == 1:
        A, B = platt_fit(decision, codes == 1)
        return np.array([A]), np.array([B])
    if decision.shape[1] != n_classes:
        raise ValueError(
            f"{decision.shape[1]} decision columns for {n_classes} classes"
        )
    pairs = [platt_fit(decision[:, k], codes == k) for k in range(n_classes)]
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


def calibrated_proba(decision, A, B):
    """Class probabilities from decision values and the sigmoids of ``fit_sigmoids``:
    ``(n, 2)`` for two classes, else ``(n, n_classes)`` with rows normalized to sum 1
    (uniform where every sigmoid gives 0)."""
    decision = np.asarray(decision, dtype=np.float64)
    if decision.ndim == 1:
        p1 = platt_predict(decision, A[0], B[0])
        return np.column_stack([1.0 - p1, p1])
    proba = platt_predict(decision, A[np.newaxis, :], B[np.newaxis, :])
    total = proba.sum(axis=1, keepdims=True)
    uniform = np.full_like(proba, 1.0 / proba.shape[1])
    return np.divide(proba, total, out=uniform, where=total != 0)
