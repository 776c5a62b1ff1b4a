#!/usr/bin/env bash
# sklearn-crfsuite's tutorial features on TWT UPOS, ours beside theirs (docs/porting-sklearn-crfsuite.md).
# Run from the repository's root, with the package built in target/ci-venv
# (`maturin develop --release`):
#
#   benches/peers/sklearn_crfsuite/run.sh [ours|theirs|both]
set -euo pipefail
which=${1:-both}
here=benches/peers/sklearn_crfsuite
work=target/peers/sklearn_crfsuite
venv=target/peers/sklearn-crfsuite-venv
mkdir -p "$work"
cargo build --release -q -p multikernel-cli
bin=target/release/multikernel
for part in "0-7 train" "8 dev" "9 test"; do
  set -- $part
  "$bin" convert --data data/treebank/tr-web.conllu.gz --folds "$1" --out "$work/web-$2.txt" 2> /dev/null
done
if [ "$which" != theirs ]; then
  (cd "$here" && ../../../target/ci-venv/bin/python run.py "../../../$work" ours-auto)
  (cd "$here" && ../../../target/ci-venv/bin/python run.py "../../../$work" ours)
  (cd "$here" && ../../../target/ci-venv/bin/python run.py "../../../$work" ours-eta)
  (cd "$here" && ../../../target/ci-venv/bin/python run.py "../../../$work" ours-lbfgs)
fi
if [ "$which" != ours ]; then
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r "$here/requirements.txt"
  fi
  (cd "$here" && "../../../$venv/bin/python" run.py "../../../$work" theirs)
fi
