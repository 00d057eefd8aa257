# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the Python tests. Environment (set by run_pytest.sh / ctest):
  TRIALSTAT_SHARED_TRIALS   folder of the golden smdebug trials (ctest: the generated set,
                            <build>/golden_trials, or ../shared/trials for python.trialstat.shared;
                            default: the first complete one of REPO/build/golden_trials and
                            ../shared/trials)
  TRIALSTAT_REQUIRE_GOLDEN  1: a test without its golden trials fails instead of skipping; 0: it
                            skips; unset: it fails exactly when CI=true
  TRIALSTAT_SMDEBUG_PYTHON  python of the venv with smdebug 1.0.34 (default .venv-smdebug)
  TRIALSTAT_EXAMPLE_TRIAL   the example trainer binary (default build/tools/example_trial/...)
  TRIALSTAT_CLI             the `trialstat` command (default build/tools/trialstat/trialstat)
Tests that need one of them skip cleanly when it is absent. Every test that uses the
`shared_trials` fixture is marked `golden` (pytest -m golden selects them)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

GOLDEN = ["healthy_mlp", "exploding", "vanishing", "dead_relu", "overfit", "reductions_only",
          "dtypes"]


def is_golden_set(path):
    """Whether `path` holds every golden trial and its expected.json."""
    return all(os.path.isdir(os.path.join(path, n)) and
               os.path.isfile(os.path.join(path, n + ".expected.json")) for n in GOLDEN)


def shared_trials_dir():
    """The golden trials folder: $TRIALSTAT_SHARED_TRIALS, else the first complete one of the
    generated set (REPO/build/golden_trials) and ../shared/trials (returned even if incomplete)."""
    if os.environ.get("TRIALSTAT_SHARED_TRIALS"):
        return os.environ["TRIALSTAT_SHARED_TRIALS"]
    candidates = [os.path.join(REPO, "build", "golden_trials"),
                  os.path.abspath(os.path.join(REPO, "..", "shared", "trials"))]
    return next((c for c in candidates if is_golden_set(c)), candidates[-1])


def golden_trials_required():
    """TRIALSTAT_REQUIRE_GOLDEN=1/0, else CI=true: golden trials must be there (no skip)."""
    require = os.environ.get("TRIALSTAT_REQUIRE_GOLDEN")
    if require in ("0", "1"):
        return require == "1"
    return os.environ.get("CI", "").lower() == "true"


def golden_trials_or_none():
    """The golden trials folder, or None without one — pytest.fail where they are required."""
    path = shared_trials_dir()
    if is_golden_set(path):
        return path
    if golden_trials_required():
        pytest.fail(f"golden trials not found at {path} and required here "
                    "(TRIALSTAT_REQUIRE_GOLDEN=1 or CI=true): run ctest's golden.make_trials")
    return None


def smdebug_python():
    return os.environ.get("TRIALSTAT_SMDEBUG_PYTHON",
                          os.path.join(REPO, ".venv-smdebug", "bin", "python"))


def example_trainer():
    return os.environ.get("TRIALSTAT_EXAMPLE_TRIAL", os.path.join(
        REPO, "build", "tools", "example_trial", "trialstat-example-trial"))


def pytest_configure(config):
    config.addinivalue_line("markers", "golden: reads the golden trials (the shared_trials fixture)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "shared_trials" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.golden)


@pytest.fixture(scope="session")
def shared_trials():
    path = golden_trials_or_none()
    if path is None:
        pytest.skip(f"golden trials not found at {shared_trials_dir()}")
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
