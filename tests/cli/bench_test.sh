#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke test of `trialstat bench` (issue 24): a small generated trial (4 MiB of 256 KiB float32
# tensors over 4 steps), JSON output; every row's `bytes` is what that row reads — the generated
# tensor bytes, twice the tensors of steps 1..3 for the update ratio (it reads two steps), the
# event files' sizes for the plain read — and every GB/s is positive. The generated folder is gone
# afterwards.
#   bench_test.sh <trialstat binary>
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TMPDIR=$tmp "$bin" bench --generate 4M --tensor-bytes 256K --steps 4 --format json --min-time 0.01 \
  >"$tmp/bench.json"
TMPDIR=$tmp "$bin" bench --generate 1M --tensor-bytes 64K --dtype bfloat16 --device cpu --min-time 0 \
  >"$tmp/bench.txt"
python3 - "$tmp/bench.json" "$tmp/bench.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
tensor_bytes = 4 << 20
assert doc["tensor_bytes"] == tensor_bytes and doc["tensors"] == 16 and doc["steps"] == 4, doc
want = {"memcpy": tensor_bytes, "moments": tensor_bytes, "histogram": tensor_bytes,
        "log_histogram": tensor_bytes, "percentiles": tensor_bytes, "per_node_counts": tensor_bytes,
        "update_ratio_allclose": 2 * 12 * (256 << 10),  # steps 1..3 each against the one before
        "read": doc["event_file_bytes"]}
cpu = {r["statistic"]: r for r in doc["rows"] if r["backend"] == "cpu"}
assert set(cpu) == set(want), sorted(cpu)
assert doc["event_file_bytes"] > tensor_bytes
for r in doc["rows"]:
    # CUDA rows (a machine with a device): the CPU's bytes; the copies move the tensor bytes.
    assert r["bytes"] == want.get(r["statistic"], tensor_bytes), r
    assert r["gb_per_s"] > 0 and r["seconds"] > 0 and r["ratio_to_read"] > 0, r
    assert r["reference"] in ("read", "d2d_copy", "h2d_pinned"), r
assert cpu["read"]["ratio_to_read"] == 1.0
if not any(r["backend"] == "cuda" for r in doc["rows"]):
    assert any(s.startswith("cuda:") for s in doc["skipped"]), doc["skipped"]
table = open(sys.argv[2]).read()
assert "bfloat16" in table and "log_histogram" in table, table
print(f"PASS: trialstat bench: {len(doc['rows'])} rows, byte counts as generated")
PY
leftover=$(find "$tmp" -maxdepth 1 -name 'trialstat-bench-*' | wc -l)
[[ $leftover == 0 ]] || { echo "FAIL: the generated trial was left in $tmp"; exit 1; }
