#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `trialstat selftest` (issue 25 item 2) as a user runs it: exit 0 with a table of every
# statistic over every dtype; without a GPU the "no CUDA device visible" line and the CPU-level
# comparisons, and `--device cuda` refused with exit 2; JSON with the same checks.
#   selftest_test.sh <trialstat binary>
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" selftest >"$tmp/table.txt"
"$bin" selftest --device cpu --format json >"$tmp/selftest.json"
if "$bin" selftest --device cuda >"$tmp/cuda.txt" 2>"$tmp/cuda.err"; then rc=0; else rc=$?; fi
python3 - "$tmp/table.txt" "$tmp/selftest.json" "$tmp/cuda.err" "$rc" <<'PY'
import json, re, sys
table, doc, cuda_err, rc = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), open(sys.argv[3]).read(), int(sys.argv[4])
statistics = ["moments", "histogram", "log_histogram", "pairwise", "axis0_counts", "percentiles",
              "count_equal", "channel_sums", "bincount", "confusion", "top_k_sum", "executor"]
dtypes = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "int32",
          "uint32", "int64", "uint64", "bool"]
rows = [l.split() for l in table.splitlines() if l.split() and l.split()[0] in statistics]
assert rows, table
for s in statistics:
    for d in dtypes:
        assert any(r[0] == s and r[1] == d for r in rows), (s, d)
assert all(r[-2] == "ok" or r[-3] == "ok" for r in rows), [r for r in rows if "FAIL" in r]
assert re.search(r"selftest: all \d+ checks passed", table), table
cuda_rows = [r for r in rows if r[2] == "cuda"]
if not cuda_rows:  # no GPU here: said plainly, the CPU-only checks ran, --device cuda refused
    assert "no CUDA device visible" in table or "no CUDA backend" in table, table
    assert any(r[3:5] == ["vs", "baseline"] for r in rows), table
    assert rc == 2 and "trialstat:" in cuda_err, (rc, cuda_err)
else:
    assert rc == 0, rc
assert doc["backend"] == "cpu" and doc["passed"] is True, doc["backend"]
checks = doc["checks"]
assert {c["statistic"] for c in checks} == set(statistics)
assert all(c["passed"] and c["max_count_difference"] == 0 and c["elements"] > 0 for c in checks)
assert any(c["data"] == "tiny" for c in checks)
print(f"PASS: trialstat selftest: {len(rows)} table rows, {len(checks)} JSON checks")
PY
