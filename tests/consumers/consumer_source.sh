#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest consumer.add_subdirectory / consumer.fetchcontent: a project that builds trialstat from
# this source tree as part of itself (tests/consumers/add_subdirectory), with the Unix Makefiles
# generator (CMake's default on Linux; the main build uses Ninja) and without CUDA.
#   consumer_source.sh add_subdirectory|fetchcontent SOURCE_DIR WORK_DIR
# add_subdirectory: configure, build the app (only the libraries it links: proto, core, io,
#                   decode, trial, writer) and run it.
# fetchcontent:     configure only (the build is the same as add_subdirectory's).
set -euo pipefail
mode="$1"; src="$2"; work="$3"
args=(-G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DTRIALSTAT_SOURCE_DIR="$src"
      -DTRIALSTAT_ENABLE_CUDA=OFF)
if command -v ccache >/dev/null 2>&1; then
  args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
case "$mode" in
  add_subdirectory) ;;
  fetchcontent) args+=(-DCONSUMER_USE_FETCHCONTENT=ON) ;;
  *) echo "usage: consumer_source.sh add_subdirectory|fetchcontent SOURCE_DIR WORK_DIR"; exit 2 ;;
esac
rm -rf "$work"
cmake -S "$src/tests/consumers/add_subdirectory" -B "$work/build" "${args[@]}"
if [[ "$mode" == fetchcontent ]]; then
  grep -q "^CONSUMER_USE_FETCHCONTENT:BOOL=ON" "$work/build/CMakeCache.txt"
  [[ -f "$work/build/_deps/trialstat-build/Makefile" ]] || { echo "FAIL: no FetchContent build"; exit 1; }
  echo "PASS: consumer.fetchcontent (configured)"
  exit 0
fi
start=$SECONDS
cmake --build "$work/build" --parallel 2
echo "built in $((SECONDS - start)) s"
"$work/build/consumer_app" "$work/trial"
echo "PASS: consumer.add_subdirectory"
