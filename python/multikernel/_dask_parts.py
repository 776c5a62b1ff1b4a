"""``fit_dask`` for a ``SequenceTagger`` or a ``DependencyParser``: the cutting plane
(``learner="mtl"``) over a bag of sentences that stays on the workers, giving the model one
process trains on all of them; or the online learner (``learner="online"``) by iterative
parameter mixing over the same partitions (at the end of these notes).

1. The featurizer, from what each partition counts, merged on the client:
   - a tagger of feature dicts: each partition's feature keys, merged in partition order
     (keys in order of first appearance, as over all the sentences); then (every tagger)
     each partition's expansion counts, merged (sorted keys merge in any order);
   - a parser: each partition's attribute values, merged in partition order (the
     alphabets one process grows sentence by sentence), then each partition's feature
     keys under them, merged in partition order.
2. The loop runs on the client (the working-set problem is small); at each point every
   partition's unscaled separation sums (the loss-augmented decode of its sentences) come
   back, added on the client and scaled once: one task a worker over the partitions that
   prefer it, their sums merged on the worker when they are integers (any grouping adds
   them exactly), else one a partition. With CRF++ templates or string features
   every sum is an integer (a parser's arc features are counts too), so the cut is bit
   for bit that of one process, and so is the model.
3. The point is not sent (the dense weights are tens of MB): each worker keeps a replica of
   it (``_core.PointReplica``) and moves it with the loop's step (the new cut, the master's
   multipliers and template factors, the cuts dropped, whether the last point became the
   best one), broadcast once per cut; each part's sums carry a fingerprint of the steps its
   replica followed, which the client checks. A worker's replica holds only the weights its
   partitions read, so rebuilding the point costs each worker its share of the cuts.
   When the cuts are nearly dense (a parser's few, frequent features), a step is about as
   large as the point itself, and the replica's pass over the working set is work for
   nothing: from the first step that shows the point at most twice a step's bytes, the
   loop sends the point (and its fingerprint) instead, and no replica is kept.
4. A parser's relation labeler (a perceptron over the gold arcs in one seeded order)
   trains on the client after the loop, on every partition's gold arcs with their
   features, gathered once: the only data that comes to the client in full.

Partitions are spread evenly over the workers (partition i on the i-th worker, modulo their
number, as a preference: Dask may still run a task elsewhere). Each partition is compiled
once on the worker that runs it and kept there, in a cache of the worker keyed by the fit
and the partition; a task that lands on another worker (a worker lost, work stolen) compiles
the partition again from the partition's sentences, which Dask keeps or recomputes from the
bag's graph, and a worker whose replica missed steps or does not hold the partition's
weights is sent the loop's state (the working set and the best point). So a worker lost
mid-fit costs its partitions' compile and the current separation, and the model is the
same.

The online learner (``learner="online"``; ``multikernel::estimator::parts::online``): the
features as above; each partition's share of ``L(0)`` summed on the client (the projection's
radius of one process); then each epoch the loop's state is broadcast (as bytes: its
nonzero weights and running sums, every number to the bit), every partition runs one pass
of the learner over its sentences from it on the worker it prefers (its own seeded order,
the epochs before replayed), and the client mixes the passes in partition order (the mean,
then one proximal step). A pass depends only on the state, the epoch and the partition: a
worker lost mid-epoch costs its passes, run again elsewhere to the same bytes. One
partition gives the model of one process, byte for byte.
"""

import threading
import time
import uuid
import weakref

import numpy as np

from . import _core
from ._estimators import _given_settings, _template_text
from ._inputs import _seed
from ._parser import _PARSER_SETTINGS, _source
from ._tagger import _TAGGER_SETTINGS, _label_table

TAGGER, PARSER = "tagger", "parser"

# Whether the loop sends its point to the workers instead of the step their replicas follow:
# None (the core decides at the first step: the point when it is at most twice a step's
# bytes), True, False (a seam for the tests).
_POINTS = None

# Each worker's state per fit: {worker: {(fit id, partition): CompiledPart, (fit id,
# "point"): PointReplica, (fit id, "featurizer"): PartFeaturizer}}; partitions are the
# integer keys.
_CACHES = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _worker_cache():
    from distributed import get_worker

    worker = get_worker()
    with _CACHE_LOCK:
        return _CACHES.setdefault(worker, {})


def _run_cache(dask_worker):
    """The cache of the worker a ``client.run`` function runs on (outside a task,
    ``get_worker`` finds none: ``client.run`` hands the worker as ``dask_worker``)."""
    with _CACHE_LOCK:
        return _CACHES.get(dask_worker, {})


def _forget(fit_id, dask_worker=None):
    """Drops a fit's compiled partitions, replica and counts from this worker's cache
    (``client.run``); how many entries."""
    cache = _run_cache(dask_worker)
    with _CACHE_LOCK:
        keys = [k for k in cache if k[0] == fit_id]
        for k in keys:
            del cache[k]
    return len(keys)


def _part_keys(xs):
    return _core.part_keys(list(xs))


def _tag_part(xs, ys, fmt):
    _, text, origin, keys = fmt
    return _core.TagPart(
        [list(s) for s in xs],
        [[str(label) for label in s] for s in ys],
        templates=text,
        templates_origin=origin,
        keys=keys,
    )


def _part_counts(xs, ys, fmt):
    return _tag_part(xs, ys, fmt).counts()


def _parse_part(xs, fmt):
    _, text, origin, projective = fmt
    blocks, _, _ = _source(list(xs))
    return _core.ParsePart(
        blocks, templates=text, templates_origin=origin, projective=projective
    )


def _parse_values(xs, fmt):
    return _parse_part(xs, fmt).values()


def _parse_keys(xs, fmt, values):
    return _parse_part(xs, fmt).keys(values)


def _compile(xs, ys, fmt, featurizer):
    """A partition's sentences compiled against the fit's featurizer (``fmt``: what the
    partitions hold, a tagger's or a parser's)."""
    if fmt[0] == PARSER:
        return _parse_part(xs, fmt).compile(featurizer)
    return _tag_part(xs, ys, fmt).compile(featurizer)


def _aligned(value):
    """Arrays in ``value`` (a tuple, or an array) contiguous and aligned: an array unpickled
    from the network may not be, and the core reads arrays in place."""
    if isinstance(value, np.ndarray):
        return np.require(value, requirements="AC")
    if isinstance(value, tuple):
        return tuple(_aligned(v) for v in value)
    return value


def _featurizer(cache, fit_id, featurizer, fmt):
    """The fit's featurizer on this worker, read from its bytes once."""
    key = (fit_id, "featurizer")
    with _CACHE_LOCK:
        f = cache.get(key)
        if f is None:
            read = _core.ParseFeaturizer if fmt[0] == PARSER else _core.PartFeaturizer
            f = cache[key] = read(featurizer)
        return f


def _point(cache, fit_id, featurizer, separation_step, step, index, state, compiled):
    """This worker's replica of the loop's point, at separation ``index``, holding the
    weights of the worker's partitions (``compiled`` among them): started at the first
    separation, or from the loop's ``state``, and moved by the loop's ``step``; None when
    the worker missed steps, or its replica dropped weights ``compiled`` reads (the client
    then sends the state)."""
    key = (fit_id, "point")
    with _CACHE_LOCK:
        replica = cache.get(key)
        fresh = replica is not None and replica.steps == index and replica.widen(compiled)
        if state is not None and not fresh:
            parts = [v for k, v in cache.items() if k[0] == fit_id and isinstance(k[1], int)]
            replica = _core.PointReplica(featurizer, separation_step, state, parts=parts)
            cache[key] = replica
            return replica
        if replica is None:
            if index != 0:
                return None
            replica = _core.PointReplica(featurizer, separation_step, parts=[compiled])
            cache[key] = replica
        if replica.steps == index - 1 and step is not None:
            replica.apply(_aligned(step))
        if replica.steps != index or not replica.widen(compiled):
            return None
        return replica


def _dense_point(cache, fit_id, index, dense):
    """The loop's point sent for separation ``index`` (weights, fingerprint), made aligned
    once per worker and separation (the network may hand a misaligned array)."""
    key = (fit_id, "dense")
    with _CACHE_LOCK:
        kept = cache.get(key)
        if kept is None or kept[0] != index:
            kept = cache[key] = (index, _aligned(dense))
        return kept[1]


def _separate(fit_id, part, xs, ys, fmt, featurizer, point, n_jobs, state=None):
    """Partition ``part``'s separation sums at the loop's point (``point``: the step since
    the last separation, the separation's index, the separation step, and the point itself
    with its fingerprint when the loop sends it, else None), compiled on first use on this
    worker; None when this worker's replica of the point cannot serve it."""
    step, index, separation_step, dense = point
    started = time.perf_counter()
    cache = _worker_cache()
    with _core.Threads(n_jobs):
        f = _featurizer(cache, fit_id, featurizer, fmt)
        compiled = _compiled(cache, fit_id, part, xs, ys, fmt, f)
        if dense is not None:
            w, hash_ = _dense_point(cache, fit_id, index, dense)
            ready = time.perf_counter()
            sums = compiled.separate_point(w, hash_)
        else:
            replica = _point(cache, fit_id, f, separation_step, step, index, state, compiled)
            if replica is None:
                return None
            ready = time.perf_counter()
            sums = compiled.separate_at(replica)
    _count_seconds(cache, fit_id, started, ready)
    return sums


def _compiled(cache, fit_id, part, xs, ys, fmt, featurizer):
    """Partition ``part`` compiled against the featurizer, on first use on this worker."""
    key = (fit_id, part)
    with _CACHE_LOCK:
        compiled = cache.get(key)
    if compiled is None:
        compiled = _compile(xs, ys, fmt, featurizer)
        with _CACHE_LOCK:
            cache[key] = compiled
    return compiled


def _count_seconds(cache, fit_id, started, ready):
    """Adds a task's seconds to this worker's: before ``ready`` (featurizer, compile,
    point), after it (the work), and one task."""
    with _CACHE_LOCK:
        seconds = cache.setdefault((fit_id, "seconds"), [0.0, 0.0, 0])
        seconds[0] += ready - started
        seconds[1] += time.perf_counter() - ready
        seconds[2] += 1


def _zero_total(fit_id, part, xs, ys, fmt, featurizer, plan, n_jobs):
    """Partition ``part``'s share of the online learner's ``L(0)`` (compiled here first)."""
    cache = _worker_cache()
    with _core.Threads(n_jobs):
        f = _featurizer(cache, fit_id, featurizer, fmt)
        return _compiled(cache, fit_id, part, xs, ys, fmt, f).loss_at_zero_total(plan)


def _online_pass(fit_id, part, xs, ys, fmt, featurizer, plan, state, epoch, n_jobs):
    """Partition ``part``'s pass of the online learner in ``epoch`` from the loop's
    ``state`` (bytes; None in the first epoch), as bytes. It depends only on its
    arguments: a pass lost with its worker is run again to the same bytes."""
    started = time.perf_counter()
    cache = _worker_cache()
    with _core.Threads(n_jobs):
        f = _featurizer(cache, fit_id, featurizer, fmt)
        compiled = _compiled(cache, fit_id, part, xs, ys, fmt, f)
        ready = time.perf_counter()
        out = compiled.online_pass(plan, state, epoch, part)
    _count_seconds(cache, fit_id, started, ready)
    return out


def _round(client, held, featurizer_bytes, payload, submit, n):
    """One round of a fit over ``n`` partitions: ``payload`` (None: nothing) broadcast to
    the workers, ``submit(k, featurizer, payload, workers)`` for every partition on the
    worker it prefers, the results back in partition order (submitted again, the
    featurizer and the payload scattered again, when Dask cancels them: ``_gathered``).
    ``held["featurizer"]`` is the featurizer's future, replaced when scattered again.
    Returns the results and how many workers the payload went to."""

    def scatter():
        held["payload"] = (
            None if payload is None else client.scatter(payload, broadcast=True, hash=False)
        )

    def rescatter():
        held["featurizer"] = client.scatter(featurizer_bytes, broadcast=True, hash=False)
        scatter()

    scatter()
    home = _homes(client, n)
    out = _gathered(
        client,
        lambda: [
            submit(k, held["featurizer"], held["payload"], home[k]) for k in range(n)
        ],
        rescatter,
    )
    held.pop("payload", None)
    return out, len({h[0] for h in home if h}) or 1


def _passer(client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, plan, n_jobs, record):
    """The callable ``fit_tagger_passes`` and ``fit_parser_passes`` call each epoch:
    the loop's state broadcast to the workers, every partition's pass on the worker it
    prefers, the passes' bytes back in partition order; records what crossed the network
    in ``record``."""
    held = {"featurizer": featurizer}

    def passes(state, epoch):
        t = time.perf_counter()
        out, workers = _round(
            client, held, featurizer_bytes, state,
            lambda k, f, s, home: client.submit(
                _online_pass, fit_id, k, xs[k], ys[k], fmt, f, plan, s, epoch, n_jobs,
                pure=False, **_prefer(home),
            ),
            len(xs),
        )
        record["state_bytes"].append(0 if state is None else len(state) * workers)
        record["pass_bytes"].append(sum(len(b) for b in out))
        record["epoch_seconds"].append(time.perf_counter() - t)
        return out

    return passes


def _online_plan(client, fit_id, task, estimator, n, xs, ys, fmt, featurizer, n_jobs, record):
    """The online learner's plan over ``n`` sentences with every partition's share of
    ``L(0)`` (each partition compiled on its worker on the way)."""
    keywords = _fit_keywords(
        estimator, _TAGGER_SETTINGS if task == "sequence" else _PARSER_SETTINGS
    )
    keywords.pop("verbose")
    plan = _core.online_plan(task, n, **keywords)
    home = _homes(client, len(xs))
    totals = client.gather(
        [
            client.submit(
                _zero_total, fit_id, k, xs[k], ys[k], fmt, featurizer, plan, n_jobs,
                pure=False, **_prefer(home[k]),
            )
            for k in range(len(xs))
        ]
    )
    record.update(state_bytes=[], pass_bytes=[], epoch_seconds=[])
    return _core.online_plan_with_zero(plan, totals)


def _crf_gradient(fit_id, part, xs, ys, fmt, featurizer, w, n_jobs):
    """Partition ``part``'s CRF losses summed and their gradients' sum at the weights ``w``
    (compiled here on first use), the indices narrowed to 32 bits where they fit. It
    depends only on its arguments: lost with its worker, it is computed again to the same
    values."""
    started = time.perf_counter()
    cache = _worker_cache()
    with _core.Threads(n_jobs):
        f = _featurizer(cache, fit_id, featurizer, fmt)
        compiled = _compiled(cache, fit_id, part, xs, ys, fmt, f)
        ready = time.perf_counter()
        loss, indices, values, examples = compiled.crf_gradient(_aligned(w))
    _count_seconds(cache, fit_id, started, ready)
    if len(indices) and indices[-1] <= _U32:
        indices = indices.astype(np.uint32)
    return loss, indices, values, examples


def _evaluator(client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, n_jobs, record):
    """The callable ``fit_tagger_lbfgs_parts`` calls at each point L-BFGS evaluates: the
    weights broadcast to the workers, every partition's losses and gradient sum on the
    worker it prefers, back in partition order; records what crossed the network in
    ``record``."""
    held = {"featurizer": featurizer}

    def evaluate(w):
        t = time.perf_counter()
        out, workers = _round(
            client, held, featurizer_bytes, w,
            lambda k, f, point, home: client.submit(
                _crf_gradient, fit_id, k, xs[k], ys[k], fmt, f, point, n_jobs,
                pure=False, **_prefer(home),
            ),
            len(xs),
        )
        record["point_bytes"].append(w.nbytes * workers)
        record["gradient_bytes"].append(sum(i.nbytes + v.nbytes + 16 for _, i, v, _ in out))
        record["evaluation_seconds"].append(time.perf_counter() - t)
        return [
            (
                loss,
                np.require(indices, dtype=np.uint64, requirements="AC"),
                np.require(values, dtype=np.float64, requirements="AC"),
                examples,
            )
            for loss, indices, values, examples in out
        ]

    return evaluate


def _seconds(fit_id, dask_worker=None):
    """This worker's seconds in the fit's tasks (``client.run``): compiling partitions and
    moving the point's replica, decoding, and the number of tasks."""
    cache = _run_cache(dask_worker)
    with _CACHE_LOCK:
        s = cache.get((fit_id, "seconds"))
        return None if s is None else tuple(s)


def _gather_sums(client, futures):
    """The parts' sums (a seam for the tests' fault injection)."""
    return client.gather(futures)


# Times a separation's tasks are submitted again when Dask cancels them (a worker lost).
_ATTEMPTS = 3


def _gathered(client, submit, rescatter):
    """The results of the tasks ``submit()`` submits, submitted again when Dask cancels
    them: a worker lost mid-task can leave a task forgotten by the scheduler, or without
    the scattered data it needs (the point, the featurizer), rather than recomputed; the
    data is scattered again first (``rescatter()``). Every task is idempotent (a replica
    moves only from the step before)."""
    from concurrent.futures import CancelledError

    for attempt in range(_ATTEMPTS):
        try:
            return _gather_sums(client, submit())
        except CancelledError:
            if attempt == _ATTEMPTS - 1:
                raise
            rescatter()
    raise AssertionError("unreachable")


def _homes(client, n):
    """The worker each of ``n`` partitions prefers (partition i on the i-th worker, modulo
    their number; None when no worker is known): a seam for the tests."""
    # nthreads asks the scheduler; scheduler_info() is the client's copy, which was seen
    # listing no worker for a moment between fits.
    workers = sorted(client.nthreads())
    return [[workers[i % len(workers)]] if workers else None for i in range(n)]


def _whole(part):
    """A partition as a list (a mapped bag's partitions compute to lazy iterators)."""
    return part if isinstance(part, list) else list(part)


def _prefer(workers):
    """``submit``'s keywords for a task that prefers ``workers`` (None: no preference;
    Dask refuses ``allow_other_workers`` without ``workers``)."""
    return {} if workers is None else {"workers": workers, "allow_other_workers": True}


def _partitions(client, bag):
    """The bag's partitions as futures on the cluster, each a list (recomputable from the
    bag's graph; the lists made in the partitions' own tasks, fused, so that no key of the
    graph stands between a partition and its future)."""
    return client.compute(bag.map_partitions(_whole).to_delayed())


def _separate_group(fit_id, parts, fmt, featurizer, point, n_jobs, state=None):
    """The separation sums of the partitions one task separates on its worker (``parts``:
    each partition's index, sentences and labels), as ``[(partition indices, sums)]``: one
    entry for them all when their sums merge exactly (``_core.merge_part_sums``: integer
    sums, as a tagger's CRF++ templates, string features and a parser's arcs give), so that
    fewer bytes come back and the loop's cut is the same to the bit; otherwise one entry a
    partition (None where the worker's replica cannot serve it)."""
    out = [
        (i, _separate(fit_id, i, xs, ys, fmt, featurizer, point, n_jobs, state))
        for i, xs, ys in parts
    ]
    if all(s is not None for _, s in out):
        merged = _core.merge_part_sums([s for _, s in out])
        if merged is not None:
            return [([i for i, _ in out], _narrow(merged, integers=True))]
    return [([i], None if s is None else _narrow(s, integers=False)) for i, s in out]


_U32, _I32 = np.iinfo(np.uint32).max, np.iinfo(np.int32).max


def _narrow(sums, integers):
    """Sums as they cross the network: the indices as 32-bit integers when they fit, the
    values too when they are integers that fit (``integers``: merged exactly), half the
    bytes; ``_wide`` restores them, exactly."""
    indices, values, *rest = sums
    if len(indices) and indices[-1] <= _U32:
        indices = indices.astype(np.uint32)
    if integers and len(values) and np.abs(values).max() <= _I32:
        values = values.astype(np.int32)
    return (indices, values, *rest)


def _wide(sums):
    """Sums as the core reads them (64-bit indices and values, contiguous and aligned)."""
    if sums is None:
        return None
    indices, values, *rest = sums
    return (
        np.require(indices, dtype=np.uint64, requirements="AC"),
        np.require(values, dtype=np.float64, requirements="AC"),
        *rest,
    )


def _groups(home, indices):
    """The partitions ``indices`` grouped by the worker they prefer (``home``: each
    partition's ``_homes`` entry), one task a worker: ``[(workers or None, indices)]``."""
    groups = {}
    for k in indices:
        groups.setdefault(None if home[k] is None else tuple(home[k]), []).append(k)
    return [(None if w is None else list(w), ks) for w, ks in groups.items()]


def _separator(client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, n_jobs, record):
    """The callable ``fit_tagger_parts`` and ``fit_parser_parts`` call at each point: every
    partition's sums from its worker (``ys``: the label partitions, or Nones for a
    parser), one task a worker over the partitions that prefer it, the missed partitions
    again with the loop's state; records what crossed the network in ``record``.
    ``featurizer`` is scattered from ``featurizer_bytes``, scattered again when a lost
    worker took the data its tasks need."""
    held = {"featurizer": featurizer}

    def separate(step, index, separation_step, state, dense=None):
        t = time.perf_counter()
        point = (step, index, separation_step, dense)
        held["point"] = client.scatter(point, broadcast=True, hash=False)

        def rescatter():
            held["featurizer"] = client.scatter(featurizer_bytes, broadcast=True, hash=False)
            held["point"] = client.scatter(point, broadcast=True, hash=False)

        home = _homes(client, len(xs))

        def run(indices, state):
            groups = _groups(home, indices)
            done = _gathered(
                client,
                lambda: [
                    client.submit(
                        _separate_group, fit_id, [(k, xs[k], ys[k]) for k in ks], fmt,
                        held["featurizer"], held["point"], n_jobs, state, pure=False,
                        **_prefer(w),
                    )
                    for w, ks in groups
                ],
                rescatter,
            )
            return [(tuple(ks), s) for entries in done for ks, s in entries]

        if state is None:
            entries = run(range(len(xs)), None)
        else:
            # Partitions whose worker missed steps start from the loop's state.
            entries = [e for e in record["last"] if e[1] is not None]
            missed = [k for ks, s in record["last"] if s is None for k in ks]
            record["resyncs"] += len(missed)
            entries += run(missed, state)
        held.pop("point", None)
        # In partition order: the order in which the loop adds sums that do not merge
        # exactly (real values).
        entries.sort(key=lambda e: e[0][0])
        record["last"] = entries
        if any(s is None for _, s in entries):
            return [None if s is None else _wide(s) for _, s in entries]
        sent = dense if dense is not None else step
        step_bytes = 0 if sent is None else sum(getattr(v, "nbytes", 8) for v in sent)
        record["points"] += dense is not None
        workers = len({h[0] for h in home if h}) or 1
        record["step_bytes"].append(step_bytes * workers)
        record["sums_bytes"].append(sum(s[0].nbytes + s[1].nbytes + 24 for _, s in entries))
        record["sums_count"].append(len(entries))
        sums = [_wide(s) for _, s in entries]
        record["separate_seconds"].append(time.perf_counter() - t)
        return sums

    return separate


def fit_tagger_dask(estimator, X, y, client, *, stats=None):
    """Trains ``estimator`` (a ``SequenceTagger``, ``learner="mtl"``, ``"online"`` or
    ``"lbfgs"``) on the
    bags ``X`` and ``y`` (sentences and their label lists, partitioned alike) and returns it,
    fitted. ``stats``: a dict that receives what crossed the network (bytes of the loop's step, or point,
    broadcast and of the sums gathered, per cut; ``sums_count``: how many sums came back
    per cut, one a worker when they merge exactly; ``points``: the separations that were
    sent the point), the seconds of the separations, and each worker's seconds in its tasks
    (``worker_seconds``: point and compile, decoding, tasks). The online learner's ``stats``:
    per epoch, ``state_bytes`` (the loop's state out, all workers), ``pass_bytes`` (the
    passes in) and ``epoch_seconds``. The batch CRF's: per evaluation of the objective,
    ``point_bytes`` (the weights out, all workers), ``gradient_bytes`` (the partitions'
    gradient sums in) and ``evaluation_seconds``."""
    _check_learner(estimator, "tagger")
    estimator._validate_params()
    import dask.bag as db

    for bag, what in ((X, "X"), (y, "y")):
        if not isinstance(bag, db.Bag):
            raise TypeError(
                f"{what} is a {type(bag).__name__}: a dask.bag.Bag (of sentences, of label "
                "lists)"
            )
    if X.npartitions != y.npartitions:
        raise ValueError(
            f"X has {X.npartitions} partitions and y {y.npartitions}: sentences and labels "
            "are partitioned alike (the same bag operations on both)"
        )
    started = time.perf_counter()
    text, origin = _template_text(estimator.templates)
    xs = _partitions(client, X)
    ys = _partitions(client, y)
    sizes = client.gather([client.submit(len, p) for p in xs])
    label_sizes = client.gather([client.submit(len, p) for p in ys])
    if sizes != label_sizes:
        raise ValueError(
            f"partitions of X hold {sizes} sentences and those of y {label_sizes}: one "
            "label list per sentence"
        )
    n = sum(sizes)
    if n == 0:
        raise ValueError("the training set has no sentences")
    values = {}
    for part in client.gather([client.submit(_label_table, p) for p in ys]):
        _label_table([list(part.values())], values)
    if all(isinstance(v, str) for v in values.values()):
        values = None
    keys = None
    if text is None:
        keys = _core.merge_part_keys(client.gather([client.submit(_part_keys, p) for p in xs]))
    fmt = (TAGGER, text, origin, keys)
    counts = client.gather(
        [client.submit(_part_counts, xp, yp, fmt) for xp, yp in zip(xs, ys)]
    )
    featurizer_bytes, dim = _core.merge_tag_counts(counts)
    del counts
    featurizer = client.scatter(featurizer_bytes, broadcast=True, hash=False)
    fit_id = uuid.uuid4().hex
    n_jobs = 1 if estimator.n_jobs is None else estimator.n_jobs
    record = {"dim": dim, "partitions": len(xs), "step_bytes": [], "sums_bytes": [],
              "resyncs": 0, "separate_seconds": [], "points": 0, "sums_count": []}

    separate = _separator(
        client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, n_jobs, record
    )

    # The attributes that name the state features, as over all the sentences in order.
    attributes = [
        _aligned(a)
        for a in client.gather(
            [
                client.submit(_attributes, fit_id, xp, yp, fmt, featurizer)
                for xp, yp in zip(xs, ys)
            ]
        )
    ]

    if estimator.learner == "online":
        plan = _online_plan(
            client, fit_id, "sequence", estimator, n, xs, ys, fmt, featurizer, n_jobs, record
        )
        record["setup_seconds"] = time.perf_counter() - started
        passes = _passer(
            client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, plan, n_jobs, record
        )

        def fit():
            return _core.fit_tagger_passes(
                featurizer_bytes,
                plan,
                passes,
                **_fit_keywords(estimator, _TAGGER_SETTINGS),
                attributes=attributes,
            )

        tagger, info = _run_fit(client, fit_id, fit, record, stats)
        del attributes
        return estimator._fitted(tagger, info, values)

    if estimator.learner == "lbfgs":
        record.update(point_bytes=[], gradient_bytes=[], evaluation_seconds=[])
        record["setup_seconds"] = time.perf_counter() - started
        evaluate = _evaluator(
            client, fit_id, xs, ys, fmt, featurizer, featurizer_bytes, n_jobs, record
        )

        def fit():
            return _core.fit_tagger_lbfgs_parts(
                featurizer_bytes,
                n,
                evaluate,
                **_fit_keywords(estimator, _TAGGER_SETTINGS),
                attributes=attributes,
            )

        tagger, info = _run_fit(client, fit_id, fit, record, stats)
        del attributes
        return estimator._fitted(tagger, info, values)

    record["setup_seconds"] = time.perf_counter() - started

    def fit():
        return _core.fit_tagger_parts(
            featurizer_bytes,
            n,
            separate,
            **_fit_keywords(estimator, _TAGGER_SETTINGS),
            attributes=attributes,
            points=_POINTS,
        )

    tagger, info = _run_fit(client, fit_id, fit, record, stats)
    del attributes
    return estimator._fitted(tagger, info, values)


def _fit_keywords(estimator, settings):
    """The keywords of the core's fit over parts from the estimator: ``C``, the seed, the
    verbosity and the settings given (of ``settings``, the tagger's or the parser's)."""
    return dict(
        c=None if estimator.C is None else float(estimator.C),
        seed=_seed(estimator.random_state),
        verbose=bool(estimator.verbose),
        settings=_given_settings(estimator, settings),
    )


def _check_learner(estimator, what):
    """Fails unless ``estimator`` (a tagger or a parser) trains by a learner ``fit_dask``
    runs over partitions: the cutting plane (``"mtl"``, exactly), the online learner
    (``"online"``, by iterative parameter mixing), or for a tagger the batch CRF
    (``"lbfgs"``, the partitions' gradients added)."""
    learners = ("mtl", "online", "lbfgs") if what == "tagger" else ("mtl", "online")
    if estimator.learner not in learners:
        batch = (
            ", or by the batch CRF with the partitions' gradients added at each point "
            "(learner='lbfgs')"
            if what == "tagger"
            else ""
        )
        raise ValueError(
            f"fit_dask trains a {what} by the cutting plane (learner='mtl': the model of one "
            "process), by the online learner's passes over the partitions, mixed each "
            f"epoch (learner='online'){batch}; got learner={estimator.learner!r}: name one"
        )


def _run_fit(client, fit_id, fit, record, stats):
    """``fit()`` (the core's loop over the parts), then each worker's seconds in
    ``record``; the fit forgotten on the workers whatever happens; ``record`` copied into
    ``stats`` (a dict or None). Returns what ``fit()`` returns."""
    try:
        out = fit()
        record["worker_seconds"] = {
            w: s for w, s in client.run(_seconds, fit_id).items() if s is not None
        }
    finally:
        client.run(_forget, fit_id)
    record.pop("last", None)
    if stats is not None:
        stats.update(record)
    return out


def _attributes(fit_id, xs, ys, fmt, featurizer):
    f = _featurizer(_worker_cache(), fit_id, featurizer, fmt)
    return _tag_part(xs, ys, fmt).attributes(f)


def _gold_arcs(fit_id, xs, fmt, featurizer):
    f = _featurizer(_worker_cache(), fit_id, featurizer, fmt)
    return _parse_part(xs, fmt).gold_arcs(f)


def fit_parser_dask(estimator, X, client, *, stats=None):
    """Trains ``estimator`` (a ``DependencyParser``, ``learner="mtl"`` or ``"online"``) on
    the bag ``X`` of sentences (CoNLL-U blocks or TokenLists, each with its tree) and
    returns it, fitted: with the cutting plane, the model one process trains on all the
    sentences in the bag's order. ``stats`` as
    ``fit_tagger_dask``'s, and ``arcs_bytes``: the gold arcs gathered for the labeler."""
    _check_learner(estimator, "parser")
    estimator._validate_params()
    import dask.bag as db

    if not isinstance(X, db.Bag):
        raise TypeError(
            f"X is a {type(X).__name__}: a dask.bag.Bag of sentences (CoNLL-U blocks or "
            "TokenLists, each with its tree)"
        )
    started = time.perf_counter()
    text, origin = _template_text(estimator.templates)
    fmt = (PARSER, text, origin, bool(estimator.projective))
    xs = _partitions(client, X)
    n = sum(client.gather([client.submit(len, p) for p in xs]))
    if n == 0:
        raise ValueError("the training set has no sentences")
    values = _core.merge_parse_values(
        client.gather([client.submit(_parse_values, p, fmt) for p in xs])
    )
    shipped = client.scatter(values, broadcast=True, hash=False)
    keys = _core.merge_parse_keys(
        client.gather([client.submit(_parse_keys, p, fmt, shipped) for p in xs])
    )
    del shipped
    featurizer_bytes, dim = _core.parse_featurizer(
        values, keys, templates=text, templates_origin=origin, projective=fmt[3]
    )
    del values, keys
    featurizer = client.scatter(featurizer_bytes, broadcast=True, hash=False)
    fit_id = uuid.uuid4().hex
    n_jobs = 1 if estimator.n_jobs is None else estimator.n_jobs
    record = {"dim": dim, "partitions": len(xs), "step_bytes": [], "sums_bytes": [],
              "resyncs": 0, "separate_seconds": [], "points": 0, "sums_count": []}
    separate = _separator(
        client, fit_id, xs, [None] * len(xs), fmt, featurizer, featurizer_bytes, n_jobs, record
    )

    def gold_arcs():
        arcs = client.gather(
            [client.submit(_gold_arcs, fit_id, xp, fmt, featurizer) for xp in xs]
        )
        arcs = None if any(a is None for a in arcs) else arcs
        record["arcs_bytes"] = 0 if arcs is None else sum(len(a) for a in arcs)
        return arcs

    if estimator.learner == "online":
        nones = [None] * len(xs)

        def fit():
            plan = _online_plan(
                client, fit_id, "parsing", estimator, n, xs, nones, fmt, featurizer, n_jobs,
                record,
            )
            arcs = gold_arcs()
            record["setup_seconds"] = time.perf_counter() - started
            passes = _passer(
                client, fit_id, xs, nones, fmt, featurizer, featurizer_bytes, plan, n_jobs,
                record,
            )
            return _core.fit_parser_passes(
                featurizer_bytes,
                plan,
                passes,
                arcs=arcs,
                **_fit_keywords(estimator, _PARSER_SETTINGS),
            )

        parser, info = _run_fit(client, fit_id, fit, record, stats)
        return estimator._fitted(parser, info)

    def fit():
        arcs = gold_arcs()
        record["setup_seconds"] = time.perf_counter() - started
        return _core.fit_parser_parts(
            featurizer_bytes,
            n,
            separate,
            arcs=arcs,
            **_fit_keywords(estimator, _PARSER_SETTINGS),
            points=_POINTS,
        )

    parser, info = _run_fit(client, fit_id, fit, record, stats)
    return estimator._fitted(parser, info)
