"""MKLClassifier against scikit-learn's SVC on a shipped table, same folds.

    python examples/python/compare_svc.py [data/uci/ionosphere.csv]

(in the virtual environment of docs/python.md; run from the repository root).
"""

import sys
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from multikernel import MKLClassifier

path = sys.argv[1] if len(sys.argv) > 1 else "data/uci/ionosphere.csv"
table = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=str)
X, y = table[:, :-1].astype(float), table[:, -1]

cv = StratifiedKFold(5, shuffle=True, random_state=0)
svc = GridSearchCV(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": [0.1, 1, 10, 100, 1000], "svc__gamma": ["scale", 0.01, 0.1]},
)
for name, model in [
    ("SVC, default", make_pipeline(StandardScaler(), SVC())),
    ("SVC, C x gamma grid", svc),
    ("MKLClassifier(), default", MKLClassifier(random_state=0)),
]:
    start = time.perf_counter()
    acc = cross_val_score(model, X, y, cv=cv)
    print(f"{name:26s} accuracy {acc.mean():.4f} +- {acc.std():.4f}  "
          f"({time.perf_counter() - start:.1f} s for 5 folds)")

mkl = MKLClassifier(random_state=0).fit(X, y)
print(mkl.selection_["headline"])
top = np.argsort(mkl.kernel_weights_)[::-1][:5]
for i in top:
    print(f"  {mkl.kernel_weights_[i]:.3f}  {mkl.kernels_[i]}")
