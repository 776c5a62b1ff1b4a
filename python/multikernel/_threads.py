"""``n_jobs``: the threads a fit or a prediction of an estimator uses.

scikit-learn's meaning: ``None`` the default (the library's thread pool, one thread per core
unless ``RAYON_NUM_THREADS`` says otherwise), ``-1`` every core, ``-2`` all but one, a
positive number that many threads. The Rust core runs the calls made inside
``with _core.Threads(n_jobs):`` on a pool of that many threads (``crates/multikernel-py/src/
threads.rs``). The library computes the same bits on any number of threads, so ``n_jobs``
changes how long a call takes, never the model or the predictions.
"""

import functools
import numbers

from sklearn.utils._param_validation import validate_parameter_constraints

from . import _core

# The estimators' constraint on ``n_jobs`` (0 is refused by the core, with what is
# accepted).
N_JOBS_CONSTRAINT = [numbers.Integral, None]


def threads(n_jobs, caller="n_jobs"):
    """The context manager that runs the core's calls on ``n_jobs`` threads (scikit-learn's
    InvalidParameterError for a value that is not an integer or None, naming ``caller``)."""
    validate_parameter_constraints(
        {"n_jobs": N_JOBS_CONSTRAINT}, {"n_jobs": n_jobs}, caller_name=caller
    )
    return _core.Threads(None if n_jobs is None else int(n_jobs))


def uses_n_jobs(method):
    """Runs the estimator method ``method`` on the estimator's ``n_jobs`` threads."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with threads(getattr(self, "n_jobs", None), type(self).__name__):
            return method(self, *args, **kwargs)

    return run
