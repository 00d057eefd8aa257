# SPDX-License-Identifier: Apache-2.0
"""A training job with trialstat.torch's hook, for the tests that need their own process
(watching a live trial, resource limits, kill -9):

    python hook_train.py OUT_DIR JSON

JSON (all optional): ``steps`` (6), ``dtype`` ("float32" | "bfloat16" | "float16"), ``lr`` (0.1),
``sleep`` (seconds after each step), ``hidden`` (MLP width multiplier, for bigger tensors),
``collections`` (["weights", "biases", "gradients", "losses"]), ``save_interval`` (1), ``hook``
(extra keyword arguments of ``Hook``), ``close`` (true: ``hook.close()``; false: left to atexit),
``grow`` (elements: each step also saves ``grow`` = ``step * grow`` float32 values through
``save_tensor``, so that later event files are bigger), ``report`` (a path: a JSON summary is
written there at the end: ``capture_errors``, ``capture_counters`` before and after close, the
losses).
Prints ``step N done`` (flushed) after each optimizer step and ``finished`` at the end; logs of
``trialstat.torch`` go to stderr (WARNING and above)."""
import json
import logging
import math
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402


class WideMLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(64, 32 * hidden)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(32 * hidden, 10)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def main():
    out_dir = sys.argv[1]
    cfg = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(1)
    import trialstat.torch as smd
    dtype = getattr(torch, cfg.get("dtype", "float32"))
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=cfg.get("save_interval", 1)),
                    include_collections=cfg.get("collections",
                                                ["weights", "biases", "gradients", "losses"]),
                    **cfg.get("hook", {}))
    hidden = cfg.get("hidden")
    if hidden:
        torch.manual_seed(0)
        model = WideMLP(hidden).to(dtype)
    else:
        model = scenarios.make_model(dtype=dtype)
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.get("lr", 0.1))
    hook.set_mode(smd.modes.TRAIN)
    losses = []
    for step, (x, y) in enumerate(scenarios.batches(cfg.get("steps", 6), dtype=dtype)):
        optimizer.zero_grad()
        if cfg.get("grow") and step:
            hook.save_tensor("grow", torch.full((step * cfg["grow"],), float(step)))
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        value = loss.item()
        losses.append(value if math.isfinite(value) else repr(value))
        print(f"step {step} done", flush=True)
        if cfg.get("sleep"):
            time.sleep(cfg["sleep"])
    report = {"counters_before_close": hook.capture_counters()}
    if cfg.get("close", True):
        hook.close()
    report.update(capture_errors=hook.capture_errors, capture_counters=hook.capture_counters(), losses=losses)
    if cfg.get("report"):
        with open(cfg["report"], "w") as f:
            json.dump(report, f)
    print("finished", flush=True)


if __name__ == "__main__":
    main()
