#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest consumer.python: pip-install the wheel scripts/setup.sh built from the main build
# (BUILD/dist/trialstat-<version>-*.whl, no rebuild) into a clean venv, then use it: the
# `trialstat` console script (the CLI inside the wheel) writes an example trial and runs
# `trialstat info`, and python/consumer.py imports trialstat and reads the trial.
#   consumer_python.sh SOURCE_DIR BUILD_DIR WORK_DIR VENV_PYTHON
# The venv's base interpreter is the one of VENV_PYTHON (.venv, the wheel's ABI), or
# /usr/bin/python3 when it is the same Python version and has numpy (Debian's python3-numpy:
# then nothing is downloaded). Exits 77 (skipped) without a wheel or a venv.
set -euo pipefail
src="$1"; build="$2"; work="$3"; venv_python="$4"
shopt -s nullglob
wheels=("$build"/dist/trialstat-*.whl)
if ((${#wheels[@]} != 1)); then
  echo "skipped: expected one wheel in $build/dist (scripts/setup.sh builds it), found ${#wheels[@]}"
  exit 77
fi
if [[ ! -x "$venv_python" ]]; then
  echo "skipped: no Python at $venv_python (scripts/setup.sh creates .venv)"
  exit 77
fi
version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }
base=$("$venv_python" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
venv_args=()
if [[ -x /usr/bin/python3 && "$(version_of /usr/bin/python3)" == "$(version_of "$base")" ]] &&
   /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  base=/usr/bin/python3
  venv_args=(--system-site-packages)
fi
rm -rf "$work"
mkdir -p "$work"
echo "== clean venv from $base ${venv_args[*]}; pip install ${wheels[0]}"
"$base" -m venv "${venv_args[@]}" "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "${wheels[0]}"
echo "== the wheel's CLI: trialstat example + trialstat info"
"$work/venv/bin/trialstat" example --out "$work/trial" --steps 6 --width 8 --save-interval 1 \
  >"$work/example.log"
"$work/venv/bin/trialstat" info "$work/trial" | tee "$work/info.out"
grep -q "backend:" "$work/info.out"
echo "== import trialstat (not from the source or build tree)"
cd "$work"
"$work/venv/bin/python" "$src/tests/consumers/python/consumer.py" "$work/trial"
