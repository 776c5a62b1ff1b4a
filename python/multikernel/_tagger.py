"""``SequenceTagger``: a sequence labeler (part-of-speech tags, chunks, named entities)
trained with multiple kernel learning over feature groups, as a scikit-learn estimator.

``X`` is a list of sentences, each a list of tokens, given either as

- feature dicts, as sklearn-crfsuite takes them (``{"word.lower()": "dog",
  "word.isupper()": False, "bias": 1.0, "-1:word.lower()": "the"}``), flattened into
  attributes as python-crfsuite flattens them: a string value is the attribute
  ``key:value``, a number the attribute ``key`` with that value, ``True`` the attribute
  ``key`` (``False`` none), a nested dict ``{"a": {"b": 2.0}}`` the attribute ``a:b`` with
  value 2, a list of strings ``{"a": ["x", "y"]}`` the attributes ``a:x`` and ``a:y``; each
  key is one feature group, whose weight the learner chooses (``template_weights_``);
- lists of attribute names (``["bias", "word.lower=dog"]``), each an attribute with value 1,
  mixed with dicts if need be; the group of ``k=v`` is ``k``, of a name without ``=`` the
  name; or
- tuples of column strings, read by CRF++ templates (``templates=`` a template file's path
  or its text; each template one group), as ``multikernel train --task sequence --format
  columns --templates F`` reads column files.

``y`` is a list of label lists (strings, or labels of another type, which ``predict`` gives
back as they were given). The learners are those of the command line:

- ``"online"`` (default): SPOM (Martins et al. 2011, Alg. 1) with the structured hinge
  (``loss="hinge"``, default) or the CRF loss (``loss="crf"``; then ``predict_marginals``),
  ``regularizer`` (default ``"l2"``, as on the command line; ``"l21sq"`` makes the groups
  compete and drops some), ``epochs``, ``eta0``;
- ``"mtl"``: multi-template learning (Mao & Tsang), a 1-slack cutting-plane structural SVM
  whose regularizer chooses the groups' weights ``mu`` (``q``: 1 sparse, 2 plain l2; ``eps``;
  ``max_iter``);
- ``"lbfgs"``: the l2-regularized CRF trained in batch by L-BFGS, the trainer CRFsuite and
  sklearn-crfsuite run by default (``c2 = 1 / (2 C)``; ``max_iter``; then
  ``predict_marginals``).

``C`` weighs the sum of the sentences' losses, as in ``multikernel train --C``. The same
sentences and settings give the same model as the command line.
"""

import json
import numbers
import os

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._convergence import warn_if_unconverged
from ._estimators import _constraint, _given_settings, _template_text
from ._inputs import _seed
from ._threads import N_JOBS_CONSTRAINT, uses_n_jobs
from .metrics import flat_accuracy_score

# The settings of a tagger's learners, from the library's registry.
_TAGGER_SETTINGS = tuple(s for s in _core.learner_settings() if s["tagger"])

TAGGER_LEARNERS = ("auto", "online", "mtl", "lbfgs")


def _sentences(X):
    """``X`` as a list of lists (a generator or tuple is read once)."""
    if isinstance(X, (str, bytes, dict)):
        raise TypeError(
            f"X is a {type(X).__name__}: a list of sentences, each a list of tokens"
        )
    return [list(s) if not isinstance(s, list) else s for s in X]


def _labels(y):
    return [[str(label) for label in sentence] for sentence in y]


def _label_values(y):
    """``{text: label}`` for labels that are not strings (integers, say), so that
    ``predict`` gives back the type it was given, as the table estimators do; None when
    every label is a string. Two labels with the same text (``1`` and ``"1"``) are a
    ``ValueError``."""
    values = _label_table(y)
    if all(isinstance(v, str) for v in values.values()):
        return None
    return values


def _label_table(y, values=None):
    """``{text: label}`` of the labels of ``y`` (label lists) added to ``values``; a
    ``ValueError`` for two labels with the same text (``multikernel.dask`` merges the
    partitions' tables with it too)."""
    values = {} if values is None else values
    for sentence in y:
        for label in sentence:
            text = str(label)
            seen = values.setdefault(text, label)
            if seen is not label and (type(seen) is not type(label) or seen != label):
                raise ValueError(
                    f"y holds the labels {seen!r} and {label!r}, which read the same "
                    f"({text!r}): give labels of one type"
                )
    return values


def _is_crf(est):
    if hasattr(est, "tagger_"):
        return est.tagger_.is_crf
    return est.learner == "lbfgs" or (
        est.learner == "online" and est.loss in ("crf", "logistic")
    )


class SequenceTagger(BaseEstimator):
    """A sequence tagger whose feature groups (dict keys or templates) are weighed by
    multiple kernel learning (module documentation).

    Parameters
    ----------
    learner : {"auto", "online", "mtl", "lbfgs"}
        ``"auto"`` (default) with ``C=None`` and no learner setting: the built-in selection
        chooses the learner, ``C`` and the block norm ``q`` on a seeded 10 % of the
        training sentences held out (20 sentences at least), then refits on all of them
        (``selection_``). ``"auto"`` with ``C`` or a setting: the online learner (``mtl``
        when only its settings are given).
    C : float > 0 or None
        None: 1, or chosen by the selection (``learner="auto"``).
        The weight of the sum of the sentences' losses.
    templates : str or None
        Tokens as columns: a CRF++ template file's path, or the template text.
    loss, regularizer, epochs, eta0 : the online learner's settings (None: its defaults).
    q, eps, max_iter : multi-template learning's settings (None: its defaults); ``max_iter``
        also bounds the batch CRF's L-BFGS iterations (``learner="lbfgs"``, default 500).
    random_state : int, RandomState or None
    verbose : int
        Progress lines on stderr.
    n_jobs : int or None
        Threads of the fit and the predictions (None: ``RAYON_NUM_THREADS``, else every
        core; -1 every core); the same model whatever the number.

    Attributes
    ----------
    classes_ : list
        The labels, sorted by their text (the order of ``predict_marginals``' dicts), of
        the type ``y`` gave them (integer labels come back as integers).
    templates_ : list of str
        The feature groups: ``"B"`` (the label pairs), then each key or template line.
    template_weights_ : dict
        Each group's learned weight: the group norm ``||w_j||`` (online; 0 for a group the
        regularizer dropped) or ``mu_j`` (mtl; summing to 1).
    state_features_ : dict
        ``{(attribute, label): weight}`` for every non-zero weight, attributes named as
        python-crfsuite names them (``"word.lower():dog"``, ``"bias"``; with templates, the
        template's expansion, ``"U01:dog"``), as sklearn-crfsuite's ``CRF`` gives them.
    transition_features_ : dict
        ``{(label_from, label_to): weight}`` for every non-zero weight. A sentence's score
        for a label sequence, which ``predict`` maximizes, is the sum of its tokens'
        ``state_features_[(attribute, label)] * value`` and of the
        ``transition_features_`` of consecutive labels.
    tagger_ : multikernel._core.Tagger
    learner_ : str
        The learner trained (the one the selection chose, or the one named).
    selection_ : dict or None
        What the selection scored (``headline``, ``lines``, ``learner_choice``), or None.
    n_iter_, fit_status_, fit_seconds_ : epochs (or the cutting plane's separations, one
        more than its cuts; or L-BFGS's iterations), how the run ended, seconds.
    """

    n_jobs = None  # what pickles from before n_jobs read

    _parameter_constraints = {
        "learner": [StrOptions(set(TAGGER_LEARNERS))],
        "C": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "templates": [str, os.PathLike, None],
        **{s["name"]: _constraint(s) for s in _TAGGER_SETTINGS},
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self,
        learner="auto",
        C=None,
        *,
        templates=None,
        loss=None,
        regularizer=None,
        eta0=None,
        epochs=None,
        q=None,
        eps=None,
        max_iter=None,
        random_state=None,
        verbose=0,
        n_jobs=None,
    ):
        self.learner = learner
        self.C = C
        self.templates = templates
        self.loss = loss
        self.regularizer = regularizer
        self.eta0 = eta0
        self.epochs = epochs
        self.q = q
        self.eps = eps
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    @uses_n_jobs
    def fit(self, X, y):
        """Trains on sentences ``X`` (lists of feature dicts or of attribute-name lists; with
        ``templates``, of column tuples) and label lists ``y``."""
        self._validate_params()
        text, origin = _template_text(self.templates)
        y = [list(s) for s in y]
        values = _label_values(y)
        tagger, info = _core.fit_tagger(
            _sentences(X),
            _labels(y),
            templates=text,
            templates_origin=origin,
            learner=self.learner,
            c=None if self.C is None else float(self.C),
            seed=_seed(self.random_state),
            verbose=bool(self.verbose),
            settings=_given_settings(self, _TAGGER_SETTINGS),
        )
        return self._fitted(tagger, info, values)

    def _fitted(self, tagger, info, values):
        """Sets the fitted attributes from the core's tagger and run (``fit``,
        ``multikernel.dask.fit_dask``) and returns the estimator."""
        self.tagger_ = tagger
        self._label_values = values
        self.learner_ = info["learner"]
        self.selection_ = info["selection"]
        self.classes_ = self._typed(list(tagger.classes))
        self.templates_ = list(tagger.templates)
        self.template_weights_ = dict(zip(self.templates_, tagger.template_weights))
        self.n_iter_ = int(info["steps"])
        self.fit_status_ = info["status"]
        warn_if_unconverged(self, info)
        self.fit_seconds_ = float(info["seconds"])
        self.fit_notes_ = list(info["notes"])
        return self

    @uses_n_jobs
    def predict(self, X):
        """The best label sequence of each sentence (a list of label lists)."""
        check_is_fitted(self, "tagger_")
        return [self._typed(s) for s in self.tagger_.predict(_sentences(X))]

    def _typed(self, labels):
        """Labels as ``y`` gave them (their text when they were strings)."""
        values = getattr(self, "_label_values", None)
        if not values:
            return labels
        return [values.get(label, label) for label in labels]

    def _label_of(self, text):
        """A label as ``y`` gave it, from its text."""
        values = getattr(self, "_label_values", None)
        return values.get(text, text) if values else text

    def predict_single(self, xseq):
        """The labels of one sentence (sklearn-crfsuite's ``predict_single``)."""
        return self.predict([xseq])[0]

    @available_if(_is_crf)
    @uses_n_jobs
    def predict_marginals(self, X):
        """Each token's label probabilities under the CRF: a list (sentences) of lists
        (tokens) of ``{label: probability}`` dicts (CRF loss only)."""
        check_is_fitted(self, "tagger_")
        probs = self.tagger_.predict_marginals(_sentences(X))
        return [[dict(zip(self.classes_, p)) for p in s] for s in probs]

    @available_if(_is_crf)
    def predict_marginals_single(self, xseq):
        """The label probabilities of one sentence's tokens (sklearn-crfsuite's
        ``predict_marginals_single``): a list of ``{label: probability}`` dicts."""
        return self.predict_marginals([xseq])[0]

    def score(self, X, y):
        """Token accuracy of ``predict(X)`` against ``y``."""
        return flat_accuracy_score(_labels(y), self.predict(X))

    @property
    def state_features_(self):
        """``{(attribute, label): weight}`` for every non-zero state weight (sklearn-crfsuite's
        ``state_features_``), over the attributes of the training sentences."""
        check_is_fitted(self, "tagger_")
        label = self._label_of
        return {(a, label(y)): w for a, y, w in self.tagger_.state_features()}

    @property
    def transition_features_(self):
        """``{(label_from, label_to): weight}`` for every non-zero label-pair weight
        (sklearn-crfsuite's ``transition_features_``)."""
        check_is_fitted(self, "tagger_")
        label = self._label_of
        return {(label(a), label(b)): w for a, b, w in self.tagger_.transition_features()}

    @property
    def summary_(self):
        """The fitted model's summary, as ``multikernel inspect`` prints it."""
        check_is_fitted(self, "tagger_")
        return str(self.tagger_)

    @property
    def summary_json_(self):
        check_is_fitted(self, "tagger_")
        return json.loads(self.tagger_.summary_json())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.sparse = False
        tags.target_tags.required = True
        tags.target_tags.one_d_labels = False
        tags.non_deterministic = False
        return tags
