"""Writes the Turkish Web Treebank's official split (sentence index mod 10: 0-7 train, 8 dev,
9 test) as CoNLL-U files spaCy's converter accepts: TWT's non-UD coarse tags mapped to UD
(PRT->PART, CONJ->CCONJ, AFFIX->X, ONOM->INTJ), nothing else changed.

usage: prepare.py TREEBANK.conllu.gz OUT_DIR
"""
import gzip
import os
import sys

UPOS = {"PRT": "PART", "CONJ": "CCONJ", "AFFIX": "X", "ONOM": "INTJ"}


def sentences(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        block = []
        for line in f:
            if line.strip():
                block.append(line.rstrip("\n"))
            elif block:
                yield block
                block = []
        if block:
            yield block


def fix(line):
    if line.startswith("#"):
        return line
    cols = line.split("\t")
    cols[3] = UPOS.get(cols[3], cols[3])
    return "\t".join(cols)


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    parts = {"train": [], "dev": [], "test": []}
    for i, block in enumerate(sentences(src)):
        fold = i % 10
        name = "train" if fold < 8 else ("dev" if fold == 8 else "test")
        parts[name].append("\n".join(fix(l) for l in block))
    for name, blocks in parts.items():
        with open(os.path.join(out, f"{name}.conllu"), "w", encoding="utf-8") as f:
            f.write("\n\n".join(blocks) + "\n\n")
        print(name, len(blocks), "sentences")


if __name__ == "__main__":
    main()
