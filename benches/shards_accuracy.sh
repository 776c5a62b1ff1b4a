#!/usr/bin/env bash
# Character accuracy of SPOM on OCR at the same epochs, sequential against parallel shards,
# at the demo's step and at larger ones (BENCHMARKS.md, "The step size of averaged shards";
# docs/parallel.md). Each fold trains on its words (the demo's setting: mkl-lqg, C 3, seed 1)
# and is tested on the nine other folds. Prints one line per setting and epoch count: the
# mean accuracy over the folds, its gap to the first setting (the reference), the worst
# fold's gap, and fold 0's accuracy. Accuracies do not depend on the threads (the same model
# file on any number), so the machine's load does not matter; the whole default run is 120
# trainings of 1-3 s each, about 5 minutes on 2 cores.
#
#   benches/shards_accuracy.sh
#   FOLDS="0 1 2 3" EPOCHS="20" SETTINGS="1:3 2:3 2:4.24 2:6 3:9" benches/shards_accuracy.sh
#
# Settings: FOLDS (0-9), EPOCHS ("5 10 20"), SETTINGS (space-separated `shards:eta0`, the
# first the reference; default "1:3 2:3 2:6 1:6"), BIN (target/release/multikernel, built
# when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
FOLDS=${FOLDS:-"0 1 2 3 4 5 6 7 8 9"}
EPOCHS=${EPOCHS:-"5 10 20"}
SETTINGS=${SETTINGS:-"1:3 2:3 2:6 1:6"}
BIN=${BIN:-target/release/multikernel}
[ -x "$BIN" ] || cargo build --release -p multikernel-cli
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

others() { # fold -> the other folds, comma-separated
  local f=$1 out="" k
  for k in 0 1 2 3 4 5 6 7 8 9; do
    [ "$k" = "$f" ] || out="${out:+$out,}$k"
  done
  echo "$out"
}

results="$WORK/results.tsv"
for setting in $SETTINGS; do
  shards=${setting%%:*}
  eta0=${setting#*:}
  for f in $FOLDS; do
    for e in $EPOCHS; do
      "$BIN" train --task sequence --data data/ocr/letter.data.gz --train-folds "$f" \
        --kernel linear:norm=diag --kernel poly:degree=2,offset=1,norm=diag \
        --kernel rbf:sigma2=5 --reg l21sq --C 3 --eta0 "$eta0" --seed 1 --epochs "$e" \
        --shards "$shards" --out "$WORK/m.model" >/dev/null 2>"$WORK/train.err" ||
        { cat "$WORK/train.err" >&2; exit 1; }
      acc=$("$BIN" eval --model "$WORK/m.model" --data data/ocr/letter.data.gz \
        --test-folds "$(others "$f")" | awk '/accuracy/ { v = $2 } END { print v }')
      printf '%s\t%s\t%s\t%s\n' "$setting" "$f" "$e" "$acc" >>"$results"
    done
  done
done

ref=${SETTINGS%% *}
echo "shards:eta0  epochs  mean %  gap to $ref  worst fold's gap  fold 0 %"
awk -F'\t' -v ref="$ref" -v order="$SETTINGS" -v epochs="$EPOCHS" '
  { acc[$1, $2, $3] = 100 * $4; fold[$2] = 1 }
  END {
    ns = split(order, s, " "); ne = split(epochs, ep, " ")
    for (i = 1; i <= ns; i++) for (j = 1; j <= ne; j++) {
      sum = 0; gap = 0; worst = 1e9; n = 0
      for (f in fold) {
        d = acc[s[i], f, ep[j]] - acc[ref, f, ep[j]]
        sum += acc[s[i], f, ep[j]]; gap += d; n++
        if (d < worst) worst = d
      }
      f0 = ((s[i], 0, ep[j]) in acc) ? sprintf("%.2f", acc[s[i], 0, ep[j]]) : "-"
      printf "%-11s  %6s  %6.2f  %+11.2f  %+16.2f  %8s\n", s[i], ep[j], sum / n, gap / n, worst, f0
    }
  }' "$results"
