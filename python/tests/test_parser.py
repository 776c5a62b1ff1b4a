"""multikernel.DependencyParser.

Trained on the first sentences of fold 0 of the Turkish Web Treebank shipped in data/, its
attachment scores on the test fold (9) equal ``multikernel eval --test-folds 9``'s for a
model ``multikernel train --task parsing`` trained on the same sentences and settings; the
three input forms (a path, CoNLL-U text, conllu TokenLists or blocks) give the same parser;
``predict`` returns what it was given with comments and multi-word ranges kept; a missing
UPOS is named; it pickles into a fresh process; GridSearchCV chooses C on a list of
sentences; Ctrl-C stops a fit."""

import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils import estimator_checks

from multikernel import DependencyParser

import cli_binary
from treebank import TREEBANK, blocks, unparsed

CLI = cli_binary.path()
N_TRAIN = 80

# Skips without the binary, fails with MULTIKERNEL_REQUIRE_BIN=1 (conftest.py).
needs_cli = pytest.mark.usefixtures("multikernel_bin")


def cli(*args):
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def twt(tmp_path_factory):
    d = tmp_path_factory.mktemp("twt")
    train, test = blocks(0)[:N_TRAIN], blocks(9)
    (d / "train.conllu").write_text("".join(train), encoding="utf-8")
    (d / "test.conllu").write_text("".join(test), encoding="utf-8")
    return d, train, test


def eval_lines(out):
    return dict(line.split() for line in out.stdout.strip().splitlines())


SETTINGS = [
    (dict(learner="online", C=1.0, epochs=2, random_state=0), ["--epochs", "2"]),
    (dict(learner="online", C=1.0, epochs=1, projective=True, loss="crf", eta0=0.3,
          random_state=0), ["--epochs", "1", "--projective", "--loss", "crf", "--eta0", "0.3"]),
    (dict(learner="mtl", C=1.0, max_iter=8, random_state=0), ["--algo", "mtl", "--max-iter", "8"]),
]


@needs_cli
@pytest.mark.parametrize("params, flags", SETTINGS)
def test_scores_equal_multikernel_eval_on_the_test_fold(twt, params, flags):
    d, train, test = twt
    model = d / "p.model"
    cli("train", "--task", "parsing", "--data", d / "train.conllu", "--C", "1", "--seed", "0",
        *flags, "--out", model)
    want = eval_lines(cli("eval", "--model", model, "--data", TREEBANK, "--test-folds", "9"))
    parser = DependencyParser(**params).fit(d / "train.conllu")
    got = parser.attachment_scores("".join(test))
    assert f"{got['uas']:.2f}" == want["uas"]
    assert f"{got['las']:.2f}" == want["las"]
    assert str(got["tokens"]) == want["scored"] and str(got["sentences"]) == want["sentences"]
    assert parser.score(test) == pytest.approx(got["uas"] / 100)
    # The same model as the command line's: its model file's bytes.
    assert parser.parser_.to_bytes() == model.read_bytes()
    assert parser.projective == parser.parser_.projective


@needs_cli
def test_no_flags_select_as_the_command_line(twt):
    """``DependencyParser()`` (``learner="auto"``, ``C=None``) runs the structured selection
    of ``train --task parsing`` without ``--C``: the same model file, byte for byte."""
    d, train, _ = twt
    model = d / "auto.model"
    out = cli("train", "--task", "parsing", "--data", d / "train.conllu", "--seed", "0",
              "--out", model)
    assert "selected " in out.stderr
    parser = DependencyParser(random_state=0).fit(d / "train.conllu")
    assert parser.selection_ is not None and parser.learner_ in ("online", "mtl")
    assert parser.selection_["headline"] in out.stderr
    assert parser.parser_.to_bytes() == model.read_bytes()
    assert DependencyParser(C=1.0, random_state=0).fit(d / "train.conllu").selection_ is None


def test_text_blocks_and_tokenlists_give_the_same_parser(twt):
    d, train, test = twt
    params = dict(epochs=1, random_state=0)
    by_path = DependencyParser(**params).fit(str(d / "train.conllu"))
    by_text = DependencyParser(**params).fit("".join(train))
    by_blocks = DependencyParser(**params).fit(train)
    assert by_path.parser_.to_bytes() == by_text.parser_.to_bytes() == by_blocks.parser_.to_bytes()
    assert "root" in by_path.classes_
    assert list(by_path.template_weights_) == by_path.templates_
    assert by_path.templates_[0] == "h.form h.upos"
    assert "parsing" in by_path.summary_
    conllu = pytest.importorskip("conllu")
    # conllu keeps one value per feature name (TWT repeats PersonNumber): the TokenLists'
    # parser is the one trained on their text as conllu writes it.
    sents = conllu.parse("".join(train))
    by_tokens = DependencyParser(**params).fit(sents)
    by_serialized = DependencyParser(**params).fit("".join(s.serialize() for s in sents))
    assert by_tokens.parser_.to_bytes() == by_serialized.parser_.to_bytes()


SMALL = (
    "# sent_id = s1\n# text = ab c\n"
    "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\ta\ta\tNOUN\tNN\t_\t3\tnsubj\t_\tSpaceAfter=No\n"
    "2\tb\tb\tADJ\tJJ\t_\t1\tamod\t_\t_\n"
    "2.1\tz\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\tc\tc\tVERB\tVB\t_\t0\troot\t_\t_\n\n"
)


def test_predict_returns_what_it_was_given():
    parser = DependencyParser(epochs=5, random_state=0).fit(SMALL)
    raw = unparsed(SMALL)
    assert parser.predict(raw) == SMALL  # comments, ranges, empty nodes kept
    assert parser.predict([raw, raw]) == [SMALL, SMALL]
    conllu = pytest.importorskip("conllu")
    given = conllu.parse(raw)
    out = parser.predict(given)
    assert given[0][1]["head"] is None  # the input is not changed
    assert [t["id"] for t in out[0]] == [(1, "-", 2), 1, 2, (2, ".", 1), 3]
    assert [(t["head"], t["deprel"]) for t in out[0] if isinstance(t["id"], int)] == [
        (3, "nsubj"), (1, "amod"), (0, "root")]
    assert out[0].metadata == given[0].metadata == {"sent_id": "s1", "text": "ab c"}
    assert out[0].serialize() == conllu.parse(SMALL)[0].serialize()
    with pytest.raises(ValueError, match="HEAD"):
        parser.score(raw)
    assert parser.score(SMALL) == 1.0


def test_a_missing_upos_names_the_sentence_and_token():
    parser = DependencyParser(epochs=1, random_state=0).fit(SMALL)
    bad = SMALL.replace("\tADJ\t", "\t_\t")
    with pytest.raises(ValueError, match=r"<text>:13: sentence 2, token 2 \('b'\) has no UPOS"):
        parser.predict(SMALL + bad)
    with pytest.raises(ValueError, match=r"X\[1\]:5: sentence 2, token 2 \('b'\) has no UPOS"):
        parser.predict([SMALL, bad])
    with pytest.raises(ValueError, match="has no UPOS"):
        DependencyParser(epochs=1).fit(bad)
    # A token dict without 'upos': the same error.
    tokens = [dict(id=1, form="a", lemma="a", head=0, deprel="root")]
    with pytest.raises(ValueError, match=r"X\[0\]:1: sentence 1, token 1 \('a'\) has no UPOS"):
        DependencyParser(epochs=1).fit([tokens])


def test_bad_settings_and_input_are_named():
    with pytest.raises(ValueError, match="q is a setting of the mtl learner"):
        DependencyParser(learner="online", q=2.0).fit(SMALL)
    with pytest.raises(ValueError, match="epochs"):
        DependencyParser(epochs=0).fit(SMALL)
    with pytest.raises(ValueError, match="loss"):
        DependencyParser(loss="squared").fit(SMALL)
    with pytest.raises(ValueError, match="learner"):
        DependencyParser(learner="gomp").fit(SMALL)
    with pytest.raises(ValueError, match="no file"):
        DependencyParser().fit("no-such-treebank.conllu")
    with pytest.raises(ValueError, match="<templates>:1"):
        DependencyParser(templates="h.nope\n").fit(SMALL)
    with pytest.raises(ValueError, match="X\\[0\\]"):
        DependencyParser().fit([SMALL + SMALL])
    with pytest.raises(TypeError, match=r"X\[0\]\[0\]"):
        DependencyParser().fit([[1, 2]])


def test_templates_from_a_path_or_text(twt, tmp_path):
    _, train, test = twt
    text = "h.form h.upos\nd.upos\nh.upos d.upos dir dist\n"
    (tmp_path / "t.templates").write_text(text)
    a = DependencyParser(templates=str(tmp_path / "t.templates"), epochs=1, random_state=0)
    a = a.fit(train)
    b = DependencyParser(templates=text, epochs=1, random_state=0).fit(train)
    assert a.templates_ == ["h.form h.upos", "d.upos", "h.upos d.upos dir dist"]
    assert a.parser_.to_bytes() == b.parser_.to_bytes()
    assert a.predict(test[:3]) == b.predict(test[:3])


@pytest.mark.slow  # a fresh Python process
def test_pickles_into_a_fresh_process(twt, tmp_path):
    _, train, test = twt
    parser = DependencyParser(learner="mtl", max_iter=5).fit(train)
    state = pickle.dumps(parser)
    assert parser.parser_.to_bytes() in state
    (tmp_path / "p.pkl").write_bytes(state)
    (tmp_path / "x.pkl").write_bytes(pickle.dumps((test[:20], parser.predict(test[:20]))))
    script = f"""
import pickle
p = pickle.loads(open({str(tmp_path / "p.pkl")!r}, "rb").read())
X, want = pickle.loads(open({str(tmp_path / "x.pkl")!r}, "rb").read())
assert p.predict(X) == want
assert p.template_weights_ and p.classes_
print("same")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "same"
    assert not hasattr(clone(parser), "parser_")


def test_grid_search_chooses_c_on_a_list_of_sentences(twt):
    _, train, _ = twt
    grid = GridSearchCV(DependencyParser(epochs=1), {"C": [0.1, 10.0]}, cv=KFold(2)).fit(train)
    assert grid.best_params_["C"] in (0.1, 10.0)
    assert len(grid.cv_results_["mean_test_score"]) == 2
    assert 0.0 < grid.best_score_ <= 1.0
    assert grid.predict(train[:2]) == grid.best_estimator_.predict(train[:2])
    conllu = pytest.importorskip("conllu")
    sents = conllu.parse("".join(train))
    grid = GridSearchCV(DependencyParser(epochs=1), {"C": [1.0]}, cv=KFold(2)).fit(sents)
    assert 0.0 < grid.best_score_ <= 1.0


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)
def test_ctrl_c_stops_a_fit():
    train = blocks(0)
    parser = DependencyParser(epochs=100000)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        parser.fit(train)
    assert time.perf_counter() - start < 120
    assert not hasattr(parser, "parser_")


# --- estimator checks ----------------------------------------------------------------------
# X is a treebank (sentences with their trees), which the checks that generate numpy arrays
# (fit/predict on random tables, dtype, NaN, sample weights, ...) cannot produce; the checks
# below need no data and run unchanged.
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
    check("DependencyParser", DependencyParser())


def test_the_keywords_are_the_registry_settings():
    """The learner settings are those the library's registry marks as a parser's."""
    import inspect

    from multikernel import _core

    registry = {s["name"] for s in _core.learner_settings() if s["parser"]}
    assert registry == {"regularizer", "loss", "epochs", "eta0", "q", "eps", "max_iter"}
    params = set(inspect.signature(DependencyParser.__init__).parameters) - {"self"}
    shared = {
        "learner", "C", "templates", "projective", "random_state", "verbose", "n_jobs"
    }
    assert params - shared == registry
    assert set(DependencyParser._parameter_constraints) == params
