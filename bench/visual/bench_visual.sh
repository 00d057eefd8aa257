#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 11 speed: `tensorboard` export vs `stats --log-hist --format json`, and `report` vs
# `rules`, on one example trial, in one run (ratios of best-of-N wall times, warm page cache).
#   bench/visual/bench_visual.sh [BUILD=build] [TRIAL=/tmp/trialstat-bench-visual] [SIZE=1G] [N=3]
set -euo pipefail
build="${1:-build}"; trial="${2:-/tmp/trialstat-bench-visual}"; size="${3:-1G}"; n="${4:-3}"
cli="$build/tools/trialstat/trialstat"
if [[ ! -f "$trial/training_job_end.ts" ]]; then
  "$cli" example --out "$trial" --overwrite --pathology exploding --lr 12 --width 512 --layers 4 \
         --save-interval 1 --target-bytes "$size" --threads 0 >&2
fi
du -sh "$trial" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best() {  # best wall time of $n runs of "$@", seconds
  local b=""
  for _ in $(seq "$n"); do
    local s e
    local rc=0
    s=$(date +%s.%N); "$@" >/dev/null 2>"$work/stderr" || rc=$?; e=$(date +%s.%N)
    # 0, or 1 when rules found issues; anything else is a failed run, not a time.
    if (( rc > 1 )); then echo "failed ($rc): $* -- $(tail -3 "$work/stderr")" >&2; exit 2; fi
    b=$(python3 -c "t=$e-$s; b='$b'; print(min(t, float(b)) if b else t)")
  done
  echo "$b"
}
cat "$trial"/events/*/* >/dev/null  # warm the page cache
stats=$(best "$cli" stats "$trial" --log-hist --bins 0 --no-reductions --format json --no-progress)
tb=$(best bash -c "rm -rf '$work/tb' && '$cli' tensorboard '$trial' --logdir '$work/tb' --no-progress")
rules=$(best "$cli" rules "$trial" --no-progress)
report=$(best "$cli" report "$trial" -o "$work/report.html" --no-progress)
"$cli" report "$trial" -o "$work/report.html" --no-progress >/dev/null 2>&1 || true
python3 - "$stats" "$tb" "$rules" "$report" "$(stat -c %s "$work/report.html")" <<'PY'
import sys
stats, tb, rules, report, size = map(float, sys.argv[1:])
print(f"stats --log-hist --format json: {stats:.2f} s")
print(f"tensorboard export:             {tb:.2f} s  ratio {tb / stats:.2f}")
print(f"rules (default):                {rules:.2f} s")
print(f"report:                         {report:.2f} s  ratio {report / rules:.2f}, {size / 1e6:.2f} MB")
PY
