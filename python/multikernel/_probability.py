"""``MKLClassifier(probability=True)``: Platt-scaled class probabilities, fitted as
libsvm fits them for ``SVC(probability=True)``.

After the normal fit, 5-fold stratified cross-validation (seeded by ``random_state``;
fewer folds when a class has fewer than 5 rows, at least 2) refits the model the fit chose
on each training part, without a new selection: the learner fitted (``learner_``), its C
(``C_``), the kernel the selection chose when it chose a single kernel (its SPEC string,
``selection_["setting"]``), lp-MKL's p and the online learner's eta0 as the fit chose them
(``settings_``; the uniform sum, p = inf, at p = 1e6), every other parameter as given.
The rows path refits on the rows of each training part (the kernels' widths and the
standardization then come from those rows, as in the selection's own folds); kernel
functions and ``kernels="precomputed"`` refit on the sub-blocks ``K[train][:, train]`` of
the same matrices (the functions are called once, on all the rows). The out-of-fold
decision values then fit Platt's sigmoid (``_calibration``): one for two classes, one per
class for more (one-vs-rest, rows normalized). The refits run with ``verbose=0`` through
the same ``fit`` (so Ctrl-C stops them); a failed or interrupted calibration leaves the
estimator as it was before ``fit``.
"""

import functools
import inspect

import numpy as np
from scipy.sparse import issparse
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import column_or_1d

from ._calibration import fit_sigmoids
from ._inputs import _function_names, _gram, _kernel_matrices

N_FOLDS = 5


# The uniform sum (lp-MKL at p = inf) refits at this p: the estimators take a finite p,
# and lp-MKL's weights at p = 1e6 are those of the uniform sum to 1e-5 (0.999998 on sonar).
UNIFORM_P = 1e6


def _p_value(text):
    """lp-MKL's p from its text in ``settings_`` (``4/3``, ``2``, ``inf``, ``1.5``)."""
    if text == "4/3":
        return 4.0 / 3.0
    if text == "inf":
        return UNIFORM_P
    return float(text)


def chosen_params(est):
    """The parameters that refit, without a selection, the model the fitted ``est``
    chose (module documentation)."""
    params = {"learner": est.learner_, "C": float(est.C_), "verbose": 0, "probability": False}
    selection = est.selection_ or {}
    chosen = selection.get("chosen_candidate")
    candidates = selection.get("candidates") or []
    family = candidates[chosen]["family"] if chosen is not None and candidates else None
    if family == "single" and selection.get("setting") and not est._on_matrices():
        params["kernels"] = selection["setting"]
    p = est.settings_.get("p")
    if est.learner_ == "lp-mkl" and est.p is None and p is not None:
        params["p"] = _p_value(p)
    eta0 = est.settings_.get("eta0")
    if est.learner_ == "online" and est.eta0 is None and eta0 is not None:
        params["eta0"] = float(eta0)
    return params


def _folds(codes, random_state):
    counts = np.bincount(codes)
    k = min(N_FOLDS, int(counts.min()))
    if k < 2:
        raise ValueError(
            "probability=True calibrates on cross-validated decision values: every class "
            f"needs at least 2 rows; the smallest has {int(counts.min())}"
        )
    rng = check_random_state(random_state)
    return StratifiedKFold(k, shuffle=True, random_state=rng).split(
        np.zeros((len(codes), 1)), codes
    )


def out_of_fold_decision(est, X, y, fit_params):
    """The out-of-fold decision values of the model the fitted ``est`` chose (``(n,)``
    or ``(n, n_classes)``), and the class codes of ``y``."""
    y = column_or_1d(y)
    _, codes = np.unique(y, return_inverse=True)
    base = clone(est).set_params(**chosen_params(est))
    functions = est._functions()
    mats = None
    if est._precomputed():
        mats = _kernel_matrices(X)
    elif functions is not None:
        n = len(codes)
        mats = [
            _gram(f, m, name, X, X, (n, n), "the training Gram matrix f(X, X)")
            for m, (f, name) in enumerate(zip(functions, _function_names(functions)))
        ]
    if mats is not None:
        base.set_params(kernels="precomputed")
    elif not (hasattr(X, "iloc") or issparse(X)):
        X = np.asarray(X)  # rows as a list or another array-like: indexed as an array
    weights = fit_params.get("sample_weight")
    if weights is not None and not np.isscalar(weights):
        weights = np.asarray(weights)  # a list or another array-like: indexed as an array
    decision = None
    for train, test in _folds(codes, est.random_state):
        part = dict(fit_params)
        if weights is not None:
            part["sample_weight"] = _safe_indexing(weights, train)
        fold = clone(base)
        if mats is None:
            fold.fit(_safe_indexing(X, train), _safe_indexing(y, train), **part)
            f = fold.decision_function(_safe_indexing(X, test))
        else:
            fold.fit([K[np.ix_(train, train)] for K in mats], codes[train], **part)
            f = fold.decision_function([K[np.ix_(test, train)] for K in mats])
        if decision is None:
            decision = np.zeros((len(codes),) + f.shape[1:])
        decision[test] = f
    return decision, codes


def calibrated(fit):
    """``MKLClassifier.fit`` with Platt's calibration after it when ``probability=True``
    (``probA_``, ``probB_``); the estimator is left as it was when it fails."""

    signature = inspect.signature(fit)

    @functools.wraps(fit)
    def wrapper(self, X, y, *args, **fit_params):
        if args:  # sample_weight given by position: by name for the refits
            bound = signature.bind(self, X, y, *args, **fit_params).arguments
            fit_params = {k: v for k, v in list(bound.items())[3:]}
        before = dict(self.__dict__)
        fit(self, X, y, **fit_params)
        try:
            if self.probability:
                decision, codes = out_of_fold_decision(self, X, y, fit_params)
                self.probA_, self.probB_ = fit_sigmoids(decision, codes, len(self.classes_))
            else:
                self.__dict__.pop("probA_", None)
                self.__dict__.pop("probB_", None)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        return self

    return wrapper


def init_with(base_init, owner, **extra):
    """A copy of ``base_init`` (an estimator's ``__init__``) with the keyword-only
    parameters ``extra`` (name: default) added at the end, each stored on ``self`` under
    its name, for the class named ``owner``: scikit-learn reads the parameters from the
    signature, so the added ones clone, pickle and print as the others; an unknown
    keyword's error names ``owner``."""
    signature = inspect.signature(base_init)
    params = list(signature.parameters.values())[1:]  # without self
    defaults = {p.name: p.default for p in params}
    defaults.update(extra)
    head, keyword_only = [], []
    for p in params:
        (keyword_only if p.kind is p.KEYWORD_ONLY else head).append(p.name)
    keyword_only += list(extra)
    args = [f"{n}=_defaults[{n!r}]" for n in head]
    if keyword_only:
        args += ["*"] + [f"{n}=_defaults[{n!r}]" for n in keyword_only]
    call = ", ".join(f"{n}={n}" for n in head + [k for k in keyword_only if k not in extra])
    stores = "".join(f"    self.{n} = {n}\n" for n in extra)
    source = f"def __init__(self, {', '.join(args)}):\n    _base(self, {call})\n{stores}"
    namespace = {"_defaults": defaults, "_base": base_init}
    exec(source, namespace)  # as dataclasses writes its __init__
    init = namespace["__init__"]
    name = f"{owner}.__init__"
    if hasattr(init.__code__, "co_qualname"):  # Python 3.11+: the name errors print
        init.__code__ = init.__code__.replace(co_qualname=name)
    init.__qualname__ = name
    init.__doc__ = base_init.__doc__
    init.__module__ = base_init.__module__
    return init
