#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The catalog benchmark (bench_catalog) on a trial of many small index files: by default 1,000
# steps × 64 workers (64,000 index files of 15 tensors each), written once by the project's own
# trial writer. Needs a build with -DTRIALSTAT_BUILD_BENCHMARKS=ON.
#   bench/catalog/run_catalog_bench.sh [BUILD_DIR [TRIAL_DIR [STEPS [WORKERS]]]] [-- bench args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
trial=${2:-/tmp/trialstat-catalog-bench}
steps=${3:-1000}
workers=${4:-64}
shift $(( $# < 4 ? $# : 4 ))
[[ ${1:-} == -- ]] && shift
[[ -x $build/bench/catalog/bench_catalog ]] || {
  echo "run_catalog_bench.sh: no $build/bench/catalog/bench_catalog (configure with -DTRIALSTAT_BUILD_BENCHMARKS=ON)" >&2
  exit 2
}
if [[ ! -f $trial/training_job_end.ts ]]; then
  "$build/tools/trialstat/trialstat" example --out "$trial" --overwrite --workers "$workers" --steps "$steps" \
    --save-interval 1 --width 4 >&2
fi
# Warm the page cache: the benchmark measures reads from it.
find "$trial" -type f -print0 | xargs -0 cat >/dev/null
TRIALSTAT_BENCH_TRIAL=$trial "$build/bench/catalog/bench_catalog" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true "$@"
