# SPDX-License-Identifier: Apache-2.0
"""The items of spec/HOOK_API.md §11 not covered by the parity scenarios, one small test each
(trained in the pytest process): dry_run and TRAINING_JOB_NAME (item 14), configuration errors at
smdebug's call sites (item 17), when step k's files appear (item 15), the process-wide hook and
USE_SMDEBUG (item 16, §2.3), out_dir checks (§2.1), and a DTensor parameter (reported, never
written)."""
import json
import logging
import os
import socket
import time

import pytest
import torch
import torch.nn as nn

import scenarios
import trial_files


def _hook(out_dir, **kwargs):
    import trialstat.torch as smd
    kwargs.setdefault("save_config", smd.SaveConfig(save_interval=1))
    kwargs.setdefault("include_collections", ["weights", "gradients", "losses"])
    return smd.Hook(out_dir=str(out_dir), **kwargs)


def _setup(hook):
    model = scenarios.make_model()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    return model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1)


def _train(hook, steps=2):
    model, loss_fn, optimizer = _setup(hook)
    scenarios.train_steps(model, loss_fn, optimizer, scenarios.batches(steps))
    hook.close()


def test_dry_run_writes_only_collections_and_end_marker(tmp_path):
    hook = _hook(tmp_path / "trial", dry_run=True)
    _train(hook, steps=3)
    assert trial_files.relative_files(tmp_path / "trial") == [
        "collections/000000000/worker_0_collections.json", "training_job_end.ts"]
    with open(tmp_path / "trial" / "collections" / "000000000" / "worker_0_collections.json") as f:
        collections = json.load(f)["collections"]
    assert collections["weights"]["tensor_names"] == ["MLP_fc1.weight", "MLP_fc2.weight", "MLP_fc3.weight"]
    assert hook.capture_errors == []


def test_training_job_name_means_no_end_marker(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINING_JOB_NAME", "job-1")
    _train(_hook(tmp_path / "trial"))
    files = trial_files.relative_files(tmp_path / "trial")
    assert "training_job_end.ts" not in files and "claim.smd" not in files
    assert "events/000000000001/000000000001_worker_0.tfevents" in files
    monkeypatch.delenv("TRAINING_JOB_NAME")
    _train(_hook(tmp_path / "trial2"))
    assert "training_job_end.ts" in trial_files.relative_files(tmp_path / "trial2")


def test_empty_custom_collection_raises_at_first_forward(tmp_path):
    from trialstat.exceptions import InvalidCollectionConfiguration
    hook = _hook(tmp_path / "trial", include_collections=["weights", "foo"])
    hook.get_collection("foo")  # created, never configured
    model, loss_fn, _ = _setup(hook)  # no error yet: registration is fine
    x, y = scenarios.batches(1)[0]
    with pytest.raises(InvalidCollectionConfiguration, match="foo"):
        model(x)
    assert not os.path.exists(tmp_path / "trial" / "events")


def test_registering_a_module_twice_raises(tmp_path):
    hook = _hook(tmp_path / "trial")
    model = scenarios.make_model()
    hook.register_module(model)
    with pytest.raises(AssertionError, match="twice"):
        hook.register_module(model)
    with pytest.raises(AssertionError, match="twice"):
        hook.register_module(model.fc1)  # a submodule of a registered module
    loss_fn = nn.CrossEntropyLoss()
    hook.register_loss(loss_fn)
    with pytest.raises(AssertionError, match="twice"):
        hook.register_module(loss_fn)


def _wait_for(path, seconds=10.0):
    deadline = time.time() + seconds
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.01)
    return os.path.exists(path)


def test_step_files_appear_at_the_next_forward_or_close(tmp_path):
    """Item 15: step k's event and index files exist only once step k+1 started or the hook
    closed — with the writer thread, right after that call or very soon after it."""
    root = tmp_path / "trial"
    hook = _hook(root)
    model, loss_fn, optimizer = _setup(hook)

    def files(step):
        return (root / "events" / f"{step:012d}" / f"{step:012d}_worker_0.tfevents",
                root / "index" / "000000000" / f"{step:012d}_worker_0.json")
    collections = root / "collections" / "000000000" / "worker_0_collections.json"
    data = scenarios.batches(3)
    for step, (x, y) in enumerate(data):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        if step > 0:  # the previous step's files, once this step's forward ran
            assert all(_wait_for(p) for p in files(step - 1)), step
            assert _wait_for(collections)
        loss.backward()
        optimizer.step()
        time.sleep(0.2)  # the writer thread has had time; still nothing under a final name
        assert not any(p.exists() for p in files(step)), step
        if step == 0:
            assert not collections.exists()  # written at the first step after the first saved step
    hook.close()
    assert all(p.exists() for p in files(2))  # close() waits for the writer
    assert not [f for f in trial_files.relative_files(root) if f.endswith(".tmp")]


def test_get_set_del_hook_and_use_smdebug(tmp_path, monkeypatch):
    import trialstat.torch as smd
    monkeypatch.delenv("USE_SMDEBUG", raising=False)
    first = _hook(tmp_path / "a")
    assert smd.get_hook() is first
    second = _hook(tmp_path / "b")
    assert smd.get_hook() is second  # last constructed wins
    assert smd.get_hook(json_config_path="/nonexistent.json", create_if_not_exists=True) is second
    smd.set_hook(first)
    assert smd.get_hook() is first
    smd.del_hook()
    assert smd.get_hook() is None
    assert smd.get_hook(json_config_path=str(tmp_path / "missing.json"), create_if_not_exists=True) is None
    config = tmp_path / "hookconfig.json"
    config.write_text(json.dumps({"LocalPath": str(tmp_path / "from_json"),
                                  "HookParameters": {"save_interval": "3"}}))
    created = smd.get_hook(json_config_path=str(config), create_if_not_exists=True)
    assert isinstance(created, smd.Hook) and created.out_dir == str(tmp_path / "from_json")
    assert smd.get_hook() is created
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(config))
    assert smd.Hook.create_from_json_file().out_dir == str(tmp_path / "from_json")
    for off in ("0", "false", "False"):
        monkeypatch.setenv("USE_SMDEBUG", off)
        assert smd.get_hook() is None
        assert smd.get_hook(json_config_path=str(config), create_if_not_exists=True) is None
    monkeypatch.setenv("USE_SMDEBUG", "1")
    assert smd.get_hook() is not None
    for hook in (first, second, created):
        hook.close()
    smd.del_hook()


def test_out_dir_with_end_marker_raises(tmp_path):
    from trialstat.exceptions import SMDebugRuntimeError
    _train(_hook(tmp_path / "trial"))
    with pytest.raises(SMDebugRuntimeError, match=str(tmp_path / "trial")):
        _hook(tmp_path / "trial")
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "notes.txt").write_text("kept")
    _train(_hook(existing))  # a folder without the marker is accepted and written into
    files = trial_files.relative_files(existing)
    assert "notes.txt" in files and "events/000000000000/000000000000_worker_0.tfevents" in files


def test_s3_out_dir_raises_a_clear_error():
    import trialstat.torch as smd
    from trialstat.exceptions import SMDebugValueError
    with pytest.raises(SMDebugValueError, match=r"s3://bucket/prefix.*local"):
        smd.Hook(out_dir="s3://bucket/prefix")
    with pytest.raises(RuntimeError):
        smd.Hook()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("gradients", ["optimizer", "local"])
def test_dtensor_parameter_is_reported_never_written(tmp_path, caplog, gradients):
    import torch.distributed as dist
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Replicate, distribute_tensor
    except ImportError:
        pytest.skip("torch.distributed.tensor is not available")
    import trialstat
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)
    try:
        mesh = init_device_mesh("cpu", (1,))

        class WithDTensor(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 2)
                self.dt_weight = nn.Parameter(distribute_tensor(torch.arange(4.0), mesh, [Replicate()]))

            def forward(self, x):
                return self.lin(x * self.dt_weight.to_local())

        hook = _hook(tmp_path / "trial", gradients=gradients)
        model = WithDTensor()
        hook.register_module(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = []
        with caplog.at_level(logging.ERROR, logger="trialstat.torch"):
            for _ in range(2):
                before.append(model.lin.weight.detach().clone())
                optimizer.zero_grad()
                model(torch.ones(3, 4)).sum().backward()
                optimizer.step()
            hook.close()
    finally:
        dist.destroy_process_group()
    errors = hook.capture_errors
    assert any("WithDTensor_dt_weight is a DTensor" in e for e in errors), errors
    assert any("gradient/WithDTensor_dt_weight is a DTensor" in e for e in errors), errors
    assert any("DTensor" in r.getMessage() for r in caplog.records)
    trial = trialstat.create_trial(str(tmp_path / "trial"))
    assert trial.tensor_names() == ["WithDTensor_lin.weight", "gradient/WithDTensor_lin.bias",
                                    "gradient/WithDTensor_lin.weight"]
    assert trial.steps() == [0, 1]
    for step in (0, 1):  # the plain parameters are saved as usual
        assert trial.tensor("WithDTensor_lin.weight").value(step).tobytes() == before[step].numpy().tobytes()
