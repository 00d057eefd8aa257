#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The statistics store (issue 26): `trialstat rules` (the 5 default rules) and `stats` on one
# trial with --store off, cold (empty store: read the trial, write the rows) and warm (every row
# valid), median of N runs each, in one invocation so the ratios share the machine's state.
#   bench_store.sh TRIALSTAT TRIAL [runs=3] [--drop-caches]
# --drop-caches (root only) empties the page cache before every run: the trial's bytes then come
# from the disk, as for a trial read once; without it they come from the page cache.
set -euo pipefail
bin=$1 trial=$2 runs=${3:-3} drop=${4:-}
store=$(mktemp -d)/store.sqlite
drop_caches() { [[ $drop == --drop-caches ]] && { sync; echo 3 > /proc/sys/vm/drop_caches; } || true; }
seconds() {  # seconds ARGS...: wall time of one run
  local t0 t1
  drop_caches
  t0=$(date +%s.%N)
  "$bin" "$@" >/dev/null 2>"$store.err" || [[ $? == 1 ]]
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
trial_bytes=$(du -sb "$trial" | cut -f1)
echo "trial: $trial ($trial_bytes bytes), runs: $runs, page cache: ${drop:-kept}"
for command in rules stats; do
  args=("$command" "$trial")
  [[ $command == stats ]] && args+=(--format json)
  off=() cold=() warm=()
  for ((i = 0; i < runs; ++i)); do
    off+=("$(seconds "${args[@]}" --store off)")
    rm -f "$store"*
    cold+=("$(seconds "${args[@]}" --store "$store")")
    warm+=("$(seconds "${args[@]}" --store "$store")")
  done
  o=$(printf '%s\n' "${off[@]}" | median)
  c=$(printf '%s\n' "${cold[@]}" | median)
  w=$(printf '%s\n' "${warm[@]}" | median)
  size=$(stat -c %s "$store")
  printf '%-5s off %.3f s  cold %.3f s (write overhead %+.1f%%)  warm %.3f s  cold/warm %.1fx  off/warm %.1fx  store %d bytes (%.2f%% of the trial)\n' \
    "$command" "$o" "$c" "$(echo "($c - $o) / $o * 100" | bc -l)" "$w" "$(echo "$c / $w" | bc -l)" \
    "$(echo "$o / $w" | bc -l)" "$size" "$(echo "$size / $trial_bytes * 100" | bc -l)"
  tail -1 "$store.err"
done
