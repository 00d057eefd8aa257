# SPDX-License-Identifier: Apache-2.0
"""One rank of a 2-process DDP training (gloo, CPU) for test_distributed.py:

    python ddp_train.py smdebug|trialstat OUT_ROOT CONFIG[,CONFIG...]

Environment: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE (set by the test). Each CONFIG is
``<include_workers>-<gradients>`` (``all-optimizer``, ``one-optimizer``, ``all-local``; smdebug has
only ``all-local``/``one-local``) and trains a DDP-wrapped scenarios.MLP for STEPS TRAIN steps into
``OUT_ROOT/<CONFIG>`` with weights, biases, gradients and losses saved every step; the ranks are
fed different data. The values the optimizer saw are recorded per rank in
``OUT_ROOT/<CONFIG>.rank<R>.pt``: {step: {"weights": pre-forward parameters, "avg_grad": ``.grad``
right before ``optimizer.step()``, "local_grad": the rank's own gradient (the same batch through
an undistributed copy of the pre-forward module), "loss": the rank's loss}}; names are
``<DistributedDataParallel_module.fc1.weight>`` without the prefix (``module.fc1.weight``)."""
import logging
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402

STEPS = 3


def train(smd, out_dir, include_workers, gradients, rank):
    kwargs = {} if gradients == "local" and smd.__name__.startswith("smdebug") else {"gradients": gradients}
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "biases", "gradients", "losses"],
                    include_workers=include_workers, **kwargs)
    model = nn.parallel.DistributedDataParallel(scenarios.make_model(seed=0))
    loss_fn = nn.CrossEntropyLoss()
    hook.register_module(model)
    hook.register_loss(loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    hook.set_mode(smd.modes.TRAIN)
    expected = {}
    for step, (x, y) in enumerate(scenarios.batches(STEPS, seed=100 + rank)):
        record = expected[step] = {}
        record["weights"] = {n: p.detach().clone() for n, p in model.named_parameters()}
        local = scenarios.MLP()  # not deepcopy: that would copy the hook's module hooks
        local.load_state_dict(model.module.state_dict())
        local_loss = nn.CrossEntropyLoss()(local(x), y)  # not the registered loss module
        local_grads = torch.autograd.grad(local_loss, list(local.parameters()))
        record["local_grad"] = {"module." + n: g.clone()
                                for (n, _), g in zip(local.named_parameters(), local_grads)}
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        record["loss"] = loss.detach().clone()
        record["avg_grad"] = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    hook.close()
    torch.save(expected, f"{out_dir}.rank{rank}.pt")
    dist.barrier()


def main():
    lib, out_root, configs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    if lib == "smdebug":
        import smdebug.pytorch as smd
    else:
        import trialstat.torch as smd
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for config in configs:
        include_workers, gradients = config.split("-")
        train(smd, os.path.join(out_root, config), include_workers, gradients, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
