#!/usr/bin/env bash
# Issue 46, item 3 (memory guards where the size grows with labels), replayed:
#   benches/hostile/memory.sh [path/to/multikernel]   (default target/release/multikernel)
# Writes the 250-label bigram-macro file of the finding (the generator below; the tests'
# label_pair_columns / label_pair_files write the same bytes): 400 tokens in sentences of 20,
# token t the line "w(t%37) f(t%11) L(t%250, 3 digits)", with the templates U00:%x[0,0] and
# B01:%x[0,1]. Unguarded it took 0.6 GB; each case must be refused before that is allocated
# (within 2 s, naming the estimate), and a limit that is not a positive number of GiB must be
# a usage error. Prints one line per case (ok / FAIL); exits non-zero if any failed.
set -uo pipefail
B=${1:-target/release/multikernel}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
ok() { echo "ok   $1"; }
fail() {
  echo "FAIL $1: $2"
  failed=1
}

# The columns file with $1 labels.
label_pairs() {
  awk -v labels="$1" 'BEGIN { for (t = 0; t < 400; t++) {
    printf "w%d f%d L%03d\n", t % 37, t % 11, t % labels; if (t % 20 == 19) print "" } }'
}
label_pairs 250 >"$W/lp250.txt"
label_pairs 20 >"$W/lp20.txt"
printf 'U00:%%x[0,0]\nB01:%%x[0,1]\n' >"$W/lp.tpl"
train() {
  local data=$1
  shift
  "$B" train --task sequence --format columns --templates "$W/lp.tpl" --data "$data" "$@"
}

# Runs "$@"; sets rc, err (stderr) and ms (wall-clock milliseconds).
timed() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$W/out" 2>"$W/err"
  rc=$?
  t1=$(date +%s%N)
  ms=$(((t1 - t0) / 1000000))
  err=$(cat "$W/err")
}

# Refused: rc 1 within 2 s, the message naming what and the estimate, no model written.
refused() {
  local name=$1 needle=$2
  shift 2
  rm -f "$W/m"
  timed "$@"
  if [ "$rc" -ne 1 ]; then
    fail "$name" "rc $rc (expected 1): $err"
  elif [ "$ms" -gt 2000 ]; then
    fail "$name" "refused after $ms ms (expected within 2 s)"
  elif ! grep -q "$needle" <<<"$err" || ! grep -q "needs [0-9.]* [GM]iB but the memory limit" <<<"$err"; then
    fail "$name" "the message does not name '$needle' and the estimate: $err"
  elif [ -e "$W/m" ]; then
    fail "$name" "a model was written"
  else
    ok "$name ($ms ms)"
  fi
}

refused "train, 250 labels, B01:%x[0,1], --memory-limit-gb 0.05" "B01:%x\[0,1\]" \
  train "$W/lp250.txt" --epochs 1 --memory-limit-gb 0.05 --out "$W/m"
refused "train --loss crf, 250 labels, B01:%x[0,1], --memory-limit-gb 0.01" "250 labels" \
  train "$W/lp250.txt" --loss crf --epochs 1 --memory-limit-gb 0.01 --out "$W/m"
refused "train --algo mtl, 250 labels, --memory-limit-gb 0.05" "250 labels" \
  train "$W/lp250.txt" --algo mtl --memory-limit-gb 0.05 --out "$W/m"

# A small run (the CRF loss, for marginals) with the default limit trains; its model is
# refused by predict and eval under a limit below its sentences' buffers.
timed train "$W/lp20.txt" --loss crf --epochs 1 --out "$W/m20"
if [ "$rc" -eq 0 ] && [ -s "$W/m20" ]; then
  ok "train, 20 labels, B01:%x[0,1], default limit"
else
  fail "train, 20 labels, default limit" "rc $rc: $err"
fi
refused "predict, 20 labels, --memory-limit-gb 0.000001" "tagging with 20 labels" \
  "$B" predict --model "$W/m20" --data "$W/lp20.txt" --memory-limit-gb 0.000001 --out "$W/m"
refused "predict -v 2, 20 labels, --memory-limit-gb 0.000001" "marginals of a tagger" \
  "$B" predict --model "$W/m20" --data "$W/lp20.txt" -v 2 --memory-limit-gb 0.000001 --out "$W/m"
refused "eval, 20 labels, --memory-limit-gb 0.000001" "tagging with 20 labels" \
  "$B" eval --model "$W/m20" --data "$W/lp20.txt" --memory-limit-gb 0.000001

# Limits that are not a positive number of GiB: usage errors (rc 2) of train, predict, eval.
for bad in -1 NaN nan 0 -0 -inf lots; do
  for cmd in train predict eval; do
    case $cmd in
      train) timed train "$W/lp20.txt" --epochs 1 --out "$W/m" "--memory-limit-gb=$bad" ;;
      predict) timed "$B" predict --model "$W/m20" --data "$W/lp20.txt" "--memory-limit-gb=$bad" ;;
      eval) timed "$B" eval --model "$W/m20" --data "$W/lp20.txt" "--memory-limit-gb=$bad" ;;
    esac
    if [ "$rc" -eq 2 ] && grep -q "positive number of GiB" <<<"$err"; then
      ok "$cmd --memory-limit-gb=$bad refused"
    else
      fail "$cmd --memory-limit-gb=$bad" "rc $rc (expected 2, a positive number of GiB): $err"
    fi
  done
done
timed "$B" eval --model "$W/m20" --data "$W/lp20.txt" --memory-limit-gb -1
if [ "$rc" -eq 2 ] && grep -q "positive number of GiB" <<<"$err"; then
  ok "eval --memory-limit-gb -1 refused"
else
  fail "eval --memory-limit-gb -1" "rc $rc: $err"
fi
timed train "$W/lp20.txt" --epochs 1 --out "$W/m" --memory-limit-gb inf
if [ "$rc" -eq 0 ]; then ok "train --memory-limit-gb inf (no limit)"; else fail "train --memory-limit-gb inf" "rc $rc: $err"; fi

exit $failed
