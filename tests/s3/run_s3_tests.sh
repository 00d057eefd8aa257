#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the S3 suite (ctest: s3.end_to_end). Exits 77 (skipped) when the venv or moto's server is
# missing (the cases that need trialstat's module skip on their own without it).
#   run_s3_tests.sh REPO BUILD_DIR SHARED_TRIALS CLI [pytest args...]
set -uo pipefail
repo="$1"; build="$2"; shared="$3"; cli="$4"; shift 4
source "$repo/tests/support/pytest_suite.sh"
pytest_suite_setup "$repo" "$build" "$shared"
if ! "$python" -c "import moto.server, boto3" 2>/dev/null; then
  echo "skipped: moto[server] is not installed in $python (scripts/setup.sh installs it)"
  exit 77
fi
export TRIALSTAT_CLI="$cli"
# The statistics store: its own cache folder per run (the tests pass --store or get off).
export XDG_CACHE_HOME="$build/tests/s3/cache"
rm -rf "$XDG_CACHE_HOME"
pytest_suite_run "$repo/tests/s3" "$@"
