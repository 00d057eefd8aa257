# SPDX-License-Identifier: Apache-2.0
"""Scenarios of test_compile.py and test_tensorboard.py that are also trained with smdebug's hook
(``fn(smd, out_dir)``, as scenarios.py), and the runner that trains them in one process:

    python extra_scenarios.py smdebug|trialstat OUT_ROOT [NAME...]

``start``/``results`` run them once per pytest session in .venv-smdebug (one torch import for
every test file that needs smdebug's side)."""
import logging
import os
import subprocess
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402

COMPILE_STEPS = 4


def compiled_wrapper_names(smd, out_dir, **hook_kwargs):
    """torch.compile(backend="eager") registered with the hook: weights, gradients, losses and
    ReLU inputs/outputs every 2 steps, 4 steps."""
    torch._dynamo.reset()
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=2),
                    include_collections=["weights", "gradients", "losses", "relu"], **hook_kwargs)
    hook.get_collection("relu").include("relu")
    model = scenarios.make_model()
    net = torch.compile(model, backend="eager")
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(net)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scenarios.train_steps(net, loss_fn, optimizer, scenarios.batches(COMPILE_STEPS), hook, smd.modes.TRAIN)
    hook.close()
    return hook


def tensorboard(smd, out_dir, **hook_kwargs):
    """TensorBoard export (tensorboard_dir beside the trial) with weights, biases, gradients and
    losses every 2 steps (histograms for weights and gradients), ``save_scalar`` every step; TRAIN
    3 steps, EVAL 2 steps, TRAIN 2 steps."""
    tb_dir = out_dir.rstrip("/") + ".tb"
    hook = smd.Hook(out_dir=out_dir, tensorboard_dir=tb_dir, save_config=smd.SaveConfig(save_interval=2),
                    include_collections=["weights", "biases", "gradients", "losses"], **hook_kwargs)
    model = scenarios.make_model()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = scenarios.batches(7)
    hook.set_mode(smd.modes.TRAIN)
    for i, (x, y) in enumerate(data[:3]):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        hook.save_scalar("lr", 0.1 / (i + 1))
        hook.save_scalar("loss_value", loss.item())
        loss.backward()
        optimizer.step()
    scenarios.train_steps(model, loss_fn, optimizer, data[3:5], hook, smd.modes.EVAL, backward=False)
    scenarios.train_steps(model, loss_fn, optimizer, data[5:7], hook, smd.modes.TRAIN)
    hook.close()
    return hook


def tensorboard_export_flag(smd, out_dir, **hook_kwargs):
    """``export_tensorboard=True`` without tensorboard_dir: TB files inside the trial
    (``<out_dir>/tensorboard``); losses every step, 2 steps."""
    hook = smd.Hook(out_dir=out_dir, export_tensorboard=True, save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "losses"], **hook_kwargs)
    model = scenarios.make_model()
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scenarios.train_steps(model, loss_fn, optimizer, scenarios.batches(2), hook, smd.modes.TRAIN)
    hook.close()
    return hook


SCENARIOS = {f.__name__: f for f in (compiled_wrapper_names, tensorboard, tensorboard_export_flag)}

_started = {}


def start(python, lib, out_root, names=()):
    """Start this runner once per (lib, out_root) in this process; returns the Popen."""
    key = (lib, str(out_root))
    if key not in _started:
        _started[key] = subprocess.Popen([python, os.path.abspath(__file__), lib, str(out_root), *names],
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return _started[key]


def results(proc):
    """Wait for a runner started by ``start``; raise with its output if it failed."""
    if proc.returncode is None:
        out, _ = proc.communicate(timeout=300)
        proc.output = out
    assert proc.returncode == 0, f"extra_scenarios failed:\n{proc.output[-6000:]}"


def main():
    lib, out_root, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    logging.disable(logging.WARNING)
    if lib == "smdebug":
        import smdebug.pytorch as smd
    else:
        import trialstat.torch as smd
    for name in names or SCENARIOS:
        SCENARIOS[name](smd, os.path.join(out_root, name))


if __name__ == "__main__":
    main()
