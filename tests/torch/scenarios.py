# SPDX-License-Identifier: Apache-2.0
"""Deterministic PyTorch trainings that use a hook module through smdebug's API only, so that the
same scenario runs once with smdebug 1.0.34's hook (``smdebug.pytorch``, in .venv-smdebug) and
once with trialstat's (``trialstat.torch``, in .venv) and the two trials can be compared
(spec/HOOK_API.md §11). Each scenario is ``fn(smd, out_dir)``; data and weights come from fixed
seeds, the model is a 64-32-16-10 ReLU MLP (float32, CPU)."""
import json
import os

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(32, 16)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc3(self.relu2(self.fc2(self.relu1(self.fc1(x)))))


def make_model(seed=0, dtype=torch.float32):
    torch.manual_seed(seed)
    return MLP().to(dtype)


def batches(count, size=32, seed=1, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(size, 64, generator=g).to(dtype), torch.randint(0, 10, (size,), generator=g))
            for _ in range(count)]


def train_steps(model, loss_fn, optimizer, data, hook=None, mode=None, backward=True):
    if hook is not None and mode is not None:
        hook.set_mode(mode)
    for x, y in data:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        if backward:
            loss.backward()
            optimizer.step()


def _setup(hook, seed=0):
    model = make_model(seed)
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, loss_fn, optimizer


def default(smd, out_dir):
    """Only out_dir: the loss at global step 0 (GLOBAL mode); 3 steps."""
    hook = smd.Hook(out_dir=out_dir)
    model, loss_fn, opt = _setup(hook)
    train_steps(model, loss_fn, opt, batches(3))
    hook.close()


def collections(smd, out_dir):
    """weights, biases, gradients, losses and a custom collection of ReLU outputs every 2 steps;
    TRAIN, EVAL, TRAIN; scalars, save_tensor, record_tensor_value."""
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=2),
                    include_collections=["weights", "biases", "gradients", "losses", "relu"])
    hook.get_collection("relu").include("relu")
    model, loss_fn, opt = _setup(hook)
    data = batches(7)
    hook.set_mode(smd.modes.TRAIN)
    for i, (x, y) in enumerate(data[:5]):
        opt.zero_grad()
        out = model(x)
        loss = loss_fn(out, y)
        hook.record_tensor_value("loss", loss)
        hook.save_scalar("lr", 0.1)
        hook.save_tensor("custom_t", torch.arange(3, dtype=torch.float32) * (i + 1))
        loss.backward()
        opt.step()
    train_steps(model, loss_fn, opt, data[5:7], hook, smd.modes.EVAL, backward=False)
    train_steps(model, loss_fn, opt, data[:2], hook, smd.modes.TRAIN)
    hook.close()


def modes(smd, out_dir):
    """Per-mode save configs: TRAIN interval 3, start 1, end 7, save_steps [5]; EVAL every step."""
    config = smd.SaveConfig(mode_save_configs={
        smd.modes.TRAIN: smd.SaveConfigMode(save_interval=3, start_step=1, end_step=7, save_steps=[5]),
        smd.modes.EVAL: smd.SaveConfigMode(save_interval=1)})
    hook = smd.Hook(out_dir=out_dir, save_config=config,
                    include_collections=["weights", "gradients", "losses"])
    model, loss_fn, opt = _setup(hook)
    data = batches(10)
    train_steps(model, loss_fn, opt, data[:8], hook, smd.modes.TRAIN)
    train_steps(model, loss_fn, opt, data[8:], hook, smd.modes.EVAL, backward=False)
    train_steps(model, loss_fn, opt, data[:2], hook, smd.modes.TRAIN)
    hook.close()


def reductions(smd, out_dir):
    """Reductions only (with shapes) for weights and gradients; biases raw + mean."""
    reduction = smd.ReductionConfig(
        reductions=["min", "max", "mean", "std", "variance", "sum", "prod"],
        abs_reductions=["min", "max", "mean"], norms=["l1", "l2"], abs_norms=["l1", "l2"],
        save_raw_tensor=False, save_shape=True)
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=2),
                    reduction_config=reduction,
                    include_collections=["weights", "gradients", "biases", "losses"])
    hook.get_collection("biases").reduction_config = smd.ReductionConfig(
        reductions=["mean"], save_raw_tensor=True)
    model, loss_fn, opt = _setup(hook)
    train_steps(model, loss_fn, opt, batches(5), hook, smd.modes.TRAIN)
    hook.close()


def json_config(smd, out_dir):
    """The hook from SageMaker's JSON hook config (HOOK_API §2.2)."""
    config = {
        "LocalPath": out_dir,
        "HookParameters": {"save_interval": "4", "train.save_interval": "2", "save_steps": "1",
                           "include_regex": "relu1_output", "reductions": "max,l2_norm,abs_mean",
                           "save_raw_tensor": True, "save_shape": False},
        "CollectionConfigurations": [
            {"CollectionName": "weights", "CollectionParameters": {"eval.save_interval": "1",
                                                                   "reductions": "min"}},
            {"CollectionName": "losses"},
            {"CollectionName": "default"}]}
    path = out_dir.rstrip("/") + ".hookconfig.json"
    with open(path, "w") as f:
        json.dump(config, f)
    hook = smd.Hook.create_from_json_file(path)
    model, loss_fn, opt = _setup(hook)
    data = batches(6)
    train_steps(model, loss_fn, opt, data[:5], hook, smd.modes.TRAIN)
    train_steps(model, loss_fn, opt, data[5:], hook, smd.modes.EVAL, backward=False)
    hook.close()


def save_all(smd, out_dir):
    """save_all every 2 steps: every collection, module inputs and outputs."""
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=2), save_all=True)
    model, loss_fn, opt = _setup(hook)
    train_steps(model, loss_fn, opt, batches(3), hook, smd.modes.TRAIN)
    hook.close()


SCENARIOS = {f.__name__: f for f in (default, collections, modes, reductions, json_config, save_all)}


def run(smd, out_root, names=None):
    """Run ``names`` (default: all) into ``out_root/<name>``."""
    for name in names or SCENARIOS:
        out_dir = os.path.join(out_root, name)
        SCENARIOS[name](smd, out_dir)
