#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the Python test suite (ctest: python.trialstat). Exits 77 (ctest: skipped) when the
# trialstat venv or an importable trialstat is missing.
#   run_pytest.sh REPO BUILD_DIR SHARED_TRIALS [pytest args...]
set -uo pipefail
repo="$1"; build="$2"; shared="$3"; shift 3
python="${TRIALSTAT_PYTHON:-$repo/.venv/bin/python}"
if [[ ! -x "$python" ]]; then
  echo "skipped: no Python venv at $python (scripts/setup.sh creates it)"
  exit 77
fi
# Prefer the module built by this build tree (always in step with the sources), else the
# installed package (pip install .).
if compgen -G "$build/tools/python/trialstat/_core*.so" >/dev/null; then
  export PYTHONPATH="$build/tools/python${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! "$python" -c "import trialstat._core" 2>/dev/null; then
  echo "skipped: trialstat is not importable by $python (build with -DTRIALSTAT_BUILD_PYTHON=ON or pip install .)"
  exit 77
fi
export TRIALSTAT_SHARED_TRIALS="$shared"
export TRIALSTAT_SMDEBUG_PYTHON="${TRIALSTAT_SMDEBUG_PYTHON:-$repo/.venv-smdebug/bin/python}"
if [[ -z "${TRIALSTAT_EXAMPLE_TRIAL:-}" ]]; then
  export TRIALSTAT_EXAMPLE_TRIAL="$build/tools/example_trial/trialstat-example-trial"
fi
if [[ -z "${TRIALSTAT_CLI:-}" ]]; then
  export TRIALSTAT_CLI="$build/tools/trialstat/trialstat"
fi
cd "$repo/tests/python" || exit 1
"$python" -m pytest -q -p no:cacheprovider -rs "$@"
rc=$?
# pytest's 5 = no tests collected: report as skipped rather than failed.
[[ $rc -eq 5 ]] && exit 77
exit $rc
