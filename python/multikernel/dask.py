"""Data-parallel training on Dask by iterative parameter mixing (McDonald, Hall & Mann 2010).

``fit_dask(estimator, X, y)`` trains an ``MKLClassifier`` or ``MKLRegressor`` (the online
learner, kernels with an explicit map: ``partial_fit``'s conditions) on data spread over a
Dask cluster:

1. the fit is set up on the driver from the first block (classes, standardization, the
   kernels' widths and the targets' scale come from it; ``lambda = 1 / (C n)`` with ``n``
   all the rows);
2. each epoch, every shard runs one pass of ``partial_fit`` over its rows (shuffled with a
   seed derived from ``random_state``, the epoch and the shard) starting from the current
   fit, shipped to the workers as bytes; the driver gathers the shards' fits and mixes them
   (``IncrementalFit.mix``: the average of the parameters, then one proximal step);
3. after the last epoch the estimator's fitted attributes are those of ``partial_fit``, and
   ``incremental_`` holds the mixed fit (``partial_fit`` can go on from it; the estimator
   pickles).

With one shard the run is exactly ``epochs`` passes of ``partial_fit`` over shuffled rows.

Dask is an optional dependency: ``pip install "dask[distributed]"``.
"""

import numbers
import time

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from . import _core
from ._estimators import MKLClassifier, _aligned, _can_partial_fit, _class_codes, _seed

# The online learner's default number of passes (the estimators' ``epochs=None``).
DEFAULT_EPOCHS = 20


def _require_distributed():
    try:
        import distributed  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "multikernel.dask.fit_dask needs dask.distributed: pip install "
            '"dask[distributed]"'
        ) from e
    return distributed


def _is_dask_array(a):
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover
        return False
    return isinstance(a, da.Array)


def _train_shard(fit, xs, ys, classes, seed):
    """One pass of ``fit`` (an IncrementalFit) over the rows of the blocks ``xs`` / ``ys``
    of one shard, shuffled with ``seed``; runs on a worker and returns the trained fit."""
    X = np.ascontiguousarray(np.concatenate([np.asarray(x) for x in xs]), dtype=np.float64)
    y = np.concatenate([np.asarray(v).ravel() for v in ys])
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"a shard has {X.shape[0]} rows of X and {y.shape[0]} targets")
    codes = (
        _class_codes(classes, y)
        if classes is not None
        else np.ascontiguousarray(y, dtype=np.float64)
    )
    order = np.random.default_rng(seed).permutation(X.shape[0])
    fit = _core.IncrementalFit.from_bytes(fit) if isinstance(fit, bytes) else fit
    fit.partial_fit(np.ascontiguousarray(X[order]), np.ascontiguousarray(codes[order]))
    return fit


def _shards(client, X, y):
    """The data as futures on the cluster: a list of (X blocks, y blocks) lists, one entry
    per shard, and the number of rows. Dask arrays: each row block is a piece, the pieces
    dealt round-robin to one shard per worker; lists: one shard per element."""
    if _is_dask_array(X):
        if X.ndim != 2:
            raise ValueError(f"X: a 2-D dask array; got {X.ndim} dimensions")
        if not _is_dask_array(y):
            import dask.array as da

            y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} values for {X.shape[0]} rows of X")
        X = X.rechunk({1: X.shape[1]})
        y = y.rechunk({0: X.chunks[0]})
        xb = list(X.to_delayed().ravel())
        yb = list(y.to_delayed().ravel())
        workers = sorted(client.scheduler_info().get("workers", {})) or [None]
        k = min(len(workers), len(xb))
        # Shard g's pieces are computed on worker g, where its passes then run.
        shards = [
            (
                client.compute(xb[g::k], workers=workers[g]),
                client.compute(yb[g::k], workers=workers[g]),
            )
            for g in range(k)
        ]
        return shards, int(X.shape[0])
    if isinstance(X, (list, tuple)):
        if not isinstance(y, (list, tuple)) or len(y) != len(X):
            raise ValueError("X is a list of shards: y must be a list of as many shards")
        if not X:
            raise ValueError("no shards")
        shards, n = [], 0
        for xs, ys in zip(X, y):
            if xs.shape[0] != ys.shape[0]:
                raise ValueError(
                    f"a shard has {xs.shape[0]} rows of X and {ys.shape[0]} targets"
                )
            n += int(xs.shape[0])
            xf, yf = (
                client.compute(a)
                if _is_dask_array(a)
                else client.scatter(np.asarray(a), hash=False)
                for a in (xs, ys)
            )
            shards.append(([xf], [yf]))
        return shards, n
    raise TypeError(
        "fit_dask: X must be a dask array (row blocks are the shards' pieces) or a list of "
        f"per-worker shards; got {type(X).__name__}"
    )


def fit_dask(estimator, X, y, *, client=None, epochs=None, classes=None):
    """Trains ``estimator`` (``MKLClassifier`` or ``MKLRegressor``, the online learner)
    on Dask by iterative parameter mixing (module documentation) and returns it, fitted.

    Parameters
    ----------
    estimator : MKLClassifier or MKLRegressor
        Its settings are ``partial_fit``'s (``learner`` "online" or "auto", kernels with an
        explicit map, ``kernels="auto"``: ``multikernel.INCREMENTAL_KERNELS``; ``C``: 1 when
        None, with ``lambda = 1 / (C n)`` over all ``n`` rows). Any previous fit is
        discarded.
    X, y : dask arrays chunked by rows, or lists of per-worker shards
        A dask array's row blocks are dealt round-robin to one shard per worker of the
        client; a list gives one shard per element (numpy or dask arrays; numpy ones are
        scattered to the cluster).
    client : distributed.Client or None
        The client; None: the current one (``distributed.get_client()``).
    epochs : int or None
        Passes over the data, each followed by a mix; None: ``estimator.epochs``, else 20.
    classes : array-like or None
        Classifiers: all the labels; None: those of ``y`` (computed once).

    Each shard's rows are shuffled every epoch with a seed derived from the estimator's
    ``random_state``, the epoch and the shard, so a run is reproducible given the shards.
    """
    distributed = _require_distributed()
    if client is None:
        client = distributed.get_client()
    if not _can_partial_fit(estimator):
        raise ValueError(
            "fit_dask trains the online learner (learner='online' or 'auto') on rows; "
            f"got learner={estimator.learner!r}, kernels={estimator.kernels!r}"
        )
    if epochs is None:
        epochs = estimator.epochs if estimator.epochs is not None else DEFAULT_EPOCHS
    if not isinstance(epochs, numbers.Integral) or epochs < 1:
        raise ValueError(f"epochs = {epochs!r}: a positive number of passes")
    is_classifier = isinstance(estimator, MKLClassifier)
    t0 = time.perf_counter()
    shards, n_rows = _shards(client, X, y)
    # The first piece, on the driver: the setup of the fit.
    x0, y0 = client.gather([shards[0][0][0], shards[0][1][0]])
    x0, y0 = np.asarray(x0), np.asarray(y0).ravel()
    if is_classifier:
        if classes is None:
            parts = client.gather(
                [client.submit(np.unique, ys) for (_, yb) in shards for ys in yb]
            )
            classes = np.unique(np.concatenate(parts))
        classes = np.unique(np.asarray(classes))
        check_classification_targets(classes)
    estimator._reset_incremental()
    estimator.__dict__.pop("_incremental_seconds", None)
    estimator._validate_params()
    x0, y0 = validate_data(
        estimator, x0, y0, dtype=np.float64, order="C", reset=True,
        y_numeric=not is_classifier,
    )
    x0 = _aligned(x0)
    if is_classifier:
        labels = classes
        if len(labels) < 2:
            raise ValueError(
                f"the classifier needs at least 2 classes; got {labels.tolist()}"
            )
        codes0 = _class_codes(labels, y0)
        fit = estimator._incremental_start(
            x0, codes0, len(labels), [str(c) for c in labels], n_rows
        )
    else:
        labels = None
        fit = estimator._incremental_start(
            x0, _aligned(np.ascontiguousarray(y0, dtype=np.float64)), None, None, n_rows
        )
    base = _seed(estimator.random_state)
    for epoch in range(epochs):
        shipped = client.scatter(fit.to_bytes(), broadcast=True, hash=False)
        futures = [
            client.submit(
                _train_shard,
                shipped,
                xs,
                ys,
                labels,
                int(np.random.SeedSequence([base, epoch, g]).generate_state(1)[0]),
                pure=False,
            )
            for g, (xs, ys) in enumerate(shards)
        ]
        fits = client.gather(futures)
        fit = fits[0] if len(fits) == 1 else _core.IncrementalFit.mix(fits)
    estimator._incremental_fitted(fit, time.perf_counter() - t0)
    if is_classifier:
        estimator.classes_ = labels
    return estimator
