"""MKLpy (PyPI release 0.6) beside `multikernel reproduce uci`, on the same rows and kernels.

Rows: the classification tables of `reproduce uci` (sonar, ionosphere, breast-cancer,
pima-diabetes, glass, ringnorm, waveform). MKLpy's algorithms are classifiers only (binary,
multiclass by its one-vs-rest wrapper), so boston-housing (regression) is skipped.

Same as `reproduce uci`:
- Splits: the training / test rows of each split are read from the uci-splits.json that
  `multikernel reproduce uci --out-dir DIR` writes (run.sh writes it): our splits come from a
  seeded ChaCha8 shuffle in Rust that Python does not reproduce, so they are read, not redrawn.
- Tables: the shipped ones through python/tests/tables.py (checked equal, row for row, to the
  CLI's copy in DIR/data, so that the split indices mean the same rows); the generated ones
  (ringnorm, waveform) from DIR/data.
- Features standardized on the training part (population standard deviation; a constant
  column is only centred).
- Kernels (crates/multikernel/src/reproduce/uci.rs, `methods`): linear, polynomial
  (x.x' + 1)^2 and Gaussian exp(-||x - x'||^2 / (2 sigma2)) with the median heuristic
  (sigma2 = median over training pairs i < j of ||x_i - x_j||^2, halved), each scaled to unit
  mean diagonal on the training rows (`norm=trace`); computed here with numpy as precomputed
  matrices (train x train, test x train).
- C from C_GRID by 3-fold stratified validation on the training part, mean accuracy, ties to
  the smaller C. The folds are scikit-learn's StratifiedKFold(shuffle, seed 1000 * seed +
  split), not the Rust folds.

MKLpy's side (every algorithm with scikit-learn's SVC(C, kernel="precomputed") as the base
learner that is trained on the combined kernel):
  AverageMKL  uniform weights
  EasyMKL     lam = 0.1 (MKLpy's default; not tuned)
  GRAM        radius/margin ratio, learning_rate 0.01, ReduceOnWorsening scheduler
  MEMO        margin maximization (theta = 0, MKLpy's default), same optimizer settings
  RMKL        radius-margin MKL; its own C is set to the SVC's C (so its weights depend on C)
GRAM, MEMO and RMKL stop after --max-iter weight steps (MKLpy's default is 1,000; it has no
tolerance test, only the scheduler's learning-rate floor). MKLpy 0.6 has no SimpleMKL
(its README: "work in progress").
For the algorithms whose kernel weights do not depend on C (all but RMKL), the validation
learns the weights once per fold and refits only the SVC for each C (the same models as one
MKLpy fit per C, fewer solves). The final model on the whole training part is one ordinary
MKLpy `fit` with the chosen C: its wall time is `fit seconds` (kernel matrices excluded).

A fit that raises (cvxopt's QP can fail with "domain error") counts as failed: a C whose
validation has a failed fold is never chosen, a split whose final fit fails is left out of the
mean and counted in `failed`, with the first error message in the JSON.

Usage (run.sh builds the environment and writes the splits):
    python run.py --splits-file DIR/uci-splits.json [--splits 10] [--tables sonar,glass]
                  [--algorithms AverageMKL,EasyMKL] [--max-iter 20] [--jobs 2] [--json out.json]
With --jobs 2 two rows run at once, one thread each: their seconds are then those of one core
of a busy 2-core machine.
"""

import argparse
import contextlib
import csv
import io
import json
import multiprocessing
import platform
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from tables import UCI, read_table  # noqa: E402

import torch  # noqa: E402
from MKLpy.algorithms import GRAM, MEMO, RMKL, AverageMKL, EasyMKL  # noqa: E402
from MKLpy.scheduler import ReduceOnWorsening  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

# crates/multikernel/src/reproduce/uci.rs
C_GRID = [0.1, 1.0, 10.0, 100.0, 1000.0]
FOLDS = 3
KERNELS = ["linear", "poly2", "rbf"]
LEARNING_RATE = 0.01
EASY_LAM = 0.1


def algorithms(max_iter):
    """name -> (factory of an unfitted model for C, whether the kernel weights depend on C)."""
    def two_step(cls, **kw):
        return lambda c: cls(learner=SVC(C=c), max_iter=max_iter, learning_rate=LEARNING_RATE,
                             scheduler=ReduceOnWorsening(), **kw)
    return {
        "AverageMKL": (lambda c: AverageMKL(learner=SVC(C=c)), False),
        "EasyMKL": (lambda c: EasyMKL(learner=SVC(C=c), lam=EASY_LAM), False),
        "GRAM": (two_step(GRAM), False),
        "MEMO": (two_step(MEMO), False),
        "RMKL": (lambda c: two_step(RMKL, C=c)(c), True),
    }


def read_csv(path):
    """Features and labels of a CSV with a header, the target last (as tables.read_table)."""
    with open(path, newline="") as f:
        body = [r for r in list(csv.reader(f))[1:] if r]
    return np.array([[float(v) for v in r[:-1]] for r in body]), np.array([r[-1] for r in body])


def load(name, data_dir):
    """The table's rows: the shipped file through tables.py (checked against the CLI's copy,
    which the split indices refer to), or the CLI's copy of a generated table."""
    copy = data_dir / f"{name}.csv"
    if (UCI / f"{name}.csv").exists():
        x, y = read_table(name)
        if copy.exists():
            xc, yc = read_csv(copy)
            if x.shape != xc.shape or not np.allclose(x, xc, rtol=1e-12, atol=0) or list(y) != list(yc):
                sys.exit(f"{name}: data/uci/{name}.csv and {copy} differ: the split indices "
                         "would not name the same rows")
        return x, y
    if copy.exists():
        return read_csv(copy)
    sys.exit(f"{name}: neither data/uci/{name}.csv nor {copy} exists")


def standardize(train, test):
    """z-scores with the training part's mean and population standard deviation; a column
    whose spread is 0 (or below 1e-12 of its largest magnitude) only centred."""
    mean = train.mean(axis=0)
    std = train.std(axis=0)
    max_abs = np.abs(train).max(axis=0)
    scale = np.where((std > 1e-12 * max_abs) & (std > 0), std, 1.0)
    return (train - mean) / scale, (test - mean) / scale


def sq_dists(a, b):
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


def median_sigma2(x):
    """Median heuristic of the Gaussian width (kernel/heuristics.rs; every training part here
    has at most 1,000 rows, so all pairs i < j enter, as in Rust)."""
    d = sq_dists(x, x)[np.triu_indices(len(x), 1)]
    if d.size == 0:
        return 1.0
    med = np.median(d)
    if med > 0:
        return med / 2.0
    pos = d[d > 0]
    return np.median(pos) / 2.0 if pos.size else 1.0


def kernels(xtr, xte):
    """The three kernels of `reproduce uci`, each scaled by 1 / (mean training diagonal)."""
    s2 = median_sigma2(xtr)
    funcs = [
        lambda a, b: a @ b.T,
        lambda a, b: (a @ b.T + 1.0) ** 2,
        lambda a, b: np.exp(-sq_dists(a, b) / (2.0 * s2)),
    ]
    ktr, kte = [], []
    for f in funcs:
        k = f(xtr, xtr)
        mean_diag = np.mean(np.diag(k))
        c = 1.0 / mean_diag if mean_diag > 0 and np.isfinite(mean_diag) else 1.0
        ktr.append(torch.from_numpy(np.ascontiguousarray(k * c)))
        kte.append(torch.from_numpy(np.ascontiguousarray(f(xte, xtr) * c)))
    return ktr, kte


def quiet(f):
    """Runs f with MKLpy's debugging prints (MEMO prints shapes) and warnings swallowed."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return f()


def accuracy(model, klist, y):
    pred = quiet(lambda: model.predict(klist))
    pred = np.asarray(pred.numpy() if isinstance(pred, torch.Tensor) else pred, dtype=float)
    return float(np.mean(pred == y))


def weights_of(model):
    """Kernel weights (L, P, G); for a multiclass model the mean over its one-vs-rest parts."""
    sol = model.solution
    sols = list(sol.values()) if isinstance(sol, dict) else [sol]
    w = [np.asarray(s.weights.numpy() if isinstance(s.weights, torch.Tensor) else s.weights, dtype=float)
         for s in sols]
    return np.mean(w, axis=0)


def refit_learner(model, c):
    """The same MKL solution with the SVC retrained at C = c (for C-independent weights)."""
    parts = model.clf.estimators_.values() if model.multiclass_ else [model]
    for part in parts:
        part.learner = SVC(C=c, kernel="precomputed")
        quiet(lambda: part.learner.fit(part.solution.ker_matrix, part.Y))
    return model


def sub(klist, rows, cols):
    r, c = torch.as_tensor(rows), torch.as_tensor(cols)
    return [k[r][:, c] for k in klist]


def choose_c(make, c_dependent, ktr, ytr, seed):
    """C by 3-fold stratified validation (mean accuracy; a failed fold disqualifies a C;
    ties to the first, smallest C), and the first error met (or None)."""
    folds = list(StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(np.zeros(len(ytr)), ytr))
    scores = {c: [] for c in C_GRID}
    error = None
    for tr, va in folds:
        kt, kv = sub(ktr, tr, tr), sub(ktr, va, tr)
        yt = torch.as_tensor(ytr[tr])
        base = None
        for c in C_GRID:
            try:
                if c_dependent or base is None:
                    base = quiet(lambda: make(c).fit(kt, yt))
                    model = base
                else:
                    model = refit_learner(base, c)
                scores[c].append(accuracy(model, kv, ytr[va]))
            except Exception as e:  # noqa: BLE001 - a failed solve disqualifies this C
                error = error or f"{type(e).__name__}: {e}"
                scores[c].append(np.nan)
                if not c_dependent:
                    base = None
    best, best_v = None, -np.inf
    for c in C_GRID:
        v = np.mean(scores[c])
        if np.isfinite(v) and v > best_v:
            best, best_v = c, v
    return best, error


def run_split(make, c_dependent, x, y, train, test, seed):
    xtr, xte = standardize(x[train], x[test])
    ktr, kte = kernels(xtr, xte)
    ytr, yte = y[train], y[test]
    t = time.perf_counter()
    c, error = choose_c(make, c_dependent, ktr, ytr, seed)
    select = time.perf_counter() - t
    if c is None:
        raise RuntimeError(f"every C failed in validation (first: {error})")
    t = time.perf_counter()
    model = quiet(lambda: make(c).fit(ktr, torch.as_tensor(ytr)))
    fit = time.perf_counter() - t
    return {"accuracy": accuracy(model, kte, yte), "fit_seconds": fit, "select_seconds": select,
            "C": c, "weights": weights_of(model).tolist()}


def mean_std(v):
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return None, None
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else 0.0)


def run_row(task):
    """One row: an algorithm on every split of a table."""
    name, splits, data_dir, algo, max_iter, seed = task
    x, labels = load(name, data_dir)
    classes, y = np.unique(labels, return_inverse=True)
    make, c_dependent = algorithms(max_iter)[algo]
    results, errors = [], []
    for s, sp in enumerate(splits):
        try:
            results.append(run_split(make, c_dependent, x, y, np.array(sp["train"]),
                                     np.array(sp["test"]), seed * 1000 + s))
        except Exception as e:  # noqa: BLE001 - counted, reported
            errors.append(f"split {s}: {type(e).__name__}: {e}")
    values = [r["accuracy"] for r in results]
    mean, std = mean_std(values)
    row = {
        "dataset": name, "method": algo, "metric": "accuracy", "classes": len(classes),
        "mean": mean, "std": std, "values": values, "n": len(values),
        "failed": len(errors), "errors": errors[:3],
        "train_seconds": mean_std([r["fit_seconds"] for r in results])[0],
        "select_seconds": mean_std([r["select_seconds"] for r in results])[0],
        "C_per_split": [r["C"] for r in results],
        "C_median": float(np.median([r["C"] for r in results])) if results else None,
        "weights": (dict(zip(KERNELS, np.mean([r["weights"] for r in results], axis=0).tolist()))
                    if results else None),
        "fit_seconds_per_split": [r["fit_seconds"] for r in results],
    }
    print(f"{name:<14} {algo:<10} " + (f"{100 * mean:5.1f} +- {100 * std:4.1f}" if results else "failed")
          + f"  fit {row['train_seconds'] or 0:.3f} s  select {row['select_seconds'] or 0:.2f} s"
          + (f"  failed {len(errors)}" if errors else ""), file=sys.stderr, flush=True)
    return row


def versions():
    names = ["MKLpy", "torch", "cvxopt", "scikit-learn", "numpy", "scipy"]
    out = {n: metadata.version(n) for n in names}
    out["python"] = platform.python_version()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits-file", type=Path, required=True,
                    help="uci-splits.json written by `multikernel reproduce uci --out-dir DIR`")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--tables", help="comma separated (default: every classification table)")
    ap.add_argument("--algorithms", help="comma separated, of " + ", ".join(algorithms(1)))
    ap.add_argument("--max-iter", type=int, default=20,
                    help="weight steps of GRAM, MEMO and RMKL (MKLpy's default: 1000)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="rows (table x algorithm) run at once, each on one thread (default 1)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()

    spec = json.loads(a.splits_file.read_text())
    data_dir = a.splits_file.parent / "data"
    by_name = {t["name"]: t for t in spec["tables"]}
    if a.tables:
        names = [n.strip() for n in a.tables.split(",")]
        for n in names:
            if n not in by_name:
                sys.exit(f"--tables: unknown table '{n}' (known: {', '.join(by_name)})")
            if by_name[n]["task"] == "regression":
                sys.exit(f"--tables: {n} is a regression table; MKLpy's algorithms are classifiers")
    else:
        names = [t["name"] for t in spec["tables"] if t["task"] != "regression"]
    algos = algorithms(a.max_iter)
    chosen = [s.strip() for s in a.algorithms.split(",")] if a.algorithms else list(algos)
    for n in chosen:
        if n not in algos:
            sys.exit(f"--algorithms: unknown '{n}' (known: {', '.join(algos)})")

    seed = spec["seed"]
    vers = versions()
    print(f"MKLpy {vers['MKLpy']}, torch {vers['torch']}, cvxopt {vers['cvxopt']}, "
          f"scikit-learn {vers['scikit-learn']}; {a.splits} splits; C from {C_GRID} by {FOLDS}-fold "
          f"validation; GRAM/MEMO/RMKL max_iter {a.max_iter}", file=sys.stderr, flush=True)
    tasks = []
    for name in names:
        t = by_name[name]
        if len(t["splits"]) < a.splits:
            sys.exit(f"{name}: {a.splits_file} has {len(t['splits'])} splits, --splits asks for {a.splits}")
        load(name, data_dir)  # checks the rows before any work starts
        tasks.extend((name, t["splits"][: a.splits], data_dir, algo, a.max_iter, seed) for algo in chosen)
    start = time.perf_counter()
    if a.jobs > 1:
        # The slow rows (the iterative algorithms, the larger tables) first, for the balance.
        cost = {"RMKL": 3, "MEMO": 2, "GRAM": 1}
        order = sorted(range(len(tasks)), key=lambda i: (-cost.get(tasks[i][3], 0),
                                                         -len(tasks[i][1][0]["train"])))
        with multiprocessing.Pool(a.jobs, initializer=torch.set_num_threads, initargs=(1,)) as pool:
            done = pool.map(run_row, [tasks[i] for i in order], chunksize=1)
        rows = [None] * len(tasks)
        for i, row in zip(order, done):
            rows[i] = row
    else:
        rows = [run_row(task) for task in tasks]
    total = time.perf_counter() - start

    print("| dataset | algorithm | accuracy % (mean +- std) | C (median) | weights L/P/G | fit s (mean) | "
          "selection s (mean) | failed splits |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        acc = f"{100 * r['mean']:.1f} +- {100 * r['std']:.1f}" if r["n"] else "-"
        w = "/".join(f"{r['weights'][k]:.2f}" for k in KERNELS) if r["weights"] else "-"
        c = f"{r['C_median']:g}" if r["C_median"] is not None else "-"
        fit = f"{r['train_seconds']:.3f}" if r["train_seconds"] is not None else "-"
        sel = f"{r['select_seconds']:.2f}" if r["select_seconds"] is not None else "-"
        print(f"| {r['dataset']} | {r['method']} | {acc} | {c} | {w} | {fit} | {sel} | {r['failed']} |")
    print(f"\nwhole run {total:.0f} s", file=sys.stderr)
    if a.json:
        out = {
            "experiment": "uci-mklpy", "versions": vers,
            "settings": {"splits": a.splits, "c_grid": C_GRID, "folds": FOLDS, "max_iter": a.max_iter,
                         "learning_rate": LEARNING_RATE, "easymkl_lam": EASY_LAM,
                         "splits_file": str(a.splits_file), "seed": seed,
                         "jobs": a.jobs},
            "seconds": total, "rows": rows,
        }
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=1))
        print(f"rows written to {a.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
