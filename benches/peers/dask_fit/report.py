"""What run.py (taggers) and parser.py (parsers) share: the LocalCluster of process workers
with one thread each, and the lines that report a `fit_dask` run from its `stats`."""

import contextlib

import distributed


def mean(v):
    return sum(v) / max(1, len(v))


@contextlib.contextmanager
def cluster(workers):
    """A client of a LocalCluster of `workers` process workers (one thread each, loopback
    TCP), the package already imported on each."""
    local = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, protocol="tcp",
        host="127.0.0.1", dashboard_address="127.0.0.1:0",
    )
    client = distributed.Client(local)
    try:
        client.wait_for_workers(workers)
        client.run(lambda: __import__("multikernel._dask_parts") and None)
        yield client
    finally:
        client.close()
        local.close()


def report(workers, seconds, stats, same, note, extra=""):
    """Prints a run: seconds, separations, bytes per cut, `extra`, whether the model's bytes
    equal the one process's (`same`), the fit's first note, and each worker's seconds."""
    cuts = len(stats["separate_seconds"])
    print(
        f"fit_dask workers={workers} partitions={stats['partitions']}: {seconds:.1f} s, "
        f"setup {stats['setup_seconds']:.1f} s, separations "
        f"{sum(stats['separate_seconds']):.1f} s over {cuts}; per cut "
        f"{mean(stats['step_bytes'][1:]) / 1e3:.0f} kB of loop step or point out (all workers), "
        f"{mean(stats['sums_bytes']) / 1e3:.0f} kB of sums in (dense weights would be "
        f"{stats['dim'] * 8 / 1e6:.1f} MB a worker); the point itself sent at "
        f"{stats['points']} separations{extra}; resyncs {stats['resyncs']}; "
        f"same bytes: {same}; {note}",
        flush=True,
    )
    for worker, (point, decode, tasks) in sorted(stats["worker_seconds"].items()):
        print(f"  worker {worker}: {tasks} tasks, {point:.1f} s compiling and moving the "
              f"point's replica, {decode:.1f} s decoding", flush=True)
