#!/usr/bin/env bash
# CRFsuite beside `multikernel reproduce mtl`: TWT UPOS tagging (web, official split: folds 0-7
# train, 8 dev, 9 test) with the shipped small and redundant template files; and the check of
# our chunk scores against seqeval. Run from the repository's root:
#
#   benches/peers/crfsuite/run.sh [small|redundant|both]
set -euo pipefail
which=${1:-both}
here=benches/peers/crfsuite
work=target/peers/crfsuite
venv=target/peers/crfsuite-venv
mkdir -p "$work"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
fi
cargo build --release -q
bin=target/release/multikernel
for part in "0-7 train" "8 dev" "9 test"; do
  set -- $part
  "$bin" convert --data data/treebank/tr-web.conllu.gz --folds "$1" --out "$work/web-$2.txt" 2> /dev/null
done
"$venv/bin/python" "$here/check_chunks.py" "$bin"
sets=$([ "$which" = both ] && echo "small redundant" || echo "$which")
for s in $sets; do
  "$venv/bin/python" "$here/run.py" "$work/web-train.txt" "$work/web-dev.txt" "$work/web-test.txt" \
    "data/tagging/twt-upos-$s.templates" --model "$work/$s.model"
done
