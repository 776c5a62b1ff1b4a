"""What Dask's messages alone cost a separation of `fit_dask`, with no decoding: 2 process
workers, 4 partitions, a point of `--point` bytes sent and `--sums` bytes of sums a
partition returned, timed over 60 rounds (the first 5 dropped), for three ways of sending:

- `scatter4`: the point scattered to every worker, one task a partition (fit_dask before
  one task a worker);
- `scatter2`: the point scattered, one task a worker over its 2 partitions (fit_dask now);
- `actor`: an actor a worker holding its partitions, the point passed to a method call
  (no scheduler between the client and the worker).

    python benches/peers/dask_fit/messages.py [--point 8000] [--sums 16000]

Prints each way's median and mean seconds a round. Needs dask[distributed] and numpy.
"""

import argparse
import time

import distributed
import numpy as np


def work(point, k, sums):
    """A part's stand-in: reads the point, returns sums of the given size."""
    s = float(point[::4096].sum())
    n = sums // 16
    return np.arange(n, dtype=np.uint64) * 3, np.full(n, s + k)


def many(point, ks, sums):
    return [work(point, k, sums) for k in ks]


class Parts:
    """An actor's partitions."""

    def __init__(self, ks, sums):
        self.ks, self.sums = ks, sums

    def separate(self, point):
        return many(point, self.ks, self.sums)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--point", type=float, default=8000)
    ap.add_argument("--sums", type=float, default=16000)
    ap.add_argument("--rounds", type=int, default=60)
    a = ap.parse_args()
    sums = int(a.sums)
    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     protocol="tcp", host="127.0.0.1",
                                     dashboard_address="127.0.0.1:0")
    client = distributed.Client(local)
    try:
        client.wait_for_workers(2)
        workers = sorted(client.nthreads())
        point = np.random.default_rng(0).random(int(a.point) // 8)
        actors = [client.submit(Parts, [2 * i, 2 * i + 1], sums, actor=True,
                                workers=[w]).result() for i, w in enumerate(workers)]
        where = {"workers": None, "allow_other_workers": True}

        def scatter4():
            p = client.scatter(point, broadcast=True, hash=False)
            return client.gather([
                client.submit(work, p, k, sums, pure=False,
                              **{**where, "workers": [workers[k % 2]]}) for k in range(4)])

        def scatter2():
            p = client.scatter(point, broadcast=True, hash=False)
            return client.gather([
                client.submit(many, p, [2 * i, 2 * i + 1], sums, pure=False,
                              **{**where, "workers": [w]}) for i, w in enumerate(workers)])

        def actor():
            return [f.result() for f in [x.separate(point) for x in actors]]

        for name, way in (("scatter4", scatter4), ("scatter2", scatter2), ("actor", actor)):
            seconds = []
            for r in range(a.rounds):
                point[0] = r
                t = time.perf_counter()
                way()
                seconds.append(time.perf_counter() - t)
            kept = sorted(seconds[5:])
            print(f"{name}: median {1e3 * kept[len(kept) // 2]:.1f} ms, mean "
                  f"{1e3 * sum(kept) / len(kept):.1f} ms a round (point {a.point / 1e6:.3f} "
                  f"MB, sums {sums / 1e6:.3f} MB a partition)", flush=True)
    finally:
        client.close()
        local.close()


if __name__ == "__main__":
    main()
