#!/usr/bin/env bash
# The taggers' and the parser's built-in selection (`train` without --C) beside CRFsuite with
# c2 chosen on the same development sentences, and beside one fit of `--algo mtl --C 1`
# (the cutting plane at q = 1, the tagger's default with --C), on
#   - TWT UPOS tagging (web part; folds 0-7 train, 8 dev, 9 test),
#   - UD English ATIS UPOS tagging (its own train / dev / test files, 5,432 sentences),
# both with the shipped small template file, and TWT web parsing (folds 0-7, dev fold 8,
# test fold 9). Prints one line per row: accuracy (UAS) on the test part and wall seconds.
# Run from the repository's root:
#
#   benches/peers/crfsuite/selection.sh
set -euo pipefail
here=benches/peers/crfsuite
work=target/peers/crfsuite-selection
venv=target/peers/crfsuite-venv
mkdir -p "$work"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
fi
cargo build --release -q
bin=target/release/multikernel
tpl=data/tagging/twt-upos-small.templates
for part in "0-7 train" "8 dev" "9 test"; do
  set -- $part
  "$bin" convert --data data/treebank/tr-web.conllu.gz --folds "$1" --out "$work/twt-$2.txt" 2> /dev/null
done
for part in train dev test; do
  "$bin" convert --data "data/treebank/en-atis/en_atis-ud-$part.conllu.gz" --out "$work/atis-$part.txt" 2> /dev/null
done
seconds() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
for set in twt atis; do
  d="$work/$set"
  t=$(seconds "$bin" train --task sequence --format columns --templates "$tpl" --data "$d-train.txt" \
        --algo mtl --C 1 --out "$d-mtl.model" 2> /dev/null)
  a=$("$bin" eval --model "$d-mtl.model" --data "$d-test.txt" --format columns | tail -1)
  echo "$set  one fit of --algo mtl --C 1          $a  ${t} s"
  t=$(seconds "$bin" train --task sequence --format columns --templates "$tpl" --data "$d-train.txt" \
        --validation "$d-dev.txt" --out "$d-auto.model" 2> "$d-auto.log")
  a=$("$bin" eval --model "$d-auto.model" --data "$d-test.txt" --format columns | tail -1)
  echo "$set  no flags (--validation dev)          $a  ${t} s  ($(grep '^selected' "$d-auto.log"))"
  t=$(seconds "$bin" train --task sequence --format columns --templates "$tpl" --data "$d-train.txt" \
        --out "$d-held.model" 2> "$d-held.log")
  a=$("$bin" eval --model "$d-held.model" --data "$d-test.txt" --format columns | tail -1)
  echo "$set  no flags (10% held out, refit)       $a  ${t} s  ($(grep '^selected' "$d-held.log"))"
  "$venv/bin/python" "$here/run.py" "$d-train.txt" "$d-dev.txt" "$d-test.txt" "$tpl" \
    --algos l2 --grid 0.01,0.1,1 --model "$d-crfsuite.model" | sed "s/^/$set  CRFsuite: /"
done
tb=data/treebank/tr-web.conllu.gz
t=$(seconds "$bin" train --task parsing --data "$tb" --train-folds 0-7 --validation-folds 8 \
      --C 1 --out "$work/parse-online.model" 2> /dev/null)
a=$("$bin" eval --model "$work/parse-online.model" --data "$tb" --test-folds 9 | tail -1)
echo "parsing  --C 1 (the online learner)    $a  ${t} s"
t=$(seconds "$bin" train --task parsing --data "$tb" --train-folds 0-7 --validation-folds 8 \
      --out "$work/parse-auto.model" 2> "$work/parse-auto.log")
a=$("$bin" eval --model "$work/parse-auto.model" --data "$tb" --test-folds 9 | tail -1)
echo "parsing  no flags                      $a  ${t} s  ($(grep '^selected' "$work/parse-auto.log"))"
for q in 1 2; do
  t=$(seconds "$bin" train --task parsing --data "$tb" --train-folds 0-7 --algo mtl --q $q --C 1 \
        --out "$work/parse-q$q.model" 2> /dev/null)
  a=$("$bin" eval --model "$work/parse-q$q.model" --data "$tb" --test-folds 9 | tail -1)
  echo "parsing  --algo mtl --q $q --C 1         $a  ${t} s"
done
