# SPDX-License-Identifier: Apache-2.0
"""Helpers for scripts that run in the smdebug venv (test_smdebug_interop.py): write trials
with smdebug's own writers — ``FileWriter`` (event + index files) and ``CollectionManager``
(collections file) — and the end-of-training marker, as a training job does.

    from smdebug_side import write_collections, write_step, end_training, mlp_tensors
"""
import os

import numpy as np
from smdebug.core.collection import Collection
from smdebug.core.collection_manager import CollectionManager
from smdebug.core.modes import ModeKeys
from smdebug.core.writer import FileWriter

# The PyTorch hook's default collections (FORMAT §8) plus one of the writer's own.
DEFAULT_COLLECTIONS = {
    "weights": ["^(?!gradient).*weight"],
    "biases": ["^(?!gradient).*bias"],
    "gradients": ["^gradient"],
    "losses": ["[Ll]oss_(?!input).*output"],
}


def write_collections(trial_dir, collections=None, num_workers=1, workers=("worker_0",),
                      tensor_names=None):
    """collections: {name: include_regex list} (None: DEFAULT_COLLECTIONS; {} writes a file that
    lists no collections). tensor_names: {name: [tensor names]} listed explicitly."""
    cm = CollectionManager()
    for name, regexes in (DEFAULT_COLLECTIONS if collections is None else collections).items():
        cm.add(Collection(name, include_regex=list(regexes),
                          tensor_names=set((tensor_names or {}).get(name, []))))
    cm.set_num_workers(num_workers)
    for worker in workers:
        cm.export(trial_dir, f"{worker}_collections.json")


def write_step(trial_dir, step, tensors, mode=ModeKeys.TRAIN, mode_step=None, worker="worker_0"):
    """One global step of one worker: every tensor of ``tensors`` ({name: array}) in one event
    file with its index file, as smdebug's hooks write them."""
    with FileWriter(trial_dir=trial_dir, step=step, worker=worker) as fw:
        for name, value in tensors.items():
            fw.write_tensor(tdata=np.asarray(value), tname=name, mode=mode,
                            mode_step=step if mode_step is None else mode_step)


def end_training(trial_dir):
    open(os.path.join(trial_dir, "training_job_end.ts"), "w").close()


def mlp_tensors(step, rng, scale=1.0, extra=()):
    """A small MLP's weights, biases, gradients, ReLU output and loss at a step (deterministic
    per ``rng``); the loss decreases with the step unless ``scale`` blows it up."""
    out = {}
    for layer, (n_in, n_out) in enumerate([(8, 6), (6, 3)], start=1):
        w = rng.standard_normal((n_out, n_in)).astype(np.float32) * 0.3
        b = rng.standard_normal(n_out).astype(np.float32) * 0.1
        out[f"fc{layer}.weight"] = w
        out[f"fc{layer}.bias"] = b
        out[f"gradient/fc{layer}.weight"] = (w * 1e-3 * scale / (1 + step)).astype(np.float32)
        out[f"gradient/fc{layer}.bias"] = (b * 1e-3 * scale / (1 + step)).astype(np.float32)
    out["relu1_output_0"] = np.maximum(rng.standard_normal((4, 6)), 0).astype(np.float32)
    out["CrossEntropyLoss_output_0"] = np.float32(2.3 * scale / (1 + 0.1 * step))
    for name in extra:
        out[name] = rng.standard_normal(5).astype(np.float32)
    return out
