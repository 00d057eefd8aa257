# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the Python tests. Environment (set by run_pytest.sh / ctest):
  TRIALSTAT_SHARED_TRIALS   folder of the golden smdebug trials (default ../shared/trials)
  TRIALSTAT_SMDEBUG_PYTHON  python of the venv with smdebug 1.0.34 (default .venv-smdebug)
  TRIALSTAT_EXAMPLE_TRIAL   the example trainer binary (default build/tools/example_trial/...)
  TRIALSTAT_CLI             the `trialstat` command (default build/tools/trialstat/trialstat)
Tests that need one of them skip cleanly when it is absent."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

GOLDEN = ["healthy_mlp", "exploding", "vanishing", "dead_relu", "overfit", "reductions_only",
          "dtypes"]


def shared_trials_dir():
    return os.environ.get("TRIALSTAT_SHARED_TRIALS",
                          os.path.abspath(os.path.join(REPO, "..", "shared", "trials")))


def smdebug_python():
    return os.environ.get("TRIALSTAT_SMDEBUG_PYTHON",
                          os.path.join(REPO, ".venv-smdebug", "bin", "python"))


def example_trainer():
    return os.environ.get("TRIALSTAT_EXAMPLE_TRIAL", os.path.join(
        REPO, "build", "tools", "example_trial", "trialstat-example-trial"))


@pytest.fixture(scope="session")
def shared_trials():
    path = shared_trials_dir()
    if not os.path.isdir(os.path.join(path, "healthy_mlp")):
        pytest.skip(f"golden trials not found at {path}")
    return path


@pytest.fixture(scope="session")
def smdebug_python_path():
    path = smdebug_python()
    if not os.path.exists(path):
        pytest.skip(f"no smdebug venv at {path} (scripts/setup.sh creates it)")
    return path


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TRIALSTAT_CLI", os.path.join(REPO, "build", "tools", "trialstat",
                                                        "trialstat"))
    if not os.path.exists(path):
        pytest.skip(f"trialstat CLI not built at {path}")
    return path


@pytest.fixture(scope="session")
def trainer():
    path = example_trainer()
    if not os.path.exists(path):
        pytest.skip(f"example trainer not built at {path}")
    return path


EXAMPLE_TRIALS = {
    # name: trainer arguments (small and fast)
    "writer_two_workers_eval": ["--workers", "2", "--steps", "20", "--save-interval", "5",
                                "--eval-every", "10", "--eval-batches", "2"],
    "writer_exploding": ["--pathology", "exploding", "--steps", "12", "--save-interval", "1"],
    "writer_vanishing_deep": ["--pathology", "vanishing", "--steps", "8", "--save-interval", "2",
                              "--layers", "4", "--width", "8"],
    "writer_live_no_end_marker": ["--steps", "20", "--no-end-marker"],
}


@pytest.fixture(scope="session")
def example_trials(tmp_path_factory, trainer):
    root = tmp_path_factory.mktemp("example_trials")
    out = {}
    for name, args in EXAMPLE_TRIALS.items():
        path = os.path.join(root, name)
        subprocess.run([trainer, "--out", path, *args], check=True, capture_output=True)
        out[name] = path
    return out


def run_dump(python, lib, trial, prefix, extra_env=None):
    env = dict(os.environ)
    env.update(extra_env or {})
    if lib == "trialstat":
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    result = subprocess.run([python, os.path.join(HERE, "dump_trial.py"), "--lib", lib, trial,
                             prefix], env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"{lib} dump of {trial} failed:\n{result.stderr[-4000:]}")
