"""Parses the test split with a trained spaCy pipeline (gold tokens) and scores it as
multikernel's `eval` does: UAS and LAS over non-punctuation tokens (gold UPOS PUNCT), and UAS
without the gold `ig` arcs. With --pred-conllu it scores a CoNLL-U file of predictions
instead (a cross-check against `multikernel eval`).

usage: score.py GOLD.conllu (--model DIR | --pred-conllu PRED.conllu)
"""
import sys
import time


def read(path):
    sents, cur = [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip():
            if cur:
                sents.append(cur)
                cur = []
            continue
        if line.startswith("#"):
            continue
        c = line.split("\t")
        if "-" in c[0] or "." in c[0]:
            continue
        cur.append((c[1], c[3], int(c[6]), c[7], "SpaceAfter=No" not in c[9]))
    if cur:
        sents.append(cur)
    return sents


def score(gold, pred):
    n = uh = ul = n_ig = uh_ig = 0
    for g, p in zip(gold, pred):
        for (form, upos, head, rel, _), (ph, pr) in zip(g, p):
            if upos == "PUNCT":
                continue
            n += 1
            ok = head == ph
            uh += ok
            ul += ok and rel == pr
            if rel != "ig":
                n_ig += 1
                uh_ig += ok
    return 100 * uh / n, 100 * ul / n, 100 * uh_ig / n_ig, n


def main():
    gold = read(sys.argv[1])
    if sys.argv[2] == "--pred-conllu":
        pred = [[(h, r) for (_, _, h, r, _) in s] for s in read(sys.argv[3])]
        secs = None
    else:
        import spacy
        from spacy.tokens import Doc

        nlp = spacy.load(sys.argv[3])
        # Gold tokens with their whitespace (SpaceAfter=No inside words), as in training.
        docs = [
            Doc(nlp.vocab, words=[t[0] for t in s], spaces=[t[4] for t in s]) for s in gold
        ]
        # Gold sentences, as our parser gets them: the parser may not split a sentence.
        for doc in docs:
            for k, tok in enumerate(doc):
                tok.is_sent_start = k == 0
        t = time.time()
        pred = []
        for doc in nlp.pipe(docs):
            pred.append(
                [(0 if tok.head.i == tok.i else tok.head.i + 1, tok.dep_) for tok in doc]
            )
        secs = time.time() - t
        # spaCy marks the root relation "ROOT"; the treebank writes "root".
        pred = [[(h, "root" if r == "ROOT" else r) for (h, r) in s] for s in pred]
    uas, las, uas_no_ig, n = score(gold, pred)
    print(f"scored {n}\nlas {las:.2f}\nuas_no_ig {uas_no_ig:.2f}\nuas {uas:.2f}")
    if secs is not None:
        print(f"parse_seconds {secs:.2f}")


if __name__ == "__main__":
    main()
