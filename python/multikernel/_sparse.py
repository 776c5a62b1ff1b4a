"""scipy.sparse rows (one-hot tables, TF-IDF) without densifying them.

The library's kernels read dense rows; a sparse ``X`` (csr, csc, coo, or any scipy.sparse
format, converted to csr) goes instead through the estimators' kernel-function path: the
kernels named by SPEC strings become functions ``f(A, B)`` (``SparseKernel``) evaluated by
scikit-learn's sparse-aware pairwise code (a sparse product ``A B^T``, and the squared
distances ``|a|^2 + |b|^2 - 2 a.b`` of ``euclidean_distances``), which return the dense
``len(A) x len(B)`` Gram matrices; the fit trains on them as on kernel functions
(``learner="auto"``, ``"lp-mkl"``, ``"simplemkl"``, ``"gauss-seidel"``; C and p selected on
the same matrices when not given), keeps ``X`` as ``X_fit_`` and the fitted kernels as
``sparse_kernels_``, and ``predict`` computes ``f(X_test, X_fit_)`` (``X_test`` sparse or
dense). Nothing of size ``n x d`` is ever dense: the largest arrays are the ``n x n``
matrices, one per kernel.

SPEC strings that map exactly (the library's definitions, docs/formulas.md):

- ``linear``: ``a . b``;
- ``poly:degree=D,offset=O``: ``(a . b + O)^D`` (offset 1 by default);
- ``rbf``, ``rbf:sigma2=S``, ``rbf:scale=s``: ``exp(-|a - b|^2 / (2 sigma2))``, ``sigma2``
  given or ``s`` times the median heuristic (half the median squared distance over the
  pairs of the training rows; of 1,000 rows drawn with ``random_state`` above that, which
  is not the library's draw, so above 1,000 rows the width can differ from a dense fit's);
- each with ``norm=none`` (default), ``norm=trace`` (divided by the mean of the training
  diagonal) or ``norm=diag`` (``k(a, b) / sqrt(k(a, a) k(b, b))``).

Other kernels (``perfeature:...``, ``bspline``, ``const``, products, ``features=``,
``approx=``, ``norm=variance``) are a ValueError naming the supported ones.
``kernels="auto"`` is ``SPARSE_KERNELS``.

Standardization (``standardize=True``) scales each column by its population standard
deviation on the training rows (1 for a constant column, as the library does) and does not
center: centering would make every zero entry non-zero, i.e. densify ``X``. This is
scikit-learn's ``StandardScaler(with_mean=False)``. The Gaussian kernel does not depend on
centering, so a Gaussian kernel's matrix is the one a dense standardized fit computes; the
linear and polynomial kernels differ from the library's on centered columns.
"""

import functools

import numpy as np
from scipy.sparse import diags, issparse
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils import check_array
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.sparsefuncs import mean_variance_axis

from . import _core
from ._inputs import _kernel_functions, _seed

# The dictionary of kernels="auto" on sparse X: the linear kernel, the usual choice for
# text and one-hot rows (many more columns than rows, classes nearly separable by a
# hyperplane: Joachims 1998), and the Gaussian kernel at the median-heuristic width times
# 1/4, 1 and 4 (the dense dictionary's widths), all trace-normalized so that C and the
# weights compare across them. Not the dense dictionary's per-feature kernels (one n x n
# matrix per column: 20,000 of them for a TF-IDF table) nor its polynomials.
SPARSE_KERNELS = (
    "linear:norm=trace",
    "rbf:scale=0.25,norm=trace",
    "rbf:norm=trace",
    "rbf:scale=4,norm=trace",
)

# The learners that train on kernel matrices (the estimators' PRECOMPUTED_LEARNERS).
MATRIX_LEARNERS = ("auto", "lp-mkl", "simplemkl", "gauss-seidel")

SUPPORTED = (
    "linear, poly:degree=D,offset=O, rbf, rbf:sigma2=S, rbf:scale=s, each with "
    "norm=none|trace|diag"
)

# At most this many rows enter the median heuristic (the library's HEURISTIC_MAX_POINTS).
HEURISTIC_MAX_POINTS = 1000

# A spread this small relative to the column's largest magnitude is a constant column
# (the library's standardizer).
CONSTANT_TOL = 1e-12

ACCEPTED_FORMATS = ["csr", "csc"]


def _parse(spec):
    """``(name, keys)`` of a SPEC string the sparse path computes; ValueError otherwise."""
    canonical = _core.parse_kernel(spec)  # the library's check, its canonical spelling
    name, _, rest = canonical.partition(":")
    allowed = {"linear": {"norm"}, "poly": {"degree", "offset", "norm"},
               "rbf": {"sigma2", "scale", "norm"}}
    pairs = [kv.split("=", 1) for kv in rest.split(",")] if rest else []
    keys = dict(kv for kv in pairs if len(kv) == 2)
    if (
        name not in allowed
        or len(keys) != len(pairs)
        or set(keys) - allowed[name]
        or keys.get("norm", "none") not in ("none", "trace", "diag")
    ):
        raise ValueError(
            f"kernel {spec!r} is not computed on scipy.sparse X (supported: {SUPPORTED}); "
            "pass X.toarray() for the library's other kernels, or kernel functions "
            "f(X, Y)"
        )
    return name, keys


def kernel_specs(kernels):
    """The SPEC strings of ``kernels`` for sparse X (``"auto"``: ``SPARSE_KERNELS``)."""
    if isinstance(kernels, str):
        return list(SPARSE_KERNELS) if kernels == "auto" else [kernels]
    return list(kernels)


def accepts(est):
    """Whether ``est`` fits scipy.sparse X (its ``input_tags.sparse``): kernel functions,
    or supported SPEC strings, with a learner on kernel matrices."""
    if est.learner not in MATRIX_LEARNERS:
        return False
    kernels = est.kernels
    if isinstance(kernels, str) and kernels == "precomputed":
        return False
    if callable(kernels) or (not isinstance(kernels, str) and any(callable(k) for k in kernels)):
        return True
    try:
        for spec in kernel_specs(kernels):
            _parse(spec)
    except (ValueError, TypeError):
        return False
    return True


def _rows(X, n_features=None):
    """``X`` as float64 csr (sparse) or a 2-D float64 array (dense), checked finite."""
    X = check_array(X, accept_sparse=ACCEPTED_FORMATS, dtype=np.float64)
    if issparse(X) and X.format != "csr":
        X = X.tocsr()
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but the kernels were fitted on {n_features} "
            "(sparse rows)"
        )
    return X


def _column_scale(X):
    """``StandardScaler(with_mean=False)``'s scale with the library's rule for constant
    columns: the population standard deviation, 1 where it is (near) 0."""
    _, var = mean_variance_axis(X, axis=0)
    std = np.sqrt(var)
    max_abs = np.asarray(abs(X).max(axis=0).todense()).ravel()
    return np.where((std > CONSTANT_TOL * max_abs) & (std > 0) & np.isfinite(std), std, 1.0)


def _median_sigma2(X, seed):
    """The library's median heuristic on (sparse) rows: half the median of the squared
    distances over the pairs ``i < j`` (of at most 1,000 rows drawn with ``seed``); the
    median of the positive ones when that is 0; 1 when no pair differs."""
    n = X.shape[0]
    if n > HEURISTIC_MAX_POINTS:
        idx = np.sort(np.random.default_rng(seed).choice(n, HEURISTIC_MAX_POINTS, replace=False))
        X = X[idx]
    D = euclidean_distances(X, squared=True)
    d = D[np.triu_indices(D.shape[0], k=1)]
    if d.size == 0:
        return 1.0
    med = float(np.median(d))
    if med > 0:
        return med / 2.0
    pos = d[d > 0]
    return float(np.median(pos)) / 2.0 if pos.size else 1.0


def _sig(v):
    """A number as the library prints it in kernel names (``sig`` of kernel/compute.rs:
    4 significant digits, Rust's exponent form outside 1e-3 .. 1e6)."""
    if v == 0.0 or not np.isfinite(v):
        return "0" if v == 0.0 else str(v)
    e = int(np.floor(np.log10(abs(v))))
    if not -3 <= e <= 5:
        mantissa, exponent = f"{v:.3e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    text = f"{v:.{max(3 - e, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


class SparseKernel:
    """A kernel of the sparse path with its training-set parameters resolved: ``f(A, B)``
    the dense ``len(A) x len(B)`` matrix on sparse (or dense) rows, ``__name__`` its name
    in ``kernels_`` (the library's spelling, ``rbf(sigma2=1.02)/trace``)."""

    def __init__(self, kind, degree, offset, sigma2, norm, factor, column_scale, n_features):
        self.kind, self.degree, self.offset, self.sigma2 = kind, degree, offset, sigma2
        self.norm, self.factor = norm, factor
        self.column_scale, self.n_features = column_scale, n_features
        body = {
            "linear": "linear",
            "poly": f"poly(degree={degree},offset={_sig(offset)})",
            "rbf": f"rbf(sigma2={_sig(sigma2 if sigma2 is not None else 0.0)})",
        }[kind]
        self.__name__ = body + {"none": "", "trace": "/trace", "diag": "/diag"}[norm]

    def _scaled(self, X):
        X = _rows(X, self.n_features)
        if self.column_scale is None:
            return X
        inverse = 1.0 / self.column_scale
        return X @ diags(inverse) if issparse(X) else X * inverse

    def _raw(self, A, B):
        if self.kind == "rbf":
            D = euclidean_distances(A, None if B is A else B, squared=True)
            return np.exp(-D / (2.0 * self.sigma2))
        K = safe_sparse_dot(A, B.T, dense_output=True)
        K = np.asarray(K, dtype=np.float64)
        if self.kind == "poly":
            K = (K + self.offset) ** self.degree
        return K

    def _raw_self(self, A):
        if self.kind == "rbf":
            return np.ones(A.shape[0])
        sq = np.asarray(A.multiply(A).sum(axis=1)).ravel() if issparse(A) else np.einsum(
            "ij,ij->i", A, A
        )
        return (sq + self.offset) ** self.degree if self.kind == "poly" else sq

    def __call__(self, A, B):
        same = A is B
        A = self._scaled(A)
        B = A if same else self._scaled(B)
        K = self._raw(A, B)
        if self.norm == "diag":
            q = np.sqrt(np.outer(self._raw_self(A), self._raw_self(B)))
            return np.divide(K, q, out=np.zeros_like(K), where=q > 0)
        return K * self.factor if self.factor != 1.0 else K


def fit_kernels(est, X, seed):
    """The ``SparseKernel`` of each of ``est``'s SPEC kernels, resolved on the training
    rows ``X`` (csr): column scale, median heuristic, trace factor."""
    if est.learner not in MATRIX_LEARNERS:
        raise ValueError(
            "scipy.sparse X trains on kernel matrices computed in Python: learner 'auto', "
            f"'lp-mkl', 'simplemkl' or 'gauss-seidel'; learner={est.learner!r} needs dense "
            "X (X.toarray())"
        )
    specs = kernel_specs(est.kernels)
    parsed = [_parse(s) for s in specs]
    n, d = X.shape
    scale = _column_scale(X) if est.standardize else None
    Xs = X @ diags(1.0 / scale) if scale is not None else X
    median = None
    out = []
    for name, keys in parsed:
        sigma2 = None
        if name == "rbf":
            if "sigma2" in keys:
                sigma2 = float(keys["sigma2"])
            else:
                if median is None:
                    median = _median_sigma2(Xs, seed)
                sigma2 = float(keys.get("scale", 1.0)) * median
        degree = int(keys.get("degree", 1))
        offset = float(keys.get("offset", 1.0 if name == "poly" else 0.0))
        norm = keys.get("norm", "none")
        k = SparseKernel(name, degree, offset, sigma2, norm, 1.0, scale, d)
        if norm == "trace":
            mean_diag = float(np.mean(k._raw_self(Xs)))
            if mean_diag > 0 and np.isfinite(mean_diag):
                k.factor = 1.0 / mean_diag
        out.append(k)
    return out


def kernel_functions(est):
    """The sparse path's kernel functions of ``est``: during a fit, those of that fit
    (None on dense rows); after it, the fitted ones (``sparse_kernels_``), if any."""
    d = est.__dict__
    if "_sparse_pending" in d:
        return d["_sparse_pending"]
    return d.get("sparse_kernels_")


def sparse_rows(fit):
    """An estimator's ``fit`` taking scipy.sparse X through the kernel-function path
    (module documentation)."""

    @functools.wraps(fit)
    def wrapper(self, X, y, *args, **fit_params):
        functions = None
        if issparse(X) and not self._precomputed() and _kernel_functions(self.kernels) is None:
            self._validate_params()
            X = _rows(X)
            functions = fit_kernels(self, X, _seed(self.random_state))
        self.__dict__["_sparse_pending"] = functions
        try:
            fit(self, X, y, *args, **fit_params)
        finally:
            self.__dict__.pop("_sparse_pending", None)
        if functions is None:
            self.__dict__.pop("sparse_kernels_", None)
        else:
            self.sparse_kernels_ = functions
            self.n_features_in_ = X.shape[1]
        return self

    return wrapper
