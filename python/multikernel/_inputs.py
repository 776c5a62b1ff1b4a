"""What a user hands the estimators, checked before the core sees it: the seed of a
``random_state``, kernel functions (``kernels=f`` or a list, SVC's callable kernels) and
the Gram matrices they return, and precomputed kernel matrices (one 2-D Gram matrix, a
list of them, or a 3-D array). The table estimators (``_estimators``), their calibrated
probabilities (``_probability``) and their sparse rows (``_sparse``) share these; the
taggers and parsers share the seed."""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array


def _seed(random_state):
    """The library's 64-bit seed from a scikit-learn ``random_state``."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state = {random_state}: a non-negative integer")
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _kernel_functions(kernels):
    """The kernel functions of ``kernels`` (a callable, or a list of callables), or None
    when the kernels are SPEC strings, ``"auto"`` or ``"precomputed"``. A list that mixes
    SPEC strings and callables is a TypeError: the library computes its kernels on the
    standardized rows (and sets their widths from them), a function sees the rows as given,
    so the two cannot share one fit."""
    if isinstance(kernels, str):
        return None
    if callable(kernels):
        return [kernels]
    kernels = list(kernels)
    functions = [k for k in kernels if callable(k)]
    if not functions:
        return None
    if len(functions) != len(kernels):
        raise TypeError(
            "kernels: a list of SPEC strings or a list of kernel functions, not both; "
            "write the other kernels as functions too (sklearn.metrics.pairwise's "
            "rbf_kernel, polynomial_kernel, linear_kernel, ... with functools.partial)"
        )
    return functions


def _function_name(f):
    """A kernel function's name in the model (``kernels_``) and in errors."""
    name = getattr(f, "__name__", None)
    if name is None:  # functools.partial and other callable objects
        name = getattr(getattr(f, "func", None), "__name__", None) or type(f).__name__
    return str(name)


def _function_names(functions):
    """The functions' names, made distinct (``f``, ``f#1``) when the same name repeats."""
    names = [_function_name(f) for f in functions]
    return [
        name if names.count(name) == 1 else f"{name}#{m}" for m, name in enumerate(names)
    ]


def _gram(f, m, name, A, B, shape, what):
    """``f(A, B)`` as a C-contiguous float64 matrix of ``shape`` (``what`` says which
    matrix, for the errors): ValueError when ``f`` returns another shape or a value that is
    not finite."""
    K = f(A, B)
    if hasattr(K, "toarray"):  # a scipy.sparse matrix
        K = K.toarray()
    try:
        K = np.ascontiguousarray(K, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"kernel {m} ({name}) returned {type(K).__name__}, not a matrix of numbers "
            f"({e})"
        ) from e
    if K.shape != shape:
        raise ValueError(
            f"kernel {m} ({name}): {what} must be a matrix of shape {shape} (one row per "
            "row of the first argument, one column per row of the second); it returned "
            + (f"shape {K.shape}" if K.ndim else "a scalar")
        )
    bad = ~np.isfinite(K)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"kernel {m} ({name}): {what} holds {K[i, j]} at [{i}, {j}]; a kernel's "
            "values must be finite"
        )
    return K


def _matrices_expected(n_train):
    if n_train is None:
        return (
            "the training Gram matrix (n x n, n the training rows), or a list or a 3-D "
            "array of them (one per kernel)"
        )
    return (
        f"the test-by-train Gram matrix (n_test x {n_train}), or a list or a 3-D array "
        "of them (one per kernel, in the order of fit)"
    )


def _kernel_matrices(KL, n_train=None, n_kernels=None):
    """Kernel matrices as C-contiguous float64 arrays (copied only when they are not):
    one Gram matrix (a 2-D array, as ``SVC(kernel="precomputed")`` takes it), or a list
    or tuple of them, or a 3-D array (kernels first). Training matrices (``n_train`` None)
    are square and of one size; test matrices have ``n_train`` columns, and there are
    ``n_kernels`` of them."""
    if isinstance(KL, np.ndarray):
        if KL.ndim == 2:
            mats = [KL]
        elif KL.ndim == 3:
            mats = list(KL)
        else:
            raise ValueError(
                f"kernels='precomputed': X must be {_matrices_expected(n_train)}; got an "
                f"array of shape {KL.shape}"
            )
    elif isinstance(KL, (list, tuple)):
        if not KL:
            raise ValueError(
                "kernels='precomputed': at least one kernel matrix is needed"
            )
        first = np.ndim(KL[0])
        if first == 2:
            mats = list(KL)
        elif first == 1:
            mats = [KL]  # one matrix, as a list of rows
        else:
            raise TypeError(
                "kernels='precomputed': X must be a list of kernel matrices, "
                f"{_matrices_expected(n_train)}; got a {type(KL).__name__} whose first "
                f"item has {first} dimensions"
            )
    elif hasattr(KL, "shape"):  # a DataFrame, a sparse matrix: check_array says
        mats = [KL]
    else:
        raise TypeError(
            f"kernels='precomputed': X must be {_matrices_expected(n_train)}, a list of "
            f"kernel matrices; got {type(KL).__name__}"
        )
    if n_kernels is not None and len(mats) != n_kernels:
        raise ValueError(
            f"kernels='precomputed': the model was trained on {n_kernels} kernel "
            f"{'matrix' if n_kernels == 1 else 'matrices'}; got {len(mats)} (one "
            f"test-by-train matrix, n_test x {n_train}, per kernel, in the order of fit)"
        )
    out = []
    for m, K in enumerate(mats):
        K = check_array(K, dtype=np.float64, order="C", input_name=f"kernel {m}")
        if n_train is None and K.shape[0] != K.shape[1]:
            raise ValueError(
                f"kernels='precomputed': kernel {m} must be square, n x n for the n "
                "training rows (the training Gram matrix K(X_train, X_train)); got shape "
                f"{K.shape}"
            )
        if n_train is None and out and K.shape != out[0].shape:
            raise ValueError(
                f"kernel {m}: shape {K.shape}, but kernel 0 is {out[0].shape}: every "
                "training kernel matrix is n x n for the same n training rows"
            )
        if n_train is not None and K.shape[1] != n_train:
            raise ValueError(
                f"kernels='precomputed': kernel {m}: a test kernel matrix must have one "
                f"column per training row, shape (n_test, {n_train}) (K(X_test, X_train)); "
                f"got shape {K.shape}"
            )
        if n_train is not None and out and K.shape[0] != out[0].shape[0]:
            raise ValueError(
                f"kernel {m}: {K.shape[0]} rows, but kernel 0 has {out[0].shape[0]}: one "
                "row per test row in every matrix"
            )
        out.append(K)
    return out
