#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The libFuzzer targets of tests/fuzz (issue 12, item 2), from the ASan + UBSan tree that
# scripts/sanitize.sh asan builds (build-asan/):
#   scripts/fuzz.sh regress             every target for $TRIALSTAT_FUZZ_SECONDS (default 60), two
#                                       at a time (ctest -L fuzz; CI)
#   scripts/fuzz.sh campaign TARGET SECONDS
#                                       one long run of fuzz_TARGET at the lowest priority,
#                                       adding to build-asan/tests/fuzz/corpus/TARGET; the log
#                                       (executions, cov, ft, corpus) goes to
#                                       build-asan/tests/fuzz/logs/TARGET-<date>.log
#   scripts/fuzz.sh list                the targets
# A crash, leak, timeout or out-of-memory stops the run; its reproducer is saved under
# build-asan/tests/fuzz/artifacts/fuzz_TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build-asan}
fuzz_dir="$dir/tests/fuzz"
case "${1:-}" in
  regress)
    shift
    ctest --test-dir "$dir" -L fuzz --output-on-failure -j"${JOBS:-2}" "$@"
    ;;
  campaign)
    target=$2 seconds=$3
    [[ -x $fuzz_dir/fuzz_$target ]] || { echo "fuzz.sh: no $fuzz_dir/fuzz_$target (scripts/sanitize.sh asan builds it)" >&2; exit 2; }
    # The seeds and dictionary exactly as the ctest run uses them (tests/fuzz/CMakeLists.txt).
    [[ -d $fuzz_dir/seeds ]] || "$fuzz_dir/make_fuzz_seeds" "$fuzz_dir/seeds"
    command=$(ctest --test-dir "$dir" -R "^fuzz\.$target\$" --show-only=json-v1 |
              TARGET=$target python3 -c 'import json, os, sys
tests = json.load(sys.stdin)["tests"]  # the fuzz.seeds fixture is listed too
print("\n".join(next(t["command"] for t in tests if t["name"] == "fuzz." + os.environ["TARGET"])))')
    mapfile -t args <<<"$command"
    args[4]=$seconds  # run_fuzzer.sh BINARY CORPUS DICT SECONDS SEEDS...
    mkdir -p "$fuzz_dir/logs"
    log="$fuzz_dir/logs/$target-$(date -u +%Y%m%dT%H%M%S).log"
    echo "fuzz.sh: $target for $seconds s, log $log"
    TRIALSTAT_FUZZ_SECONDS= nice -n 19 "${args[@]}" >"$log" 2>&1
    ;;
  list)
    ctest --test-dir "$dir" -L fuzz -N | sed -n 's/.*Test *#[0-9]*: fuzz\.//p' | grep -v '^seeds$'
    ;;
  *)
    echo "usage: $0 regress [ctest args...] | campaign TARGET SECONDS | list" >&2
    exit 2
    ;;
esac
