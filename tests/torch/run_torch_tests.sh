#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the capture-hook tests (ctest: python.torch_hook): trialstat.torch against smdebug's hook.
#   run_torch_tests.sh REPO BUILD_DIR SHARED_TRIALS [pytest args...]
# Exits 77 (skipped) without the venv or an importable trialstat — under CI (CI=true) the suite
# itself fails instead when torch is missing (conftest.py).
set -uo pipefail
repo="$1"; build="$2"; shared="$3"; shift 3
source "$repo/tests/support/pytest_suite.sh"
pytest_suite_setup "$repo" "$build" "$shared"
if ! "$python" -c "import trialstat._core" 2>/dev/null; then
  echo "skipped: trialstat is not importable by $python"
  exit 77
fi
export TRIALSTAT_PYTHON="$python"
export TRIALSTAT_CLI="${TRIALSTAT_CLI:-$build/tools/trialstat/trialstat}"
# The statistics store (trials read through trialstat.create_trial, store="auto"): this build's
# own cache folder.
export XDG_CACHE_HOME="$build/tests/torch/cache"
rm -rf "$XDG_CACHE_HOME"
pytest_suite_run "$repo/tests/torch" "$@"
