#!/usr/bin/env bash
# Replays, as a careless or hostile user would, every case of the reliability review (output
# paths that are devices, FIFOs, links or the run's own inputs; the tree CRF on the shipped
# treebank; memory guards sized by labels; the weak list's malformed inputs): one line per
# case, `ok`, `skip` or `FAIL`, and a non-zero exit when a case failed.
#   benches/hostile/run.sh [PART...]        PART: writers tree_crf memory weak (default: all)
# Needs a release build (cargo build --release -p multikernel-cli); MULTIKERNEL names another
# binary. The device cases (mknod) need root and are skipped otherwise. About a minute in all.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${MULTIKERNEL:-$PWD/target/release/multikernel}
if [ ! -x "$B" ]; then
  echo "no binary at $B: cargo build --release -p multikernel-cli" >&2
  exit 2
fi
PARTS=${*:-writers tree_crf memory weak}
status=0
for part in $PARTS; do
  echo "== $part"
  bash "benches/hostile/$part.sh" "$B" || status=1
done
exit $status
