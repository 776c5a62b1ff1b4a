#!/usr/bin/env bash
# scikit-learn's SGDClassifier over RBFSampler / Nystroem features beside our online MKL
# learner over random Fourier features (issue 17, the scale benchmark): builds its own virtual
# environment under target/peers/, writes the generated ringnorm files with the Rust binary
# (chunk by chunk; skipped when present), then runs run.py on each training size.
# Usage: benches/peers/sklearn_scale/run.sh [OUT_DIR [SIZES...]]
#   default OUT_DIR target/peers/scale, SIZES 100000 1000000 (10000000 also works: a 4 GB
#   CSV, about 40 minutes per epoch for the peer on 2 cores).
# The JSON lines (one per run) are appended to OUT_DIR/sklearn-scale.jsonl.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
out="${1:-$root/target/peers/scale}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
venv="$root/target/peers/sklearn-scale-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/requirements.txt"
cargo build --release --manifest-path "$root/Cargo.toml" -q -p multikernel-cli
bin="$root/target/release/multikernel"
mkdir -p "$out"
gen() { # gen N SEED FILE
    [ -s "$3" ] || "$bin" generate ringnorm --n "$1" --seed "$2" --out "$3"
}
gen 10000 2 "$out/ring-test.csv"
for n in "${sizes[@]}"; do
    # The seeds of BENCHMARKS.md's files: 10^5 rows seed 3, 10^6 seed 4, 10^7 seed 5.
    case "$n" in 100000) seed=3 ;; 1000000) seed=4 ;; 10000000) seed=5 ;; *) seed=6 ;; esac
    gen "$n" "$seed" "$out/ring$n.csv"
    "$venv/bin/python" "$here/run.py" --train "$out/ring$n.csv" --test "$out/ring-test.csv" \
        --epochs 5 --map rff --out "$out/sklearn-scale.jsonl"
done
n="${sizes[0]}"
"$venv/bin/python" "$here/run.py" --train "$out/ring$n.csv" --test "$out/ring-test.csv" \
    --epochs 5 --map nystroem --out "$out/sklearn-scale.jsonl"
