#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sanitizer builds of the test suite (issue 12, item 3), each in its own build tree:
#   scripts/sanitize.sh asan [ctest args...]   ASan + UBSan, -fno-sanitize-recover=all, clang:
#                                              every GoogleTest suite, the C API and CLI tests
#                                              (build-asan/); it also builds the libFuzzer
#                                              targets of tests/fuzz (run: scripts/fuzz.sh)
#   scripts/sanitize.sh tsan [ctest args...]   TSan (gcc) over the threaded parts: statistics
#                                              pipeline and step reader pool, watch and actions,
#                                              ranks as threads, the capture writer thread
#                                              (build-tsan/)
# Both compile at -O1 -g, without CUDA and the Python module (an instrumented extension needs the
# sanitizer runtime preloaded into python), and with TRIALSTAT_UNINSTRUMENTED_KERNELS: the CPU
# kernels (kernels/*_cpu.cpp) are compiled with -fno-sanitize=all. Their always-inline vector lane
# bodies, instantiated per ISA x dtype x bin mode (~200 in kernels/histogram/histogram_cpu.cpp
# alone), are what made an instrumented -O2 build take 28 minutes (25 in that one file); the
# kernels only index inside segments their instrumented callers validated, and their results are
# checked against references by the kernel tests of the normal build. The kernels also keep
# only their baseline copy (TRIALSTAT_CPU_BASELINE_ONLY). OpenMP is off (its runtime is not
# instrumented): the CPU backend's own pool runs instead.
# The fuzz targets share the ASan tree (its libraries also carry -fsanitize=fuzzer-no-link
# coverage); run them with scripts/fuzz.sh. Uses ccache when present; JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-asan}
shift || true

# Golden tests: against the set the tree's own fixture generates (golden.make_trials); their
# ".shared" twins (../shared/trials, same tests on other data) run in the normal build only.
common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIALSTAT_ENABLE_CUDA=OFF
        -DTRIALSTAT_BUILD_PYTHON=OFF -DTRIALSTAT_BUILD_BENCHMARKS=OFF -DTRIALSTAT_ENABLE_OPENMP=OFF
        -DTRIALSTAT_UNINSTRUMENTED_KERNELS=ON -DTRIALSTAT_TEST_SHARED_TRIALS=OFF)
if command -v ccache >/dev/null; then
  common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
flags="-O1 -g -fno-omit-frame-pointer -DTRIALSTAT_CPU_BASELINE_ONLY"

case "$kind" in
  asan)
    dir=build-asan
    san="-fsanitize=address,undefined -fno-sanitize-recover=all"
    # clang: libFuzzer's coverage instrumentation for tests/fuzz (harmless to the test suites).
    common+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTRIALSTAT_BUILD_FUZZERS=ON)
    san+=" -fsanitize=fuzzer-no-link"
    targets=(all)
    # Not here: the fuzz runs (scripts/fuzz.sh regress); the consumer projects (they build
    # trialstat again from source, with their own flags: packaging, not hostile input); cli.mpi
    # (OpenMPI's plugins leak at exit, which LeakSanitizer reports; the MPI code paths run in
    # test_distributed); python.torch_hook (trains with .venv's uninstrumented module; the
    # capture writer it drives is test_capture here).
    tests=(-LE fuzz -E "^(consumer\.|cli\.mpi$|python\.torch_hook$)")
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    ;;
  tsan)
    dir=build-tsan
    san="-fsanitize=thread"
    targets=(test_pipeline test_report test_live test_actions test_memory test_stats test_hostile test_distributed test_kernels
             test_capture test_store test_trial)
    # The reader thread + consumer (pipeline, step readers), watch / rule sessions / actions (child
    # processes, inotify thread), ranks as threads (catalog loaded by a group, distributed
    # statistics over a thread transport), and the CPU worker pool (kernels/common/cpu_parallel.hpp):
    # the kernels are uninstrumented and this tree has no OpenMP (a thread budget of 1), so
    # CpuWorkerPool drives the pool itself, from an instrumented test file; the capture writer
    # (training thread enqueues, one writer thread applies; close from another thread); the
    # statistics store's row writer thread (store_source); the background statistics writer
    # (one producer, one formatting thread); index files parsed on threads ahead of the catalog.
    # The suites of those programs named below (the CUDA ones skip without a GPU).
    tests=(-R "^(Actions|BackgroundWriter|BuiltinRulesEndToEnd|CaptureWriter|CatalogGroup|Commands|CpuWorkerPool|DistributedStatistics|Hostile[A-Za-z]+|IndexReadAhead|RuleConfigActions|RuleSession|ShrinkingFiles|SkippedRecords|StopSignal|Store[A-Za-z]+|StreamUnfinished|Watch|XgboostRulesEndToEnd|batch_split|pinned_pool|step_reader_map|step_reader_pool)\.")
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
