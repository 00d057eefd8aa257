# SPDX-License-Identifier: Apache-2.0
"""Rules on a bf16 model written by trialstat.torch (D3: smdebug's hook cannot write it at all): a
bf16 MLP trains with a huge learning rate so that its values overflow to NaN/Inf, saved natively as
DT_BFLOAT16 every step. ``trialstat watch --rule ExplodingTensor``, started before the training
process, fires while it still trains and ends after the hook's ``close()`` wrote
``training_job_end.ts``; ``trialstat rules`` on the finished trial reports IssuesFound (exit 1)."""
import glob
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import HERE
from hook_helpers import event_tensors

STEPS = 8
TRAIN = {"dtype": "bfloat16", "lr": 1e30, "steps": STEPS, "sleep": 0.3}


@pytest.fixture(scope="module")
def watched(tmp_path_factory, cli):
    trial = tmp_path_factory.mktemp("rules_bf16") / "trial"
    marker = trial / "training_job_end.ts"
    watch = subprocess.Popen([cli, "watch", str(trial), "--rule", "ExplodingTensor", "--format", "json",
                              "--timeout", "120", "--poll-ms", "50"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = []  # (event, training still running, end marker present) as each line arrives
    train = None

    def read():
        for line in watch.stdout:
            event = json.loads(line)
            events.append((event, train is not None and train.poll() is None, marker.exists()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.2)  # the watcher is up and waiting for the folder
    python = os.environ.get("TRIALSTAT_PYTHON", sys.executable)
    train = subprocess.Popen([python, os.path.join(HERE, "hook_train.py"), str(trial), json.dumps(TRAIN)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    train_out, train_err = train.communicate(timeout=120)
    trained_at = time.time()
    assert train.returncode == 0, train_err[-4000:]
    assert f"step {STEPS - 1} done" in train_out
    watch_err = watch.stderr.read()
    assert watch.wait(timeout=60) == 1, watch_err[-4000:]
    reader.join(timeout=10)
    return trial, events, trained_at


def test_values_overflow_and_are_bf16(watched):
    import trialstat
    trial_dir, _, _ = watched
    trial = trialstat.create_trial(str(trial_dir))
    assert trial.steps() == list(range(STEPS))
    loss = trial.tensor("CrossEntropyLoss_output_0")
    assert np.isfinite(loss.value(0))
    assert not np.isfinite(loss.value(STEPS - 1))
    weight = trial.tensor("MLP_fc1.weight")
    assert np.isfinite(weight.value(0)).all()
    assert not np.isfinite(weight.value(STEPS - 1)).all()
    assert not np.isfinite(trial.tensor("gradient/MLP_fc3.weight").value(1)).all()
    dtypes = {dtype for path in glob.glob(str(trial_dir / "events" / "*" / "*.tfevents"))
              for _s, _t, dtype, _c, _sh in event_tensors(path)}
    assert dtypes == {14}  # DT_BFLOAT16


def test_rules_reports_issues_found(watched, cli):
    trial_dir, _, _ = watched
    proc = subprocess.run([cli, "rules", str(trial_dir), "--rule", "ExplodingTensor", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[0])
    assert result["rule"] == "ExplodingTensor" and result["status"] == "IssuesFound"
    first = result["findings"][0]
    assert first["step"] == 1 and first["worker"] == "worker_0" and first["mode"] == "TRAIN"
    tensors = {f["tensor"] for f in result["findings"]}
    assert {"CrossEntropyLoss_output_0", "MLP_fc1.weight", "gradient/MLP_fc1.weight"} <= tensors


def test_watch_fires_while_training_and_ends_at_close(watched):
    trial_dir, events, trained_at = watched
    kinds = [e["event"] for e, _, _ in events]
    assert kinds[-1] == "end", kinds
    fired = [(e, running, marker) for e, running, marker in events
             if e["event"] == "status" and e["to"] == "IssuesFound"]
    assert len(fired) == 1, kinds
    event, running, marker = fired[0]
    assert event["rule"] == "ExplodingTensor" and event["from"] == "InProgress"
    assert event["finding"]["step"] < STEPS - 2
    # it arrived while the training process was alive and before the hook's close
    assert running and not marker
    assert event["time"] < os.path.getmtime(trial_dir / "training_job_end.ts")
    end, _, marker_at_end = events[-1]
    assert end["reason"] == "training_ended" and end["exit_status"] == 1
    assert marker_at_end and end["last_step"] == STEPS - 1 and end["steps_evaluated"] == STEPS
    assert end["time"] >= os.path.getmtime(trial_dir / "training_job_end.ts")
    progress = [e["last_step"] for e, _, _ in events if e["event"] == "progress"]
    assert progress == sorted(progress) and len(progress) >= 2
