#!/usr/bin/env bash
# Issue 46, item 1: what an output points at is never destroyed. Replays each case as the
# issue writes it (FIFOs, character devices, symbolic links and the run's own inputs as
# --out, --checkpoint, --run-json, predict --out and convert --out; unwritable folders) and
# prints one line per case, `ok   CASE`, `skip CASE: why` or `FAIL CASE: why`; exits 1 if any
# failed. Usage: benches/hostile/writers.sh [path/to/multikernel] (default
# target/release/multikernel). The character-device cases need root (mknod c 1 3 in a
# temporary folder) and are skipped otherwise; the real /dev/null and /dev/stdout are used
# only after the same cases passed on a temporary device and link.
set -uo pipefail
B=${1:-target/release/multikernel}
case $B in /*) ;; *) B=$PWD/$B ;; esac
cd "$(dirname "$0")/../.."
[ -x "$B" ] || { echo "FAIL setup: no binary at $B"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
FAILED=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
skip() { echo "skip $1: $2"; }
kind() { stat -c %F "$1" 2>/dev/null || echo missing; }
linkto() { readlink "$1" 2>/dev/null || echo "not a link"; }

cp data/tagging/ja-pos.euc-jp.txt "$W/data.txt"
cd "$W" # a file named `-` written by mistake lands here
printf 'U00:%%x[0,0]\nU01:%%x[0,1]\nB\n' >"$W/T"
TRAIN=(train --select none --task sequence --format columns --templates "$W/T" --data "$W/data.txt"
  --algo online --loss crf --epochs 2)
"$B" "${TRAIN[@]}" --out "$W/m.model" >/dev/null 2>&1 || { echo "FAIL setup: train"; exit 1; }
PREDICT=(predict --model "$W/m.model" --data "$W/data.txt")
"$B" "${PREDICT[@]}" >"$W/pred.txt" 2>/dev/null || { echo "FAIL setup: predict"; exit 1; }
printf '1\tBen\tben\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\tgeldim\tgel\tVERB\t_\t_\t0\troot\t_\t_\n\n' >"$W/tb.conllu"
sums() { md5sum "$W/data.txt" "$W/T" "$W/m.model" "$W/tb.conllu"; }
INPUTS=$(sums)

# Runs "$@" while `cat` reads the FIFO $F into $W/got (a reader that is never written to gives
# up after 5 s); sets RC to the run's exit code.
with_reader() {
  rm -f "$W/got"
  timeout 5 cat "$F" >"$W/got" &
  local reader=$!
  "$@" >/dev/null 2>"$W/err"
  RC=$?
  wait $reader
}

# --- FIFOs: a reader gets the bytes, the FIFO stays a FIFO.
F=$W/fifo; mkfifo "$F"
with_reader "$B" "${TRAIN[@]}" --out "$F"
c="train --out FIFO (reader gets the model)"
if [ $RC -ne 0 ]; then fail "$c" "rc $RC: $(cat "$W/err")"
elif ! cmp -s "$W/got" "$W/m.model"; then fail "$c" "the reader got $(wc -c <"$W/got") bytes, not the model's"
elif [ "$(kind "$F")" != fifo ]; then fail "$c" "now a $(kind "$F")"
else ok "$c"; fi
with_reader "$B" "${TRAIN[@]}" --out "$W/m2.model" --run-json "$F"
c="train --run-json FIFO"
if [ $RC -ne 0 ] || ! grep -q '"steps": 2' "$W/got" || [ "$(kind "$F")" != fifo ]; then
  fail "$c" "rc $RC, $(kind "$F"), got $(head -c 80 "$W/got")"
else ok "$c"; fi
with_reader "$B" "${PREDICT[@]}" --out "$F"
c="predict --out FIFO"
if [ $RC -ne 0 ] || ! cmp -s "$W/got" "$W/pred.txt" || [ "$(kind "$F")" != fifo ]; then
  fail "$c" "rc $RC, $(kind "$F"), $(wc -c <"$W/got") bytes"
else ok "$c"; fi
"$B" "${TRAIN[@]}" --out "$W/m3.model" --checkpoint "$F" >/dev/null 2>"$W/err"; RC=$?
c="train --checkpoint FIFO (refused)"
if [ $RC -ne 0 ] && grep -q -- "--checkpoint" "$W/err" && [ "$(kind "$F")" = fifo ] && [ ! -e "$W/m3.model" ]; then ok "$c"
else fail "$c" "rc $RC, $(kind "$F"): $(cat "$W/err")"; fi
"$B" "${TRAIN[@]}" --out "$W/m3.model" --checkpoint - >/dev/null 2>"$W/err"; RC=$?
c="train --checkpoint - (refused)"
if [ $RC -ne 0 ] && grep -q -- "--checkpoint -" "$W/err" && [ ! -e "$W/m3.model" ] && [ ! -e "$W/-" ]; then ok "$c"
else fail "$c" "rc $RC: $(cat "$W/err")"; fi

# --- Symbolic links to a regular file in another folder: the file gets the bytes, the link stays.
mkdir "$W/real"; echo old >"$W/real/target"; ln -s "$W/real/target" "$W/link"
link_case() { # CASE EXPECTED-FILE|grep:PATTERN|"" COMMAND...
  local c=$1 want=$2; shift 2
  "$@" >/dev/null 2>"$W/err"; RC=$?
  if [ $RC -ne 0 ]; then fail "$c" "rc $RC: $(cat "$W/err")"
  elif [ "$(linkto "$W/link")" != "$W/real/target" ]; then fail "$c" "the link is now a $(kind "$W/link")"
  elif [[ $want == grep:* ]] && ! grep -q -- "${want#grep:}" "$W/real/target"; then fail "$c" "the link's file does not hold the output"
  elif [ -n "$want" ] && [[ $want != grep:* ]] && ! cmp -s "$W/real/target" "$want"; then fail "$c" "the link's file does not hold the output"
  elif [ "$(ls -A "$W/real")" != target ]; then fail "$c" "left in the target's folder: $(ls -A "$W/real")"
  else ok "$c"; fi
}
link_case "train --out SYMLINK" "$W/m.model" "$B" "${TRAIN[@]}" --out "$W/link"
link_case "train --run-json SYMLINK" 'grep:"steps": 2' "$B" "${TRAIN[@]}" --out "$W/m4.model" --run-json "$W/link"
link_case "predict --out SYMLINK" "$W/pred.txt" "$B" "${PREDICT[@]}" --out "$W/link"
link_case "train --checkpoint SYMLINK" "" "$B" "${TRAIN[@]}" --out "$W/m5.model" --checkpoint "$W/link" --checkpoint-every 1
"$B" "${TRAIN[@]}" --out "$W/m6.model" --resume "$W/link" >/dev/null 2>"$W/err"; RC=$?
c="train --resume SYMLINK (the same model)"
if [ $RC -eq 0 ] && cmp -s "$W/m5.model" "$W/m6.model" && [ -L "$W/link" ]; then ok "$c"
else fail "$c" "rc $RC: $(cat "$W/err")"; fi
rm -f "$W/later"; ln -s "$W/real/later" "$W/dangling"
"$B" "${TRAIN[@]}" --out "$W/dangling" >/dev/null 2>"$W/err"; RC=$?
c="train --out DANGLING-SYMLINK (creates the file it names)"
if [ $RC -eq 0 ] && [ -L "$W/dangling" ] && cmp -s "$W/real/later" "$W/m.model"; then ok "$c"
else fail "$c" "rc $RC, $(kind "$W/dangling"): $(cat "$W/err")"; fi

# --- Character devices: the issue's repro (mknod c 1 3), then the real /dev/null.
DEV=$W/null
if [ "$(id -u)" -eq 0 ] && mknod "$DEV" c 1 3 2>/dev/null; then
  devok=1
  for c in "--out" "--run-json" "predict --out" "--checkpoint"; do
    case $c in
      --out) "$B" "${TRAIN[@]}" --out "$DEV" >/dev/null 2>"$W/err"; RC=$?; want=0 ;;
      --run-json) "$B" "${TRAIN[@]}" --out "$W/m7.model" --run-json "$DEV" >/dev/null 2>"$W/err"; RC=$?; want=0 ;;
      "predict --out") "$B" "${PREDICT[@]}" --out "$DEV" >/dev/null 2>"$W/err"; RC=$?; want=0 ;;
      --checkpoint) "$B" "${TRAIN[@]}" --out "$W/m8.model" --checkpoint "$DEV" >/dev/null 2>"$W/err"; RC=$?; want=1 ;;
    esac
    name="train $c CHAR-DEVICE (mknod c 1 3)"; [ "$c" = "predict --out" ] && name="predict --out CHAR-DEVICE (mknod c 1 3)"
    [ $want = 1 ] && name="$name refused"
    if [ "$(kind "$DEV")" != "character special file" ]; then fail "$name" "now a $(kind "$DEV")"; devok=0
    elif [ $RC -ne 0 ] && [ $want = 0 ]; then fail "$name" "rc $RC: $(cat "$W/err")"; devok=0
    elif [ $RC -eq 0 ] && [ $want = 1 ]; then fail "$name" "accepted"; devok=0
    else ok "$name"; fi
  done
  if [ $devok = 1 ]; then
    "$B" "${TRAIN[@]}" --out /dev/null >/dev/null 2>&1; RC=$?
    "$B" "${TRAIN[@]}" --out "$W/m9.model" --checkpoint /dev/null >/dev/null 2>&1; RC2=$?
    c="train --out /dev/null, --checkpoint /dev/null (refused)"
    if [ $RC -eq 0 ] && [ $RC2 -ne 0 ] && [ "$(kind /dev/null)" = "character special file" ]; then ok "$c"
    else fail "$c" "rc $RC and $RC2, /dev/null is a $(kind /dev/null)"; fi
  else
    skip "/dev/null" "the temporary device failed"
  fi
else
  skip "CHAR-DEVICE cases" "mknod needs root"
fi

# --- /dev/stdout: the pipe gets the predictions, the link stays (a temporary link to
# /proc/self/fd/1 first).
if [ -e /proc/self/fd/1 ]; then
  ln -s /proc/self/fd/1 "$W/stdout"
  "$B" "${PREDICT[@]}" --out "$W/stdout" 2>"$W/err" | cat >"$W/piped"
  c="predict --out LINK-TO-/proc/self/fd/1 | cat"
  if cmp -s "$W/piped" "$W/pred.txt" && [ -L "$W/stdout" ]; then
    ok "$c"
    before=$(linkto /dev/stdout)
    "$B" "${PREDICT[@]}" --out /dev/stdout 2>"$W/err" | cat >"$W/piped"
    c="predict --out /dev/stdout | cat"
    if cmp -s "$W/piped" "$W/pred.txt" && [ "$(linkto /dev/stdout)" = "$before" ]; then ok "$c"
    else fail "$c" "$(wc -c <"$W/piped") bytes through the pipe, /dev/stdout -> $(linkto /dev/stdout)"; fi
  else
    fail "$c" "$(wc -c <"$W/piped") bytes through the pipe, $(kind "$W/stdout"): $(cat "$W/err")"
  fi
else
  skip "/dev/stdout" "no /proc"
fi

# --- The run's inputs as outputs: refused before any work, both flags named, inputs unchanged.
refused() { # CASE FLAG1 FLAG2 COMMAND...
  local c=$1 f1=$2 f2=$3; shift 3
  "$@" >/dev/null 2>"$W/err"; RC=$?
  if [ $RC -eq 0 ]; then fail "$c" "rc 0"
  elif ! grep -q -- "$f1" "$W/err" || ! grep -q -- "$f2" "$W/err"; then fail "$c" "message does not name $f1 and $f2: $(cat "$W/err")"
  elif grep -q "^training " "$W/err"; then fail "$c" "refused after training started"
  elif [ "$(sums)" != "$INPUTS" ]; then fail "$c" "an input changed"
  else ok "$c"; fi
}
ln -s data.txt "$W/data-link"
"$B" "${TRAIN[@]}" --out ./data.txt >/dev/null 2>"$W/err"; RC=$?
if [ $RC -ne 0 ] && [ "$(sums)" = "$INPUTS" ]; then ok "train --out ./DATA (relative spelling)"
else fail "train --out ./DATA (relative spelling)" "rc $RC"; fi
refused "train --out DATA" --out --data "$B" "${TRAIN[@]}" --out "$W/data.txt"
refused "train --out SYMLINK-TO-DATA" --out --data "$B" "${TRAIN[@]}" --out "$W/data-link"
refused "train --out TEMPLATES" --out --templates "$B" "${TRAIN[@]}" --out "$W/T"
refused "train --checkpoint DATA" --checkpoint --data "$B" "${TRAIN[@]}" --out "$W/x.model" --checkpoint "$W/data.txt"
refused "train --run-json DATA" --run-json --data "$B" "${TRAIN[@]}" --out "$W/x.model" --run-json "$W/data.txt"
refused "train --checkpoint = --out" --checkpoint --out "$B" "${TRAIN[@]}" --out "$W/x.model" --checkpoint "$W/x.model"
refused "train --run-json = --out" --run-json --out "$B" "${TRAIN[@]}" --out "$W/x.model" --run-json "$W/x.model"
refused "train --out - --run-json -" --out --run-json "$B" "${TRAIN[@]}" --out - --run-json -
refused "predict --out MODEL" --out --model "$B" "${PREDICT[@]}" --out "$W/m.model"
refused "predict --out DATA" --out --data "$B" "${PREDICT[@]}" --out "$W/data.txt"
refused "convert --out DATA" --out --data "$B" convert --data "$W/tb.conllu" --out "$W/tb.conllu"
[ -e "$W/x.model" ] && fail "refusals" "a model was written"

# --- Unwritable output folders: an error naming the flag and the path before training.
unwritable() { # CASE FLAG PATH COMMAND...
  local c=$1 f=$2 p=$3; shift 3
  "$@" >/dev/null 2>"$W/err"; RC=$?
  if [ $RC -eq 0 ]; then fail "$c" "rc 0"
  elif ! grep -q -- "$f $p" "$W/err"; then fail "$c" "the message does not name $f $p: $(cat "$W/err")"
  elif grep -q "^training " "$W/err"; then fail "$c" "reported after training started"
  else ok "$c"; fi
}
unwritable "train --out FILE/m.model (folder is a file)" --out "$W/T/m.model" "$B" "${TRAIN[@]}" --out "$W/T/m.model"
unwritable "train --out MISSING/m.model" --out "$W/no/m.model" "$B" "${TRAIN[@]}" --out "$W/no/m.model"
unwritable "train --checkpoint MISSING/ck" --checkpoint "$W/no/ck" "$B" "${TRAIN[@]}" --out "$W/y.model" --checkpoint "$W/no/ck"
if [ -d /proc/self ]; then
  unwritable "train --run-json /proc/run.json" --run-json /proc/run.json "$B" "${TRAIN[@]}" --out "$W/y.model" --run-json /proc/run.json
  unwritable "train --out /proc/m.model" --out /proc/m.model "$B" "${TRAIN[@]}" --out /proc/m.model
fi
[ -e "$W/y.model" ] && fail "unwritable folders" "a model was written"
exit $FAILED
