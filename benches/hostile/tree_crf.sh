#!/usr/bin/env bash
# Issue 46, item 2 (a finite tree CRF): each case as the issue writes it.
#   benches/hostile/tree_crf.sh [path/to/multikernel]   (default target/release/multikernel)
# Prints `ok   <case>` or `FAIL <case>: why` per case; exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$(realpath "${1:-target/release/multikernel}")
WEB=$PWD/data/treebank/tr-web.conllu.gz
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failed=0
ok() { echo "ok   $1"; }
fail() {
  echo "FAIL $1: $2"
  failed=1
}

# The numbers of `"objective"` fields and of trace points in a run JSON, and its skip count.
json_field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. Done when: folds 0-7, nothing else (but --out): a finite objective every epoch, no
#    sentence skipped.
c=folds-0-7-default-objective-finite
if (cd "$W" && "$B" train --task parsing --loss crf --data "$WEB" --train-folds 0-7 --out m07 \
  >out07 2>err07); then
  line=$(grep '^objective by epoch:' "$W/err07")
  n=$(echo "$line" | tr ' ' '\n' | grep -cE '^[0-9]+:[0-9.]+$')
  if grep -q '^warning:' "$W/err07"; then
    fail $c "$(grep '^warning:' "$W/err07")"
  elif [[ $n -ne 20 ]]; then
    fail $c "expected 20 finite epoch objectives, got: $line"
  else
    ok $c
  fi
else
  fail $c "rc $?: $(tail -1 "$W/err07")"
fi

# 2. The default settings on fold 0 (3 epochs): the run JSON holds the objective of each
#    epoch and no skipped sentence (before: "objective": null and an empty trace).
c=fold-0-run-json-objective
if "$B" train --task parsing --loss crf --data "$WEB" --train-folds 0 --epochs 3 \
  --out "$W/m0" --run-json "$W/r0.json" >/dev/null 2>"$W/err0"; then
  got=$(json_field "$W/r0.json" \
    "(r['objective'] is not None, len([t for t in r['trace'] if t['objective'] is not None]), r.get('skipped_examples'))")
  if [[ $got == "(True, 3, 0)" ]]; then ok $c; else fail $c "objective set, trace points, skipped: $got"; fi
else
  fail $c "rc $?: $(tail -1 "$W/err0")"
fi

# 3. The issue's checkpoint case: no null in the checkpoint, and --resume reads it.
c=fold-0-lambda-1e-3-checkpoint-resumes
if "$B" train --task parsing --loss crf --data "$WEB" --train-folds 0 --epochs 2 --lambda 1e-3 \
  --checkpoint "$W/ck" --checkpoint-every 1 --out "$W/m1" >/dev/null 2>"$W/err1"; then
  if grep -q null "$W/ck"; then
    fail $c "the checkpoint holds null"
  elif ! "$B" train --task parsing --loss crf --data "$WEB" --train-folds 0 --epochs 2 \
    --lambda 1e-3 --resume "$W/ck" --out "$W/m1r" >/dev/null 2>"$W/err1r"; then
    fail $c "--resume: $(tail -1 "$W/err1r")"
  elif ! cmp -s "$W/m1" "$W/m1r"; then
    fail $c "the resumed model differs"
  else
    ok $c
  fi
else
  fail $c "rc $?: $(tail -1 "$W/err1")"
fi

# 4. SIGKILL once the checkpoint is at epoch 3 of 6, resume: the uninterrupted model's bytes.
c=crf-sigkill-resume-same-bytes
a=(train --task parsing --loss crf --data "$WEB" --train-folds 0 --epochs 6 --seed 5)
"$B" "${a[@]}" --out "$W/full" >/dev/null 2>&1
"$B" "${a[@]}" --out "$W/k" --checkpoint "$W/ck2" >/dev/null 2>&1 &
pid=$!
killed=0
for _ in $(seq 1 3000); do
  if [[ -f $W/ck2 ]] && head -1 "$W/ck2" | grep -qE '"step":([3-9]|[1-9][0-9])'; then
    kill -9 "$pid" 2>/dev/null && killed=1
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
wait "$pid" 2>/dev/null
if [[ $killed -ne 1 || -f $W/k ]]; then
  fail $c "the run was not killed before it ended"
elif ! "$B" "${a[@]}" --out "$W/k" --resume "$W/ck2" >/dev/null 2>"$W/errk"; then
  fail $c "--resume: $(tail -1 "$W/errk")"
elif ! cmp -s "$W/full" "$W/k"; then
  fail $c "the resumed model differs from the uninterrupted one"
else
  ok $c
fi

exit $failed
