#!/usr/bin/env bash
# The library's SMO solver against libsvm (scikit-learn's SVC / SVR with precomputed
# kernels) on the shipped tables: decision values and solver time. Builds its own virtual
# environment under target/peers/ and the Python package into it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv=target/peers/smo-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# shellcheck disable=SC1091
source "$venv/bin/activate"
pip install --quiet --disable-pip-version-check -r benches/peers/libsvm_smo/requirements.txt
maturin develop --release --quiet
python benches/peers/libsvm_smo/check.py "$@"
