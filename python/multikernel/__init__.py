"""multikernel: multiple kernel learning as scikit-learn estimators over a Rust core.

>>> from multikernel import MKLClassifier
>>> clf = MKLClassifier().fit(X, y)          # doctest: +SKIP
>>> clf.kernels_, clf.kernel_weights_          # doctest: +SKIP

``MKLClassifier`` and ``MKLRegressor`` (``multikernel._estimators``) choose the learner, C
and the kernel weights; ``SequenceTagger`` (``multikernel._tagger``) labels sentences of
feature dicts or columns, the weights of its feature groups learned, and
``multikernel.metrics`` scores it (token accuracy, conlleval's chunk F1);
``DependencyParser`` (``multikernel._parser``) parses CoNLL-U sentences (``conllu``
TokenLists, text or a file), the weights of its arc templates learned; ``dictionary(n_features)`` lists the default kernels and
``parse_kernel(spec)`` checks a kernel SPEC string. ``Model`` is a trained model of the
core (also read from the files ``multikernel train`` writes: ``Model.from_bytes``).

``partial_fit`` trains the online learner chunk by chunk (its state is an
``IncrementalFit``, which pickles and mixes); ``multikernel.dask.fit_dask`` trains on a
Dask cluster by iterative parameter mixing, and ``multikernel.dask.predict_dask`` predicts
with any fitted estimator over a Dask bag, array or dataframe (Dask is an optional
dependency).
"""

from ._core import (
    MODEL_FORMAT_VERSION,
    IncrementalFit,
    Model,
    __version__,
    dictionary,
    parse_kernel,
)
from . import metrics
from ._estimators import INCREMENTAL_KERNELS, LEARNERS, MKLClassifier, MKLRegressor
from ._parser import DependencyParser
from ._tagger import SequenceTagger

__all__ = [
    "DependencyParser",
    "INCREMENTAL_KERNELS",
    "IncrementalFit",
    "LEARNERS",
    "MKLClassifier",
    "MKLRegressor",
    "Model",
    "SequenceTagger",
    "MODEL_FORMAT_VERSION",
    "dictionary",
    "metrics",
    "parse_kernel",
    "__version__",
]
