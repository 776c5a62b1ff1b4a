"""scikit-learn estimators over the Rust core: ``MKLClassifier`` and ``MKLRegressor``.

Both learn a predictor together with the weights of many kernels (multiple kernel
learning). The learner is a parameter:

- ``"online"``: online proximal MKL (SPOM; Martins et al. 2011, Alg. 1), hinge, logistic
  or squared loss, sparse (squared l2,1) MKL by default;
- ``"lp-mkl"``: lp-norm MKL with the squared loss (Kloft et al. 2011);
- ``"gomp"``: MKL-GOMP, greedy group orthogonal matching pursuit (Sindhwani & Lozano 2012);
- ``"mirror-descent"``, ``"ucd"``, ``"poly"``: polynomial product-kernel MKL
  (Afkanpour et al. 2013), by randomized mirror descent, uniform coordinate descent, or
  the faster exact solver that fits;
- ``"simplemkl"``, ``"gauss-seidel"``: wrapper MKL, kernel weights on the simplex around an
  exact SVM (SMO: C-SVC, one-vs-rest, epsilon-SVR) by SimpleMKL's reduced gradient
  (Rakotomamonjy et al. 2008) or by alternating closed-form weights (Kloft et al. 2011);
- ``"auto"`` (default): chosen with C by the library's built-in selection (lp-MKL up to
  3,000 rows when its matrices fit the memory limit, the online learner above).

Kernels are the library's SPEC strings (``"rbf"``, ``"poly:degree=2"``,
``"perfeature:linear"``, ``"rbf:scale=0.25"``; ``multikernel.parse_kernel`` checks one),
or ``"auto"`` for the default dictionary (``multikernel.dictionary(n_features)``).

With ``kernels="precomputed"`` the estimators take kernel matrices in place of X, as MKLpy
does: ``fit(KL, y)`` with a list (or a 3-D array) of training matrices ``K_m(X, X)``
(``n x n``), ``predict(KL_test)`` with the test-by-train matrices ``K_m(X_test, X)``
(``n_test x n``); one 2-D Gram matrix is one kernel, as ``SVC(kernel="precomputed")``
takes it (and cross-validation cuts it as SVC's: ``X[train][:, train]``). The learner is
lp-MKL (``learner="auto"`` or ``"lp-mkl"``), or ``"simplemkl"`` / ``"gauss-seidel"``:
wrapper MKL around the exact SVM on the given matrices, the same model as those learners
on rows when the matrices are the library's kernels (MKLpy's ``EasyMKL``-style lists work
with SimpleMKL as well).

Kernel functions, as SVC's callable kernels: ``kernels=f`` or a list of functions, each
``f(X, Y)`` returning the ``len(X) x len(Y)`` Gram matrix. ``fit`` computes ``f(X, X)``
and trains on the matrices as ``"precomputed"`` does (same learners); it keeps ``X`` as
``X_fit_`` and ``predict`` computes ``f(X_test, X_fit_)``. ``X`` reaches the functions as
given (strings, graphs, ...). A list mixing SPEC strings and functions is refused.

``n_jobs``: the threads of the fit and the predictions (scikit-learn's meaning: None the
default pool, ``RAYON_NUM_THREADS`` or every core; -1 every core; a positive count). The
model and the predictions are the same whatever ``n_jobs``.

With ``C=None`` (default) the built-in selection chooses C (and lp-MKL's p, the online
learner's eta0, and the learner when ``learner="auto"``) by seeded 5-fold
cross-validation, as ``multikernel train`` does without ``--C``; the grid it scored is in
``selection_``. A C given with ``learner="auto"`` runs the same selection on that one C
(the learner the default would fit at that C; ``GridSearchCV`` over ``C`` then tunes
the default's learner); a learner named with C trains it with no selection.

``partial_fit`` trains the online learner chunk by chunk (tables that do not fit in memory,
or arrive over time), as scikit-learn's ``SGDClassifier.partial_fit`` does: one pass, one
round per row in the order given, over each chunk. It needs the online learner
(``learner="online"`` or ``"auto"``, which ``partial_fit`` resolves to online) and kernels
with an explicit map (``"linear"``, ``"rbf:approx=rff,dim=1024"``, ...; exact kernels are
refused with ValueError); ``kernels="auto"`` means ``INCREMENTAL_KERNELS`` there. The
features' standardization, the kernels' widths (median heuristic) and the regression
targets' scale come from the first chunk. ``C`` (1 when None: no selection) gives
``lambda = 1 / (C n_rows)`` with ``n_rows`` the rows the caller will stream per pass
(``partial_fit(..., n_rows=...)`` on the first call; the first chunk's rows otherwise). The
state of the fit is ``incremental_`` (``multikernel._core.IncrementalFit``), so the
estimator pickles mid-stream and goes on after unpickling; ``fit`` discards it.
``multikernel.dask.fit_dask`` trains on Dask shards by iterative parameter mixing.
"""

import os
import json
import numbers
import sys
import time
import types

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from . import _core
from ._threads import N_JOBS_CONSTRAINT, uses_n_jobs
from ._convergence import warn_if_unconverged
from ._calibration import calibrated_proba
from ._probability import calibrated, init_with
from . import _sparse
from ._sparse import sparse_rows
from ._inputs import _function_names, _gram, _kernel_functions, _kernel_matrices, _seed

LEARNERS = (
    "auto",
    "online",
    "lp-mkl",
    "gomp",
    "mirror-descent",
    "ucd",
    "poly",
    "simplemkl",
    "gauss-seidel",
)

# The kernels of partial_fit (and fit_dask) with kernels="auto": the library's streaming
# dictionary (random Fourier features of the Gaussian kernel at the median-heuristic width
# times 1, 4 and 1/4, on the standardized first chunk, 1,024 features each). Exact kernels
# need all the training rows at prediction time, which an incremental fit does not keep.
INCREMENTAL_KERNELS = tuple(_core.streaming_kernels())

# The learner registry of the library (each setting's name, learners, domain, default): the
# keyword settings below, their constraints and the learners that take them come from it.
_SETTINGS = tuple(s for s in _core.learner_settings() if s["python"])


def _constraint(setting):
    """The scikit-learn constraint of a registry setting (``None`` always allowed: the
    learner's default)."""
    domain = setting["domain"]
    if domain == "positive_real":
        c = Interval(numbers.Real, 0, None, closed="neither")
    elif domain == "non_negative_real":
        c = Interval(numbers.Real, 0, None, closed="left")
    elif domain == "norm":
        c = Interval(numbers.Real, 1, None, closed="left")
    elif domain == "count":
        c = Interval(numbers.Integral, 1, None, closed="left")
    elif domain == "choice":
        c = StrOptions(set(setting["choices"]))
    else:
        c = str
    return [c, None]


def _setting_text(value):
    """A setting's value as the text the library parses (the command line's): ``repr`` of
    a real number (exact: it reads back to the same float), an integer's digits, ``on`` /
    ``off`` for a switch, a string as it is."""
    if isinstance(value, (bool, np.bool_)):
        return "on" if value else "off"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def _given_settings(estimator, settings):
    """The registry settings ``settings`` given on ``estimator`` (not None) as the
    ``(name, text)`` pairs the core's doors take: the doors name no learner setting, so a
    setting added to the registry needs no edit in them."""
    given = ((s["name"], getattr(estimator, s["name"])) for s in settings)
    return [(name, _setting_text(v)) for name, v in given if v is not None]


def _owners(name):
    """The learners (registry names) that take the setting ``name``."""
    return next(s["learners"] for s in _SETTINGS if s["name"] == name)


# Settings of learners other than the online one (refused by partial_fit).
_NOT_ONLINE = tuple(s["name"] for s in _SETTINGS if "online" not in s["learners"])

# A selection that took at least this many seconds says so in one line on stderr even at
# verbose=0 (what was chosen, and how to see progress or skip it); a shorter one is silent.
LONG_SELECTION_SECONDS = 10.0

# The learners of kernels="precomputed" ("auto" is lp-MKL there).
PRECOMPUTED_LEARNERS = ("auto", "lp-mkl", "simplemkl", "gauss-seidel")


def _template_text(templates):
    """A template file's text and its name in errors: ``templates`` is a path (read), the
    template text itself, or None (the learner's default templates: ``(None, None)``)."""
    if templates is None:
        return None, None
    if os.path.isfile(templates):
        with open(templates, encoding="utf-8") as f:
            return f.read(), os.fspath(templates)
    if isinstance(templates, os.PathLike):
        raise ValueError(f"templates: no file {os.fspath(templates)!r}")
    if _looks_like_a_path(templates):
        raise ValueError(
            f"templates: no file {templates!r} (give a template file's path, or the "
            "template text itself, one template a line)"
        )
    return templates, "<templates>"


def _looks_like_a_path(text):
    """Whether template text is more likely a file name that is not there: one line, no
    ``%x`` macro, and a folder separator or a file suffix."""
    if "\n" in text or "%x" in text:
        return False
    one = text.strip()
    return "/" in one or os.sep in one or one.endswith((".templates", ".template", ".txt"))


def _validate(est, X, *args, **kwargs):
    """scikit-learn's ``validate_data``, with a column that is not numeric named: a
    categorical column is the usual cause, and the message says what to do."""
    try:
        return validate_data(est, X, *args, **kwargs)
    except ValueError as e:
        if "could not convert" not in str(e):
            raise
        where = _non_numeric_column(X)
        if where is None:
            raise
        column, value = where
        raise ValueError(
            f"X: column {column} holds {value!r}, not a number; encode categorical "
            "columns first (scikit-learn's OneHotEncoder or OrdinalEncoder, in a Pipeline)"
        ) from e


def _non_numeric_column(X):
    """The first column of ``X`` (its name for a DataFrame, else its index) with a value
    that is not a number, and that value; None when none is found."""
    columns = getattr(X, "columns", None)
    if columns is not None:
        for name in columns:
            for v in X[name]:
                try:
                    float(v)
                except (TypeError, ValueError):
                    return repr(str(name)), v
        return None
    try:
        rows = list(X)
    except TypeError:
        return None
    for row in rows:
        try:
            cells = list(row)
        except TypeError:
            return None
        for j, v in enumerate(cells):
            try:
                float(v)
            except (TypeError, ValueError):
                return j, v
    return None


def _kernel_list(kernels):
    """SPEC strings for the core: ``None`` for the default dictionary."""
    if isinstance(kernels, str):
        return None if kernels == "auto" else [kernels]
    kernels = list(kernels)
    if not all(isinstance(k, str) for k in kernels):
        raise TypeError(
            "kernels: SPEC strings such as 'rbf' or 'poly:degree=2', 'auto', "
            "'precomputed', or kernel functions f(X, Y) (a callable or a list of them)"
        )
    return kernels


def _class_codes(classes, y):
    """Codes of labels ``y`` in the sorted ``classes`` (float64); ValueError on a label
    that is not one of them."""
    y = np.asarray(y)
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, len(classes) - 1)
    bad = classes[idx] != y
    if np.any(bad):
        unknown = np.unique(y[bad])
        raise ValueError(
            f"y has labels not in classes: {unknown[:10].tolist()} (classes = "
            f"{classes.tolist()}; give all of them with classes= on the first call)"
        )
    return idx.astype(np.float64)


def _aligned(a):
    """``a``, copied when its buffer is not aligned (arrays deserialized from a byte
    stream, as Dask's, may not be; the core only borrows aligned ones)."""
    return a if a.flags.aligned else np.array(a, order="C", copy=True)


def _can_partial_fit(est):
    kernels = est.kernels
    if isinstance(kernels, str):
        return est.learner in ("auto", "online") and kernels != "precomputed"
    functions = callable(kernels) or any(callable(k) for k in kernels)
    return est.learner in ("auto", "online") and not functions


_KINDS = {
    ("single", "squared"): "single kernel",
    ("single", "hinge"): "single kernel, hinge loss",
    ("uniform", "squared"): "uniform sum",
    ("learned", "squared"): "learned combination",
}


def _cv_results(selection):
    """``cv_results_`` (the estimators' docs) from ``selection_``'s candidates."""
    cands = selection["candidates"]
    chosen = selection.get("chosen_candidate")
    minimize = selection.get("metric") == "mse"
    means = [c["mean"] for c in cands]
    full = max((len(c["folds"]) for c in cands), default=0)
    scored = [i for i, c in enumerate(cands) if c["mean"] is not None and len(c["folds"]) == full]
    order = sorted(scored, key=lambda i: means[i] if minimize else -means[i])
    rank = [len(cands)] * len(cands)
    for r, i in enumerate(order):
        # Equal means share the better rank, as scikit-learn's ranks do.
        rank[i] = r + 1 if r == 0 or means[i] != means[order[r - 1]] else rank[order[r - 1]]

    def status(i, c):
        if i == chosen:
            return "chosen: " + (selection.get("why") or "")
        return c["stopped"] or "scored"

    return {
        "candidate": [c["name"] for c in cands],
        "kind": [_KINDS.get((c["family"], c["loss"]), c["family"]) for c in cands],
        "param_C": [c["C"] for c in cands],
        "mean_test_score": [c["mean"] for c in cands],
        "std_test_score": [float(np.std(c["folds"])) if c["folds"] else None for c in cands],
        "std_error": [c["se"] for c in cands],
        "n_folds": [len(c["folds"]) for c in cands],
        "fold_scores": [list(c["folds"]) for c in cands],
        "n_fits": [c["fits"] for c in cands],
        "rank_test_score": rank,
        "chosen": [i == chosen for i in range(len(cands))],
        "status": [status(i, c) for i, c in enumerate(cands)],
    }

def _refuse_weights_on_matrices(sample_weight, class_weight):
    """Row weights train on rows: kernel matrices (``kernels="precomputed"``, kernel
    functions, scipy.sparse X) do not take them."""
    if sample_weight is not None or class_weight is not None:
        raise ValueError(
            "sample_weight and class_weight train on rows (lp-mkl, online, simplemkl, "
            "gauss-seidel); kernel matrices (kernels='precomputed', kernel functions, "
            "scipy.sparse X) do not take them yet"
        )


class _MKLBase(BaseEstimator):
    n_jobs = None  # what pickles from before n_jobs read

    _parameter_constraints = {
        "learner": [StrOptions(set(LEARNERS))],
        "kernels": [str, list, tuple, callable],
        "C": [Interval(numbers.Real, 0, None, closed="neither"), None],
        **{s["name"]: _constraint(s) for s in _SETTINGS},
        "fit_intercept": ["boolean"],
        "standardize": ["boolean"],
        "memory_limit_gb": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self,
        learner="auto",
        kernels="auto",
        C=None,
        *,
        p=None,
        loss=None,
        regularizer=None,
        eta0=None,
        epochs=None,
        max_kernels=None,
        degree=None,
        max_iter=None,
        epsilon=None,
        tol=None,
        svm_tol=None,
        fit_intercept=True,
        standardize=True,
        memory_limit_gb=8.0,
        random_state=None,
        verbose=0,
        n_jobs=None,
    ):
        self.learner = learner
        self.kernels = kernels
        self.C = C
        self.p = p
        self.loss = loss
        self.regularizer = regularizer
        self.eta0 = eta0
        self.epochs = epochs
        self.max_kernels = max_kernels
        self.degree = degree
        self.max_iter = max_iter
        self.epsilon = epsilon
        self.tol = tol
        self.svm_tol = svm_tol
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.memory_limit_gb = memory_limit_gb
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def __init_subclass__(cls, **kwargs):
        """Each estimator gets its own copy of ``__init__`` (the same parameters), so that an
        unknown keyword's error names it (``MKLClassifier.__init__() got an unexpected
        keyword argument 'foo'``), not this private base."""
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            return
        base = _MKLBase.__init__
        name = f"{cls.__name__}.__init__"
        code = base.__code__
        if hasattr(code, "co_qualname"):  # Python 3.11+: the name errors print
            code = code.replace(co_qualname=name)
        init = types.FunctionType(
            code, base.__globals__, "__init__", base.__defaults__, base.__closure__
        )
        init.__kwdefaults__ = base.__kwdefaults__
        init.__qualname__ = name
        init.__doc__ = base.__doc__
        init.__module__ = base.__module__
        cls.__init__ = init

    def _core_fit(self, X, y, n_classes, class_names=None, sample_weight=None):
        """Trains the core model; sets the fitted attributes only once it has returned
        (an interrupted or failed fit leaves the estimator as it was). ``sample_weight``:
        the row weights (``_row_weights``) or None."""
        if X.shape[0] < 2:
            raise ValueError(
                f"n_samples = {X.shape[0]}: training needs at least two rows"
            )
        names = getattr(self, "feature_names_in_", None)
        model, info = _core.fit(
            X,
            y,
            n_classes=n_classes,
            learner=self.learner,
            kernels=_kernel_list(self.kernels),
            c=None if self.C is None else float(self.C),
            settings=_given_settings(self, _SETTINGS),
            bias=bool(self.fit_intercept),
            standardize=bool(self.standardize),
            seed=_seed(self.random_state),
            memory_limit_gb=float(self.memory_limit_gb),
            verbose=bool(self.verbose),
            feature_names=None if names is None else [str(n) for n in names],
            class_names=class_names,
            sample_weight=sample_weight,
        )
        for stale in ("X_fit_", "n_kernels_in_"):  # of an earlier fit on kernel matrices
            self.__dict__.pop(stale, None)
        return self._set_fitted(model, info)

    def _row_weights(self, X, sample_weight, codes=None, classes=None):
        """The row weights of a fit on rows ``X`` (None: unweighted): ``sample_weight``
        (validated as scikit-learn's: one finite weight >= 0 per row, at least one
        positive) times, for a classifier, its ``class_weight`` of each row's class (as
        SVC: ``"balanced"`` is ``n_samples / (n_classes * bincount(y))``)."""
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, copy=True)
        if np.any(weights < 0):
            raise ValueError("sample_weight: negative weights are not allowed")
        if class_weight is not None:
            per_class = compute_class_weight(
                class_weight, classes=classes, y=classes[codes]
            )
            weights *= per_class[codes]
        if not np.any(weights > 0):
            raise ValueError(
                "sample_weight (times class_weight): at least one weight must be positive"
            )
        if codes is not None and len(np.unique(codes[weights > 0])) < 2:
            raise ValueError(
                "the rows with a positive weight belong to one class: a classifier needs "
                "at least 2 classes"
            )
        return np.ascontiguousarray(weights, dtype=np.float64)

    def _reset_incremental(self):
        """``fit`` starts over: the state of ``partial_fit`` goes."""
        self.__dict__.pop("incremental_", None)

    def _incremental_kernels(self):
        kernels = _kernel_list(self.kernels)
        return list(INCREMENTAL_KERNELS) if kernels is None else kernels

    def _incremental_start(self, X, y, n_classes, class_names, n_rows):
        """Sets the incremental fit up on the first chunk (validated ``X``, coded ``y``)
        without training on it."""
        if self.learner not in ("auto", "online"):
            raise ValueError(
                f"partial_fit trains the online learner; learner={self.learner!r}"
            )
        for name in _NOT_ONLINE:
            if getattr(self, name) is not None:
                raise ValueError(
                    f"{name} is not a setting of the online learner (partial_fit)"
                )
        if n_rows is not None and (
            not isinstance(n_rows, numbers.Integral) or n_rows < 1
        ):
            raise ValueError(f"n_rows = {n_rows!r}: a positive number of rows")
        names = getattr(self, "feature_names_in_", None)
        return _core.IncrementalFit.start(
            X,
            y,
            kernels=self._incremental_kernels(),
            n_classes=n_classes,
            class_names=class_names,
            c=1.0 if self.C is None else float(self.C),
            n_rows=None if n_rows is None else int(n_rows),
            settings=_given_settings(self, _SETTINGS),
            bias=bool(self.fit_intercept),
            standardize=bool(self.standardize),
            seed=_seed(self.random_state),
            feature_names=None if names is None else [str(n) for n in names],
        )

    def _incremental_fitted(self, fit, seconds):
        """The fitted attributes from the incremental fit ``fit``."""
        self.incremental_ = fit
        self._incremental_seconds = getattr(self, "_incremental_seconds", 0.0) + seconds
        info = {
            "learner": "online",
            "selection": None,
            "steps": fit.chunks_seen,
            "status": f"{fit.rows_seen} rows in {fit.chunks_seen} chunks",
            "notes": [],
            "seconds": self._incremental_seconds,
        }
        self._set_fitted(fit.model(), info)
        self.C_ = 1.0 if self.C is None else float(self.C)
        return self

    def _partial_fit_rows(self, X, y, first, start):
        """The first call sets the fit up (``start()``); every call trains one pass over
        the chunk, then the fitted attributes are set. On an error the estimator is left
        as it was."""
        t0 = time.perf_counter()
        fit = start() if first else self.incremental_
        if first:
            self.__dict__.pop("_incremental_seconds", None)
        if X.shape[0] > 0:
            fit.partial_fit(X, y)
        return self._incremental_fitted(fit, time.perf_counter() - t0)

    def _set_fitted(self, model, info):
        summary = json.loads(model.summary_json())
        pairs = model.kernel_weights()
        names = [name for name, _ in pairs]
        weights = np.array([w for _, w in pairs], dtype=float)
        self.model_ = model
        self.learner_ = info["learner"]
        selection = info["selection"]
        self.selection_ = selection
        if selection and selection.get("candidates"):
            self.cv_results_ = _cv_results(selection)
        else:
            self.__dict__.pop("cv_results_", None)
        self.C_ = selection["C"] if selection and selection["C"] is not None else (
            1.0 if self.C is None else float(self.C)
        )
        self.kernels_ = names
        self.kernel_weights_ = weights
        self.settings_ = {name: value for name, value in summary["settings"]}
        self.n_iter_ = int(info["steps"])
        self.fit_status_ = info["status"]
        warn_if_unconverged(self, info)
        self.fit_notes_ = list(info["notes"])
        self.fit_seconds_ = float(info["seconds"])
        if self.verbose:
            if selection:
                print(f"[multikernel] {selection['headline']}", file=sys.stderr)
            for note in info["notes"]:
                print(f"[multikernel] note: {note}", file=sys.stderr)
        elif selection and selection.get("seconds", 0.0) >= LONG_SELECTION_SECONDS:
            print(
                f"[multikernel] the selection took {selection['seconds']:.0f} s "
                f"(verbose=1 shows its progress; a learner and C given skip it): "
                f"{selection['headline']}",
                file=sys.stderr,
            )
        return self

    def _rows(self, X):
        check_is_fitted(self, "model_")
        X = _validate(self, X, reset=False, dtype=np.float64, order="C")
        # Buffers deserialized from a byte stream (Dask's partitions) may be unaligned.
        return _aligned(X)

    def _precomputed(self):
        return isinstance(self.kernels, str) and self.kernels == "precomputed"

    def _on_matrices(self):
        """Whether the fit trains on kernel matrices: given (``kernels="precomputed"``)
        or computed by the caller's kernel functions (or, for scipy.sparse X, by the SPEC
        kernels' functions: ``multikernel._sparse``)."""
        return self._precomputed() or self._functions() is not None

    def _functions(self):
        """The kernel functions of the fit: the caller's, else those of scipy.sparse X's
        SPEC kernels (``multikernel._sparse``), else None."""
        functions = _kernel_functions(self.kernels)
        return functions if functions is not None else _sparse.kernel_functions(self)

    def _fit_matrices(self, X, y, n_classes, class_names=None):
        """lp-MKL, SimpleMKL or Gauss-Seidel on kernel matrices: the caller's
        (``kernels="precomputed"``, the MKLpy path), or the Gram matrices ``f(X, X)`` of
        the kernel functions ``kernels`` (then ``X`` is kept, as ``X_fit_``, for
        ``f(X_test, X_fit_)`` at prediction)."""
        functions = self._functions()
        what = "kernels='precomputed'" if functions is None else "kernel functions"
        if self.learner not in PRECOMPUTED_LEARNERS:
            raise ValueError(
                f"{what} train lp-mkl, simplemkl or gauss-seidel (on kernel matrices); "
                f"learner={self.learner!r} computes its own kernels"
            )
        wrapper = self.learner in ("simplemkl", "gauss-seidel")
        learner = self.learner if wrapper else "lp-mkl"
        for name in (s["name"] for s in _SETTINGS):
            if learner not in _owners(name) and getattr(self, name) is not None:
                raise ValueError(
                    f"{name} is not a setting of {learner}, the learner of {what} here"
                )
        if functions is None:
            mats, names = _kernel_matrices(X), None
            n = mats[0].shape[0]
        else:
            check_consistent_length(X, y)
            n = _num_samples(X)
            names = _function_names(functions)
            mats = [
                _gram(f, m, name, X, X, (n, n), "the training Gram matrix f(X, X)")
                for m, (f, name) in enumerate(zip(functions, names))
            ]
        if len(y) != n:
            raise ValueError(f"y has {len(y)} values for kernel matrices of {n} rows")
        if n < 2:
            raise ValueError(f"n_samples = {n}: training needs at least two rows")
        model, info = _core.fit_precomputed(
            mats,
            y,
            n_classes=n_classes,
            class_names=class_names,
            kernel_names=names,
            learner=learner,
            c=None if self.C is None else float(self.C),
            settings=_given_settings(self, _SETTINGS),
            bias=bool(self.fit_intercept),
            seed=_seed(self.random_state),
            memory_limit_gb=float(self.memory_limit_gb),
            verbose=bool(self.verbose),
        )
        for stale in ("feature_names_in_", "n_features_in_", "X_fit_"):
            self.__dict__.pop(stale, None)
        if functions is None:
            self.n_features_in_ = n  # as SVC(kernel="precomputed"): the training rows
        else:
            self.X_fit_ = X  # as SVC with a callable kernel: f(X_test, X_fit_)
        self.n_kernels_in_ = len(mats)
        return self._set_fitted(model, info)

    def _kernels_for_prediction(self, X):
        """The test-by-train kernel matrices of ``X``: given (``kernels="precomputed"``),
        or ``f(X, X_fit_)`` for each kernel function."""
        check_is_fitted(self, "model_")
        functions = self._functions()
        if functions is None:
            return _kernel_matrices(
                X,
                n_train=self.n_features_in_,
                n_kernels=getattr(self, "n_kernels_in_", None),
            )
        trained = getattr(self, "n_kernels_in_", None) if hasattr(self, "X_fit_") else None
        if len(functions) != trained:
            raise ValueError(
                f"kernels: {len(functions)} kernel functions, but the model was trained on "
                + ("rows" if trained is None else f"{trained}")
                + " (fit again after changing kernels)"
            )
        shape = (_num_samples(X), _num_samples(self.X_fit_))
        return [
            _gram(f, m, name, X, self.X_fit_, shape, "f(X, X_fit_)")
            for m, (f, name) in enumerate(zip(functions, _function_names(functions)))
        ]

    @property
    def summary_(self):
        """The fitted model's summary, as ``multikernel inspect`` prints it."""
        check_is_fitted(self, "model_")
        return str(self.model_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = _sparse.accepts(self)
        # As SVC(kernel="precomputed"): cross-validation cuts a Gram matrix X[train][:,
        # train] (and X[test][:, train]), so GridSearchCV works on one 2-D Gram matrix.
        tags.input_tags.pairwise = self._precomputed()
        return tags


class MKLClassifier(ClassifierMixin, _MKLBase):
    """Multiple kernel learning classifier (binary or multiclass, labels of any type).

    Parameters
    ----------
    learner : {"auto", "online", "lp-mkl", "gomp", "mirror-descent", "ucd", "poly", \
"simplemkl", "gauss-seidel"}
        The MKL learner (module documentation). ``"auto"`` lets the built-in selection
        choose it.
    kernels : "auto", "precomputed", str, list of str, callable or list of callables
        Kernel SPEC strings, ``"auto"`` for the default dictionary, or ``"precomputed"``:
        X is then one Gram matrix or a list (or 3-D array) of kernel matrices (module
        documentation), and the learner lp-MKL (``"auto"``, ``"lp-mkl"``),
        ``"simplemkl"`` or ``"gauss-seidel"``. Kernel functions ``f(X, Y)`` (a callable or
        a list of them): trained as ``"precomputed"`` on ``f(X, X)``.
    C : float or None
        Weight of the sum of the losses against ``1/2 ||f||^2`` (the same meaning for every
        learner). ``None``: chosen by 5-fold cross-validation (``selection_``). Given with
        ``learner="auto"``: the selection still chooses the learner (and kernels, p,
        eta0) at this one C, so a search over C tunes the default's learner.
    p : float >= 1 or None
        lp-MKL's kernel-weight norm; ``None`` lets the selection choose 4/3 or 2.
    loss : {"hinge", "logistic", "squared"} or None
        The online learner's loss (hinge by default). ``"logistic"`` gives
        ``predict_proba``.
    regularizer : str or None
        The online learner's regularizer (``"l21sq"`` sparse MKL, ``"l2"``,
        ``"l2q:q=1.5"``, ``"elastic:..."``; the CLI's ``--reg`` values).
    eta0 : float or None
        The online learner's initial step (``None``: selected from 0.1, 1, 10).
    epochs : int or None
        The online learner's passes over the data (20).
    max_kernels : int or None
        MKL-GOMP's largest number of kernels (20).
    degree : int or None
        Degree of the polynomial product kernel (3).
    max_iter : int or None
        Mirror descent / UCD iterations (1000); SimpleMKL / Gauss-Seidel outer iterations
        (100).
    epsilon : float >= 0 or None
        SimpleMKL / Gauss-Seidel regression: the epsilon-insensitive zone of the SVR loss
        (0.1, as scikit-learn's SVR).
    tol : float > 0 or None
        SimpleMKL / Gauss-Seidel: stop when the relative MKL duality gap is at most this
        (0.01).
    svm_tol : float > 0 or None
        SimpleMKL / Gauss-Seidel: the SMO solver's tolerance on the maximal KKT violation
        (1e-3, libsvm's ``-e``).
    fit_intercept : bool
        Learn an unregularized bias.
    standardize : bool
        Standardize the features on the training rows.
    memory_limit_gb : float
        Refuse allocations above this many GiB (MemoryError, with what was needed): a
        positive number, ``float("inf")`` for no limit.
    random_state : int, RandomState or None
        Seed of the folds, shuffles, subsamples and samplers.
    verbose : int
        Print progress and the selection's choice to stderr: from its first second, the
        selection's fits done of those planned, with an estimate of the seconds left (at
        most one line a second), then the learner's steps. At 0 nothing is printed, except
        one line when the selection took ``LONG_SELECTION_SECONDS`` (10 s) or more.
    n_jobs : int or None
        Threads of the fit and the predictions: None the default (``RAYON_NUM_THREADS``,
        else every core), -1 every core, -2 all but one, or a positive count. The same
        model and predictions whatever the number.
    probability : bool
        Calibrated ``predict_proba``, as ``SVC(probability=True)``: ``fit`` then refits
        the model it chose on 5 stratified folds (seeded by ``random_state``; about 5
        more fits, no new selection) and fits Platt's sigmoid to the out-of-fold decision
        values (Lin, Lin & Weng 2007; one sigmoid per class, rows normalized, for more
        than two classes; ``multikernel._probability``).
    class_weight : dict, "balanced" or None
        As SVC's: the weight of each class's rows (``{label: weight}``; ``"balanced"``:
        ``n_samples / (n_classes * np.bincount(y))``), multiplied into ``fit``'s
        ``sample_weight``: C weighs row ``i``'s loss by ``C * class_weight[y_i] *
        sample_weight_i``. Taken by lp-mkl, online, simplemkl, gauss-seidel and the
        built-in selection (which scores its folds unweighted); not on kernel matrices.

    Attributes
    ----------
    classes_ : ndarray
        The class labels, sorted.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when X had string column names.
    X_fit_ : same as X
        The training rows, kept for ``f(X_test, X_fit_)`` (kernel functions only).
    model_ : multikernel._core.Model
        The trained model (``str(model_)`` prints its summary).
    learner_ : str
        The learner fitted (chosen when ``learner="auto"``).
    C_ : float
        The C fitted (chosen when ``C=None``).
    kernels_ : list of str
        The kernels of the model.
    kernel_weights_ : ndarray
        Their weights (``Summary::kernel_weights`` of the library: lp-MKL's theta, the
        wrappers' weights on the simplex, the online learner's group norms normalized to sum
        1, 1 for each kernel GOMP chose), on precomputed kernels in the order given.
    settings_ : dict of str
        The settings the model was trained with, as ``multikernel inspect`` lists them
        (``p``, ``lambda``, ``C``, ``eta0``, ``reg``, ...).
    selection_ : dict or None
        The built-in selection: ``headline``, ``lines`` (the grid), ``C``, ``setting``,
        ``learner_choice``, ``seconds``, and when it chose among candidates ``candidates``,
        ``chosen_candidate``, ``why``, ``metric``.
    cv_results_ : dict of lists
        Only when the selection chose among candidates (no ``C`` and no ``learner``): one
        entry per candidate, as columns in the manner of scikit-learn's ``GridSearchCV``:
        ``candidate`` (its name), ``kind`` (single kernel, single kernel with the hinge loss,
        uniform sum, learned combination), ``param_C`` (its best C), ``mean_test_score``,
        ``std_test_score`` (over the folds, as scikit-learn computes it), ``std_error``
        (the fold scores' sample standard deviation over sqrt(folds)), ``n_folds`` (folds
        it was scored on), ``fold_scores``, ``n_fits``, ``rank_test_score`` (1 is the best
        mean; MSE ranks smallest first; candidates not scored on every fold rank last),
        ``chosen`` and ``status`` (``chosen: why``, ``stopped ...``, ``skipped ...`` or
        ``scored``). Built from the selection record stored in the model.
    n_iter_ : int
        Steps of the final fit (epochs, iterations or kernels).
    fit_status_ : str
        How the final fit ended (converged, completed, iteration limit, ...).
    probA_, probB_ : ndarray
        With ``probability=True``: Platt's sigmoids ``P = 1 / (1 + exp(A f + B))`` of the
        decision values, one (two classes) or one per class (SVC's names).
    """

    probability = False  # what pickles from before probability read
    class_weight = None  # ... and before class_weight

    _parameter_constraints = {
        **_MKLBase._parameter_constraints,
        "probability": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    __init__ = init_with(
        _MKLBase.__init__, "MKLClassifier", probability=False, class_weight=None
    )

    @uses_n_jobs
    @calibrated
    @sparse_rows
    def fit(self, X, y, sample_weight=None):
        """Fits the classifier on rows ``X`` and labels ``y`` (discarding the state of
        ``partial_fit``); with ``kernels="precomputed"``, ``X`` is the training Gram
        matrix (or a list of them). ``sample_weight``: a weight per row (as SVC's: C
        weighs row ``i``'s loss by ``C * w_i``; an integer weight counts the row that many
        times), multiplied by ``class_weight``; taken by lp-mkl, online, simplemkl,
        gauss-seidel and the built-in selection."""
        self._validate_params()
        self._reset_incremental()
        if self._on_matrices():
            _refuse_weights_on_matrices(sample_weight, self.class_weight)
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            classes, codes = np.unique(y, return_inverse=True)
            if len(classes) < 2:
                raise ValueError("the classifier needs at least 2 classes in y; got 1 class")
            self._fit_matrices(
                X, codes.astype(np.float64), len(classes), [str(c) for c in classes]
            )
            self.classes_ = classes
            return self
        X, y = _validate(self, X, y, dtype=np.float64, order="C")
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"the classifier needs at least 2 classes in y; got 1 class ({classes[0]!r})"
            )
        weights = self._row_weights(X, sample_weight, codes, classes)
        self._core_fit(
            X,
            codes.astype(np.float64),
            len(classes),
            [str(c) for c in classes],
            sample_weight=weights,
        )
        self.classes_ = classes
        return self

    @available_if(_can_partial_fit)
    @uses_n_jobs
    def partial_fit(self, X, y, classes=None, n_rows=None):
        """One pass of the online learner over the chunk ``X``, ``y`` (one round per row, in
        order), going on from the previous calls (module documentation).

        The first call (after construction or ``fit``) sets a new fit up: ``classes`` (all
        the labels, as ``SGDClassifier.partial_fit`` wants them) is required there, unless
        ``fit`` has set ``classes_``; later calls may repeat it (the same labels) or omit
        it, and a label outside it raises ValueError. ``n_rows``: the rows to be streamed per pass, for ``lambda = 1 / (C
        n_rows)`` (first call only; default: this chunk's rows). Available with
        ``learner="online"`` or ``"auto"``."""
        first = not hasattr(self, "incremental_")
        if first:
            self._validate_params()
        X, y = _validate(self, X, y, dtype=np.float64, order="C", reset=first)
        X = _aligned(X)
        check_classification_targets(y)
        if first:
            if classes is None:
                # As SGDClassifier: after fit, the classes of the fit.
                classes = getattr(self, "classes_", None)
            if classes is None:
                raise ValueError(
                    "classes must be given on the first call to partial_fit (all the "
                    "labels the stream may have)"
                )
            labels = np.unique(np.asarray(classes))
            if len(labels) < 2:
                raise ValueError(
                    f"the classifier needs at least 2 classes; got {labels.tolist()}"
                )
        else:
            labels = self.classes_
            if classes is not None and not np.array_equal(
                np.unique(np.asarray(classes)), labels
            ):
                raise ValueError(
                    f"classes = {np.unique(np.asarray(classes)).tolist()} is not the "
                    f"classes_ of the first call ({labels.tolist()})"
                )
        codes = _class_codes(labels, y)
        self._partial_fit_rows(
            X,
            codes,
            first,
            lambda: self._incremental_start(
                X, codes, len(labels), [str(c) for c in labels], n_rows
            ),
        )
        self.classes_ = labels
        return self

    @uses_n_jobs
    def decision_function(self, X):
        """Decision values: ``(n,)`` for two classes (positive means ``classes_[1]``),
        ``(n, n_classes)`` otherwise."""
        if self._on_matrices():
            f = self.model_.decision_kernels(self._kernels_for_prediction(X))
        else:
            X = self._rows(X)
            f = self.model_.decision_function(X, self.memory_limit_gb)
        return f[:, 0] if f.shape[1] == 1 else f

    @uses_n_jobs
    def predict(self, X):
        """The predicted label of each row."""
        if self._on_matrices():
            codes = self.model_.predict_kernels(self._kernels_for_prediction(X))
        else:
            X = self._rows(X)
            codes = self.model_.predict(X, self.memory_limit_gb)
        return self.classes_[codes]

    def _has_proba(self):
        return bool(self.probability) or self.loss == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities: with ``probability=True`` Platt's sigmoids of the decision
        values (``probA_``, ``probB_``; normalized over the classes for more than two);
        else those of the logistic loss (``loss="logistic"``): the sigmoid of the decision
        value for two classes, its softmax for more."""
        f = self.decision_function(X)
        if self.probability:
            check_is_fitted(self, "probA_")
            return calibrated_proba(f, self.probA_, self.probB_)
        if f.ndim == 1:
            p1 = expit(f)
            return np.column_stack([expit(-f), p1])
        return softmax(f, axis=1)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """The logarithm of ``predict_proba``."""
        if self.probability:
            with np.errstate(divide="ignore"):
                return np.log(self.predict_proba(X))
        f = self.decision_function(X)
        if f.ndim == 1:
            return -np.logaddexp(0.0, np.column_stack([f, -f]))  # log sigmoid(-f), (f)
        return log_softmax(f, axis=1)


class MKLRegressor(RegressorMixin, _MKLBase):
    """Multiple kernel learning regressor (squared loss). The parameters and attributes are
    ``MKLClassifier``'s, without ``classes_`` (nor ``probability``, ``probA_``,
    ``probB_``); ``loss`` can only be ``"squared"``."""

    @uses_n_jobs
    @sparse_rows
    def fit(self, X, y, sample_weight=None):
        """Fits the regressor on rows ``X`` and real targets ``y`` (discarding the state of
        ``partial_fit``); with ``kernels="precomputed"``, ``X`` is the training Gram
        matrix (or a list of them). ``sample_weight``: a weight per row
        (``MKLClassifier.fit``)."""
        self._validate_params()
        self._reset_incremental()
        if self._on_matrices():
            _refuse_weights_on_matrices(sample_weight, None)
            y = np.ascontiguousarray(column_or_1d(y, warn=True), dtype=np.float64)
            return self._fit_matrices(X, y, None)
        X, y = _validate(self, X, y, dtype=np.float64, order="C", y_numeric=True)
        y = np.ascontiguousarray(y, dtype=np.float64)
        return self._core_fit(X, y, None, sample_weight=self._row_weights(X, sample_weight))

    @available_if(_can_partial_fit)
    @uses_n_jobs
    def partial_fit(self, X, y, n_rows=None):
        """One pass of the online learner (squared loss) over the chunk ``X``, ``y``, going
        on from the previous calls (module documentation, and
        ``MKLClassifier.partial_fit``); the targets' scale comes from the first chunk."""
        first = not hasattr(self, "incremental_")
        if first:
            self._validate_params()
        X, y = _validate(
            self, X, y, dtype=np.float64, order="C", y_numeric=True, reset=first
        )
        X, y = _aligned(X), _aligned(np.ascontiguousarray(y, dtype=np.float64))
        return self._partial_fit_rows(
            X, y, first, lambda: self._incremental_start(X, y, None, None, n_rows)
        )

    @uses_n_jobs
    def predict(self, X):
        """The predicted value of each row."""
        if self._on_matrices():
            return self.model_.predict_kernels(self._kernels_for_prediction(X))
        X = self._rows(X)
        return self.model_.predict(X, self.memory_limit_gb)
