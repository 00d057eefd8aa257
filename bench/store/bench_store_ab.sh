#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The statistics store (issue 26), two builds in one interleaved run: `trialstat rules` (the 5
# default rules) with --store off, cold (empty store) and warm, for binary A then binary B in each
# round, so that both see the same machine state. Prints per build and mode the median wall time
# and the median CPU time (user + sys) over ROUNDS, the ratios and the store's size.
#   bench_store_ab.sh BIN_A BIN_B TRIAL [rounds=5] [extra rules args...]
# Each binary uses its own defaults (e.g. TRIALSTAT_STORE_MIN_RECORD_BYTES) unless the
# environment sets them.
set -euo pipefail
a=$1 b=$2 trial=$3 rounds=${4:-5}
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run TAG BIN STORE: appends "wall cpu" (seconds, ms resolution) of one rules run to $work/TAG
  local tag=$1 bin=$2 store=$3 TIMEFORMAT='%3R %3U %3S'
  { time "$bin" rules "$trial" --store "$store" ${extra[@]+"${extra[@]}"} >/dev/null 2>"$work/err" || true; } 2>"$work/t"
  tail -n 1 "$work/t" | awk '{printf "%s %.3f\n", $1, $2 + $3}' >>"$work/$tag"
}
for ((i = 0; i < rounds; ++i)); do
  for name in A B; do
    bin=$a; [[ $name == B ]] && bin=$b
    run "$name.off" "$bin" off
    rm -f "$work/$name.sqlite"*
    run "$name.cold" "$bin" "$work/$name.sqlite"
    run "$name.warm" "$bin" "$work/$name.sqlite"
    cp "$work/err" "$work/$name.warm.err"
  done
done
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "trial: $trial ($(du -sb "$trial" | cut -f1) bytes), rounds: $rounds, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in A B; do
  bin=$a; [[ $name == B ]] && bin=$b
  declare -A wall cpu
  for mode in off cold warm; do
    wall[$mode]=$(cut -d' ' -f1 "$work/$name.$mode" | median)
    cpu[$mode]=$(cut -d' ' -f2 "$work/$name.$mode" | median)
  done
  printf '%s (%s)\n' "$name" "$bin"
  for mode in off cold warm; do
    printf '  %-5s wall %.3f s (range %s)  cpu %.3f s\n' "$mode" "${wall[$mode]}" \
      "$(cut -d' ' -f1 "$work/$name.$mode" | sort -g | sed -n '1p;$p' | paste -sd-)" "${cpu[$mode]}"
  done
  printf '  cold/warm: wall %.1fx, cpu %.1fx; off/warm: wall %.1fx; write overhead (cold vs off): wall %+.0f%%, cpu %+.0f%%\n' \
    "$(echo "${wall[cold]} / ${wall[warm]}" | bc -l)" "$(echo "${cpu[cold]} / ${cpu[warm]}" | bc -l)" \
    "$(echo "${wall[off]} / ${wall[warm]}" | bc -l)" \
    "$(echo "(${wall[cold]} - ${wall[off]}) / ${wall[off]} * 100" | bc -l)" \
    "$(echo "(${cpu[cold]} - ${cpu[off]}) / ${cpu[off]} * 100" | bc -l)"
  printf '  store %d bytes; %s\n' "$(stat -c %s "$work/$name.sqlite")" "$(grep '^trialstat: store' "$work/$name.warm.err" | cut -c1-160)"
done
