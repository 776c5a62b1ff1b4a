"""fit_dask on ringnorm (issue 17): one and two Dask workers (in-process LocalCluster on the
loopback interface, one thread each), three RFF maps of the Gaussian kernel (1,024
features each, median-heuristic width x 1, 4, 1/4), C = 1, 5 epochs; prints seconds and
test accuracy per worker count.

    python benches/peers/dask_scale/run.py TRAIN.csv TEST.csv [--workers 1 2] [--epochs 5]

The CSV files have a header (x1..x20,y); the last column is the label.
"""

import argparse
import time

import dask.array as da
import distributed
import numpy as np
import pandas as pd

from multikernel import MKLClassifier
from multikernel.dask import fit_dask

KERNELS = [f"rbf:scale={s},approx=rff,dim=1024" for s in (1, 4, 0.25)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--block-rows", type=int, default=10_000)
    a = ap.parse_args()
    tr, te = pd.read_csv(a.train), pd.read_csv(a.test)
    X, y = tr.iloc[:, :-1].to_numpy(np.float64), tr.iloc[:, -1].astype(str).to_numpy()
    Xt, yt = te.iloc[:, :-1].to_numpy(np.float64), te.iloc[:, -1].astype(str).to_numpy()
    for w in a.workers:
        cluster = distributed.LocalCluster(
            n_workers=w, threads_per_worker=1, processes=False, protocol="tcp",
            host="127.0.0.1", dashboard_address="127.0.0.1:0",
        )
        client = distributed.Client(cluster)
        dX = da.from_array(X, chunks=(a.block_rows, -1))
        dy = da.from_array(y, chunks=(a.block_rows,))
        est = MKLClassifier(kernels=KERNELS, C=1.0, random_state=0)
        t0 = time.perf_counter()
        fit_dask(est, dX, dy, client=client, epochs=a.epochs)
        secs = time.perf_counter() - t0
        acc = est.score(Xt, yt)
        print(
            f"workers={w} rows={len(X)} epochs={a.epochs} seconds={secs:.1f} "
            f"test_accuracy={100 * acc:.2f}% rows_seen={est.incremental_.rows_seen} "
            f"weights={np.round(est.kernel_weights_, 3).tolist()}",
            flush=True,
        )
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
