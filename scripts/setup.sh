#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set up trialstat on a fresh Debian 12 machine: install every dependency from Debian's registry,
# then configure and build (Release) into ./build. Safe to run again.
#   scripts/setup.sh [extra cmake -D options...]
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release), SKIP_APT=1 to skip apt,
# SKIP_PYTHON=1 to skip the Python venvs, SKIP_TORCH=1 to skip torch (.venv-torch), SKIP_PIP_INSTALL=1 to skip the wheel and its install
# into .venv (the build tree still builds trialstat._core for the tests), PYTHON (default python3).
# The engine is built once: the wheel ($BUILD_DIR/dist/trialstat-*.whl, installed into .venv) is
# packed from this build, and ccache (when installed) caches compilations across build folders.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  ccache                              # compiler cache (the compiler launcher when found)
  protobuf-compiler libprotobuf-dev   # proto/ messages
  nlohmann-json3-dev                  # index and collection JSON, rule configs, JSON output
  libcli11-dev                        # CLI
  libfmt-dev                          # formatting
  libsimdjson-dev                     # index JSON files (the catalog's hot path)
  libeigen3-dev                       # CPU kernels and the example trainer
  libpcre2-dev                        # Python re.search-compatible tensor-name regexes
  libcurl4-openssl-dev libpugixml-dev # S3 source: HTTP + SigV4 (libcurl), listing XML (pugixml)
  libsqlite3-dev sqlite3              # the statistics store (issue 26); sqlite3: its CLI tests
  libgtest-dev libgmock-dev           # tests
  libbenchmark-dev                    # bench/
  libopenmpi-dev openmpi-bin          # mpirun -np N trialstat (host/distributed)
  python3 python3-numpy               # bench/ numpy comparison, golden cross-checks
  python3-venv python3-dev            # .venv (trialstat Python package), .venv-smdebug (parity)
  chromium                            # tests: the HTML report in a headless browser
  clang libclang-rt-14-dev            # sanitizer tree + libFuzzer targets (scripts/sanitize.sh, fuzz.sh)
)

if [[ "${SKIP_APT:-0}" != "1" ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    sudo_cmd=()
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    echo "setup: installing ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

echo "setup: [${SECONDS}s] system packages ready"

# nvcc is optional: the CUDA toolkit is found on PATH or in /usr/local/cuda.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# Python: .venv (build deps of the trialstat package; trialstat itself below) and .venv-smdebug
# (smdebug 1.0.34 with pinned versions it works with, for tests/python parity and bench/python).
python_cmake=()
if [[ "${SKIP_PYTHON:-0}" != "1" ]]; then
  py="${PYTHON:-python3}"
  "$py" -m venv --help >/dev/null 2>&1 || py=/usr/bin/python3
  # Both venvs from one interpreter: tests/python/test_smdebug_interop.py runs notebook code in
  # .venv-smdebug with trialstat's module (built for .venv's Python) on PYTHONPATH.
  for venv in .venv .venv-smdebug; do
    [[ -x "$venv/bin/python" ]] || "$py" -m venv "$venv"
  done
  .venv/bin/python -m pip install -q --disable-pip-version-check -r tools/python/requirements-build.txt
  # tests/s3: a real S3-compatible server on loopback (moto's server mode) and boto3.
  .venv/bin/python -m pip install -q --disable-pip-version-check -r tests/s3/requirements.txt
  # BokehJS for `trialstat report`: only the bundle is used (cmake/bokehjs.cmake), so no deps.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r tools/python/requirements-report.txt
  .venv-smdebug/bin/python -m pip install -q --disable-pip-version-check -r tools/python/requirements-smdebug.txt
  # torch, once, for both venvs (tools/python/requirements-torch.txt says why). SKIP_TORCH=1 skips
  # it: trialstat never needs torch, and the hook's tests then skip (in CI they fail instead).
  if [[ "${SKIP_TORCH:-0}" != "1" ]]; then
    torch_pin=$(grep -E '^torch==' tools/python/requirements-torch.txt)
    if [[ ! -f ".venv-torch/${torch_pin/==/-}.dist-info/METADATA" ]]; then
      rm -rf .venv-torch
      .venv/bin/python -m pip install -q --disable-pip-version-check --target .venv-torch \
        -r tools/python/requirements-torch.txt
    fi
    for venv in .venv .venv-smdebug; do
      site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
      echo "$PWD/.venv-torch" > "$site/trialstat-torch.pth"
    done
    echo "setup: [${SECONDS}s] torch ready (.venv-torch)"
  fi
  python_cmake=(-DTRIALSTAT_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv/bin/python")
  echo "setup: [${SECONDS}s] Python venvs ready"
fi

launcher_cmake=()
if command -v ccache >/dev/null 2>&1 && [[ "$*" != *COMPILER_LAUNCHER* ]]; then
  launcher_cmake=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

build_dir="${BUILD_DIR:-build}"
build_type="${BUILD_TYPE:-Release}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${launcher_cmake[@]}" \
  "${python_cmake[@]}" "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
echo "setup: [${SECONDS}s] built"
if [[ "${SKIP_PYTHON:-0}" != "1" && "${SKIP_PIP_INSTALL:-0}" != "1" ]]; then
  # The wheel, from this build: scikit-build-core reuses $build_dir as it is configured (same
  # generator and build type; pyproject.toml sets nothing else), finds _core and the CLI up to
  # date and packs the component `python`. Then install it into .venv.
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt")
  rm -f "$build_dir"/dist/trialstat-*.whl
  CMAKE_GENERATOR="$generator" .venv/bin/python -m pip wheel -q --disable-pip-version-check \
    --no-build-isolation --no-deps . -w "$build_dir/dist" \
    -C "build-dir=$build_dir" -C "cmake.build-type=$build_type"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
    "$build_dir"/dist/trialstat-*.whl
  echo "setup: [${SECONDS}s] installed $(basename "$build_dir"/dist/trialstat-*.whl) into .venv"
fi
echo "setup: [${SECONDS}s] done: built into $build_dir (CLI: $build_dir/tools/trialstat/trialstat)"
