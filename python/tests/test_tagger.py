"""multikernel.SequenceTagger and multikernel.metrics.

The tagger from columns + a template file and from feature dicts gives the predictions of
``multikernel train --task sequence --format columns`` / ``multikernel predict`` on the same
sentences (fold 0 of the Turkish Web Treebank shipped in data/, as ``multikernel convert``
writes it) and settings; it pickles into a fresh process; GridSearchCV chooses C on lists of
sentences; Ctrl-C stops a fit; the chunk scores equal hand counts and seqeval's."""

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils import estimator_checks

from multikernel import SequenceTagger, metrics

import cli_binary

ROOT = Path(__file__).resolve().parents[2]
CLI = cli_binary.path()
TEMPLATES = ROOT / "data" / "tagging" / "twt-upos-small.templates"
TREEBANK = ROOT / "data" / "treebank" / "tr-web.conllu.gz"

# Skips without the binary, fails with MULTIKERNEL_REQUIRE_BIN=1 (conftest.py).
needs_cli = pytest.mark.usefixtures("multikernel_bin")


def cli(*args):
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def read_columns(path):
    """Sentences of a column file: (tokens' columns without the last, last column)."""
    X, y, toks = [], [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines() + [""]:
        if line.strip():
            toks.append(line.split())
        elif toks:
            X.append([t[:-1] for t in toks])
            y.append([t[-1] for t in toks])
            toks = []
    return X, y


def write_columns(path, X, y):
    with open(path, "w", encoding="utf-8") as f:
        for s, labels in zip(X, y):
            for t, label in zip(s, labels):
                f.write(" ".join(list(t) + [label]) + "\n")
            f.write("\n")


@pytest.fixture(scope="module")
def twt(tmp_path_factory, multikernel_bin):
    """Folds 0 (train) and 9 (test) of the TWT columns, as the command line converts them."""
    d = tmp_path_factory.mktemp("twt")
    cli("convert", "--data", TREEBANK, "--folds", "0", "--out", d / "train.txt")
    cli("convert", "--data", TREEBANK, "--folds", "9", "--out", d / "test.txt")
    return d, read_columns(d / "train.txt"), read_columns(d / "test.txt")


def cli_predictions(d, train, test, templates, flags):
    model = d / "m.model"
    cli("train", "--task", "sequence", "--format", "columns", "--templates", templates,
        "--data", train, *flags, "--out", model)
    cli("predict", "--model", model, "--data", test, "--out", d / "pred.txt")
    _, pred = read_columns(d / "pred.txt")
    return pred


SETTINGS = [
    (dict(learner="online", C=10.0, epochs=2, random_state=0), ["--C", "10", "--epochs", "2"]),
    (dict(learner="online", C=10.0, epochs=2, loss="crf", random_state=0),
     ["--C", "10", "--epochs", "2", "--loss", "crf"]),
    (dict(learner="mtl", C=1.0, max_iter=15, random_state=0), ["--algo", "mtl", "--C", "1", "--max-iter", "15"]),
    (dict(learner="lbfgs", C=10.0, max_iter=30, random_state=0),
     ["--algo", "lbfgs", "--C", "10", "--max-iter", "30"]),
]


@needs_cli
@pytest.mark.parametrize("params, flags", SETTINGS)
def test_columns_and_templates_predict_as_the_command_line(twt, params, flags):
    d, (X, y), (Xt, _) = twt
    tagger = SequenceTagger(templates=str(TEMPLATES), **params).fit(X, y)
    want = cli_predictions(d, d / "train.txt", d / "test.txt", TEMPLATES, flags)
    assert tagger.predict(Xt) == want
    # The template text works as the path does.
    text = SequenceTagger(templates=TEMPLATES.read_text(), **params).fit(X, y)
    assert text.predict(Xt) == want
    assert tagger.templates_[0] == "B" and "U00:%x[0,1]" in tagger.templates_
    assert set(tagger.template_weights_) == set(tagger.templates_)


@needs_cli
def test_no_flags_select_as_the_command_line(twt):
    """``SequenceTagger()`` (``learner="auto"``, ``C=None``) runs the structured selection
    of ``train`` without ``--C``: the same choice and the same tagger; ``C`` given trains
    the online learner as before, with no selection."""
    d, (X, y), (Xt, _) = twt
    X, y = X[:80], y[:80]
    tpl = d / "three.templates"
    tpl.write_text("U00:%x[0,1]\nU01:%x[0,4]\nU02:%x[-1,1]\nB\n")
    write_columns(d / "small.txt", [[list(t) for t in s] for s in X], y)
    tagger = SequenceTagger(templates=str(tpl), random_state=0).fit(X, y)
    assert tagger.selection_ is not None
    assert "8 of the 80 training sentences held out" in tagger.selection_["headline"]
    assert tagger.learner_ in ("online", "mtl")
    want = cli_predictions(d, d / "small.txt", d / "test.txt", tpl, [])
    assert tagger.predict(Xt) == want
    fixed = SequenceTagger(templates=str(tpl), C=1.0, random_state=0).fit(X, y)
    assert fixed.selection_ is None and fixed.learner_ == "online"
    assert fixed.predict(Xt) == cli_predictions(
        d, d / "small.txt", d / "test.txt", tpl, ["--C", "1", "--algo", "online"])


def token_dicts(s):
    """Feature dicts of a TWT sentence (columns: form, lower, lemma, suffixes 1-3, space
    after, shape): every key in every token, so that a column file can say the same."""
    out = []
    for i, t in enumerate(s):
        out.append({
            "word.lower()": t[1],
            "lemma": t[2],
            "word[-3:]": t[5],
            "shape": t[7],
            "-1:word.lower()": s[i - 1][1] if i > 0 else "<s>",
            "+1:word.lower()": s[i + 1][1] if i + 1 < len(s) else "</s>",
        })
    return out


@needs_cli
@pytest.mark.parametrize("params, flags", SETTINGS)
def test_feature_dicts_predict_as_the_command_line_on_their_columns(twt, params, flags):
    """String-valued dicts are indicators ``key=value``, one group per key: the command line
    trained on columns holding ``=value`` with one template ``U<j>:key%x[0,j]`` per key
    learns the same model."""
    d, (X, y), (Xt, yt) = twt
    D, Dt = [token_dicts(s) for s in X], [token_dicts(s) for s in Xt]
    tagger = SequenceTagger(**params).fit(D, y)
    keys = list(D[0][0])
    assert tagger.templates_ == ["B"] + keys
    cols = [[["=" + tok[k] for k in keys] for tok in s] for s in D]
    colst = [[["=" + tok[k] for k in keys] for tok in s] for s in Dt]
    write_columns(d / "dtrain.txt", cols, y)
    write_columns(d / "dtest.txt", colst, yt)
    tpl = d / "dicts.templates"
    tpl.write_text("".join(f"U{j}:{k}%x[0,{j}]\n" for j, k in enumerate(keys)) + "B\n")
    want = cli_predictions(d, d / "dtrain.txt", d / "dtest.txt", tpl, flags)
    assert tagger.predict(Dt) == want
    assert tagger.score(Dt, yt) > 0.6


def test_real_values_and_booleans_are_features():
    """A boolean that decides the label is learned; a number scales its feature (the label
    follows the sign of x)."""
    X = [[{"up": w.isupper(), "x": float(len(w)) - 2.5, "w": w} for w in s.split()]
         for s in ["A b", "c D", "E F g", "h i J", "K"] * 4]
    y = [["U" if w["up"] else "l" for w in s] for s in X]
    tagger = SequenceTagger(C=100.0, epochs=5, regularizer="l2").fit(X, y)
    assert tagger.predict(X) == y
    assert tagger.templates_ == ["B", "up", "x", "w"]
    assert all(v >= 0 for v in tagger.template_weights_.values())


def small(twt, n=60):
    _, (X, y), (Xt, yt) = twt
    return X[:n], y[:n], Xt[:n], yt[:n]


@needs_cli
def test_marginals_only_for_the_crf_loss(twt):
    X, y, Xt, _ = small(twt)
    hinge = SequenceTagger(templates=str(TEMPLATES), epochs=1).fit(X, y)
    assert not hasattr(hinge, "predict_marginals")
    assert not hasattr(hinge, "predict_marginals_single")
    crf = SequenceTagger(templates=str(TEMPLATES), epochs=2, loss="crf").fit(X, y)
    batch = SequenceTagger(templates=str(TEMPLATES), learner="lbfgs", max_iter=20).fit(X, y)
    assert abs(sum(batch.predict_marginals_single(Xt[0])[0].values()) - 1) < 1e-9
    probs = crf.predict_marginals(Xt[:5])
    assert crf.predict_marginals_single(Xt[3]) == probs[3]
    pred = crf.predict(Xt[:5])
    assert [len(s) for s in probs] == [len(s) for s in Xt[:5]]
    for s, labels in zip(probs, pred):
        for p, label in zip(s, labels):
            assert set(p) == set(crf.classes_)
            assert abs(sum(p.values()) - 1) < 1e-9
            assert 0.0 <= p[label] <= 1.0


@needs_cli
@pytest.mark.slow  # a fresh Python process
def test_pickles_into_a_fresh_process(twt, tmp_path):
    X, y, Xt, _ = small(twt)
    D, Dt = [token_dicts(s) for s in X], [token_dicts(s) for s in Xt]
    tagger = SequenceTagger(learner="mtl", C=1.0, max_iter=10).fit(D, y)
    state = pickle.dumps(tagger)
    assert tagger.tagger_.to_bytes() in state
    (tmp_path / "t.pkl").write_bytes(state)
    (tmp_path / "x.pkl").write_bytes(pickle.dumps((Dt, tagger.predict(Dt))))
    script = f"""
import pickle
t = pickle.loads(open({str(tmp_path / "t.pkl")!r}, "rb").read())
X, want = pickle.loads(open({str(tmp_path / "x.pkl")!r}, "rb").read())
assert t.predict(X) == want
assert t.template_weights_ and t.classes_
print("same")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "same"
    assert not hasattr(clone(tagger), "tagger_")


@needs_cli
def test_grid_search_chooses_c_on_lists_of_sentences(twt):
    X, y, _, _ = small(twt)
    grid = GridSearchCV(
        SequenceTagger(templates=str(TEMPLATES), epochs=1),
        {"C": [0.1, 10.0]},
        cv=KFold(2),
    ).fit(X, y)
    assert grid.best_params_["C"] in (0.1, 10.0)
    assert len(grid.cv_results_["mean_test_score"]) == 2
    assert 0.0 < grid.best_score_ <= 1.0
    assert grid.predict(X[:2]) == grid.best_estimator_.predict(X[:2])


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)
@needs_cli
def test_ctrl_c_stops_a_fit(twt):
    _, (X, y), _ = twt
    tagger = SequenceTagger(templates=str(TEMPLATES), epochs=100000)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        tagger.fit(X, y)
    assert time.perf_counter() - start < 120
    assert not hasattr(tagger, "tagger_")


def test_bad_settings_and_input_are_named():
    X = [[{"w": "a"}, {"w": "b"}]]
    y = [["A", "B"]]
    with pytest.raises(ValueError, match="q is a setting of the mtl"):
        SequenceTagger(learner="online", q=2.0).fit(X, y)
    with pytest.raises(ValueError, match="q is a setting of the mtl"):
        SequenceTagger(q=2.0, epochs=3).fit(X, y)
    # learner="auto" with only multi-template learning's settings trains it.
    assert SequenceTagger(q=2.0).fit(X, y).learner_ == "mtl"
    with pytest.raises(ValueError, match="epochs"):
        SequenceTagger(epochs=0).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        SequenceTagger(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="learner"):
        SequenceTagger(learner="gomp").fit(X, y)
    with pytest.raises(ValueError, match="sentence 0 has 2 tokens but 1 labels"):
        SequenceTagger().fit(X, [["A"]])
    with pytest.raises(TypeError, match=r"X\[0\]\[1\]\['w'\]"):
        SequenceTagger().fit([[{"w": "a"}, {"w": [1]}]], y)
    # Without templates a token may be a list of attribute names, as in python-crfsuite
    # (test_tagger_features.py); with templates, tokens are columns.
    with pytest.raises(TypeError, match=r"X\[0\]\[0\] is a dict: with templates"):
        SequenceTagger(templates="U00:%x[0,0]\n").fit([[{"w": "a"}, ("b",)]], y)
    with pytest.raises(ValueError, match="<templates>:1"):
        SequenceTagger(templates="U00:%x[0,5]\n").fit([[("a",), ("b",)]], y)


# --- estimator checks ----------------------------------------------------------------------
# X is a list of sentences and y a list of label lists, which the checks that generate numpy
# arrays (fit/predict on random tables, dtype, NaN, sample weights, ...) cannot produce; the
# checks below need no data and run unchanged.
CHECKS_WITHOUT_DATA = [
    "check_parameters_default_constructible",
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimator_repr",
    "check_estimator_cloneable",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_valid_tag_types",
    "check_estimator_tags_renamed",
    "check_mixin_order",
]


@pytest.mark.parametrize("name", CHECKS_WITHOUT_DATA)
def test_sklearn_checks_that_fit_the_input_types(name):
    check = getattr(estimator_checks, name, None)
    if check is None:
        pytest.skip(f"{name} is not in this scikit-learn")
    check("SequenceTagger", SequenceTagger())


# --- metrics -------------------------------------------------------------------------------

# Hand-counted chunks (conlleval): gold B-PER I-PER O B-LOC / pred B-PER I-PER O B-ORG:
# gold chunks PER(0,1) LOC(3,3), predicted PER(0,1) ORG(3,3), one correct.
HAND = [
    ([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "B-ORG"]], 2, 2, 1),
    # IOB1: I- opens a chunk after O; I-LOC after I-PER is a new chunk.
    ([["I-PER", "I-PER", "I-LOC", "O"]], [["I-PER", "I-PER", "I-LOC", "O"]], 2, 2, 2),
    ([["I-PER", "I-PER", "I-LOC", "O"]], [["I-PER", "I-LOC", "I-LOC", "O"]], 2, 2, 0),
    # IOBES: S- is a one-token chunk, E- closes one.
    ([["S-A", "B-B", "E-B", "O"]], [["S-A", "B-B", "I-B", "O"]], 2, 2, 2),
    ([["S-A", "B-B", "E-B", "O"]], [["B-A", "B-B", "E-B", "S-B"]], 2, 3, 2),
    # Two sentences: a chunk does not run across the boundary.
    ([["B-X", "I-X"], ["I-X"]], [["B-X", "I-X", ], ["B-X"]], 2, 2, 2),
    ([["O", "O"]], [["O", "B-X"]], 0, 1, 0),
]


@pytest.mark.parametrize("gold, pred, n_gold, n_pred, correct", HAND)
def test_chunk_scores_equal_hand_counts(gold, pred, n_gold, n_pred, correct):
    s = metrics.chunk_scores(gold, pred)
    assert (s["gold"], s["predicted"], s["correct"]) == (n_gold, n_pred, correct)
    p = correct / n_pred if n_pred else 0.0
    r = correct / n_gold if n_gold else 0.0
    assert metrics.chunk_precision_score(gold, pred) == pytest.approx(p)
    assert metrics.chunk_recall_score(gold, pred) == pytest.approx(r)
    assert metrics.chunk_f1_score(gold, pred) == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


def test_labels_keep_their_type():
    """Integer labels come back as integers (scikit-learn's metrics then work on them), as
    the table estimators keep theirs; strings stay strings; 1 and "1" together are refused."""
    X = [[{"w": "a"}, {"w": "b"}], [{"w": "b"}, {"w": "a"}]] * 3
    y = [[1, 2], [2, 1]] * 3
    tagger = SequenceTagger(learner="online", C=10.0, epochs=3).fit(X, y)
    assert tagger.classes_ == [1, 2]
    assert tagger.predict(X[:2]) == [[1, 2], [2, 1]]
    assert metrics.flat_accuracy_score(y, tagger.predict(X)) == 1.0
    assert metrics.flat_f1_score(y, tagger.predict(X), average="macro") == 1.0
    words = SequenceTagger(learner="online", C=10.0, epochs=3).fit(X, [["A", "B"], ["B", "A"]] * 3)
    assert words.predict(X[:1]) == [["A", "B"]]
    with pytest.raises(ValueError, match="read the same"):
        SequenceTagger(learner="online", C=1.0).fit(X[:2], [[1, "1"], [2, 1]])


def test_a_missing_template_file_is_named():
    with pytest.raises(ValueError, match="templates: no file 'data/tagging/nope.templates'"):
        SequenceTagger(templates="data/tagging/nope.templates").fit([[("a",)]], [["A"]])
    # One line of template text is still text.
    SequenceTagger(templates="U00:%x[0,0]", learner="online", C=1.0).fit(
        [[("a",), ("b",)]], [["A", "B"]])


def test_flat_accuracy_and_shape_errors():
    assert metrics.flat_accuracy_score([["a", "b"], ["c"]], [["a", "x"], ["c"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="sentence 0 has 2 gold labels but 1 predicted"):
        metrics.flat_accuracy_score([["a", "b"]], [["a"]])


def test_flat_scores_are_scikit_learns_on_the_tokens():
    from sklearn import metrics as sk

    import random

    rng = random.Random(1)
    labels = ["O", "B-PER", "I-PER", 3]
    gold = [[rng.choice(labels) for _ in range(rng.randint(1, 6))] for _ in range(20)]
    pred = [[rng.choice(labels) if rng.random() < 0.4 else g for g in s] for s in gold]
    flat_gold = [str(g) for s in gold for g in s]
    flat_pred = [str(p) for s in pred for p in s]
    gold_s = [[str(g) for g in s] for s in gold]
    pred_s = [[str(p) for p in s] for s in pred]
    for average in ["micro", "macro", "weighted"]:
        assert metrics.flat_f1_score(gold_s, pred_s, average=average) == pytest.approx(
            sk.f1_score(flat_gold, flat_pred, average=average)
        )
        assert metrics.flat_precision_score(gold_s, pred_s, average=average) == pytest.approx(
            sk.precision_score(flat_gold, flat_pred, average=average, zero_division=0)
        )
        assert metrics.flat_recall_score(gold_s, pred_s, average=average) == pytest.approx(
            sk.recall_score(flat_gold, flat_pred, average=average)
        )
    # Integer labels keep their type (scikit-learn refuses a mix of str and int).
    ints = [[1, 2, 2], [1]]
    assert metrics.flat_f1_score(ints, [[1, 2, 1], [1]], average="micro") == pytest.approx(3 / 4)
    report = metrics.flat_classification_report(gold_s, pred_s, labels=["B-PER", "I-PER"])
    assert "B-PER" in report and "I-PER" in report and "\nO " not in report
    assert report == sk.classification_report(flat_gold, flat_pred, labels=["B-PER", "I-PER"])
    with pytest.raises(ValueError, match="sentence 1 has 1 gold labels but 2 predicted"):
        metrics.flat_f1_score([["a"], ["b"]], [["a"], ["b", "c"]], average="micro")


def test_sequence_accuracy_counts_whole_sentences():
    gold = [["a", "b"], ["c"], ["d", "e", "f"]]
    pred = [["a", "b"], ["x"], ["d", "e", "f"]]
    assert metrics.sequence_accuracy_score(gold, pred) == pytest.approx(2 / 3)
    assert metrics.sequence_accuracy_score(iter(gold), iter(gold)) == 1.0
    assert metrics.sequence_accuracy_score([], []) == 0.0
    with pytest.raises(ValueError, match="2 gold sentences but 1 predicted"):
        metrics.sequence_accuracy_score([["a"], ["b"]], [["a"]])


def test_chunk_scores_equal_seqeval():
    seqeval = pytest.importorskip("seqeval.metrics")
    import random

    rng = random.Random(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-PER", "B-MISC", "I-MISC"]
    for _ in range(200):
        gold = [[rng.choice(tags) for _ in range(rng.randint(1, 8))] for _ in range(3)]
        pred = [[rng.choice(tags) for _ in s] for s in gold]
        for ours, theirs in [
            (metrics.chunk_precision_score, seqeval.precision_score),
            (metrics.chunk_recall_score, seqeval.recall_score),
            (metrics.chunk_f1_score, seqeval.f1_score),
        ]:
            assert ours(gold, pred) == pytest.approx(theirs(gold, pred, zero_division=0))
