"""The Dask fit tests' fault: a cluster of process workers (each with a nanny that starts a
new worker when one dies) whose worker of partition 0 is killed with SIGKILL while the
client gathers the parts' sums of a chosen separation."""

import contextlib
import os
import signal

import distributed

from multikernel import _dask_parts


@contextlib.contextmanager
def killing_cluster(monkeypatch, at):
    """A client of 2 process workers (one thread each); at the ``at``-th gathering of
    sums the worker holding partition 0's task is killed. Yields the client and the list
    of gatherings (the number of tasks each)."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, protocol="tcp",
        host="127.0.0.1", dashboard_address="127.0.0.1:0",
    )
    client = distributed.Client(cluster)
    calls = []
    gather = _dask_parts._gather_sums

    def killing(c, futures):
        calls.append(len(futures))
        if len(calls) == at:
            who = c.who_has([futures[0]])
            victim = next(iter(who.values()))[0] if who and next(iter(who.values())) else None
            victim = victim or next(iter(c.scheduler_info()["workers"]))
            pid = c.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGKILL)
        return gather(c, futures)

    monkeypatch.setattr(_dask_parts, "_gather_sums", killing)
    try:
        yield client, calls
    finally:
        client.close()
        cluster.close()


def forget_replicas_at(monkeypatch, index):
    """Every worker's replica of the point dropped at separation ``index`` (as a worker that
    joined mid-fit has none), so that it is sent the loop's state; points never sent, so
    that the replicas are used."""
    point = _dask_parts._point

    def forgetful(cache, fit_id, featurizer, separation_step, step, at, state, compiled):
        if at == index and state is None:
            cache.pop((fit_id, "point"), None)
        return point(cache, fit_id, featurizer, separation_step, step, at, state, compiled)

    monkeypatch.setattr(_dask_parts, "_point", forgetful)
    monkeypatch.setattr(_dask_parts, "_POINTS", False)
