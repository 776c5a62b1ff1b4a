"""The Turkish Web Treebank shipped in data/treebank, as CoNLL-U text (the parser and Dask
tests share it)."""

import gzip
from pathlib import Path

TREEBANK = Path(__file__).resolve().parents[2] / "data" / "treebank" / "tr-web.conllu.gz"


def blocks(fold):
    """The sentences of a TWT fold (index mod 10), each its CoNLL-U lines."""
    text = gzip.open(TREEBANK, "rt", encoding="utf-8").read()
    sentences = [b.strip("\n") + "\n\n" for b in text.split("\n\n") if b.strip()]
    return [s for i, s in enumerate(sentences) if i % 10 == fold]


def unparsed(text):
    """CoNLL-U text with every word's HEAD and DEPREL blanked (``_``)."""
    out = []
    for line in text.splitlines(keepends=True):
        c = line.rstrip("\n").split("\t")
        if len(c) == 10 and c[0].isdigit():
            c[6] = c[7] = "_"
        out.append("\t".join(c) + ("\n" if line.endswith("\n") else ""))
    return "".join(out)
