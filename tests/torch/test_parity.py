# SPDX-License-Identifier: Apache-2.0
"""trialstat.torch against smdebug's own hook (spec/HOOK_API.md §11): every scenario of
scenarios.py is trained once with each hook (same seeds, float32, one process) and both trials
are read back with smdebug's ``create_trial`` (tests/python/dump_trial.py) and compared file by
file: the same files (item 1), the same answers of smdebug's reader — names, steps per mode, mode
steps, workers, collections, bitwise values and reductions (items 2–4, 7–10, 13, 16) —, the same
index files record for record with the bytes of every record equal but for its wall time
(items 5, 11), and the same collections file (item 6)."""
import os

import numpy as np
import pytest

import scenarios
import trial_files
from conftest import finish, run_scenarios, smdebug_dump

NAMES = list(scenarios.SCENARIOS)


@pytest.fixture(scope="module")
def trials(tmp_path_factory, smdebug_python):
    root = tmp_path_factory.mktemp("parity")
    ours = run_scenarios(os.environ.get("TRIALSTAT_PYTHON", "python3"), "trialstat", root / "trialstat")
    theirs = run_scenarios(smdebug_python, "smdebug", root / "smdebug")
    finish(ours, "trialstat.torch scenarios")
    finish(theirs, "smdebug scenarios")
    pairs = []
    for lib in ("trialstat", "smdebug"):
        for name in NAMES:
            pairs.append((root / lib / name, root / f"{lib}_{name}"))
    dumps = smdebug_dump(smdebug_python, pairs)
    return root, dumps


@pytest.mark.parametrize("name", NAMES)
def test_same_files(trials, name):
    root, _ = trials
    ours = trial_files.relative_files(root / "trialstat" / name)
    theirs = trial_files.relative_files(root / "smdebug" / name)
    assert ours == theirs
    assert not [f for f in ours if f.endswith(".tmp") or f.endswith("claim.smd")]
    assert "training_job_end.ts" in ours


@pytest.mark.parametrize("name", NAMES)
def test_same_index_files_and_records(trials, name):
    root, _ = trials
    ours = trial_files.index_facts(root / "trialstat" / name)
    theirs = trial_files.index_facts(root / "smdebug" / name)
    assert ours.keys() == theirs.keys()
    for path in ours:
        assert ours[path] == theirs[path], path


@pytest.mark.parametrize("name", NAMES)
def test_same_collections_file(trials, name):
    root, _ = trials
    ours = trial_files.collections_facts(root / "trialstat" / name)
    theirs = trial_files.collections_facts(root / "smdebug" / name)
    assert ours == theirs


@pytest.mark.parametrize("name", NAMES)
def test_smdebug_reads_the_same_trial(trials, name):
    root, dumps = trials
    ours_json, ours_npz = dumps[str(root / "trialstat" / name)]
    theirs_json, theirs_npz = dumps[str(root / "smdebug" / name)]
    ours_json.pop("lib")
    theirs_json.pop("lib")
    assert ours_json == theirs_json
    ours_arrays, theirs_arrays = np.load(ours_npz), np.load(theirs_npz)
    assert sorted(ours_arrays.files) == sorted(theirs_arrays.files)
    for key in ours_arrays.files:
        a, b = ours_arrays[key], theirs_arrays[key]
        assert a.dtype == b.dtype and a.shape == b.shape, key
        assert a.tobytes() == b.tobytes(), key


def test_scenarios_save_real_data(trials):
    """The comparison is not vacuous: the trials hold values, reductions and both modes."""
    root, dumps = trials
    collections, _ = dumps[str(root / "trialstat" / "collections")]
    assert "gradient/MLP_fc1.weight" in collections["tensor_names"]
    assert collections["steps"]["EVAL"] and collections["steps"]["TRAIN"]
    reductions, _ = dumps[str(root / "trialstat" / "reductions")]
    record = reductions["tensors"]["MLP_fc1.weight"]["records"]["0|worker_0"]
    assert record["reduction_values"], record
    default, _ = dumps[str(root / "trialstat" / "default")]
    assert default["tensor_names"] == ["CrossEntropyLoss_output_0"]
    assert default["steps"]["GLOBAL"] == [0]
