#!/usr/bin/env bash
# MKLpy beside `reproduce uci`, on the same rows and kernels (issue 16 peer): builds its own
# virtual environment under target/peers/, writes the splits with the Rust binary, then runs
# run.py (its flags pass through: --splits N, --tables a,b, --algorithms, --max-iter, --jobs,
# --json PATH).
# Usage: benches/peers/mklpy/run.sh [--jobs 2] [--json target/peers/mklpy/uci-mklpy.json]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
venv="$root/target/peers/mklpy-venv"
out="$root/target/peers/mklpy/uci"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/requirements.txt"
cargo build --release --manifest-path "$root/Cargo.toml" -q
mkdir -p "$out"
# Only the splits are wanted: the cheapest run of the experiment (one row, one grid point,
# one epoch) writes DIR/uci-splits.json and DIR/data/ (10 splits, seed 1, as `reproduce uci`).
"$root/target/release/multikernel" reproduce uci --methods linear --c-grid 1 --eta0-grid 1 \
    --no-inv --epochs 1 --out-dir "$out" > "$out/reproduce.log" 2>&1
"$venv/bin/python" "$here/run.py" --splits-file "$out/uci-splits.json" "$@"
