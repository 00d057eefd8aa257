# SPDX-License-Identifier: Apache-2.0
"""Parity with smdebug 1.0.34: the same calls through both libraries (dump_trial.py, smdebug in
its own venv) give the same tensor names (overall, per mode, per step, per collection, per
regex), steps per mode (complete and incomplete), workers, modes, mode/global step maps, step
states, values (bitwise), shapes, saved reductions (exact), computed reductions (tolerance in
parity.py), tensor steps/workers/prev_steps and the same exception classes — on every golden
trial and on trials written by trialstat's own writer. Only the documented differences
(parity.py) are allowed, and each is counted so that a new one cannot hide."""
import collections
import json
import os
import sys

import numpy as np
import pytest

from conftest import GOLDEN, run_dump
from parity import compare

# Deliberate differences per golden trial (README "Differences from smdebug").
EXPECTED_DOCUMENTED = {
    "dtypes": {"int8": 3, "unreadable_dtype": 6},
    "reductions_only": {"shape_hides_raw": 16},
}


def _dumps(tmp_path, smdebug_python, trial):
    prefix_s = str(tmp_path / "smdebug")
    prefix_t = str(tmp_path / "trialstat")
    run_dump(smdebug_python, "smdebug", trial, prefix_s)
    run_dump(sys.executable, "trialstat", trial, prefix_t)
    with open(prefix_s + ".json") as f:
        smd = json.load(f)
    with open(prefix_t + ".json") as f:
        ts = json.load(f)
    return smd, np.load(prefix_s + ".npz"), ts, np.load(prefix_t + ".npz")


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_trial_parity(name, shared_trials, smdebug_python_path, tmp_path):
    smd, smd_arrays, ts, ts_arrays = _dumps(tmp_path, smdebug_python_path,
                                            os.path.join(shared_trials, name))
    diffs, documented = compare(smd, smd_arrays, ts, ts_arrays)
    assert not diffs, "\n".join(diffs[:50])
    counts = dict(collections.Counter(reason for reason, _ in documented))
    assert counts == EXPECTED_DOCUMENTED.get(name, {}), documented
    assert len(ts["tensors"]) > 0 and len(ts_arrays.files) > 0


@pytest.mark.parametrize("name", ["writer_two_workers_eval", "writer_exploding",
                                  "writer_vanishing_deep", "writer_live_no_end_marker"])
def test_writer_trial_parity(name, example_trials, smdebug_python_path, tmp_path):
    """Trials written by trialstat's writer read back identically through smdebug."""
    smd, smd_arrays, ts, ts_arrays = _dumps(tmp_path, smdebug_python_path, example_trials[name])
    diffs, documented = compare(smd, smd_arrays, ts, ts_arrays)
    assert not diffs, "\n".join(diffs[:50])
    assert documented == []
    assert len(smd_arrays.files) == len(ts_arrays.files) > 0
    if name == "writer_two_workers_eval":
        assert smd["workers"] == ["worker_0", "worker_1"]
        assert smd["modes"] == ["TRAIN", "EVAL"]
    if name == "writer_live_no_end_marker":
        assert smd["loaded_all_steps"] is False
