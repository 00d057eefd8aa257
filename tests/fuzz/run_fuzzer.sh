#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run one libFuzzer target for a fixed time (the CI regression run and the campaigns of
# scripts/fuzz.sh):
#   run_fuzzer.sh BINARY CORPUS DICT|- SECONDS [SEED_DIR...]
# $TRIALSTAT_FUZZ_SECONDS, when set, replaces SECONDS (e.g. a shorter CI run: ctest -L fuzz).
# CORPUS (created) keeps what the run finds, so runs build on each other; the seed folders are
# read, never written. Crashes, leaks, timeouts (> 10 s per input) and out-of-memory (> 2 GiB)
# fail the run; the reproducer is saved as CORPUS/../artifacts/<target>/crash-* and named in the
# log. The last lines of libFuzzer's output (executions, cov, ft, corpus) are its figures.
set -euo pipefail
bin=$1 corpus=$2 dict=$3 seconds=${TRIALSTAT_FUZZ_SECONDS:-$4}
shift 4
name=$(basename "$bin")
artifacts="$(dirname "$corpus")/../artifacts/$name"
mkdir -p "$corpus" "$artifacts"
seeds=()
for d in "$@"; do
  [[ -d $d ]] && seeds+=("$d")
done
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048
      -print_final_stats=1 -artifact_prefix="$artifacts/")
[[ $dict != - ]] && args+=(-dict="$dict")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "run_fuzzer.sh: $name for ${seconds} s, corpus $corpus ($(find "$corpus" -type f | wc -l) inputs)"
"$bin" "${args[@]}" "$corpus" "${seeds[@]}"
