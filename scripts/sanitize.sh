#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sanitizer builds of the test suite (issue 12, item 3), each in its own build tree:
#   scripts/sanitize.sh asan [ctest args...]   ASan + UBSan, -fno-sanitize-recover=all: every
#                                              GoogleTest suite and the CLI test (build-asan/)
#   scripts/sanitize.sh tsan [ctest args...]   TSan over the threaded parts: statistics pipeline
#                                              and step reader pool, CPU worker pool, watch and
#                                              actions (build-tsan/)
# Both compile at -O1 -g and with TRIALSTAT_CPU_BASELINE_ONLY: the CPU kernels get their baseline
# (SSE2) copy only instead of one copy per ISA (AVX-512, AVX2, baseline; kernels/common/
# cpu_regions.hpp). Those per-ISA copies of always-inline lane bodies — ~200 instantiations in
# kernels/histogram/histogram_cpu.cpp alone (3 ISAs x dtypes x bin modes) — are what made an
# -O2 ASan build of that one file take 25 of 28 minutes; the ISA copies share one source, and
# tests/kernels/cpu_lanes_test.cpp checks them against each other in the normal build.
# No CUDA, no Python module (an instrumented extension needs the sanitizer runtime preloaded
# into python). Uses ccache when present.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-asan}
shift || true

common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIALSTAT_ENABLE_CUDA=OFF
        -DTRIALSTAT_BUILD_PYTHON=OFF -DTRIALSTAT_BUILD_BENCHMARKS=OFF)
if command -v ccache >/dev/null; then
  common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
flags="-O1 -g -fno-omit-frame-pointer -DTRIALSTAT_CPU_BASELINE_ONLY"

case "$kind" in
  asan)
    dir=build-asan
    san="-fsanitize=address,undefined -fno-sanitize-recover=all"
    targets=(all)
    tests=()
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    ;;
  tsan)
    dir=build-tsan
    san="-fsanitize=thread"
    # OpenMP's runtime is not TSan-instrumented (false reports): the CPU backend's own pool is used.
    common+=(-DTRIALSTAT_ENABLE_OPENMP=OFF)
    targets=(test_pipeline test_live test_kernels test_hostile)
    # The reader thread + consumer (pipeline, step readers), the CPU twins' worker pool (large
    # kernels tests), watch / rule sessions / actions (child processes, inotify thread).
    tests=(-R "^(BuiltinRulesEndToEnd|step_reader_|StreamUnfinished|Watch|RuleSession|Actions|Commands|StopSignal|HistogramCpu|MomentsCpu|ShrinkingFiles|HostileIndex)\.")
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
    ;;
  *)
    echo "usage: $0 asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

cmake -S . -B "$dir" "${common[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags $san" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags $san" \
  -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san"
start=$(date +%s)
cmake --build "$dir" -j"${JOBS:-2}" --target "${targets[@]}"
echo "sanitize.sh $kind: build took $(( $(date +%s) - start )) s"
start=$(date +%s)
ctest --test-dir "$dir" --output-on-failure -j"${JOBS:-2}" "${tests[@]}" "$@"
echo "sanitize.sh $kind: tests took $(( $(date +%s) - start )) s"
