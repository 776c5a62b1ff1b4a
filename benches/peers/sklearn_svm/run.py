"""scikit-learn's SVC / SVR beside `multikernel reproduce uci`, on exactly the same rows.

Reads DIR/uci-splits.json and DIR/data/NAME.csv, which `multikernel reproduce uci
--out-dir DIR` writes (every table, the generated ones too, and the training / test rows
of each split), and writes rows in the JSON vocabulary of `reproduce uci --json`:
dataset, method, metric, mean, std, values, n, train_seconds, select_seconds.

Rows per table (features standardized on the training part, as the Rust side does):
  svc-default  SVC() / SVR() with scikit-learn's defaults (C = 1, gamma = "scale")
  svc-tuned    5-fold (stratified for classes) grid search on the training part over
               C in {0.1, 1, 10, 100, 1000} x gamma in "scale" times {1/8, 1/4, 1/2, 1, 2, 4, 8},
               refitted on the whole training part (GridSearchCV)

Usage: python run.py DIR out.json
"""

import json
import sys
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

C_GRID = [0.1, 1, 10, 100, 1000]
GAMMA_FACTORS = [1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8]


def read_table(path, task):
    with open(path) as f:
        header = f.readline()
        rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
    x = np.array([[float(v) for v in r[:-1]] for r in rows])
    y = [r[-1] for r in rows]
    y = np.array([float(v) for v in y]) if task == "regression" else np.array(y)
    return x, y


def scale_gamma(x):
    """scikit-learn's gamma = "scale": 1 / (n_features * X.var())."""
    var = x.var()
    return 1.0 / (x.shape[1] * var) if var > 0 else 1.0


def run_split(x, y, train, test, task, tuned, seed):
    scaler = StandardScaler().fit(x[train])
    xtr, xte = scaler.transform(x[train]), scaler.transform(x[test])
    ytr, yte = y[train], y[test]
    regression = task == "regression"
    select_seconds = 0.0
    if tuned:
        g = scale_gamma(xtr)
        grid = {"C": C_GRID, "gamma": [g * f for f in GAMMA_FACTORS]}
        cv = (KFold(5, shuffle=True, random_state=seed) if regression
              else StratifiedKFold(5, shuffle=True, random_state=seed))
        est = SVR() if regression else SVC()
        scoring = "neg_mean_squared_error" if regression else "accuracy"
        t = time.perf_counter()
        search = GridSearchCV(est, grid, cv=cv, scoring=scoring, refit=False).fit(xtr, ytr)
        select_seconds = time.perf_counter() - t
        model = (SVR if regression else SVC)(**search.best_params_)
    else:
        model = SVR() if regression else SVC()
    t = time.perf_counter()
    model.fit(xtr, ytr)
    train_seconds = time.perf_counter() - t
    pred = model.predict(xte)
    value = float(np.mean((pred - yte) ** 2)) if regression else float(np.mean(pred == yte))
    return value, train_seconds, select_seconds


def main():
    d, out = sys.argv[1], sys.argv[2]
    with open(f"{d}/uci-splits.json") as f:
        spec = json.load(f)
    rows = []
    for t in spec["tables"]:
        x, y = read_table(f"{d}/{t['file']}", t["task"])
        metric = "mse" if t["task"] == "regression" else "accuracy"
        for method, tuned in [("svc-default", False), ("svc-tuned", True)]:
            res = [run_split(x, y, np.array(s["train"]), np.array(s["test"]), t["task"], tuned, i)
                   for i, s in enumerate(t["splits"])]
            values = [r[0] for r in res]
            row = {
                "dataset": t["name"], "method": method, "metric": metric,
                "mean": float(np.mean(values)), "std": float(np.std(values, ddof=1)) if len(values) > 1 else None,
                "values": values, "n": len(values),
                "train_seconds": float(np.median([r[1] for r in res])),
                "select_seconds": float(np.median([r[2] for r in res])),
            }
            rows.append(row)
            shown = (f"{100 * row['mean']:.1f} +- {100 * (row['std'] or 0):.1f}" if metric == "accuracy"
                     else f"{row['mean']:.2f} +- {row['std'] or 0:.2f}")
            print(f"{t['name']:<15} {method:<12} {shown}  select {row['select_seconds']:.2f} s", flush=True)
    with open(out, "w") as f:
        json.dump({"experiment": "uci-peers", "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
