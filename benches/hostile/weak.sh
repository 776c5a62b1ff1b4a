#!/usr/bin/env bash
# Issue 46, "the weak list": replays each case as the issue gives it on a built binary,
#   benches/hostile/weak.sh [PATH-TO-multikernel]   (default target/release/multikernel)
# and prints `ok   <case>` or `FAIL <case>: why` per case; exits non-zero if any failed.
# A case passes when the run is refused (exit status not 0) with a message naming the file,
# the line and what was expected, and an output file already there keeps its bytes; or, for
# large weights, when the output is finite. Uses the shipped data and files made in a
# temporary folder; needs bash, perl (to edit a model's weights) and gzip. A few seconds.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-target/release/multikernel}
case $B in /*) ;; *) B=$PWD/$B ;; esac
[ -x "$B" ] || { echo "FAIL setup: no binary at $B (cargo build --release -p multikernel-cli)"; exit 1; }
JA=$PWD/data/tagging/ja-pos.euc-jp.txt
UCI=$PWD/data/uci
TB=$PWD/data/treebank/tr-web.conllu.gz
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
FAILED=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
OLD="an older file"
fresh() { printf '%s\n' "$OLD" > "$1"; }
# refused CASE OUTPUT NEEDLE... -- COMMAND...: the command fails, its stderr holds every
# needle, no panic, and OUTPUT (when not -) still holds the older file's bytes.
refused() {
  local name=$1 out=$2; shift 2
  local needles=()
  while [ "$1" != -- ]; do needles+=("$1"); shift; done
  shift
  "$@" > stdout.txt 2> stderr.txt
  local rc=$?
  if [ $rc -eq 0 ]; then fail "$name" "exit status 0: $(tail -c 300 stderr.txt)"; return; fi
  if grep -q panicked stderr.txt; then fail "$name" "panicked"; return; fi
  for n in "${needles[@]}"; do
    grep -qF -- "$n" stderr.txt || { fail "$name" "no '$n' in: $(tail -c 400 stderr.txt)"; return; }
  done
  if [ "$out" != - ] && [ "$(cat "$out")" != "$OLD" ]; then fail "$name" "$out was overwritten"; return; fi
  pass "$name"
}

printf 'U00:%%x[0,0]\nU01:%%x[0,1]\nB\n' > T
TRAIN=(train --select none --task sequence --format columns --templates T --loss crf)
"$B" "${TRAIN[@]}" --data "$JA" --epochs 3 --out tagger.model --checkpoint run.ckpt > /dev/null 2>&1 \
  || { echo "FAIL setup: the tagger does not train"; exit 1; }

# 1. CR-only line ends (old Mac files), not "needs at least 2 labels".
tr '\n' '\r' < "$JA" > cr.txt
fresh m.model
refused cr-line-ends-columns m.model "cr.txt:1: a carriage return (CR)" "CR alone" -- \
  "$B" "${TRAIN[@]}" --data cr.txt --epochs 2 --out m.model
printf 'a,b,label\r1,2,x\r3,4,y\r' > cr.csv
refused cr-line-ends-csv m.model "cr.csv:1: a carriage return" -- \
  "$B" train --data cr.csv --C 1 --out m.model

# 2. A 1-column file given to a tagger's predict: the file's name.
cut -d' ' -f1 "$JA" > one.txt
fresh pred.txt
refused tagger-predict-one-column pred.txt "one.txt:1: 1 column; the tagger model reads 2 observation columns" -- \
  "$B" predict --model tagger.model --data one.txt --out pred.txt

# 3. A tagger model given a CoNLL-U or CSV file, a checkpoint given as --model.
refused tagger-given-conllu pred.txt "tr-web.conllu.gz:2: expected 4 columns" "looks like a CoNLL-U treebank; a template tagger reads CRF++ columns" -- \
  "$B" predict --model tagger.model --data "$TB" --out pred.txt
refused tagger-given-csv pred.txt "sonar.csv:1: 1 column" "looks like a CSV table" -- \
  "$B" predict --model tagger.model --data "$UCI/sonar.csv" --out pred.txt
refused checkpoint-as-model pred.txt "model run.ckpt: not a multikernel model" "the file is a multikernel checkpoint" "give the model file train wrote to --out" -- \
  "$B" predict --model run.ckpt --data "$JA" --out pred.txt

# 4. --min-count pruning every unigram template: refused; pruning some: a warning.
refused min-count-prunes-all m.model "--min-count 1000: expected at most" "keeps no expansion of any template (U00:%x[0,0], U01:%x[0,1])" -- \
  "$B" "${TRAIN[@]}" --data "$JA" --epochs 2 --min-count 1000 --out m.model
printf 'U00:%%x[0,1]\nU01:%%x[-1,0]/%%x[0,0]/%%x[1,0]\nB\n' > T2
if "$B" train --select none --task sequence --format columns --templates T2 --data "$JA" --epochs 2 \
     --min-count 30 --out m2.model > /dev/null 2> stderr.txt \
   && grep -qF "warning: min_count 30 kept no expansion of 1 of the 2 templates with observations (U01:" stderr.txt; then
  pass min-count-prunes-some
else
  fail min-count-prunes-some "no warning naming U01: $(tail -c 300 stderr.txt)"
fi

# 5. Gold trees with two roots; multi-word ranges 2-1 and 6-9 in a 7-token sentence.
sentence() { # N [RANGE BEFORE]: token 1 on the root, the others on token 1
  echo "# sent_id = 1"
  for k in $(seq 1 "$1"); do
    [ "${3:-0}" = "$k" ] && printf '%s\tww\t_\t_\t_\t_\t_\t_\t_\t_\n' "$2"
    printf '%s\tw%s\tw\tNOUN\tNN\t_\t%s\tdep\t_\t_\n' "$k" "$k" "$([ "$k" = 1 ] && echo 0 || echo 1)"
  done
  echo
}
sentence 3 | sed 's/^3\(\tw3\tw\tNOUN\tNN\t_\t\)1/3\10/' > two.conllu
sentence 7 2-1 2 > r21.conllu
sentence 7 6-9 6 > r69.conllu
PARSE=(train --task parsing --epochs 1 --lambda 1e-3 --out m.model)
refused two-roots m.model "two.conllu:4: the sentence of lines 1-4 has 2 tokens on the root (HEAD 0: tokens 1, 3): expected exactly one" -- \
  "$B" "${PARSE[@]}" --data two.conllu
refused range-2-1 m.model "r21.conllu:3: the multi-word token range '2-1' is empty or reversed" -- \
  "$B" "${PARSE[@]}" --data r21.conllu
refused range-6-9 m.model "r69.conllu:7: the multi-word token range '6-9' goes past the end of the sentence of lines 1-9, which has 7 tokens" -- \
  "$B" "${PARSE[@]}" --data r69.conllu

# 6. A checkpoint header edited to another crate_version, or another step.
sed '1s/"crate_version":"[^"]*"/"crate_version":"9.9.9"/' run.ckpt > version.ckpt
sed '1s/"step":2,/"step":99,/' run.ckpt > step.ckpt
refused checkpoint-other-crate-version m.model "version.ckpt:1: this checkpoint was written by multikernel 9.9.9" -- \
  "$B" "${TRAIN[@]}" --data "$JA" --epochs 3 --out m.model --resume version.ckpt
refused checkpoint-edited-step m.model "step.ckpt:1: the header says step 99, but the saved state is after step 2" -- \
  "$B" "${TRAIN[@]}" --data "$JA" --epochs 3 --out m.model --resume step.ckpt
grep -q "resuming after step 99" stderr.txt && fail checkpoint-edited-step-announced "it says resuming after step 99"

# 7. --checkpoint-every 0.
refused checkpoint-every-0 m.model "--checkpoint-every" "0 is not in 1.." -- \
  "$B" "${TRAIN[@]}" --data "$JA" --epochs 3 --out m.model --checkpoint zero.ckpt --checkpoint-every 0

# 8. A multiclass target NaN becoming a class.
{ head -20 "$UCI/glass.csv"; sed -n 21p "$UCI/glass.csv" | sed 's/,[^,]*$/,NaN/'; } > nan.csv
refused multiclass-nan-target m.model "nan.csv:21: field 10 (the target) 'NaN' is not a class label" -- \
  "$B" train --task multiclass --data nan.csv --C 1 --out m.model

# 9. A model with weights of +-1e308: no NaN probabilities with status 0.
perl -pe 's/("weights":\[)([^\]]*)/$1.join(",", map { $_ % 2 ? "-1e308" : "1e308" } 0 .. (split(",", $2) - 1))/e' tagger.model > big.model
refused weights-1e308 pred.txt "ja-pos.euc-jp.txt: the sentence at line 1: a score of the model is" "not a finite number" -- \
  "$B" predict --model big.model --data "$JA" -v2 --out pred.txt
perl -pe 's/("weights":\[)([^\]]*)/$1.join(",", map { ("1e300", "-5e299", "2.5e299")[$_ % 3] } 0 .. (split(",", $2) - 1))/e' tagger.model > near.model
if "$B" predict --model near.model --data "$JA" -v2 > near.txt 2> stderr.txt; then
  if grep -qiE '/(nan|inf)|# (nan|inf)' near.txt || [ ! -s near.txt ]; then
    fail weights-1e300-finite "non-finite probabilities printed"
  else
    pass weights-1e300-finite
  fi
else
  fail weights-1e300-finite "refused: $(tail -c 300 stderr.txt)"
fi

# 10. A regression target of +-1e300: the column named.
for big in 1e300 -1e300; do
  { head -30 "$UCI/boston-housing.csv"; sed -n 31p "$UCI/boston-housing.csv" | sed "s/,[^,]*\$/,$big/"; } > big.csv
  refused "regression-target-$big" m.model "big.csv:31: field 14 (the target) '$big' is too large for a regression target" -- \
    "$B" train --task regression --data big.csv --out m.model
done

exit $FAILED
