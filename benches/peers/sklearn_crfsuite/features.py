"""The feature dicts of sklearn-crfsuite's tutorial (CoNLL 2002 NER), on the columns of the
Turkish Web Treebank as `multikernel convert` writes them (0 form, ..., 8 UPOS). TWT's only
part-of-speech column is the label, so the tutorial's `postag` features go; everything else
is the tutorial's word2features unchanged."""


def read_columns(path):
    sents, cur = [], []
    for line in open(path, encoding="utf-8"):
        if line.strip():
            cur.append(line.split())
        elif cur:
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    return sents


def word2features(sent, i):
    word = sent[i][0]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
    }
    if i > 0:
        word1 = sent[i - 1][0]
        features.update({
            "-1:word.lower()": word1.lower(),
            "-1:word.istitle()": word1.istitle(),
            "-1:word.isupper()": word1.isupper(),
        })
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1 = sent[i + 1][0]
        features.update({
            "+1:word.lower()": word1.lower(),
            "+1:word.istitle()": word1.istitle(),
            "+1:word.isupper()": word1.isupper(),
        })
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def sent2labels(sent):
    return [t[-1] for t in sent]


def load(work):
    """(X, y) of the train, dev and test files in `work`."""
    out = []
    for part in ("train", "dev", "test"):
        sents = read_columns(f"{work}/web-{part}.txt")
        out.append(([sent2features(s) for s in sents], [sent2labels(s) for s in sents]))
    return out
