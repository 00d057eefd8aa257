# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the capture-hook tests (trialstat.torch). Environment (run_torch_tests.sh):
  TRIALSTAT_SMDEBUG_PYTHON  python of the venv with smdebug 1.0.34 and torch (.venv-smdebug)
  TRIALSTAT_CLI             the `trialstat` command of this build
Without torch the suite skips — except under CI (env CI=true), where a skip would hide that the
hook was never tested, so it fails instead."""
import importlib.util
import json
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
IN_CI = os.environ.get("CI", "").lower() == "true"


def require(condition, reason):
    """Skip (fail under CI) unless ``condition``."""
    if not condition:
        if IN_CI:
            pytest.fail(f"{reason} (CI requires the capture-hook tests)")
        pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def torch_available():
    require(importlib.util.find_spec("torch") is not None,
            "torch is not installed (scripts/setup.sh installs it into .venv-torch)")


@pytest.fixture(scope="session")
def smdebug_python():
    path = os.environ.get("TRIALSTAT_SMDEBUG_PYTHON", os.path.join(REPO, ".venv-smdebug", "bin", "python"))
    require(os.path.exists(path), f"no smdebug venv at {path}")
    ok = subprocess.run([path, "-c", "import torch, smdebug.pytorch"], capture_output=True).returncode == 0
    require(ok, f"{path} cannot import torch and smdebug.pytorch")
    return path


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TRIALSTAT_CLI", os.path.join(REPO, "build", "tools", "trialstat", "trialstat"))
    require(os.path.exists(path), f"trialstat CLI not built at {path}")
    return path


def run_scenarios(python, lib, out_root, names=(), env=None):
    """Start run_scenarios.py (returns the Popen)."""
    return subprocess.Popen([python, os.path.join(HERE, "run_scenarios.py"), lib, str(out_root), *names],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})})


def finish(proc, what):
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"{what} failed:\n{out[-6000:]}"
    return out


def smdebug_dump(smdebug_python, trials_and_prefixes):
    """tests/python/dump_trial.py through smdebug's reader, for [(trial, prefix)...] in one
    process: {trial: (json dict, npz path)}."""
    args = [str(x) for pair in trials_and_prefixes for x in pair]
    proc = subprocess.run([smdebug_python, os.path.join(REPO, "tests", "python", "dump_trial.py"), "--lib",
                           "smdebug", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = {}
    for trial, prefix in trials_and_prefixes:
        with open(f"{prefix}.json") as f:
            out[str(trial)] = (json.load(f), f"{prefix}.npz")
    return out
