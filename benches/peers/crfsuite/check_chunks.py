"""Checks `multikernel score` (chunk precision, recall and F1 as conlleval computes them)
against seqeval's default, conlleval-compatible mode on random label sequences in the IOB1,
IOB2 and BIOES schemes. Usage (from the repository's root, after `cargo build --release`):

    target/peers/crfsuite-venv/bin/python benches/peers/crfsuite/check_chunks.py
"""
import random
import subprocess
import sys
import tempfile

from seqeval.metrics import f1_score, precision_score, recall_score

SCHEMES = {
    "iob1": ["O", "I-A", "I-B", "B-A", "B-B"],
    "iob2": ["O", "B-A", "I-A", "B-B", "I-B"],
    "bioes": ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "E-B", "S-B"],
}


def run(binary, gold, pred):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for g, p in zip(gold, pred):
            for i, (a, b) in enumerate(zip(g, p)):
                f.write(f"w{i} {a} {b}\n")
            f.write("\n")
        path = f.name
    out = subprocess.run([binary, "score", "--data", path], capture_output=True, text=True, check=True)
    return dict(line.split() for line in out.stdout.splitlines())


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/multikernel"
    rng = random.Random(7)
    worst = 0.0
    files = 0
    for scheme, labels in SCHEMES.items():
        for _ in range(40):
            gold, pred = [], []
            for _ in range(rng.randint(1, 30)):
                n = rng.randint(1, 12)
                g = [rng.choice(labels) for _ in range(n)]
                # Predictions: mostly the gold label, sometimes another one.
                p = [x if rng.random() < 0.7 else rng.choice(labels) for x in g]
                gold.append(g)
                pred.append(p)
            ours = run(binary, gold, pred)
            found, correct, total = (int(ours[k]) for k in ("chunks_found", "chunks_correct", "chunks_gold"))
            p = correct / found if found else 0.0
            r = correct / total if total else 0.0
            f = 2 * p * r / (p + r) if p + r else 0.0
            sp, sr, sf = precision_score(gold, pred), recall_score(gold, pred), f1_score(gold, pred)
            worst = max(worst, abs(p - sp), abs(r - sr), abs(f - sf))
            files += 1
    print(f"files {files}")
    print(f"max_abs_difference {worst:.3g}")
    if worst > 1e-12:
        sys.exit("multikernel score and seqeval disagree")


if __name__ == "__main__":
    main()
