#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest consumer.install / consumer.deb: install the already-built engine (no rebuild) the way a
# user gets it, then use it from a separate CMake project (find_package/, C++ and C API).
#   consumer_cmake.sh install|deb SOURCE_DIR BUILD_DIR WORK_DIR GENERATOR
# install: `cmake --install BUILD --prefix WORK/prefix`.
# deb:     `cpack -G DEB` in BUILD (-> BUILD/dist/trialstat_<version>_<arch>.deb, the release
#          artefact), checked with dpkg-deb, unpacked with `dpkg -x` into WORK/root (a clean
#          path, no root needed); prefix WORK/root/usr.
# Then: the installed CLI writes an example trial and runs `trialstat info` on it, and
# tests/consumers/find_package is configured against the prefix only, built and run.
set -euo pipefail
mode="$1"; src="$2"; build="$3"; work="$4"; generator="$5"
rm -rf "$work"
mkdir -p "$work"
step() { echo "== $*"; }

case "$mode" in
  install)
    step "cmake --install $build --prefix $work/prefix"
    cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
    prefix="$work/prefix"
    ;;
  deb)
    step "cpack -G DEB in $build"
    (cd "$build" && cpack -G DEB) >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
    version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
    deb="$build/dist/trialstat_${version}_$(dpkg --print-architecture).deb"
    [[ -f "$deb" ]] || { echo "FAIL: no $deb"; ls "$build/dist"; exit 1; }
    step "dpkg-deb --info $deb"
    dpkg-deb --info "$deb" | tee "$work/info.txt"
    grep -q "Package: trialstat" "$work/info.txt"
    grep -q "Version: ${version}" "$work/info.txt"
    grep -Eq "Depends:.*libprotobuf-dev" "$work/info.txt"
    dpkg-deb --contents "$deb" >"$work/contents.txt"
    for f in ./usr/bin/trialstat ./usr/include/trialstat/trialstat.h \
             ./usr/include/trialstat/config.hpp ./usr/lib/cmake/trialstat/trialstat-config.cmake \
             ./usr/lib/libtrialstat_core.a; do
      grep -q " $f\$" "$work/contents.txt" || { echo "FAIL: $f not in the .deb"; exit 1; }
    done
    if grep -Eq "/_core\.|/trialstat/bin/" "$work/contents.txt"; then
      echo "FAIL: the Python component leaked into the .deb"; exit 1
    fi
    dpkg -x "$deb" "$work/root"
    prefix="$work/root/usr"
    ;;
  *) echo "usage: consumer_cmake.sh install|deb SOURCE_DIR BUILD_DIR WORK_DIR GENERATOR"; exit 2 ;;
esac

step "installed CLI: trialstat example + trialstat info"
"$prefix/bin/trialstat" example --out "$work/trial" --pathology exploding --steps 60 --width 16 \
  --save-interval 1 >"$work/example.log"
"$prefix/bin/trialstat" info "$work/trial" | tee "$work/info.out"
grep -q "backend:" "$work/info.out"

step "find_package(trialstat) consumer against $prefix"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src/tests/consumers/find_package" -B "$work/consumer" -G "$generator" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "${launcher[@]}" >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
found=$(sed -n 's/^trialstat_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
[[ "$found" == "$prefix"/* ]] || { echo "FAIL: found trialstat at $found, not under $prefix"; exit 1; }
cmake --build "$work/consumer" --parallel 2
"$work/consumer/consumer_cpp" "$work/trial" | tee "$work/cpp.out"
grep -q "ExplodingTensor IssuesFound" "$work/cpp.out"
"$work/consumer/consumer_c" "$work/trial" | tee "$work/c.out"
grep -Eq "tensors [1-9][0-9]* workers 1" "$work/c.out"
echo "PASS: consumer.$mode"
