"""The table and the SVC grid that first_fit.py and calibration.py share: make_classification
(2,000 x 20, random_state=0), a 75/25 split (random_state=0), and the 20-point grid of
C x gamma around scikit-learn's gamma="scale" on the standardized training rows."""

from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def table_and_grid(random_state=0):
    """``(Xtr, Xte, ytr, yte, grid)``; the grid's keys name a pipeline's ``svc`` step.
    ``random_state`` seeds both the table and the split (0: the issue's table)."""
    X, y = make_classification(n_samples=2000, n_features=20, random_state=random_state)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=random_state)
    scale = 1.0 / (X.shape[1] * StandardScaler().fit_transform(Xtr).var())
    grid = {
        "svc__C": [0.1, 1, 10, 100, 1000],
        "svc__gamma": [scale / 8, scale / 2, scale * 2, scale * 8],
    }
    return Xtr, Xte, ytr, yte, grid
