# SPDX-License-Identifier: Apache-2.0
"""Failures while capturing (spec/HOOK_API.md D7, §11 "Deviations"): training never stops for the
hook — unless ``raise_errors=True`` — and no failure is silent.

(a) disk full: a training process under ``RLIMIT_FSIZE`` (SIGXFSZ ignored, so writes fail with
    EFBIG) whose event files grow per step: it finishes (exit 0), stderr has the ERROR naming the
    event file that could not be written, ``capture_errors``/``capture_counters()`` say so, and
    trialstat's reader and CLI open the trial up to the last complete step; with
    ``raise_errors=True`` the same job fails with CaptureError but the trial is still finished
    (end marker, no claim file).
(b) an out_dir under a regular file: training goes on; the error names the path.
(c) ``raise_errors=True``: the same failure raises ``trialstat.torch.CaptureError`` at the forward.
(d) kill -9 in the middle of a job: ``trialstat info`` reads the trial, listing the completed
    steps; no partial file under a final name (``*.tmp`` may remain).
(e) ``drop_when_full=True`` with a tiny ``queue_bytes`` drops and counts tensors and says so at
    close; the default (block) with the same tiny queue loses nothing."""
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import torch.nn as nn

import scenarios
from conftest import HERE
from hook_helpers import Recorder, assert_read_back_equal, tfrecords

PYTHON = os.environ.get("TRIALSTAT_PYTHON", sys.executable)
FSIZE = 100_000  # bytes: event files of steps 0 and 1 fit (24 KB, 64 KB), step 2 on (104 KB+) do not


def _train_process(out_dir, cfg, limit_fsize=False):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))
    return subprocess.Popen([PYTHON, os.path.join(HERE, "hook_train.py"), str(out_dir), json.dumps(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec if limit_fsize else None)


def _files(root):
    out = []
    for folder, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(out)


def _assert_final_files_whole(root):
    """Every event file under its final name parses to whole records, exactly those its index
    file lists."""
    for rel in _files(root):
        if rel.startswith("index") and rel.endswith(".json"):
            with open(os.path.join(root, rel)) as f:
                index = json.load(f)
            event = os.path.join(root, index["meta"]["event_file_name"])
            size = os.path.getsize(event)
            records = tfrecords(event)
            assert len(records) == len(index["tensor_payload"]), rel
            end = max(e["start_idx"] + e["length"] for e in index["tensor_payload"])
            assert end <= size, rel
    for rel in _files(root):
        if rel.endswith(".tfevents"):
            data = open(os.path.join(root, rel), "rb").read()
            consumed = sum(12 + len(r) + 4 for r in tfrecords(os.path.join(root, rel)))
            assert consumed == len(data), f"{rel}: a partial record under a final name"


@pytest.fixture(scope="module")
def disk_full(tmp_path_factory):
    root = tmp_path_factory.mktemp("disk_full")
    runs = {}
    for name, extra in (("default", {}), ("raise", {"hook": {"raise_errors": True}})):
        cfg = {"steps": 5, "grow": 10_000, "report": str(root / f"{name}.json"), **extra}
        runs[name] = _train_process(root / name, cfg, limit_fsize=True)
    out = {}
    for name, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=120)
        report = None
        if os.path.exists(root / f"{name}.json"):
            with open(root / f"{name}.json") as f:
                report = json.load(f)
        out[name] = (root / name, proc.returncode, stdout, stderr, report)
    return out


def test_disk_full_training_goes_on_and_reports(disk_full, cli):
    trial_dir, rc, stdout, stderr, report = disk_full["default"]
    assert rc == 0, stderr[-4000:]
    assert "step 4 done" in stdout and "finished" in stdout
    failed = os.path.join(str(trial_dir), "events", "000000000002", "000000000002_worker_0.tfevents")
    assert "ERROR trialstat.torch" in stderr and failed in stderr and "File too large" in stderr
    errors = report["capture_errors"]
    assert len(errors) == 3 and failed in errors[0]  # steps 2, 3, 4: one error per step
    assert [f"step {s}:" in e for s, e in zip((2, 3, 4), errors)] == [True] * 3
    counters = report["capture_counters"]
    assert counters["errors_count"] == 3 and counters["hook_errors"] == 3
    assert counters["tensors_lost"] == 3 * 14  # 13 tensors + "grow" per failed step
    assert counters["tensors_written"] == 13 + 14 and counters["tensors_dropped"] == 0
    assert counters["tensors_queued"] == counters["tensors_written"] + counters["tensors_lost"]
    # the trial: steps 0 and 1 complete and whole, finished, nothing left over
    files = _files(trial_dir)
    assert not [f for f in files if f.endswith(".tmp") or f == "claim.smd"], files
    assert "training_job_end.ts" in files
    _assert_final_files_whole(trial_dir)
    import trialstat
    trial = trialstat.create_trial(str(trial_dir))
    assert trial.steps() == [0, 1] and trial.last_complete_step == 1
    grow = np.asarray(trial.tensor("grow").value(1))
    assert grow.shape == (10_000,) and (grow == 1.0).all()
    assert np.isfinite(trial.tensor("gradient/MLP_fc1.weight").value(1)).all()
    info = subprocess.run([cli, "info", str(trial_dir)], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    assert "TRAIN   2 (0..1)" in info.stdout and "last complete step 1" in info.stdout


def test_disk_full_with_raise_errors_fails_the_job_but_finishes_the_trial(disk_full):
    trial_dir, rc, stdout, stderr, report = disk_full["raise"]
    assert rc == 1 and report is None
    assert "trialstat.torch.hook.CaptureError" in stderr
    assert os.path.join(str(trial_dir), "events", "000000000002", "000000000002_worker_0.tfevents") in stderr
    files = _files(trial_dir)
    assert "training_job_end.ts" in files and "claim.smd" not in files
    assert not [f for f in files if f.endswith(".tmp")]
    import trialstat
    assert trialstat.create_trial(str(trial_dir)).steps() == [0, 1]


def _train_in_process(hook, model=None, steps=2):
    model = model or scenarios.make_model()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    rec = Recorder()
    for x, y in scenarios.batches(steps):
        rec.next_step()
        rec.params(model._get_name(), model)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        rec.put("CrossEntropyLoss_output_0", loss)
        loss.backward()
        rec.grads(model._get_name(), model)
        optimizer.step()
    return rec.expected


def test_unwritable_out_dir_training_goes_on(tmp_path, caplog):
    import trialstat.torch as smd
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    out_dir = blocker / "trial"
    hook = smd.Hook(out_dir=str(out_dir), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "gradients", "losses"])
    with caplog.at_level(logging.ERROR, logger="trialstat.torch"):
        expected = _train_in_process(hook, steps=3)
        hook.close()
    assert len(expected) == 3  # every step trained
    errors = hook.capture_errors
    assert errors and str(out_dir) in errors[0]
    assert "Not a directory" in errors[0] or "not a directory" in errors[0].lower()
    assert any(str(out_dir) in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)
    assert hook.capture_counters()["hook_errors"] >= 1
    assert blocker.read_text() == "not a folder"


def test_raise_errors_raises_capture_error(tmp_path):
    import trialstat.torch as smd
    assert issubclass(smd.CaptureError, Exception)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    out_dir = blocker / "trial"
    hook = smd.Hook(out_dir=str(out_dir), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "losses"], raise_errors=True)
    model = scenarios.make_model()
    hook.register_module(model)
    x, _ = scenarios.batches(1)[0]
    with pytest.raises(smd.CaptureError, match=str(out_dir)):
        model(x)
    hook.close()


def test_kill_9_leaves_a_readable_trial(tmp_path, cli):
    trial_dir = tmp_path / "trial"
    proc = _train_process(trial_dir, {"steps": 60, "hidden": 64, "sleep": 0.05})
    try:
        for line in proc.stdout:
            if line.strip() == "step 4 done":
                break
        index3 = trial_dir / "index" / "000000000" / "000000000003_worker_0.json"
        deadline = time.time() + 60
        while not index3.exists() and time.time() < deadline:
            time.sleep(0.01)
        assert index3.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    files = _files(trial_dir)
    assert "training_job_end.ts" not in files
    _assert_final_files_whole(trial_dir)  # a partial file may only be a *.tmp
    steps_written = sorted(int(f.split("/")[-1][:12]) for f in files if f.startswith("index"))
    assert steps_written[:4] == [0, 1, 2, 3] and steps_written == list(range(len(steps_written)))
    info = subprocess.run([cli, "info", str(trial_dir)], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    last = steps_written[-1]
    assert "training ended: no" in info.stdout
    assert f"TRAIN   {last + 1} (0..{last})" in info.stdout, info.stdout
    assert f"last complete step {last}" in info.stdout, info.stdout
    import trialstat
    trial = trialstat.create_trial(str(trial_dir))
    assert trial.steps() == steps_written
    for step in steps_written:
        assert trial.tensor("gradient/WideMLP_fc1.weight").value(step).shape == (2048, 64)


def _records_in_trial(root):
    count = 0
    for rel in _files(root):
        if rel.startswith("index"):
            with open(os.path.join(root, rel)) as f:
                count += len(json.load(f)["tensor_payload"])
    return count


@pytest.mark.parametrize("drop", [True, False], ids=["drop_when_full", "block"])
def test_tiny_queue(tmp_path, caplog, drop):
    import trialstat
    import trialstat.torch as smd
    sys.path.insert(0, HERE)
    from hook_train import WideMLP
    torch.manual_seed(0)
    model = WideMLP(64)  # 512 KiB tensors through a 4 KiB queue
    hook = smd.Hook(out_dir=str(tmp_path / "trial"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "biases", "gradients", "losses"],
                    queue_bytes=4096, drop_when_full=drop)
    with caplog.at_level(logging.WARNING, logger="trialstat.torch"):
        expected = _train_in_process(hook, model=model, steps=3)
        hook.close()
    counters = hook.capture_counters()
    offered = sum(len(v) for v in expected.values())
    assert offered == 3 * 9
    if drop:
        assert counters["tensors_dropped"] > 0
        assert counters["tensors_written"] + counters["tensors_dropped"] == offered
        assert _records_in_trial(tmp_path / "trial") == counters["tensors_written"]
        summary = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert summary and f"{counters['tensors_dropped']} tensor(s) dropped" in summary[0]
    else:
        assert counters["tensors_dropped"] == 0 and counters["tensors_lost"] == 0
        assert counters["tensors_written"] == offered == _records_in_trial(tmp_path / "trial")
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        trial = trialstat.create_trial(str(tmp_path / "trial"))
        for step, values in expected.items():
            for name, want in values.items():
                assert_read_back_equal(trial.tensor(name).value(step), want, f"{name}@{step}")
    assert hook.capture_errors == []
