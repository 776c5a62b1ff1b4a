"""Scores of sequence taggers on lists of label lists (``y_true``, ``y_pred``: one list of
labels per sentence), as sklearn-crfsuite's ``metrics`` and seqeval take them.

- ``flat_accuracy_score``: the fraction of tokens labelled right.
- ``flat_precision_score``, ``flat_recall_score``, ``flat_f1_score``,
  ``flat_classification_report``: scikit-learn's scores on the tokens of all sentences put
  end to end (keyword arguments go to ``sklearn.metrics``: ``average``, ``labels``, ...), as
  sklearn-crfsuite's ``metrics`` computes them; labels keep their type.
- ``sequence_accuracy_score``: the fraction of sentences labelled right in full.
- ``chunk_precision_score``, ``chunk_recall_score``, ``chunk_f1_score``,
  ``chunk_scores``: chunks as conlleval finds them (``B-``, ``I-``, ``E-``, ``S-`` tags with
  a type, or bare ``B``/``I``/``E``/``S``; ``O`` outside), a chunk correct when its type and
  both ends match; over all chunks (micro average). These are seqeval's default
  (non-strict) scores, which reproduce conlleval on IOB1 and IOB2 and also read IOBES, and
  ``multikernel score``'s: the counting is the library's (``multikernel::task::tagging::eval``).

With no predicted (or no gold) chunk, precision (or recall) is 0, as seqeval reports it.
"""

from . import _core

__all__ = [
    "chunk_f1_score",
    "chunk_precision_score",
    "chunk_recall_score",
    "chunk_scores",
    "flat_accuracy_score",
    "flat_classification_report",
    "flat_f1_score",
    "flat_precision_score",
    "flat_recall_score",
    "sequence_accuracy_score",
]


def _lists(y):
    return [[str(label) for label in sentence] for sentence in y]


def _counts(y_true, y_pred):
    return _core.tag_counts(_lists(y_true), _lists(y_pred))


def flat_accuracy_score(y_true, y_pred):
    """The fraction of tokens whose predicted label is the gold one."""
    tokens, correct, _, _, _ = _counts(y_true, y_pred)
    return correct / tokens if tokens else 0.0


def _flat(y_true, y_pred):
    """The labels of all sentences end to end, gold and predicted; an error names the first
    sentence whose lengths differ."""
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold sentences but {len(y_pred)} predicted")
    flat_true, flat_pred = [], []
    for i, (gold, pred) in enumerate(zip(y_true, y_pred)):
        gold, pred = list(gold), list(pred)
        if len(gold) != len(pred):
            raise ValueError(f"sentence {i} has {len(gold)} gold labels but {len(pred)} predicted")
        flat_true.extend(gold)
        flat_pred.extend(pred)
    return flat_true, flat_pred


def flat_precision_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.precision_score`` on the tokens (``average=`` and the other keywords
    are scikit-learn's; multiclass labels need an ``average`` other than ``"binary"``)."""
    from sklearn.metrics import precision_score

    return precision_score(*_flat(y_true, y_pred), **kwargs)


def flat_recall_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.recall_score`` on the tokens."""
    from sklearn.metrics import recall_score

    return recall_score(*_flat(y_true, y_pred), **kwargs)


def flat_f1_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.f1_score`` on the tokens."""
    from sklearn.metrics import f1_score

    return f1_score(*_flat(y_true, y_pred), **kwargs)


def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """``sklearn.metrics.classification_report`` on the tokens: per label precision, recall,
    F1 and support (``labels`` picks and orders them, e.g. all but ``"O"``)."""
    from sklearn.metrics import classification_report

    return classification_report(*_flat(y_true, y_pred), labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """The fraction of sentences whose every label is right (0 with no sentence)."""
    y_true = [list(s) for s in y_true]
    y_pred = [list(s) for s in y_pred]
    _flat(y_true, y_pred)  # the same length checks
    if not y_true:
        return 0.0
    return sum(g == p for g, p in zip(y_true, y_pred)) / len(y_true)


def chunk_scores(y_true, y_pred):
    """``{"precision", "recall", "f1", "gold", "predicted", "correct"}``: chunk precision,
    recall and F1 (fractions, not percent) with the chunk counts."""
    _, _, gold, predicted, correct = _counts(y_true, y_pred)
    p = correct / predicted if predicted else 0.0
    r = correct / gold if gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {
        "precision": p,
        "recall": r,
        "f1": f1,
        "gold": gold,
        "predicted": predicted,
        "correct": correct,
    }


def chunk_precision_score(y_true, y_pred):
    """Correct chunks over predicted chunks."""
    return chunk_scores(y_true, y_pred)["precision"]


def chunk_recall_score(y_true, y_pred):
    """Correct chunks over gold chunks."""
    return chunk_scores(y_true, y_pred)["recall"]


def chunk_f1_score(y_true, y_pred):
    """The harmonic mean of chunk precision and recall."""
    return chunk_scores(y_true, y_pred)["f1"]
