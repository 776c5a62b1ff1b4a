"""``DependencyParser``: an arc-factored dependency parser whose feature templates are
weighed by multiple kernel learning, as a scikit-learn estimator.

``X`` is a treebank given as any of

- a list of ``conllu.TokenList`` (the ``conllu`` package's sentences, ``conllu.parse``), or
  of lists of token dicts with its keys (``id``, ``form``, ``lemma``, ``upos``, ``xpos``,
  ``feats``, ``head``, ``deprel``, ``deps``, ``misc``); tokens whose ``id`` is a tuple
  (multi-word ranges ``1-2``, empty nodes ``5.1``) are kept and not parsed;
- a list of strings, each one sentence's CoNLL-U lines;
- CoNLL-U text (a string holding a tab or a newline), or a file's path (a ``str`` or
  ``os.PathLike``; plain or gzip), as ``multikernel train --task parsing --data F`` reads it.

``predict`` returns what it was given, parsed: new TokenLists (the input is not changed)
with ``head`` and ``deprel`` filled in, the list of CoNLL-U strings, or CoNLL-U text (for
text or a path); comment lines, multi-word ranges and empty nodes as they were. ``score``
is the unlabeled attachment score (a fraction; punctuation excluded) and
``attachment_scores`` gives UAS and LAS in percent as ``multikernel eval`` prints them.

The learners are those of the command line:

- ``"online"`` (default): SPOM (Martins et al. 2011, Alg. 1) with the structured hinge
  (``loss="hinge"``, default) or the tree CRF (``loss="crf"``; a smaller ``eta0``, 0.3,
  suits it), ``regularizer`` (``"l21sq"`` makes the templates compete and drops some),
  ``epochs``, ``eta0``;
- ``"mtl"``: multi-template learning (Mao & Tsang), the 1-slack cutting-plane structural SVM
  whose regularizer chooses the templates' weights (``q``, ``eps``, ``max_iter``).

``templates`` is an arc template file's path or its text (``None``: the default templates);
``projective=True`` decodes projective trees (Eisner) instead of any tree (Chu-Liu-Edmonds).
A template reading ``upos`` needs every token's UPOS: ``_`` (or a missing ``upos``) is a
``ValueError`` naming the sentence and the token.
"""

import copy
import json
import numbers
import os

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _core
from ._convergence import warn_if_unconverged
from ._estimators import _constraint, _given_settings, _template_text
from ._inputs import _seed
from ._threads import N_JOBS_CONSTRAINT, uses_n_jobs

# The settings of a parser's learners, from the library's registry.
_PARSER_SETTINGS = tuple(s for s in _core.learner_settings() if s["parser"])

PARSER_LEARNERS = ("auto", "online", "mtl")

_FIELDS = ("form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


def _field(value, where):
    """A token's field as CoNLL-U text (``None`` is ``_``; dicts ``k=v|...`` and lists
    ``a:b|...`` as the conllu package writes them)."""
    if value is None:
        return "_"
    if isinstance(value, dict):
        if not value:
            return "_"
        return "|".join(k if v is None else f"{k}={_field(v, where)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        if not value:
            return "_"
        return "|".join(
            ":".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v) for v in value
        )
    text = str(value)
    if "\t" in text or "\n" in text or not text:
        raise ValueError(f"{where}: {text!r} is not a CoNLL-U field (empty, or a tab or newline)")
    return text


def _token_id(tid):
    if isinstance(tid, tuple):
        return "".join(map(str, tid))
    return str(tid)


def _block(sentence, i):
    """One sentence (TokenList or list of token dicts) as its CoNLL-U lines."""
    lines = []
    for t, tok in enumerate(sentence):
        if not hasattr(tok, "get"):
            raise TypeError(
                f"X[{i}][{t}] is a {type(tok).__name__}: a token is a dict (conllu Token)"
            )
        if "id" not in tok:
            raise ValueError(f"X[{i}][{t}] has no 'id'")
        where = f"X[{i}][{t}]"
        # DEPS is never read (and the output's tokens are copies of the input's): "_".
        cols = [_token_id(tok["id"])] + [
            "_" if f == "deps" else _field(tok.get(f), f"{where}['{f}']") for f in _FIELDS
        ]
        lines.append("\t".join(cols) + "\n")
    return "".join(lines) + "\n"


def _source(X):
    """``X`` as the core reads it: ``(text or path or list of blocks, is_path, sentences)``
    with ``sentences`` the list of TokenLists (else None)."""
    if isinstance(X, os.PathLike):
        return os.fspath(X), True, None
    if isinstance(X, bytes):
        X = X.decode("utf-8")
    if isinstance(X, str):
        if "\n" in X or "\t" in X:
            return X, False, None
        if not os.path.isfile(X):
            raise ValueError(f"X: no file {X!r} (a str without a tab or newline is a path)")
        return X, True, None
    if isinstance(X, dict):
        raise TypeError("X is a dict: a list of sentences, CoNLL-U text or a path")
    X = list(X)
    if all(isinstance(s, str) for s in X):
        return X, False, None
    return [_block(s, i) for i, s in enumerate(X)], False, X


def _tokenlists_with(X, parses):
    """Copies of the sentences ``X`` with each token's head and relation from ``parses``
    (tokens with a tuple id left as they are)."""
    out = []
    for sentence, (heads, deprels) in zip(X, parses):
        s = copy.deepcopy(sentence)
        k = 0
        for tok in s:
            if isinstance(tok["id"], int):
                tok["head"] = heads[k]
                if deprels is not None:
                    tok["deprel"] = deprels[k]
                k += 1
        out.append(s)
    return out


class DependencyParser(BaseEstimator):
    """A dependency parser whose arc templates are weighed by multiple kernel learning
    (module documentation).

    Parameters
    ----------
    learner : {"auto", "online", "mtl"}
        ``"auto"`` (default) with ``C=None`` and no learner setting: the built-in selection
        chooses the learner, ``C`` and the block norm ``q`` on a seeded 10 % of the
        training sentences held out (20 sentences at least), then refits on all of them
        (``selection_``). ``"auto"`` with ``C`` or a setting: the online learner (``mtl``
        when only its settings are given).
    C : float > 0 or None
        None: 1, or chosen by the selection (``learner="auto"``).
        The weight of the sum of the sentences' losses (as ``multikernel train --C``).
    templates : str, os.PathLike or None
        An arc template file's path, or the template text (None: the default templates).
    projective : bool
        Projective trees (Eisner) instead of any tree (Chu-Liu-Edmonds).
    loss, regularizer, epochs, eta0 : the online learner's settings (None: its defaults).
    q, eps, max_iter : multi-template learning's settings (None: its defaults).
    random_state : int, RandomState or None
    verbose : int
        Progress lines on stderr.
    n_jobs : int or None
        Threads of the fit and of parsing (None: ``RAYON_NUM_THREADS``, else every core;
        -1 every core); the same model whatever the number.

    Attributes
    ----------
    classes_ : list of str
        The relations it predicts, sorted (empty when training had none).
    templates_ : list of str
        The arc templates, one feature group each.
    template_weights_ : dict
        Each template's learned weight: the norm of its weights ``||w_j||`` (0 for a
        template the regularizer dropped).
    parser_ : multikernel._core.Parser
    learner_ : str
        The learner trained (the one the selection chose, or the one named).
    selection_ : dict or None
        What the selection scored (``headline``, ``lines``, ``learner_choice``), or None.
    n_iter_, fit_status_, fit_seconds_ : epochs (or the cutting plane's separations, one
        more than its cuts), how the run ended, seconds.
    """

    n_jobs = None  # what pickles from before n_jobs read

    _parameter_constraints = {
        "learner": [StrOptions(set(PARSER_LEARNERS))],
        "C": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "templates": [str, os.PathLike, None],
        "projective": ["boolean"],
        **{s["name"]: _constraint(s) for s in _PARSER_SETTINGS},
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
        projective=False,
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
        self.projective = projective
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
    def fit(self, X, y=None):
        """Trains on the treebank ``X`` (every sentence with its tree); ``y`` is ignored
        (the trees are in ``X``)."""
        self._validate_params()
        text, origin = _template_text(self.templates)
        source, is_path, _ = _source(X)
        parser, info = _core.fit_parser(
            source,
            is_path=is_path,
            templates=text,
            templates_origin=origin,
            projective=bool(self.projective),
            learner=self.learner,
            c=None if self.C is None else float(self.C),
            seed=_seed(self.random_state),
            verbose=bool(self.verbose),
            settings=_given_settings(self, _PARSER_SETTINGS),
        )
        return self._fitted(parser, info)

    def _fitted(self, parser, info):
        """Sets the fitted attributes from the core's parser and run (``fit``,
        ``multikernel.dask.fit_dask``) and returns the estimator."""
        self.parser_ = parser
        self.learner_ = info["learner"]
        self.selection_ = info["selection"]
        self.classes_ = list(parser.classes)
        self.templates_ = list(parser.templates)
        self.template_weights_ = dict(zip(self.templates_, parser.template_weights))
        self.n_iter_ = int(info["steps"])
        self.fit_status_ = info["status"]
        warn_if_unconverged(self, info)
        self.fit_seconds_ = float(info["seconds"])
        self.fit_notes_ = list(info["notes"])
        return self

    @uses_n_jobs
    def predict(self, X):
        """``X`` parsed, in the form it was given (module documentation)."""
        check_is_fitted(self, "parser_")
        source, is_path, sentences = _source(X)
        if sentences is not None:
            return _tokenlists_with(sentences, self.parser_.parse(source))
        return self.parser_.write(source, is_path=is_path)

    @uses_n_jobs
    def attachment_scores(self, X):
        """Scores against the gold trees of ``X``, in percent over the tokens that are not
        punctuation, as ``multikernel eval`` prints them: ``{"uas", "las" (None without
        relations), "uas_no_ig", "tokens", "sentences"}``."""
        check_is_fitted(self, "parser_")
        source, is_path, _ = _source(X)
        return dict(self.parser_.attachment_scores(source, is_path=is_path))

    def score(self, X, y=None):
        """The unlabeled attachment score (a fraction) on ``X``'s gold trees."""
        return self.attachment_scores(X)["uas"] / 100.0

    @property
    def summary_(self):
        """The fitted model's summary, as ``multikernel inspect`` prints it."""
        check_is_fitted(self, "parser_")
        return str(self.parser_)

    @property
    def summary_json_(self):
        check_is_fitted(self, "parser_")
        return json.loads(self.parser_.summary_json())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.sparse = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        tags.non_deterministic = False
        return tags
