# SPDX-License-Identifier: Apache-2.0
"""One configuration of bench/capture/run_capture_bench.py, in its own process:
    python capture_step.py LIB INTERVAL KIND STEPS OUT_DIR
LIB: none | smdebug | trialstat; KIND: raw | reductions. Trains a small transformer encoder on the
CPU (2 layers, d_model 256, 4 heads, sequence 64, batch 16; ~1.6 M parameters, 6.3 MB float32)
saving weights, gradients and losses every INTERVAL steps, and prints one JSON line: the median
and mean step time (seconds) over the timed steps (after 5 warm-up steps), the median time of the
saved and of the unsaved steps, the wall time of close(), peak RSS (MiB) and the trial's size."""
import json
import logging
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(32, 256)
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)).mean(dim=1))


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def main():
    lib, interval, kind, steps, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    logging.disable(logging.WARNING)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Model()
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    hook = None
    if lib != "none":
        smd = __import__("smdebug.pytorch", fromlist=["x"]) if lib == "smdebug" else __import__(
            "trialstat.torch", fromlist=["x"])
        reduction = None
        if kind == "reductions":
            reduction = smd.ReductionConfig(reductions=["min", "max", "mean"], norms=["l2"])
        hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=interval),
                        include_collections=["weights", "biases", "gradients", "losses"],
                        reduction_config=reduction)
        hook.register_module(model)
        hook.register_loss(loss_fn)
        hook.set_mode(smd.modes.TRAIN)
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 64, 32, generator=g), torch.randint(0, 10, (16,), generator=g)) for _ in range(8)]
    times = []
    for i in range(steps + 5):
        x, y = data[i % len(data)]
        start = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    if hook is not None:
        hook.close()
    close_s = time.perf_counter() - start
    timed = times[5:]
    # Within this process: steps the save config selects (global step % interval == 0) against
    # the others — the cost of a saved step without the process-to-process noise of the baseline.
    saved = [t for i, t in enumerate(times) if i >= 5 and i % interval == 0]
    unsaved = [t for i, t in enumerate(times) if i >= 5 and i % interval != 0]
    print(json.dumps({"lib": lib, "interval": interval, "kind": kind, "steps": steps,
                      "median_s": statistics.median(timed), "mean_s": statistics.fmean(timed),
                      "saved_median_s": statistics.median(saved) if saved else None,
                      "unsaved_median_s": statistics.median(unsaved) if unsaved else None,
                      "close_s": close_s,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "trial_bytes": folder_bytes(out_dir) if os.path.isdir(out_dir) else 0}))


if __name__ == "__main__":
    main()
