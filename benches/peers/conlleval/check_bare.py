"""Checks `multikernel score` against the Python port of conlleval (PyPI `conlleval` 0.2,
conlleval.pl's rules with the E and S tags) on random label sequences with bare chunk tags
(`B`, `I`, `O`, ...: chunks of the empty type), typed tags, and both mixed. Usage (from the
repository's root, after `cargo build --release -p multikernel-cli`):

    python3 -m venv target/peers/conlleval-venv
    target/peers/conlleval-venv/bin/pip install -r benches/peers/conlleval/requirements.txt
    target/peers/conlleval-venv/bin/python benches/peers/conlleval/check_bare.py

Prints one line per file checked and exits non-zero on the first difference in the chunk
counts. (The port's precision is 1 when nothing is found; conlleval.pl's and ours is 0:
the counts are compared, and F1 where something was found.)
"""
import random
import subprocess
import sys
import tempfile

from conlleval import evaluate

SCHEMES = {
    "bare-iob2": ["O", "B", "I"],
    "bare-iob1": ["O", "I", "B"],
    "bare-bioes": ["O", "B", "I", "E", "S"],
    "mixed": ["O", "B", "I", "B-A", "I-A"],
}


def ours(binary, path):
    out = subprocess.run([binary, "score", "--data", path], capture_output=True, text=True, check=True)
    return dict(line.split() for line in out.stdout.splitlines())


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/multikernel"
    rng = random.Random(29)
    files = 0
    for scheme, labels in SCHEMES.items():
        for _ in range(50):
            lines = []
            for _ in range(rng.randint(1, 20)):
                for i in range(rng.randint(1, 12)):
                    lines.append(f"w{i} {rng.choice(labels)} {rng.choice(labels)}")
                lines.append("")
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
                f.write("\n".join(lines) + "\n")
                path = f.name
            ref = evaluate(lines)["overall"]["chunks"]
            got = ours(binary, path)
            want = (ref["stats"]["gold"], ref["stats"]["pred"], ref["stats"]["correct"])
            have = (int(got["chunks_gold"]), int(got["chunks_found"]), int(got["chunks_correct"]))
            if want != have:
                print(f"{scheme} {path}: conlleval {want}, multikernel {have}")
                sys.exit(1)
            if want[1] > 0 and abs(100 * ref["evals"]["f1"] - float(got["f1"])) > 0.005 + 1e-9:
                print(f"{scheme} {path}: f1 conlleval {100 * ref['evals']['f1']:.4f}, ours {got['f1']}")
                sys.exit(1)
            files += 1
    print(f"{files} files: chunk counts and F1 equal to conlleval's")


if __name__ == "__main__":
    main()
