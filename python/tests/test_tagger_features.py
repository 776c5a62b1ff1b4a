"""sklearn-crfsuite's habits of multikernel.SequenceTagger: ``state_features_`` and
``transition_features_`` are the weights the decoder uses (a Viterbi decode written here in
plain Python from the two dicts gives ``predict``'s labels, and forward-backward over them
gives ``predict_marginals``), their attributes named as python-crfsuite names them; tokens
given as nested dicts, list values and lists of attribute names, flattened as
python-crfsuite flattens them; bad tokens named."""

import math
import pickle
import random

import pytest

from multikernel import SequenceTagger

WORDS = {
    "the": "DET", "a": "DET", "dog": "NOUN", "cats": "NOUN", "park": "NOUN",
    "runs": "VERB", "sleeps": "VERB", "sees": "VERB", "quickly": "ADV", "Rex": "PROPN",
}


def toy(n, seed):
    rng = random.Random(seed)
    words = sorted(WORDS)
    X, y = [], []
    for _ in range(n):
        s = [rng.choice(words) for _ in range(rng.randint(2, 6))]
        X.append(s)
        y.append([WORDS[w] for w in s])
    return X, y


def token(s, i):
    """A token in every form python-crfsuite reads: strings, numbers, booleans, a nested
    dict (with a nested string and a nested number), a list of strings; every third token a
    list of attribute names instead."""
    w = s[i]
    prev = s[i - 1] if i > 0 else "<s>"
    if i % 3 == 2:
        return ["bias", f"word.lower={w.lower()}", f"-1:word.lower={prev}", "tail"]
    return {
        "word.lower()": w.lower(),
        "word[-2:]": w[-2:],
        "len": len(w) / 4.0,
        "word.istitle()": w.istitle(),
        "word.isdigit()": False,
        "ctx": {"prev": prev, "pos": i / 3.0},
        "chars": [w[0], w[-1]],
    }


def features(X):
    return [[token(s, i) for i in range(len(s))] for s in X]


def crfsuite_attributes(tok):
    """python-crfsuite's flattening of one token (ItemSequence): ``{attribute: value}``."""
    out = {}

    def add(name, value):
        out[name] = out.get(name, 0.0) + value

    def item(x, prefix):
        if isinstance(x, dict):
            for k, v in x.items():
                name = prefix + k
                if isinstance(v, (dict, list, set)):
                    item(v, name + ":")
                elif isinstance(v, str):
                    add(name + ":" + v, 1.0)
                else:
                    add(name, float(v))
        else:
            for k in x:
                add(prefix + k, 1.0)

    item(tok, "")
    return out


def unary(state, sentence, labels):
    """Each token's score per label: sum over its attributes of weight * value."""
    out = []
    for tok in sentence:
        attrs = crfsuite_attributes(tok)
        out.append([sum(state.get((a, y), 0.0) * v for a, v in attrs.items())
                    for y in labels])
    return out


def viterbi(u, trans, labels):
    n, L = len(u), len(labels)
    score, back = list(u[0]), []
    for t in range(1, n):
        ptr, new = [], []
        for b in range(L):
            cand = [score[a] + trans.get((labels[a], labels[b]), 0.0) for a in range(L)]
            a = max(range(L), key=lambda k: cand[k])
            ptr.append(a)
            new.append(cand[a] + u[t][b])
        back.append(ptr)
        score = new
    best = max(range(L), key=lambda k: score[k])
    path = [best]
    for ptr in reversed(back):
        path.append(ptr[path[-1]])
    return [labels[k] for k in reversed(path)], max(score)


def path_score(u, trans, labels, path):
    idx = [labels.index(y) for y in path]
    s = sum(u[t][k] for t, k in enumerate(idx))
    return s + sum(trans.get((a, b), 0.0) for a, b in zip(path, path[1:]))


def logsumexp(v):
    m = max(v)
    return m + math.log(sum(math.exp(x - m) for x in v))


def marginals(u, trans, labels):
    n, L = len(u), len(labels)
    t = [[trans.get((a, b), 0.0) for b in labels] for a in labels]
    alpha = [list(u[0])]
    for i in range(1, n):
        alpha.append([u[i][b] + logsumexp([alpha[-1][a] + t[a][b] for a in range(L)])
                      for b in range(L)])
    beta = [[0.0] * L]
    for i in range(n - 2, -1, -1):
        beta.insert(0, [logsumexp([t[a][b] + u[i + 1][b] + beta[0][b] for b in range(L)])
                        for a in range(L)])
    z = logsumexp(alpha[-1])
    return [{labels[k]: math.exp(alpha[i][k] + beta[i][k] - z) for k in range(L)}
            for i in range(n)]


LEARNERS = [
    dict(learner="online", C=10.0, epochs=3),
    dict(learner="online", C=10.0, epochs=3, regularizer="l21sq"),
    dict(learner="mtl", C=1.0, max_iter=20),
    dict(learner="online", C=10.0, epochs=3, loss="crf"),
    dict(learner="lbfgs", C=10.0, max_iter=50),
]


@pytest.fixture(scope="module")
def data():
    X, y = toy(40, seed=0)
    Xt, _ = toy(12, seed=1)
    return features(X), y, features(Xt)


@pytest.mark.parametrize("params", LEARNERS, ids=lambda p: "-".join(map(str, p.values())))
def test_feature_weights_decode_as_predict(data, params):
    """Viterbi over ``state_features_`` and ``transition_features_`` gives ``predict``'s
    labels on training and unseen sentences, and the best path's score is the highest; with
    the CRF loss, forward-backward over them gives ``predict_marginals`` (which fixes every
    weight's scale, not only the argmax)."""
    D, y, Dt = data
    tagger = SequenceTagger(random_state=0, **params).fit(D, y)
    state, trans = tagger.state_features_, tagger.transition_features_
    labels = list(tagger.classes_)
    # (Multi-template learning may drop the label pairs: the words decide the labels.)
    assert state and (trans or params["learner"] == "mtl")
    assert all(w != 0.0 for w in list(state.values()) + list(trans.values()))
    assert {y for _, y in state} <= set(labels)
    assert {a for a, _ in trans} | {b for _, b in trans} <= set(labels)
    sentences = D[:8] + Dt
    pred = tagger.predict(sentences)
    for s, want in zip(sentences, pred):
        u = unary(state, s, labels)
        got, best = viterbi(u, trans, labels)
        assert got == want
        assert path_score(u, trans, labels, want) == pytest.approx(best, abs=1e-9)
    if params.get("loss") == "crf" or params["learner"] == "lbfgs":
        for s, probs in zip(sentences, tagger.predict_marginals(sentences)):
            mine = marginals(unary(state, s, labels), trans, labels)
            for p, q in zip(probs, mine):
                assert p == pytest.approx(q, abs=1e-9)


def test_attributes_are_named_as_python_crfsuite_names_them(data):
    D, y, _ = data
    tagger = SequenceTagger(C=10.0, epochs=3, random_state=0).fit(D, y)
    names = {a for a, _ in tagger.state_features_}
    every = set()
    for s in D:
        for tok in s:
            every |= set(crfsuite_attributes(tok))
    # Every attribute named is one python-crfsuite makes of the training tokens.
    assert names <= every
    for a in ["word.lower():dog", "len", "word.istitle()", "ctx:prev:the", "ctx:pos",
              "chars:d", "chars:s", "bias", "word.lower=dog", "-1:word.lower=the", "tail"]:
        assert a in names, a
    # False is no attribute (python-crfsuite's value 0).
    assert "word.isdigit()" not in names
    # The groups: each dict key, and the text before "=" of the names given as strings.
    assert tagger.templates_ == [
        "B", "word.lower()", "word[-2:]", "len", "word.istitle()", "word.isdigit()", "ctx",
        "chars", "bias", "word.lower", "-1:word.lower", "tail"]


def test_weights_survive_pickling_and_labels_keep_their_type(data):
    D, y, Dt = data
    codes = {t: k for k, t in enumerate(sorted(set(WORDS.values())))}
    yi = [[codes[t] for t in s] for s in y]
    tagger = SequenceTagger(C=10.0, epochs=2, random_state=0).fit(D, yi)
    state = tagger.state_features_
    assert {type(label) for _, label in state} == {int}
    assert {type(a) for pair in tagger.transition_features_ for a in pair} == {int}
    back = pickle.loads(pickle.dumps(tagger))
    assert back.state_features_ == state
    assert back.transition_features_ == tagger.transition_features_
    assert back.predict(Dt) == tagger.predict(Dt)
    # Model bytes keep hashes of the attributes, not their names: the sentences name them.
    raw = type(tagger.tagger_).from_bytes(tagger.tagger_.to_bytes())
    with pytest.raises(ValueError, match="give the training sentences"):
        raw.state_features()
    assert sorted(raw.state_features(D)) == sorted(tagger.tagger_.state_features())
    assert raw.transition_features() == tagger.tagger_.transition_features()


def test_template_taggers_name_attributes_by_their_expansions():
    X, y = toy(30, seed=2)
    cols = [[(w.lower(), w[-2:]) for w in s] for s in X]
    tpl = "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[0,1]\nB\n"
    tagger = SequenceTagger(C=10.0, epochs=3, templates=tpl, random_state=0).fit(cols, y)
    state, trans, labels = tagger.state_features_, tagger.transition_features_, tagger.classes_
    assert ("U00:dog", "NOUN") in state
    assert any(a == "U01:_B-1" for a, _ in state)
    for s, want in zip(cols, tagger.predict(cols)):
        toks = [["U00:" + t[0], "U01:" + (s[i - 1][0] if i else "_B-1"), "U02:" + t[1]]
                for i, t in enumerate(s)]
        assert viterbi(unary(state, toks, labels), trans, labels)[0] == want
    with pytest.raises(ValueError, match="bigram templates with macros"):
        SequenceTagger(C=1.0, epochs=1, templates="U00:%x[0,0]\nB01:%x[0,0]\n").fit(
            cols, y).state_features_


def test_token_forms_predict_alike():
    """A dict and the list of the attribute names python-crfsuite makes of it (all with
    value 1) are one token when the names keep the dict's groups: ``{"w": "a"}`` and
    ``{"w": ["a"]}`` are the attribute ``w:a``; nested dicts of strings likewise."""
    X, y = toy(30, seed=3)
    A = [[{"w": w, "ctx": {"first": s[0]}} for w in s] for s in X]
    B = [[{"w": [w], "ctx": {"first": [s[0]]}} for w in s] for s in X]
    a = SequenceTagger(C=10.0, epochs=2, random_state=0).fit(A, y)
    b = SequenceTagger(C=10.0, epochs=2, random_state=0).fit(B, y)
    assert a.state_features_ == b.state_features_
    assert a.predict(B) == b.predict(A) == a.predict(A)


def test_bad_tokens_are_named():
    y = [["A", "B"]]
    cases = [
        ([[{"w": "a"}, {"w": {"x": None}}]], TypeError, r"X\[0\]\[1\]\['w'\]\['x'\] is a NoneType"),
        ([[{"w": "a"}, {"w": ["x", 2]}]], TypeError, r"X\[0\]\[1\]\['w'\]\[1\] is a int"),
        ([[{"w": "a"}, {"w": {1: 2.0}}]], TypeError, r"X\[0\]\[1\]\['w'\]: the keys"),
        ([[{"w": "a"}, ["bias", 3]]], TypeError, r"X\[0\]\[1\]\[1\] is a int"),
        ([[{"w": "a"}, "bias"]], TypeError, r"X\[0\]\[1\] is a str"),
        ([[{"w": "a"}, 7]], TypeError, r"X\[0\]\[1\] is a int"),
        ([[{"w": "a"}, {"w": {"x": float("nan")}}]], ValueError,
         r"sentence 0, token 1: feature 'w:x' \(key 'w'\) is NaN"),
    ]
    for X, error, message in cases:
        with pytest.raises(error, match=message):
            SequenceTagger(C=1.0, epochs=1).fit(X, y)
    with pytest.raises(TypeError, match=r"X\[0\]\[0\] is a dict: with templates"):
        SequenceTagger(C=1.0, epochs=1, templates="U00:%x[0,0]\n").fit([[{"w": "a"}, ("b",)]], y)
    tagger = SequenceTagger(C=1.0, epochs=1).fit([[{"w": "a"}, ["w=b"]]], y)
    with pytest.raises(TypeError, match=r"X\[0\]\[0\]\['w'\] is a NoneType"):
        tagger.predict([[{"w": None}]])
