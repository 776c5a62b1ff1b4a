#!/usr/bin/env python3
"""Compares the JSON rows of a `multikernel reproduce ...` run with a recorded baseline.

    python3 benches/baseline/compare.py benches/baseline/e84c624/uci.json uci.json

Rows are matched by their identifying fields (KEY) and compared field by field; fields that
hold timings (names holding `seconds` or ending in `_s`) are ignored. Exit status 0 when every
other field is identical (floats compared exactly), 1 with the differences listed.
"""
import json
import sys


KEY = ("dataset", "method", "metric", "r", "noise_fraction", "p", "percent")


def key(row):
    return tuple(row.get(k) for k in KEY)


def timing(name):
    return "seconds" in name or name.endswith("_s")


def main(base_path, new_path):
    base = {key(r): r for r in json.load(open(base_path))["rows"]}
    new = {key(r): r for r in json.load(open(new_path))["rows"]}
    diffs = []
    for k in sorted(set(base) | set(new), key=str):
        if k not in new:
            diffs.append(f"{k}: missing from {new_path}")
            continue
        if k not in base:
            diffs.append(f"{k}: not in the baseline")
            continue
        a, b = base[k], new[k]
        for f in sorted(set(a) | set(b)):
            if timing(f):
                continue
            if a.get(f) != b.get(f):
                diffs.append(f"{k} {f}: {a.get(f)!r} -> {b.get(f)!r}")
    print(f"{len(base)} baseline rows, {len(new)} new rows, {len(diffs)} differences "
          f"(timing fields ignored)")
    for d in diffs:
        print("  " + d)
    return 1 if diffs else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
