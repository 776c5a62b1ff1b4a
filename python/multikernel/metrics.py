"""Scores of sequence taggers on lists of label lists (``y_true``, ``y_pred``: one list of
labels per sentence), as sklearn-crfsuite's ``metrics`` and seqeval take them.

- ``flat_accuracy_score``: the fraction of tokens labelled right.
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
]


def _lists(y):
    return [[str(label) for label in sentence] for sentence in y]


def _counts(y_true, y_pred):
    return _core.tag_counts(_lists(y_true), _lists(y_pred))


def flat_accuracy_score(y_true, y_pred):
    """The fraction of tokens whose predicted label is the gold one."""
    tokens, correct, _, _, _ = _counts(y_true, y_pred)
    return correct / tokens if tokens else 0.0


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
