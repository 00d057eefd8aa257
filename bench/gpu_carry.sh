#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pack what a GPU machine without this project's build dependencies (protobuf, fmt, simdjson,
# PCRE2, GoogleTest, ... — the lent machines cannot install packages) needs to run
# bench/gpu_check.sh: the binaries of a CUDA build made here (every test_*, the CLI, the
# example-trial trainer, the GPU benchmarks), the shared libraries they load beyond the C/C++
# runtime and the CUDA driver, and the golden trials, laid out like a build tree, into
# build-gpu-carry/prebuilt.tar.xz (git-ignored, so it travels only when named in `carry`).
#
# Usage: bench/gpu_carry.sh [BUILD_DIR]   (default build-gpu-check: a Release build with CUDA,
#                                          tests and benchmarks, e.g. from `gpu_check.sh build`)
# Then, on the GPU machine (device tool: carry ["build-gpu-carry"]):
#   mkdir -p /tmp/pb && tar -xJf build-gpu-carry/prebuilt.tar.xz -C /tmp/pb &&
#   PREBUILT=/tmp/pb bench/gpu_check.sh tests sanitize bench rss
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build-gpu-check}" && pwd)
CARRY=$ROOT/build-gpu-carry
TRIALS=${TRIALSTAT_SHARED_TRIALS:-$ROOT/../shared/trials}
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{tests,bench,tools/trialstat,tools/example_trial,lib} "$CARRY"

bins=()
for t in "$BUILD"/tests/test_*; do
  [ -f "$t" ] && [ -x "$t" ] && cp "$t" "$STAGE/tests/" && bins+=("$t")
done
for b in "$BUILD"/bench/bench_gpu_kernels "$BUILD"/bench/bench_gpu_pipeline; do
  [ -x "$b" ] && cp "$b" "$STAGE/bench/" && bins+=("$b")
done
cp "$BUILD/tools/trialstat/trialstat" "$STAGE/tools/trialstat/" && bins+=("$BUILD/tools/trialstat/trialstat")
cp "$BUILD/tools/example_trial/trialstat-example-trial" "$STAGE/tools/example_trial/" \
  && bins+=("$BUILD/tools/example_trial/trialstat-example-trial")
[ -x "$STAGE/bench/bench_gpu_kernels" ] || echo "warning: $BUILD has no GPU benchmarks (configure with CUDA and -DTRIALSTAT_BUILD_BENCHMARKS=ON)" >&2

# Shared libraries beyond the C/C++ runtime (the target's own) and the CUDA driver.
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$STAGE/lib/"; done

if [ -d "$TRIALS" ]; then
  cp -r "$TRIALS" "$STAGE/trials"
else
  echo "warning: golden trials not found at $TRIALS: the golden gpu_* tests will skip" >&2
fi
grep -q 'TRIALSTAT_HAS_CUDA 1' "$BUILD/include/trialstat/config.hpp" \
  || echo "warning: $BUILD was built without CUDA" >&2
tar -cJf "$CARRY/prebuilt.tar.xz" -C "$STAGE" .
echo "$CARRY/prebuilt.tar.xz: $(du -h "$CARRY/prebuilt.tar.xz" | cut -f1) ($(ls "$STAGE"/tests | wc -l) test binaries, $(ls "$STAGE"/lib | wc -l) libraries: $(ls "$STAGE"/lib | tr '\n' ' '))"
