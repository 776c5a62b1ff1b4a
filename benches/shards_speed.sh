#!/usr/bin/env bash
# Seconds per epoch of the online structured learners, sequential on 1 thread against the
# parallel settings on 2 threads (docs/parallel.md, BENCHMARKS.md "Online structured learners
# in parallel"): SPOM on OCR fold 0 (the demo's setting) and the parser on TWT web folds 0-7.
#
# Each pair runs the same command at two run lengths (SHORT and LONG epochs) and takes the
# difference of the whole-command wall times over the difference of the epochs, which leaves
# out reading, Gram matrices and indexing; the table shows the median over PAIRS pairs and
# the ratio of the medians. Run on an idle machine (`uptime` is printed before and after).
#
#   benches/shards_speed.sh                 # build, then 5 pairs per learner and setting
#   PAIRS=9 VARIANTS="--batch=2 --batch=4 --shards=2" benches/shards_speed.sh
#
# Settings: PAIRS (5), VARIANTS (the parallel settings to compare, space-separated, each one
# `--flag=value`; default "--batch=2 --shards=2"), THREADS (2), BIN (target/release/multikernel,
# built when missing), OCR_EPOCHS ("5 40"), PARSER_EPOCHS ("1 10").
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-5}
VARIANTS=${VARIANTS:-"--batch=2 --shards=2"}
THREADS=${THREADS:-2}
BIN=${BIN:-target/release/multikernel}
read -r OCR_SHORT OCR_LONG <<<"${OCR_EPOCHS:-5 40}"
read -r PAR_SHORT PAR_LONG <<<"${PARSER_EPOCHS:-1 10}"
[ -x "$BIN" ] || cargo build --release -p multikernel-cli
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

ocr() { # threads epochs [setting]
  RAYON_NUM_THREADS=$1 "$BIN" train --task sequence --data data/ocr/letter.data.gz \
    --train-folds 0 --kernel linear:norm=diag --kernel poly:degree=2,offset=1,norm=diag \
    --kernel rbf:sigma2=5 --reg l21sq --C 3 --eta0 3 --seed 1 --epochs "$2" ${3:-} \
    --out "$WORK/m.model" >/dev/null 2>&1
}
parser() { # threads epochs [setting]
  RAYON_NUM_THREADS=$1 "$BIN" train --task parsing --data data/treebank/tr-web.conllu.gz \
    --train-folds 0-7 --C 1 --seed 0 --epochs "$2" ${3:-} --out "$WORK/m.model" >/dev/null 2>&1
}
wall() { # command... -> seconds
  local a b
  a=$(date +%s.%N)
  "$@"
  b=$(date +%s.%N)
  echo "$b - $a" | bc -l
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
per_epoch() { # learner threads short long setting -> one per-epoch time per line
  local i s l
  for ((i = 0; i < PAIRS; i++)); do
    s=$(wall "$1" "$2" "$3" "$5")
    l=$(wall "$1" "$2" "$4" "$5")
    echo "($l - $s) / ($4 - $3)" | bc -l
  done
}

echo "load before: $(uptime)"
printf '| learner | setting, threads | s / epoch (median of %d pairs) | range | speed-up |\n' "$PAIRS"
printf '| --- | --- | ---: | --- | ---: |\n'
for learner in ocr parser; do
  if [ $learner = ocr ]; then short=$OCR_SHORT long=$OCR_LONG; else short=$PAR_SHORT long=$PAR_LONG; fi
  ocr 1 1 || true # warm the file cache
  per_epoch $learner 1 "$short" "$long" "" >"$WORK/seq"
  base=$(median <"$WORK/seq")
  printf '| %s | sequential, 1 | %.4f | %.4f-%.4f | 1 |\n' $learner "$base" \
    "$(sort -g "$WORK/seq" | head -1)" "$(sort -g "$WORK/seq" | tail -1)"
  for v in $VARIANTS; do
    per_epoch $learner "$THREADS" "$short" "$long" "$v" >"$WORK/par"
    m=$(median <"$WORK/par")
    printf '| %s | %s, %s | %.4f | %.4f-%.4f | %.2fx |\n' $learner "$v" "$THREADS" "$m" \
      "$(sort -g "$WORK/par" | head -1)" "$(sort -g "$WORK/par" | tail -1)" \
      "$(echo "$base / $m" | bc -l)"
  done
done
echo "load after: $(uptime)"
