#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The statistics store's small-record bound (TRIALSTAT_STORE_MIN_RECORD_BYTES): `trialstat rules`
# with --store off, then per bound a cold run (empty store) and a warm run, ROUNDS rounds
# interleaved; prints the medians of wall and CPU (user + sys) time, the store's size and what a
# warm run read from the trial.
#   bench_store_bounds.sh TRIALSTAT TRIAL ROUNDS BOUND...     e.g. ... 5 0 4096 16384 65536
set -uo pipefail
bin=$1 trial=$2 rounds=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() {  # one TAG BOUND|default STORE: appends "wall cpu" of one run to $work/TAG
  local tag=$1 bound=$2 store=$3 TIMEFORMAT='%3R %3U %3S'
  if [[ $bound == default ]]; then
    { time env -u TRIALSTAT_STORE_MIN_RECORD_BYTES "$bin" rules "$trial" --store "$store" >/dev/null 2>"$work/err"; } 2>"$work/t"
  else
    { time env TRIALSTAT_STORE_MIN_RECORD_BYTES="$bound" "$bin" rules "$trial" --store "$store" >/dev/null 2>"$work/err"; } 2>"$work/t"
  fi
  tail -n 1 "$work/t" | awk '{printf "%s %.3f\n", $1, $2 + $3}' >>"$work/$tag"
}
for ((i = 0; i < rounds; ++i)); do
  one off default off
  for bound in "$@"; do
    rm -f "$work/s$bound.sqlite"*
    one "cold$bound" "$bound" "$work/s$bound.sqlite"
    one "warm$bound" "$bound" "$work/s$bound.sqlite"
    cp "$work/err" "$work/err$bound"
  done
done
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "trial: $trial, rounds: $rounds, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'off: wall %s s, cpu %s s\n' "$(cut -d' ' -f1 "$work/off" | median)" "$(cut -d' ' -f2 "$work/off" | median)"
for bound in "$@"; do
  printf 'bound %s: cold wall %s / cpu %s s | warm wall %s / cpu %s s | store %s bytes | %s\n' "$bound" \
    "$(cut -d' ' -f1 "$work/cold$bound" | median)" "$(cut -d' ' -f2 "$work/cold$bound" | median)" \
    "$(cut -d' ' -f1 "$work/warm$bound" | median)" "$(cut -d' ' -f2 "$work/warm$bound" | median)" \
    "$(stat -c %s "$work/s$bound.sqlite")" \
    "$(grep -o 'store: [0-9]* record(s)\|[0-9]* read from the trial ([0-9]* bytes)' "$work/err$bound" | paste -sd' ')"
done
