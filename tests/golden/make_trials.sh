#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest fixture golden.make_trials (FIXTURES_SETUP golden_trials): write the golden PyTorch trials
# with smdebug's own hook (make_pytorch_trials.py) into OUT_DIR, normally <build>/golden_trials,
# which the golden suites then read ($TRIALSTAT_SHARED_TRIALS).
#   make_trials.sh REPO OUT_DIR
#   make_trials.sh REPO --check GOLDEN_DIR   (ctest golden.expected_json.shared) writes nothing:
#     recomputes GOLDEN_DIR's expected.json files from its trials with the generator's reader half
#     and compares them (make_pytorch_trials.py --check)
# Python: $TRIALSTAT_SMDEBUG_PYTHON (default REPO/.venv-smdebug/bin/python: smdebug 1.0.34, numpy
# 1.26, scikit-learn, torch through .venv-torch). Without it, or without torch, exits 77 (ctest:
# skipped; the golden suites then skip too) — or 1 where golden trials are required
# (TRIALSTAT_REQUIRE_GOLDEN=1, or CI=true: in CI a golden suite never skips).
# A set written by this same generator with the same torch/smdebug/numpy is kept (a stamp file
# records both), so running ctest again costs only the version check; otherwise the set is
# written into OUT_DIR.tmp and moved into place when complete.
set -uo pipefail
repo=$1
mode=generate
if [[ "$2" == "--check" ]]; then
  mode=check
  shift
fi
out=$2
python=${TRIALSTAT_SMDEBUG_PYTHON:-$repo/.venv-smdebug/bin/python}
generator=$repo/tests/golden/make_pytorch_trials.py

required() {
  case "${TRIALSTAT_REQUIRE_GOLDEN:-}" in
    1) return 0 ;;
    0) return 1 ;;
  esac
  [[ "${CI:-}" == "true" ]]
}

unavailable() {
  if required; then
    echo "FAIL: $1; golden trials are required here (TRIALSTAT_REQUIRE_GOLDEN=1 or CI=true)"
    exit 1
  fi
  echo "skipped: $1 (scripts/setup.sh installs it); the golden suites skip without trials"
  exit 77
}

[[ -x "$python" ]] || unavailable "no smdebug venv at $python"
# Installed versions, without importing torch (seconds): also the test for torch being there.
versions=$("$python" -c 'from importlib.metadata import version as v
print(" ".join(f"{p} {v(p)}" for p in ("torch", "smdebug", "numpy", "scikit-learn")))' 2>&1) ||
  unavailable "torch, smdebug or scikit-learn is not installed for $python: $(tail -n 1 <<<"$versions")"

if [[ $mode == check ]]; then
  exec "$python" "$generator" --check "$out"
fi

stamp="$(sha256sum "$generator" | cut -d' ' -f1) $versions"
complete() {
  local name
  for name in dead_relu dtypes exploding healthy_mlp overfit reductions_only vanishing; do
    [[ -d "$out/$name" && -f "$out/$name.expected.json" ]] || return 1
  done
}
if complete && [[ -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$stamp" ]]; then
  echo "golden trials up to date in $out ($versions)"
  exit 0
fi

start=$SECONDS
rm -rf "$out.tmp"
if ! "$python" "$generator" "$out.tmp"; then
  echo "FAIL: $generator did not complete"
  exit 1
fi
printf '%s\n' "$stamp" >"$out.tmp/.stamp"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "golden trials written to $out in $((SECONDS - start)) s ($versions)"
