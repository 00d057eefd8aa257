#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set up trialstat on a fresh Debian 12 machine: install every dependency from Debian's registry,
# then configure and build (Release) into ./build. Safe to run again.
#   scripts/setup.sh [extra cmake -D options...]
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release), SKIP_APT=1 to skip apt,
# SKIP_PYTHON=1 to skip the Python venvs, SKIP_PIP_INSTALL=1 to skip `pip install .` into .venv
# (the build tree still builds trialstat._core for the tests), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  protobuf-compiler libprotobuf-dev   # proto/ messages
  nlohmann-json3-dev                  # index and collection JSON, rule configs, JSON output
  libcli11-dev                        # CLI
  libfmt-dev                          # formatting
  libsimdjson-dev                     # index JSON files (the catalog's hot path)
  libeigen3-dev                       # CPU kernels and the example trainer
  libpcre2-dev                        # Python re.search-compatible tensor-name regexes
  libcurl4-openssl-dev libpugixml-dev # S3 source: HTTP + SigV4 (libcurl), listing XML (pugixml)
  libgtest-dev libgmock-dev           # tests
  libbenchmark-dev                    # bench/
  libopenmpi-dev openmpi-bin          # mpirun -np N trialstat (host/distributed)
  python3 python3-numpy               # bench/ numpy comparison, golden cross-checks
  python3-venv python3-dev            # .venv (trialstat Python package), .venv-smdebug (parity)
  chromium                            # tests: the HTML report in a headless browser
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
  python_cmake=(-DTRIALSTAT_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv/bin/python")
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${python_cmake[@]}" "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
if [[ "${SKIP_PYTHON:-0}" != "1" && "${SKIP_PIP_INSTALL:-0}" != "1" ]]; then
  # `pip install .` (scikit-build-core; CPU backend); build-dir keeps re-runs incremental.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation . \
    -C "build-dir=$build_dir/python-wheel"
  echo "setup: installed the trialstat Python package into .venv"
fi
echo "setup: built into $build_dir (CLI: $build_dir/tools/trialstat/trialstat)"
