"""Training and prediction on Dask.

``predict_dask(estimator, collection)`` predicts with any fitted estimator of the package
over a Dask collection, partition by partition on the workers (a tagger over a bag of
sentences, a parser over a bag of CoNLL-U blocks or TokenLists, a table estimator over a dask
array or dataframe), the estimator shipped once per worker, the results in input order.

Data-parallel training by iterative parameter mixing (McDonald, Hall & Mann 2010):

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

``fit_dask(SequenceTagger(learner="mtl"), X_bag, y_bag)`` trains a tagger by the cutting plane
over bags of sentences and label lists that stay on the workers, and gives the model one
process trains on all the sentences, byte for byte with CRF++ templates or string and
boolean features; ``fit_dask(DependencyParser(learner="mtl"), bag)`` a parser over a bag of
sentences with their trees, byte for byte (``multikernel._dask_parts``; docs/scaling.md).
With ``learner="online"`` they train by iterative parameter mixing over the partitions (each
epoch a pass per partition from the loop's state, the passes mixed on the client): one
partition gives ``fit``'s model byte for byte, several another model, the same on any number
of workers. ``fit_dask(SequenceTagger(learner="lbfgs"), X_bag, y_bag)`` trains the batch CRF:
at each point L-BFGS evaluates, every partition's losses and gradient sum, added on the
client in partition order (one partition: ``fit``'s model byte for byte; several: the same
objective up to the rounding of the sums' grouping, and the same optimum).

Dask is an optional dependency: ``pip install "dask[distributed]"`` (and ``pyarrow`` for
dask dataframes).
"""

import copy
import numbers
import time

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from . import _core

try:
    import dask.bag as _db
except ImportError:  # dask is optional: predict_dask and fit_dask say so when called
    _db = None
from ._estimators import MKLClassifier, _aligned, _can_partial_fit, _class_codes
from ._inputs import _seed

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


def fit_dask(estimator, X, y=None, *, client=None, epochs=None, classes=None):
    """Trains ``estimator`` on Dask and returns it, fitted: an ``MKLClassifier`` or
    ``MKLRegressor`` (the online learner) by iterative parameter mixing, a
    ``SequenceTagger`` or a ``DependencyParser`` by the cutting plane (``learner="mtl"``,
    exactly), by the online learner's iterative parameter mixing (``learner="online"``),
    or a tagger by the batch CRF with the partitions' gradients added (``learner="lbfgs"``)
    (module documentation).

    Parameters
    ----------
    estimator : MKLClassifier, MKLRegressor, SequenceTagger or DependencyParser
        A tagger: ``learner="mtl"``, ``"online"`` or ``"lbfgs"`` with any of its settings (its own
        ``epochs``); ``X`` and ``y`` are then ``dask.bag`` bags of sentences (as ``fit``
        takes them) and of their label lists, partitioned alike; the ``epochs`` and
        ``classes`` arguments do not apply.
        A parser: ``learner="mtl"`` or ``"online"`` with any of its settings; ``X`` is a
        ``dask.bag`` bag of sentences with their trees (CoNLL-U blocks or TokenLists),
        ``y`` None.
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
    if y is None and _kind(estimator) != "parser":
        raise ValueError("y: the targets (a tagger's label lists, a table's labels)")
    if _kind(estimator) == "tagger":
        from ._dask_parts import fit_tagger_dask

        if epochs is not None or classes is not None:
            raise ValueError(
                "the epochs and classes arguments are the table learners'; a tagger's are "
                "its own settings (SequenceTagger(epochs=...) with learner='online'; the "
                "cutting plane runs until it converges, by its eps and max_iter)"
            )
        return fit_tagger_dask(estimator, X, y, client)
    if _kind(estimator) == "parser":
        from ._dask_parts import fit_parser_dask

        if y is not None or epochs is not None or classes is not None:
            raise ValueError(
                "a parser's trees are in its sentences (y=None), and its epochs are its own "
                "setting (DependencyParser(epochs=...) with learner='online'): no epochs or "
                "classes arguments"
            )
        return fit_parser_dask(estimator, X, client)
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


# --- Prediction over Dask collections -------------------------------------------------------

_TABLE_METHODS = ("predict", "predict_proba", "decision_function")
_TAGGER_METHODS = ("predict", "predict_marginals")
_PARSER_METHODS = ("predict",)


def _kind(estimator):
    """"tagger", "parser" or "table": what the estimator predicts on."""
    from ._parser import DependencyParser
    from ._tagger import SequenceTagger

    if isinstance(estimator, SequenceTagger):
        return "tagger"
    if isinstance(estimator, DependencyParser):
        return "parser"
    return "table"


def _column_tokens(block, labels_column):
    """A sentence given as CRF++ column text (one token a line, columns split by white
    space) as the tagger's column tuples; ``labels_column``: the last column is a gold label,
    dropped (as ``crf_test`` reads a test file)."""
    tokens = [tuple(line.split()) for line in block.splitlines() if line.strip()]
    if labels_column:
        tokens = [t[:-1] for t in tokens]
    return tokens


class _Whole(list):
    """A partition's predictions, or a bag's whole list computed on a worker: a list
    subclass, so that distributed pickles it in one piece (a plain list is serialized
    element by element: 16 partitions of 6,250 label lists took 10.8 s to gather as plain
    lists, 1.0 s as one list subclass), which unpickles as a plain list."""

    __slots__ = ()

    def __reduce__(self):
        return (list, (list(self),))


def _on_worker():
    try:
        from distributed import get_worker

        get_worker()
        return True
    except (ImportError, ValueError):
        return False


def _finalize_whole(results):
    """dask.bag's ``finalize`` (the partitions concatenated), as one :class:`_Whole` when it
    runs on a worker: newer Dask computes a bag's final list in a task of the cluster, and
    100,000 label lists then took 4-5 s more to come back as a plain list."""
    from dask.bag.core import finalize

    out = finalize(results)
    if type(out) is list and _on_worker():
        return _Whole(out)
    return out


if _db is not None:

    class _PredictionBag(_db.Bag):
        """The bag ``predict_dask`` returns: a ``dask.bag.Bag`` whose ``.compute()`` on a
        distributed cluster brings its list back in one piece (:func:`_finalize_whole`)."""

        def __dask_postcompute__(self):
            return _finalize_whole, ()


def _tag_partition(sentences, estimator, method, labels_column):
    sents = [
        _column_tokens(s, labels_column) if isinstance(s, str) else s for s in sentences
    ]
    if not sents:
        return _Whole()
    return _Whole(getattr(estimator, method)(sents))


def _parse_partition(sentences, estimator):
    sents = list(sentences)
    if not sents:
        return _Whole()
    out = estimator.predict(sents)
    if isinstance(out, str):  # pragma: no cover - a list in gives a list out
        raise ValueError("the parser returned one text for a list of sentences")
    if len(out) != len(sents):
        raise ValueError(f"{len(sents)} sentences in a partition, {len(out)} parses out")
    return _Whole(out)


def _one_thread_per_task(estimator):
    """The estimator to ship: with ``n_jobs=None`` (the default), a copy with ``n_jobs=1``,
    so that each task predicts on one thread and Dask's worker threads are the parallelism
    (one task per worker thread, as XGBoost's Dask interface gives each task its worker's
    threads); an ``n_jobs`` the user set is kept. The predictions are the same bits on any
    number of threads."""
    if not hasattr(estimator, "n_jobs") or estimator.n_jobs is not None:
        return estimator
    shipped = copy.copy(estimator)
    shipped.n_jobs = 1
    return shipped


def _table_block(block, estimator, method):
    return getattr(estimator, method)(np.ascontiguousarray(block, dtype=np.float64))


def _frame_partition(frame, estimator, method, columns):
    import pandas as pd

    out = getattr(estimator, method)(np.ascontiguousarray(frame.to_numpy(), dtype=np.float64))
    if out.ndim == 1:
        return pd.Series(out, index=frame.index)
    return pd.DataFrame(out, index=frame.index, columns=columns)


def _shipped(estimator, client):
    """The fitted estimator as one piece of the graph: scattered to every worker once when
    a distributed client runs (every partition's task then reads its worker's copy), else
    one delayed value that the local scheduler computes once."""
    import dask

    if client is not None:
        return client.scatter(estimator, broadcast=True, hash=False)
    return dask.delayed(estimator, pure=True)


def predict_dask(estimator, collection, *, method="predict", client=None, labels_column=False):
    """Predicts with a fitted estimator over a Dask collection, partition by partition on the
    workers, and returns a lazy collection of the results in input order (``.compute()``
    gives what ``getattr(estimator, method)`` gives on the whole input).

    Parameters
    ----------
    estimator : fitted SequenceTagger, DependencyParser, MKLClassifier or MKLRegressor
        Shipped to each worker once (scattered with ``broadcast=True`` when a distributed
        client runs), not once per partition. Each task predicts on one thread unless the
        estimator's ``n_jobs`` was set: Dask's worker threads are the parallelism.
    collection : dask.bag.Bag, dask.array.Array or dask.dataframe.DataFrame
        Taggers: a bag of sentences, each a list of feature dicts, a list of column tuples,
        or CRF++ column text (one token a line). Parsers: a bag of sentences, each a CoNLL-U
        block (text) or a ``conllu`` TokenList (made on the workers, e.g.
        ``bag.map(lambda b: conllu.parse(b)[0])``: Dask rebuilds the lists it finds in a
        graph, and a TokenList given to ``from_sequence`` does not survive that). Tables: a
        2-D dask array chunked by rows, or
        a dask dataframe of the training columns.
    method : str
        ``"predict"`` (default); taggers trained with the CRF loss also
        ``"predict_marginals"`` (each token's ``{label: probability}``); tables
        ``"predict_proba"`` (logistic loss) and ``"decision_function"``.
    client : distributed.Client or None
        None: the current distributed client if there is one, else Dask's local scheduler.
    labels_column : bool
        Tagger sentences given as column text: the last column is a gold label and is
        dropped (CRF++'s test files).

    Returns
    -------
    A ``dask.bag.Bag`` with one prediction per sentence (taggers: a label list, or a list of
    per-token dicts; parsers: the sentence in the form it was given, with heads and
    relations), a ``dask.array.Array`` (tables given as an array: 1-D for labels and
    two-class decision values, one column a class otherwise) or a dask Series / DataFrame
    with the partitions' index (tables given as a dataframe).
    """
    from sklearn.utils.validation import check_is_fitted

    kind = _kind(estimator)
    allowed = {
        "tagger": _TAGGER_METHODS,
        "parser": _PARSER_METHODS,
        "table": _TABLE_METHODS,
    }[kind]
    if method not in allowed:
        raise ValueError(
            f"method={method!r}: a {type(estimator).__name__} predicts with one of "
            f"{', '.join(allowed)}"
        )
    if not hasattr(estimator, method):
        raise AttributeError(
            f"{type(estimator).__name__} has no {method} with these settings (marginals "
            "and probabilities need the CRF or logistic loss)"
        )
    check_is_fitted(estimator)
    estimator = _one_thread_per_task(estimator)
    if client is None:
        try:
            from distributed import get_client

            client = get_client()
        except (ImportError, ValueError):
            client = None
    import dask.array as da
    import dask.bag as db

    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - dask without pandas
        dd = None
    if kind in ("tagger", "parser"):
        if not isinstance(collection, db.Bag):
            raise TypeError(
                f"predict_dask: a {type(estimator).__name__} predicts over a dask.bag of "
                f"sentences; got {type(collection).__name__}"
            )
        est = _shipped(estimator, client)
        if kind == "tagger":
            out = collection.map_partitions(_tag_partition, est, method, labels_column)
        else:
            out = collection.map_partitions(_parse_partition, est)
        return _PredictionBag(out.dask, out.name, out.npartitions)
    n_features = getattr(estimator, "n_features_in_", None)
    probe = getattr(estimator, method)(np.zeros((1, n_features)))
    if isinstance(collection, da.Array):
        if collection.ndim != 2:
            raise ValueError(f"X: a 2-D dask array; got {collection.ndim} dimensions")
        if collection.shape[1] != n_features:
            raise ValueError(
                f"X has {collection.shape[1]} columns; the estimator was fitted on "
                f"{n_features}"
            )
        X = collection.rechunk({1: collection.shape[1]})
        est = _shipped(estimator, client)
        if probe.ndim == 1:
            return X.map_blocks(
                _table_block, est, method, drop_axis=1, dtype=probe.dtype,
                meta=np.empty((0,), dtype=probe.dtype),
            )
        return X.map_blocks(
            _table_block, est, method, chunks=(X.chunks[0], (probe.shape[1],)),
            dtype=probe.dtype, meta=np.empty((0, 0), dtype=probe.dtype),
        )
    if dd is not None and isinstance(collection, dd.DataFrame):
        import pandas as pd

        if len(collection.columns) != n_features:
            raise ValueError(
                f"the dataframe has {len(collection.columns)} columns; the estimator was "
                f"fitted on {n_features}"
            )
        columns = list(getattr(estimator, "classes_", range(probe.shape[-1])))
        meta = (
            pd.Series(probe[:0], dtype=probe.dtype)
            if probe.ndim == 1
            else pd.DataFrame(probe[:0], columns=columns)
        )
        est = _shipped(estimator, client)
        return collection.map_partitions(
            _frame_partition, est, method, columns, meta=meta, align_dataframes=False
        )
    raise TypeError(
        f"predict_dask: a {type(estimator).__name__} predicts over a 2-D dask array or a "
        f"dask dataframe; got {type(collection).__name__}"
    )
