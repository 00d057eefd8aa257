#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the Python test suite (ctest: python.trialstat). Exits 77 (ctest: skipped) when the
# trialstat venv or an importable trialstat is missing.
#   run_pytest.sh REPO BUILD_DIR GOLDEN_TRIALS [pytest args...]
# GOLDEN_TRIALS becomes $TRIALSTAT_SHARED_TRIALS: ctest passes the generated set
# (<build>/golden_trials) or, for python.trialstat.shared (with `-m golden`), ../shared/trials.
set -uo pipefail
repo="$1"; build="$2"; shared="$3"; shift 3
source "$repo/tests/support/pytest_suite.sh"
pytest_suite_setup "$repo" "$build" "$shared"
if ! "$python" -c "import trialstat._core" 2>/dev/null; then
  echo "skipped: trialstat is not importable by $python (build with -DTRIALSTAT_BUILD_PYTHON=ON or pip install .)"
  exit 77
fi
if [[ -z "${TRIALSTAT_EXAMPLE_TRIAL:-}" ]]; then
  export TRIALSTAT_EXAMPLE_TRIAL="$build/tools/example_trial/trialstat-example-trial"
fi
if [[ -z "${TRIALSTAT_CLI:-}" ]]; then
  export TRIALSTAT_CLI="$build/tools/trialstat/trialstat"
fi
# The statistics store (create_trial's store="auto"): this build's own cache folder.
export XDG_CACHE_HOME="$build/tests/python/cache"
rm -rf "$XDG_CACHE_HOME"
pytest_suite_run "$repo/tests/python" "$@"
