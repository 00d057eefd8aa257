# SPDX-License-Identifier: Apache-2.0
# Sourced by the ctest wrappers of the pytest suites (tests/python/run_pytest.sh,
# tests/s3/run_s3_tests.sh): the venv's Python, this build's module on PYTHONPATH, the common
# environment, and pytest's "no tests collected" reported to ctest as skipped (77).
#   pytest_suite_setup REPO BUILD_DIR SHARED_TRIALS   sets $python; exits 77 without a venv
#   pytest_suite_run SUITE_DIR [pytest args...]        runs pytest there and exits with its status

pytest_suite_setup() {
  local repo="$1" build="$2" shared="$3"
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
  export TRIALSTAT_SHARED_TRIALS="$shared"
  export TRIALSTAT_SMDEBUG_PYTHON="${TRIALSTAT_SMDEBUG_PYTHON:-$repo/.venv-smdebug/bin/python}"
}

pytest_suite_run() {
  cd "$1" || exit 1
  shift
  "$python" -m pytest -q -p no:cacheprovider -rs "$@"
  local rc=$?
  # pytest's 5 = no tests collected: report as skipped rather than failed.
  [[ $rc -eq 5 ]] && exit 77
  exit $rc
}
