"""multikernel: multiple kernel learning as scikit-learn estimators over a Rust core.

>>> from multikernel import MKLClassifier
>>> clf = MKLClassifier().fit(X, y)          # doctest: +SKIP
>>> clf.kernels_, clf.kernel_weights_          # doctest: +SKIP

``MKLClassifier`` and ``MKLRegressor`` (``multikernel._estimators``) choose the learner, C
and the kernel weights; ``dictionary(n_features)`` lists the default kernels and
``parse_kernel(spec)`` checks a kernel SPEC string. ``Model`` is a trained model of the
core (also read from the files ``multikernel train`` writes: ``Model.from_bytes``).
"""

from ._core import MODEL_FORMAT_VERSION, Model, __version__, dictionary, parse_kernel
from ._estimators import LEARNERS, MKLClassifier, MKLRegressor

__all__ = [
    "LEARNERS",
    "MKLClassifier",
    "MKLRegressor",
    "Model",
    "MODEL_FORMAT_VERSION",
    "dictionary",
    "parse_kernel",
    "__version__",
]
