#!/usr/bin/env bash
# scikit-learn SVC/SVR beside `reproduce uci`, on the same rows: builds its own virtual
# environment under target/peers/, writes the splits with the Rust binary, then runs run.py.
# Usage: benches/peers/sklearn_svm/run.sh [OUT_DIR]   (default target/peers/uci)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
out="${1:-$root/target/peers/uci}"
venv="$root/target/peers/sklearn-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/requirements.txt"
cargo build --release --manifest-path "$root/Cargo.toml" -q
mkdir -p "$out"
"$root/target/release/multikernel" reproduce uci --methods auto,single-cv \
    --out-dir "$out" --json "$out/uci-auto.json"
"$venv/bin/python" "$here/run.py" "$out" "$out/uci-peers.json"
