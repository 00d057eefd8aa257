#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the S3 suite (ctest: s3.end_to_end). Exits 77 (skipped) when the venv, trialstat's module
# or moto's server is missing.
#   run_s3_tests.sh REPO BUILD_DIR SHARED_TRIALS CLI [pytest args...]
set -uo pipefail
repo="$1"; build="$2"; shared="$3"; cli="$4"; shift 4
python="${TRIALSTAT_PYTHON:-$repo/.venv/bin/python}"
if [[ ! -x "$python" ]]; then
  echo "skipped: no Python venv at $python (scripts/setup.sh creates it)"
  exit 77
fi
if ! "$python" -c "import moto.server, boto3" 2>/dev/null; then
  echo "skipped: moto[server] is not installed in $python (scripts/setup.sh installs it)"
  exit 77
fi
if compgen -G "$build/tools/python/trialstat/_core*.so" >/dev/null; then
  export PYTHONPATH="$build/tools/python${PYTHONPATH:+:$PYTHONPATH}"
fi
export TRIALSTAT_CLI="$cli"
export TRIALSTAT_SHARED_TRIALS="$shared"
export TRIALSTAT_SMDEBUG_PYTHON="${TRIALSTAT_SMDEBUG_PYTHON:-$repo/.venv-smdebug/bin/python}"
# smdebug's own process needs our package only for the comparison side, which runs in $python.
cd "$repo/tests/s3" || exit 1
"$python" -m pytest -q -p no:cacheprovider -rs "$@"
rc=$?
[[ $rc -eq 5 ]] && exit 77
exit $rc
