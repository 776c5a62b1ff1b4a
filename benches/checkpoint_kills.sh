#!/usr/bin/env bash
# The long loop of checkpoints and resume (docs/checkpoints.md), run by hand:
#   benches/checkpoint_kills.sh [KILLS] [FAMILY...]
# For each learner (table, ocr, parser, tagger, tagger-adagrad, mtl, stream) it trains once without
# checkpoints, then KILLS times (default 30) starts or resumes the checkpointed run and
# SIGKILLs it at a random moment (seeded: RANDOM=1), then lets it finish, and compares the
# model with the uninterrupted one byte for byte. Prints one line per learner; exits
# non-zero on the first difference. Needs a release build: cargo build --release -p multikernel-cli
set -euo pipefail
cd "$(dirname "$0")/.."
B=${MULTIKERNEL:-target/release/multikernel}
KILLS=${1:-30}
shift || true
FAMILIES=${*:-table ocr parser tagger tagger-adagrad mtl stream}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
RANDOM=1
"$B" convert --data data/treebank/tr-web.conllu.gz --folds 0-1 --out "$W/train.txt" >/dev/null 2>&1
"$B" convert --data data/treebank/tr-web.conllu.gz --folds 8 --out "$W/dev.txt" >/dev/null 2>&1
"$B" generate ringnorm --n 50000 --seed 1 --out "$W/ring.csv" >/dev/null 2>&1
args() {
  case $1 in
    table) echo "--select none --data data/uci/pima-diabetes.csv --kernel rbf --kernel linear --C 1 --seed 7 --epochs 60" ;;
    ocr) echo "--select none --task sequence --data data/ocr/letter.data.gz --train-folds 0 --epochs 10 --C 1 --seed 3" ;;
    parser) echo "--select none --task parsing --data data/treebank/tr-web.conllu.gz --train-folds 0-1 --validation-folds 8 --epochs 10 --lambda 1e-3" ;;
    tagger) echo "--select none --task sequence --format columns --templates data/tagging/twt-upos-small.templates --data $W/train.txt --validation $W/dev.txt --C 1 --algo online --epochs 10" ;;
    tagger-adagrad) echo "$(args tagger) --schedule adagrad" ;;
    mtl) echo "--select none --task sequence --format columns --templates data/tagging/twt-upos-small.templates --data $W/train.txt --C 1 --algo mtl --eps 1e-6 --max-iter 60" ;;
    stream) echo "--stream --data $W/ring.csv --C 1 --epochs 2 --seed 4 --chunk-rows 5000 --shuffle-rows 20000" ;;
  esac
}
# Flags of every checkpointed run (a resumed run then saves with them to the same file).
ck_flags() {
  case $1 in
    mtl) echo "--checkpoint-every 1" ;;
  esac
}
ck_args() {
  local f
  f=$(ck_flags "$1")
  if [[ -f $W/ck ]]; then
    echo "--resume $W/ck${f:+ --checkpoint $W/ck $f}"
  else
    echo "--checkpoint $W/ck${f:+ $f}"
  fi
}
for f in $FAMILIES; do
  a=$(args "$f")
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$B" train $a --out "$W/full.model" >/dev/null 2>&1
  normal=$(echo "$(date +%s.%N) - $start" | bc)
  rm -f "$W/ck" "$W/m.model"
  killed=0 finished=0
  for ((k = 0; k < KILLS; k++)); do
    extra=$(ck_args "$f")
    # shellcheck disable=SC2086
    "$B" train $a --out "$W/m.model" $extra >/dev/null 2>&1 &
    pid=$!
    sleep "$(echo "scale=3; $normal * 0.6 * $RANDOM / 32767" | bc)"
    if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
    wait "$pid" 2>/dev/null || true
    if [[ -f $W/m.model ]]; then
      finished=$((finished + 1))
      cmp -s "$W/m.model" "$W/full.model" || { echo "$f: a finished run differs"; exit 1; }
      rm -f "$W/ck" "$W/m.model"
    fi
  done
  extra=$(ck_args "$f")
  # shellcheck disable=SC2086
  "$B" train $a --out "$W/m.model" $extra >/dev/null 2>&1
  cmp -s "$W/m.model" "$W/full.model" || { echo "$f: the resumed model differs"; exit 1; }
  printf '%s: %d kills (%d runs finished before their kill), uninterrupted run %.2f s: the same model bytes\n' \
    "$f" "$killed" "$finished" "$normal"
done
