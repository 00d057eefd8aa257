# SPDX-License-Identifier: Apache-2.0
"""Dtypes smdebug's hook cannot save (spec/HOOK_API.md §9.2, D1, D3; §11 "Deviations"): a bf16 and
an fp16 MLP train 3 steps with weights, biases, gradients, losses and ReLU inputs/outputs saved
every step; the script records what the optimizer and the forward saw (parameters before each
forward, ``.grad`` before each optimizer step, the loss, the ReLU tensors) and every value read
back by trialstat's own reader must equal it bit for bit. bf16 is stored natively (DT_BFLOAT16,
2 bytes per value) and trialstat's reader returns it as float32 (exact: the bf16 bits in the upper
half); ``widen_bfloat16=True`` writes float32 that smdebug's reader opens. Integer and bool tensors
through ``save_tensor`` round-trip exactly. Trains in the pytest process (no torch import per
test)."""
import glob
import os

import numpy as np
import pytest
import torch
import torch.nn as nn

import scenarios
from conftest import smdebug_dump
from hook_helpers import Recorder, assert_read_back_equal, event_tensors

STEPS = 3
RELUS = ["relu1", "relu2"]
DT_FLOAT, DT_BFLOAT16, DT_HALF = 1, 14, 19


def _train(out_dir, dtype, **hook_kwargs):
    import trialstat.torch as smd
    hook = smd.Hook(out_dir=str(out_dir), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "biases", "gradients", "losses", "relu"], **hook_kwargs)
    hook.get_collection("relu").include("relu")
    model = scenarios.make_model(dtype=dtype)
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rec = Recorder()
    rec.watch_modules(model, RELUS)
    for x, y in scenarios.batches(STEPS, dtype=dtype):
        rec.next_step()
        rec.params("MLP", model)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        rec.put("CrossEntropyLoss_output_0", loss)
        loss.backward()
        rec.grads("MLP", model)
        optimizer.step()
    hook.close()
    assert hook.capture_errors == []
    return rec.expected


def _check_trial(out_dir, expected):
    import trialstat
    trial = trialstat.create_trial(str(out_dir))
    names = sorted(expected[0])
    assert trial.tensor_names() == names
    assert len(names) == 6 + 6 + 1 + 4
    assert trial.steps() == list(range(STEPS))
    for step, values in expected.items():
        for name, want in values.items():
            assert_read_back_equal(trial.tensor(name).value(step), want, f"{name}@{step}")


def _stored_dtypes(out_dir):
    out = {}
    for path in glob.glob(os.path.join(str(out_dir), "events", "*", "*.tfevents")):
        for _step, tag, dtype, content, shape in event_tensors(path):
            out.setdefault(dtype, 0)
            out[dtype] += 1
            assert len(content) == int(np.prod(shape)) * {DT_FLOAT: 4, DT_BFLOAT16: 2, DT_HALF: 2}[dtype], tag
    return out


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_half_precision_model_round_trips(tmp_path, dtype):
    expected = _train(tmp_path / "trial", dtype)
    # the model really trained in that dtype and the values are not trivial
    assert all(v.dtype == dtype for v in expected[1].values())
    assert not torch.equal(expected[0]["MLP_fc1.weight"], expected[2]["MLP_fc1.weight"])
    _check_trial(tmp_path / "trial", expected)
    number = {torch.bfloat16: DT_BFLOAT16, torch.float16: DT_HALF}[dtype]
    assert _stored_dtypes(tmp_path / "trial") == {number: STEPS * 17}


def test_widen_bfloat16_writes_float32_for_smdebugs_reader(tmp_path, smdebug_python):
    trial_dir = tmp_path / "trial"
    expected = _train(trial_dir, torch.bfloat16, widen_bfloat16=True)
    assert _stored_dtypes(trial_dir) == {DT_FLOAT: STEPS * 17}
    import trialstat
    trial = trialstat.create_trial(str(trial_dir))
    for step, values in expected.items():
        for name, want in values.items():
            got = np.asarray(trial.tensor(name).value(step))
            assert got.dtype == np.float32
            assert got.tobytes() == want.float().numpy().tobytes(), (name, step)
    dump, npz = smdebug_dump(smdebug_python, [(trial_dir, tmp_path / "dump")])[str(trial_dir)]
    assert dump["tensor_names"] == sorted(expected[0])
    arrays = np.load(npz)
    for step, values in expected.items():
        for name, want in values.items():
            record = dump["tensors"][name]["records"][f"{step}|worker_0"]["value"]
            got = arrays[record["array"]]
            assert got.dtype == np.float32 and got.tobytes() == want.float().numpy().tobytes(), (name, step)


INTEGER_TENSORS = {
    "t_int8": torch.tensor([-128, -1, 0, 1, 127], dtype=torch.int8),
    "t_uint8": torch.tensor([[0, 1], [254, 255]], dtype=torch.uint8),
    "t_int32": torch.tensor([-2 ** 31, -1, 0, 2 ** 31 - 1], dtype=torch.int32),
    "t_int64": torch.tensor([-2 ** 63, -2 ** 40, 0, 2 ** 53 + 1, 2 ** 63 - 1], dtype=torch.int64),
    "t_bool": torch.tensor([[True, False, True], [False, False, True]]),
    "t_int64_scalar": torch.tensor(-7, dtype=torch.int64),
}


def test_integer_and_bool_save_tensor_round_trip(tmp_path):
    import trialstat
    import trialstat.torch as smd
    hook = smd.Hook(out_dir=str(tmp_path / "trial"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["losses"])
    model = scenarios.make_model()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    for step, (x, y) in enumerate(scenarios.batches(2)):
        for name, value in INTEGER_TENSORS.items():
            hook.save_tensor(name, value + step if value.dtype != torch.bool else value ^ bool(step))
        loss_fn(model(x), y)
    hook.close()
    assert hook.capture_errors == []
    trial = trialstat.create_trial(str(tmp_path / "trial"))
    assert set(INTEGER_TENSORS) <= set(trial.tensor_names())
    for step in range(2):
        for name, value in INTEGER_TENSORS.items():
            want = value + step if value.dtype != torch.bool else value ^ bool(step)
            got = np.asarray(trial.tensor(name).value(step))
            assert got.dtype == want.numpy().dtype, name  # int8 stays int8 (smdebug's reader: uint8)
            assert got.shape == tuple(want.shape) and got.tobytes() == want.numpy().tobytes(), (name, step)
    # the collections file lists them in "default"
    assert set(INTEGER_TENSORS) <= set(trial.tensor_names(collection="default"))


def test_suite_runs_with_numpy_2_3_or_later():
    """D1: smdebug's hook writes with ndarray.tostring(), gone in numpy 2.3; this suite's venv has a
    numpy without it and the hook writes anyway (the tests above)."""
    version = tuple(int(p) for p in np.__version__.split(".")[:2])
    assert version >= (2, 3), np.__version__
    assert not hasattr(np.ndarray, "tostring")
