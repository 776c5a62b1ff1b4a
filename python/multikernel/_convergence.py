"""scikit-learn's ConvergenceWarning when a fit stops at its iteration limit.

Every learner's run ends with a status (``fit_status_``). ``"iteration limit"`` means a safety
cap ended a run that would have gone on: the model is usable but not the optimum the settings
describe. scikit-learn's estimators (SVC, LogisticRegression, MLPClassifier) warn in that case,
and a notebook that filters or records warnings expects the same class here.
"""

import os
import sys
import warnings

from sklearn.exceptions import ConvergenceWarning

#: The status the core reports when a learner stopped at ``max_iter`` (``RunStatus::describe``).
ITERATION_LIMIT = "iteration limit"


#: What lets each learner with an iteration cap go further, by its Python parameters.
ADVICE = {
    "mtl": "raise max_iter, or eps (the cutting plane's tolerance)",
    "lbfgs": "raise max_iter",
    "simplemkl": "raise max_iter, or tol",
    "gauss-seidel": "raise max_iter, or tol",
    "mirror-descent": "raise max_iter",
    "ucd": "raise max_iter",
    "poly": "raise max_iter",
}


def warn_if_unconverged(estimator, info):
    """Warns with ``ConvergenceWarning`` when the run in ``info`` (the core's dict: ``status``,
    ``steps``, ``unit``, ``learner``) stopped at its iteration limit."""
    if info["status"] != ITERATION_LIMIT:
        return
    steps, unit, learner = int(info["steps"]), info["unit"], info["learner"]
    advice = ADVICE.get(learner)
    warnings.warn(
        f"{type(estimator).__name__} ({learner}) stopped at its iteration limit after "
        f"{steps} {unit}{'' if steps == 1 else 's'} without meeting its stopping rule; the "
        f"model is usable (fit_status_ is {ITERATION_LIMIT!r})."
        + (f" To converge: {advice}." if advice else ""),
        ConvergenceWarning,
        stacklevel=_caller_level(),
    )


def _caller_level():
    """The ``stacklevel`` of the first frame outside this package (the user's ``fit`` call,
    or scikit-learn's when it fits a clone), whatever wrappers lie between."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
