# SPDX-License-Identifier: Apache-2.0
"""Write the project's golden PyTorch trials with smdebug 1.0.34's own PyTorch hook, and the
reference answers beside them (issue 22). Run with the smdebug venv (smdebug 1.0.34, numpy 1.26,
scikit-learn; torch reaches it through a .pth file to .venv-torch/):

    .venv-smdebug/bin/python tests/golden/make_pytorch_trials.py OUT_DIR [--only NAME ...]
    .venv-smdebug/bin/python tests/golden/make_pytorch_trials.py --check GOLDEN_DIR

writes OUT_DIR/<name>/ (a trial) and OUT_DIR/<name>.expected.json for the seven trials the golden
tests read: healthy_mlp, exploding, vanishing, dead_relu, overfit, reductions_only, dtypes — the
same models, schedules, collections, reductions and dtype content as the shared set described in
../shared/trials/README.md, trained on scikit-learn's bundled `load_digits` (1797 8x8 digits
scaled to [0,1]).

<name>.expected.json has exactly the schema of the shared set (schema_version 1, README "Schema"):
the trial is read back with smdebug's own reader (`smdebug.trials.create_trial`) and every value
it returns gets float64 numpy statistics; records smdebug cannot return get a `raw_decode` made
with smdebug's own protobuf classes. Numbers differ from the shared set (another torch, another
data order); the tests compare trialstat with the expected.json beside the trial, never with
numbers of one particular set.

Deterministic: fixed seeds, one torch thread, `torch.use_deterministic_algorithms(True)`, and
PYTHONHASHSEED=212 (the script re-executes itself with it when it is unset): smdebug keeps its
default PyTorch collections in a Python set, so the hash seed decides their order in the
collections file; 212 gives the order of the shared set (and of trialstat's
`pytorch_default_collections`). Two runs write identical expected.json files and identical trial
files apart from each event record's wall_time.
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys
import time

HASH_SEED = "212"
if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
    os.environ["PYTHONHASHSEED"] = HASH_SEED
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")

import atexit  # noqa: E402
import logging  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

import smdebug  # noqa: E402
from smdebug import ReductionConfig, SaveConfig, SaveConfigMode  # noqa: E402
from smdebug.core.access_layer.utils import has_training_ended  # noqa: E402
from smdebug.core.modes import ModeKeys  # noqa: E402
from smdebug.core.tfevent.proto.event_pb2 import Event  # noqa: E402
from smdebug.core.tfevent.proto.types_pb2 import DataType  # noqa: E402
from smdebug.core.writer import FileWriter  # noqa: E402
from smdebug.pytorch import Hook  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402

logging.disable(logging.WARNING)
warnings.simplefilter("ignore")

TRIALS = ["healthy_mlp", "exploding", "vanishing", "dead_relu", "overfit", "reductions_only",
          "dtypes"]
MODES = ["GLOBAL", "TRAIN", "EVAL", "PREDICT"]
WORKER = "worker_0"

TRAIN, EVAL, PREDICT, GLOBAL = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL


# ---- data and models -----------------------------------------------------------------------

def digits():
    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)


class MLP(nn.Module):
    """64-h1-h2-10 ReLU MLP; the hook names its tensors MLP_fc1.weight, relu1_output_0, ..."""

    def __init__(self, h1=32, h2=16, inputs=64, outputs=10):
        super().__init__()
        self.fc1 = nn.Linear(inputs, h1)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(h1, h2)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(h2, outputs)

    def forward(self, x):
        return self.fc3(self.relu2(self.fc2(self.relu1(self.fc1(x)))))


class Tiny(nn.Module):
    """64-8-10 MLP of the dtypes trial (only its loss is saved)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 8)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


class Deep(nn.Module):
    """12 Linear layers 64-16x11-10 with sigmoids between them: Deep_layers.<i>.weight."""

    def __init__(self, depth=12, width=16, std=0.05):
        super().__init__()
        sizes = [64] + [width] * (depth - 1) + [10]
        self.layers = nn.ModuleList(nn.Linear(sizes[i], sizes[i + 1]) for i in range(depth))
        for layer in self.layers:
            nn.init.normal_(layer.weight, 0.0, std)
            nn.init.zeros_(layer.bias)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.sigmoid(x)
        return x


class Batches:
    """Endless mini-batches over `idx`, reshuffled every epoch by its own RandomState."""

    def __init__(self, x, y, idx, batch, seed):
        self.x, self.y, self.idx, self.batch = x, y, np.asarray(idx), batch
        self.rng = np.random.RandomState(seed)
        self.order, self.pos = self.rng.permutation(self.idx), 0

    def next(self):
        if self.pos + self.batch > len(self.order):
            self.order, self.pos = self.rng.permutation(self.idx), 0
        take = self.order[self.pos:self.pos + self.batch]
        self.pos += self.batch
        return torch.from_numpy(self.x[take]), torch.from_numpy(self.y[take])


def seed_all(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def mode_config(train_interval, others):
    """{TRAIN: every train_interval, EVAL/PREDICT/GLOBAL: others} (others: SaveConfigMode)."""
    return SaveConfig(mode_save_configs={TRAIN: SaveConfigMode(save_interval=train_interval),
                                         EVAL: others, PREDICT: others, GLOBAL: others})


def train_only(train_interval):
    """Parameters and gradients in TRAIN only: end_step 0 in every other mode."""
    return mode_config(train_interval, SaveConfigMode(save_interval=1, end_step=0))


def make_hook(out, save_config, collections, reduction_config=None, relu=False):
    hook = Hook(out_dir=out, export_tensorboard=False, save_config=save_config,
                reduction_config=reduction_config, include_collections=collections)
    if relu:
        hook.get_collection("relu_activations").include(r"relu\d+_output_\d+")
    return hook


def close_hook(hook):
    hook.close()
    # The hook registers its clean-up with atexit; it already ran.
    atexit.unregister(hook._cleanup)


def sgd_step(model, criterion, opt, xb, target):
    opt.zero_grad()
    loss = criterion(model(xb), target)
    loss.backward()
    opt.step()
    return loss


def train_and_close(hook, model, criterion, lr, batches, steps, target=None):
    """Register ``model`` and ``criterion``, then ``steps`` TRAIN steps of plain SGD on
    ``batches`` (targets through ``target`` when given), then close the hook."""
    hook.register_module(model)
    hook.register_loss(criterion)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    hook.set_mode(TRAIN)
    for _ in range(steps):
        xb, yb = batches.next()
        sgd_step(model, criterion, opt, xb, yb if target is None else target(yb))
    close_hook(hook)


# ---- the seven trials ----------------------------------------------------------------------

def healthy_mlp(out, x, y):
    seed_all(0)
    perm = np.random.RandomState(0).permutation(len(y))
    train, held_out = perm[:1500], perm[1500:1500 + 256]
    model = MLP()
    criterion = nn.CrossEntropyLoss()
    hook = make_hook(out, SaveConfig(mode_save_configs={TRAIN: SaveConfigMode(save_interval=5),
                                                        EVAL: SaveConfigMode(save_interval=1)}),
                     ["weights", "biases", "gradients", "losses", "relu_activations"], relu=True)
    for name in ("weights", "biases", "gradients"):
        hook.get_collection(name).save_config = train_only(5)
    hook.register_module(model)
    hook.register_loss(criterion)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = Batches(x, y, train, 32, 1)
    xe, ye = torch.from_numpy(x[held_out]), torch.from_numpy(y[held_out])
    for t in range(100):
        hook.set_mode(TRAIN)
        model.train()
        sgd_step(model, criterion, opt, *batches.next())
        if (t + 1) % 25 == 0:
            hook.set_mode(EVAL)
            model.eval()
            with torch.no_grad():
                for b in range(4):
                    criterion(model(xe[b * 64:(b + 1) * 64]), ye[b * 64:(b + 1) * 64])
    close_hook(hook)
    return {
        "description": "Healthy 64-32-16-10 ReLU MLP, SGD lr=0.1 momentum 0.9, cross-entropy, "
                       "batch 32. 100 TRAIN steps (weights/biases/gradients/loss/ReLU outputs "
                       "saved every 5 TRAIN steps); after every 25 TRAIN steps an EVAL phase of 4 "
                       "batches of 64 held-out samples (loss and ReLU outputs saved at every EVAL "
                       "step).",
        "pathology": "none (reference healthy run)",
        "config": {"model": "MLP 64-32-16-10 ReLU", "lr": 0.1, "momentum": 0.9, "batch": 32,
                   "train_steps": 100, "train_save_interval": 5, "eval_every": 25,
                   "eval_batches": 4, "eval_batch": 64, "eval_save_interval": 1, "seed": 0},
    }


def exploding(out, x, y):
    # data_seed 295: the first huge steps kill every ReLU, from step 5 on only MLP_fc3.bias
    # moves (4x per step, the loss 16x), the loss is +Inf from step 17 and NaN from step 51 —
    # the shared set's story (with this torch, on x86-64; the tests read the steps from the
    # expected.json, not from here).
    seed_all(4)
    perm = np.random.RandomState(295).permutation(len(y))
    model = MLP()
    criterion = nn.MSELoss()
    hook = make_hook(out, SaveConfig(save_interval=1),
                     ["weights", "biases", "gradients", "losses", "relu_activations"], relu=True)
    train_and_close(hook, model, criterion, 25.0, Batches(x, y, perm, 32, 295), 56,
                    target=lambda yb: nn.functional.one_hot(yb, 10).float())
    return {
        "description": "Same 64-32-16-10 ReLU MLP trained with a far too large SGD learning rate "
                       "(lr=25.0) on an MSE loss against one-hot targets; 56 TRAIN steps, "
                       "everything saved every step. The loss overflows to +Inf first, later "
                       "gradients, weights and activations turn NaN/Inf. (With cross-entropy the "
                       "ReLUs just die instead of overflowing, so MSE is used to get a genuine "
                       "overflow.)",
        "pathology": "exploding values: non-finite counts become > 0 part way through",
        "config": {"model": "MLP 64-32-16-10 ReLU", "loss": "MSE vs one-hot", "lr": 25.0,
                   "batch": 32, "train_steps": 56, "save_interval": 1, "seed": 4,
                   "data_seed": 295},
    }


def vanishing(out, x, y):
    seed_all(0)
    model = Deep()
    criterion = nn.CrossEntropyLoss()
    hook = make_hook(out, SaveConfig(save_interval=2), ["weights", "biases", "gradients", "losses"])
    train_and_close(hook, model, criterion, 0.1, Batches(x, y, np.arange(len(y)), 32, 0), 40)
    return {
        "description": "12-layer sigmoid MLP (64-16x11-10), weights drawn from N(0, 0.05^2), zero "
                       "biases, SGD lr=0.1, cross-entropy. 40 TRAIN steps, weights/biases/"
                       "gradients/loss saved every 2 steps. Gradient magnitudes shrink by orders "
                       "of magnitude towards the input layer.",
        "pathology": "vanishing gradients",
        "config": {"model": "Deep sigmoid MLP depth 12 width 16", "init_std": 0.05, "lr": 0.1,
                   "batch": 32, "train_steps": 40, "save_interval": 2, "seed": 0},
    }


def dead_relu(out, x, y):
    seed_all(0)
    model = MLP()
    with torch.no_grad():
        model.fc1.bias.fill_(-0.5)
        model.fc2.bias.fill_(-0.05)
    criterion = nn.CrossEntropyLoss()
    hook = make_hook(out, SaveConfig(save_interval=5),
                     ["weights", "biases", "gradients", "losses", "relu_activations"], relu=True)
    train_and_close(hook, model, criterion, 0.1, Batches(x, y, np.arange(len(y)), 32, 0), 60)
    return {
        "description": "64-32-16-10 ReLU MLP whose hidden biases are initialised strongly negative "
                       "(fc1.bias=-0.5, fc2.bias=-0.05; inputs are in [0,1] and default weights "
                       "are small), so almost every ReLU output is exactly 0. SGD lr=0.1, 60 "
                       "TRAIN steps, weights/biases/gradients/loss/ReLU outputs saved every 5 "
                       "steps.",
        "pathology": "dead ReLUs (most activations exactly 0)",
        "config": {"model": "MLP 64-32-16-10 ReLU", "fc1_bias": -0.5, "fc2_bias": -0.05,
                   "lr": 0.1, "batch": 32, "train_steps": 60, "save_interval": 5, "seed": 0},
    }


def overfit(out, x, y):
    seed_all(0)
    perm = np.random.RandomState(0).permutation(len(y))
    train, held_out = perm[:50], perm[50:550]
    model = MLP(64, 64)
    criterion = nn.CrossEntropyLoss()
    hook = make_hook(out, SaveConfig(mode_save_configs={TRAIN: SaveConfigMode(save_interval=5),
                                                        EVAL: SaveConfigMode(save_interval=1)}),
                     ["weights", "biases", "losses"])
    for name in ("weights", "biases"):
        hook.get_collection(name).save_config = train_only(100)
    hook.register_module(model)
    hook.register_loss(criterion)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    xt, yt = torch.from_numpy(x[train]), torch.from_numpy(y[train])
    xe, ye = torch.from_numpy(x[held_out]), torch.from_numpy(y[held_out])

    def evaluate():
        hook.set_mode(EVAL)
        model.eval()
        with torch.no_grad():
            criterion(model(xe), ye)

    evaluate()
    for t in range(1000):
        hook.set_mode(TRAIN)
        model.train()
        sgd_step(model, criterion, opt, xt, yt)
        if (t + 1) % 25 == 0:
            evaluate()
    close_hook(hook)
    return {
        "description": "64-64-64-10 ReLU MLP trained full-batch on only 50 digits (SGD lr=0.5, "
                       "1000 TRAIN steps); before training and after every 25 TRAIN steps one "
                       "EVAL step on 500 held-out digits. TRAIN loss saved every 5 TRAIN steps, "
                       "EVAL loss at every EVAL step, weights/biases every 100 TRAIN steps. More "
                       "than 1000 global steps, so the index spills into index/000000001/.",
        "pathology": "overfitting: train loss -> 0 while held-out (EVAL) loss rises after an "
                     "early minimum",
        "config": {"model": "MLP 64-64-64-10 ReLU", "lr": 0.5, "train_samples": 50,
                   "eval_samples": 500, "train_steps": 1000, "eval_every": 25,
                   "train_loss_save_interval": 5, "weights_save_interval": 100, "seed": 0},
    }


REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum"]
ABS_REDUCTIONS = ["min", "max", "mean"]
NORMS = ["l1", "l2"]


def reductions_only(out, x, y):
    seed_all(0)
    model = MLP()
    criterion = nn.CrossEntropyLoss()

    def config(raw, shape):
        return ReductionConfig(reductions=list(REDUCTIONS), abs_reductions=list(ABS_REDUCTIONS),
                               norms=list(NORMS), abs_norms=list(NORMS), save_raw_tensor=raw,
                               save_shape=shape)

    hook = make_hook(out, SaveConfig(save_interval=5),
                     ["weights", "biases", "gradients", "losses", "relu_activations"],
                     reduction_config=config(False, True), relu=True)
    hook.get_collection("biases").reduction_config = config(True, False)
    hook.get_collection("relu_activations").reduction_config = config(True, True)
    train_and_close(hook, model, criterion, 0.1, Batches(x, y, np.arange(len(y)), 32, 0), 40)
    return {
        "description": "64-32-16-10 ReLU MLP, SGD lr=0.1, 40 TRAIN steps saved every 5. The "
                       "hook's default ReductionConfig has save_raw_tensor=False and "
                       "save_shape=True with reductions min,max,mean,std,variance,sum, "
                       "abs_reductions min,max,mean, norms l1,l2 and abs_norms l1,l2, so weights "
                       "and gradients are stored ONLY as reductions (+ shape records). The biases "
                       "collection keeps the raw tensor as well as the same reductions (no shape "
                       "records). The relu_activations collection stores raw + reductions + shape "
                       "records; smdebug's own reader then cannot return the raw ReLU values (its "
                       "index reader lets the shape entry replace the tensor location), see "
                       "raw_decode in the expected file. Losses are always raw (smdebug forces raw "
                       "tensors for scalar collections).",
        "pathology": "none (format coverage: reduction records and shape records)",
        "config": {"model": "MLP 64-32-16-10 ReLU", "lr": 0.1, "batch": 32, "train_steps": 40,
                   "save_interval": 5, "seed": 0, "reductions": REDUCTIONS,
                   "abs_reductions": ABS_REDUCTIONS, "norms": NORMS, "abs_norms": NORMS},
    }


HOOK_DTYPES = ["dtype_float32_3x4", "dtype_float64_vec", "dtype_float16_2x4", "dtype_int32_2x3",
               "dtype_int64_vec", "dtype_uint8_img", "dtype_int8_vec", "dtype_bool_mask",
               "dtype_scalar_f32", "dtype_scalar_i64", "dtype_one_elem", "dtype_4d_f32",
               "dtype_all_nan", "dtype_constant", "dtype_empty_via_hook", "dtype_bfloat16"]


def hook_dtype_tensors(step):
    """The tensors saved with hook.save_tensor at hook step `step` (0..2), in HOOK_DTYPES order."""
    rng = np.random.RandomState(100 + step)
    inf, nan = float("inf"), float("nan")
    f32 = rng.standard_normal((3, 4)).astype(np.float32)
    f32[0, 0], f32[0, 1], f32[0, 2], f32[1, 0], f32[1, 1] = nan, inf, -inf, -0.0, 0.0
    f64 = rng.standard_normal(7) * 500.0
    f64[3], f64[5] = nan, 0.0
    f16 = np.array([[65504.0, 2.0 ** -24, inf, -2.5], [0.0, 0.5, 0.25 * (step + 1), -1.0]],
                   dtype=np.float16)
    return [
        torch.from_numpy(f32),
        torch.from_numpy(f64),
        torch.from_numpy(f16),
        torch.tensor([[-2 ** 31, 2 ** 31 - 1, 0], [step, -1, 1]], dtype=torch.int32),
        torch.tensor([-2 ** 40, 2 ** 40, step, 0, 1, -1], dtype=torch.int64),
        torch.from_numpy(rng.randint(0, 256, (8, 8)).astype(np.uint8)),
        torch.tensor([-128, -1, 127, 0, 1], dtype=torch.int8),  # -1 at [1]: smdebug reads 255
        torch.from_numpy(rng.rand(4, 4) > 0.5),
        torch.tensor(3.25 + step, dtype=torch.float32),
        torch.tensor(42 + step, dtype=torch.int64),
        torch.tensor([1.5], dtype=torch.float32),
        torch.from_numpy(rng.standard_normal((2, 3, 2, 2)).astype(np.float32)),
        torch.full((2,), nan, dtype=torch.float32),
        torch.full((5,), 7.0, dtype=torch.float32),
        torch.zeros(0, dtype=torch.float32),   # the hook drops 0-byte tensors
        torch.ones(3, dtype=torch.bfloat16),   # cannot become numpy: never written
    ]


def filewriter_tensors():
    return {
        "fw_empty_f32": np.zeros((0,), dtype=np.float32),
        "fw_empty_i64_2x0x3": np.zeros((2, 0, 3), dtype=np.int64),
        "fw_int16": np.array([-32768, 32767, 0, -1, 1], dtype=np.int16),
        "fw_uint16": np.array([0, 65535, 1], dtype=np.uint16),
        "fw_uint32": np.array([0, 2 ** 32 - 1, 1], dtype=np.uint32),
        "fw_uint64": np.array([0, 1, 2 ** 63], dtype=np.uint64),
        "fw_f64_scalar": np.array(math.e, dtype=np.float64),
        "fw_bool_scalar": np.array(True),
    }


def dtypes(out, x, y):
    seed_all(0)
    model = Tiny()
    criterion = nn.CrossEntropyLoss()
    hook = make_hook(out, SaveConfig(save_interval=1), ["losses", "dtypes"])
    hook.get_collection("dtypes").include("^dtype_")
    hook.register_module(model)
    hook.register_loss(criterion)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = Batches(x, y, np.arange(len(y)), 32, 0)
    hook.set_mode(TRAIN)
    for step in range(3):
        for name, value in zip(HOOK_DTYPES, hook_dtype_tensors(step)):
            hook.save_tensor(name, value, "dtypes")
        sgd_step(model, criterion, opt, *batches.next())
    # Global step 3: smdebug's core FileWriter, PREDICT mode step 0.
    fw = filewriter_tensors()
    writer = FileWriter(trial_dir=out, worker=WORKER, step=3, mode=PREDICT)
    for name, value in fw.items():
        writer.write_tensor(tdata=value, tname=name, mode=PREDICT, mode_step=0)
    writer.close()
    close_hook(hook)
    return {
        "description": "Tensors of many dtypes and shapes. Global steps 0-2 (TRAIN) come from the "
                       "PyTorch hook: a tiny 64-8-10 MLP's loss plus custom tensors saved with "
                       "hook.save_tensor(...) into a 'dtypes' collection: float32 with NaN/+Inf/"
                       "-Inf/-0.0, float64, float16 (max, subnormal, Inf), int32 extremes, int64 "
                       "beyond 2^32, uint8, int8, bool, 0-d scalars (float32, int64), a 1-element "
                       "vector, a 4-d tensor, an all-NaN tensor and a constant tensor. Global step "
                       "3 (PREDICT mode step 0) is written directly with "
                       "smdebug.core.writer.FileWriter: empty tensors (shape [0] float32, shape "
                       "[2,0,3] int64), int16, uint16, uint32, uint64, a float64 0-d scalar and a "
                       "bool 0-d scalar.",
        "pathology": "none (dtype/shape coverage, including cases smdebug cannot read back)",
        "config": {"hook_steps": 3, "filewriter_step": 3, "filewriter_mode": "PREDICT"},
        "attempted_via_hook": list(HOOK_DTYPES),
        "written_via_filewriter": {k: {"dtype": str(v.dtype), "shape": list(v.shape)}
                                   for k, v in fw.items()},
    }


MAKERS = {f.__name__: f for f in (healthy_mlp, exploding, vanishing, dead_relu, overfit,
                                  reductions_only, dtypes)}


# ---- reading a trial back: statistics --------------------------------------------------------

def num(v):
    """A float for JSON: non-finite values as the strings NaN / Infinity / -Infinity."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def histogram(finite):
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi and lo - 0.5 == hi + 0.5:
        # numpy's widening to [min-0.5, max+0.5] is lost to rounding: everything in bin 32.
        counts = [0] * 64
        counts[32] = int(finite.size)
        return {"bins": 64, "lo": lo, "hi": hi, "counts": counts, "degenerate": True}
    counts, edges = np.histogram(finite, bins=64, range=(lo, hi))
    return {"bins": 64, "lo": float(edges[0]), "hi": float(edges[-1]),
            "counts": [int(c) for c in counts]}


def stats(value):
    """float64 statistics of one value (README "stats fields")."""
    a = np.asarray(value)
    x = a.astype(np.float64).ravel()
    finite = x[np.isfinite(x)]
    out = {"dtype": str(a.dtype), "shape": [int(d) for d in a.shape], "numel": int(a.size),
           "finite_count": int(finite.size), "nan_count": int(np.isnan(x).sum()),
           "pos_inf_count": int(np.isposinf(x).sum()), "neg_inf_count": int(np.isneginf(x).sum()),
           "zero_count": int((x == 0).sum())}
    if finite.size == 0:
        out.update({k: None for k in ("min", "max", "mean", "variance", "std", "sum", "l1", "l2",
                                      "linf", "mean_abs", "hist")})
        return out
    absf = np.abs(finite)
    out.update({
        "min": float(finite.min()), "max": float(finite.max()), "mean": float(finite.mean()),
        "variance": float(finite.var()), "std": float(finite.std()), "sum": float(finite.sum()),
        "l1": float(absf.sum()), "l2": float(np.sqrt(np.sum(finite * finite))),
        "linf": float(absf.max()), "mean_abs": float(absf.mean()), "hist": histogram(finite),
    })
    return out


# Every DataType numpy can hold (smdebug's reader lacks several of them).
PROTO_TO_NUMPY = {
    DataType.DT_HALF: np.float16, DataType.DT_FLOAT: np.float32, DataType.DT_DOUBLE: np.float64,
    DataType.DT_INT8: np.int8, DataType.DT_INT16: np.int16, DataType.DT_INT32: np.int32,
    DataType.DT_INT64: np.int64, DataType.DT_UINT8: np.uint8, DataType.DT_UINT16: np.uint16,
    DataType.DT_UINT32: np.uint32, DataType.DT_UINT64: np.uint64, DataType.DT_BOOL: np.bool_,
    DataType.DT_COMPLEX64: np.complex64, DataType.DT_COMPLEX128: np.complex128,
}


def raw_decode(trial_dir, location):
    """Decode one record straight from the bytes the index points at, with smdebug's protobuf
    classes and a complete dtype table: (the raw_decode entry, the array or None)."""
    event_file, start, length = location
    out = {"event_file": event_file, "start_idx": start, "length": length}
    value = None
    try:
        with open(os.path.join(trial_dir, event_file), "rb") as f:
            f.seek(start)
            record = f.read(length)
        (payload_len,) = struct.unpack("<Q", record[:8])
        event = Event()
        event.ParseFromString(record[12:12 + payload_len])
        tensor = event.summary.value[0].tensor
        shape = [int(d.size) for d in tensor.tensor_shape.dim]
        out["proto_dtype"] = DataType.Name(tensor.dtype)
        out["shape"] = shape
        value = np.frombuffer(tensor.tensor_content, dtype=PROTO_TO_NUMPY[tensor.dtype]).reshape(shape)
        out["stats"] = stats(value)
    except Exception as e:  # noqa: BLE001 - recorded
        out["error"] = f"{type(e).__name__}: {e}"
    return out, value


def read_index(trial_dir):
    """{(name, step, worker): location} of raw entries (last entry wins), reduction entries
    {(base name, step, worker): [(reduction, abs)]}, and the shape entries."""
    raw, reductions, shapes = {}, {}, set()
    index_root = os.path.join(trial_dir, "index")
    for folder, _, files in os.walk(index_root):
        for f in sorted(files):
            if not f.endswith(".json"):
                continue
            step = int(f.split("_", 1)[0])
            worker = f.split("_", 1)[1][:-len(".json")]
            with open(os.path.join(folder, f)) as fh:
                doc = json.load(fh)
            event_file = doc["meta"].get("event_file_name")
            for e in doc.get("tensor_payload", []):
                name = e["tensorname"]
                if name.startswith("smdebug/reductions/"):
                    red, base = name[len("smdebug/reductions/"):].split("/", 1)
                    is_abs = red.startswith("abs_")
                    reductions.setdefault((base, step, worker), set()).add(
                        (red[4:] if is_abs else red, is_abs))
                else:
                    raw[(name, step, worker)] = (event_file, int(e["start_idx"]), int(e["length"]))
            for e in doc.get("shape_payload", []):
                shapes.add((e["tensorname"], step, worker))
    return raw, reductions, shapes


def error_text(e):
    return f"{type(e).__name__}: {e}"


def l2(v):
    return float(np.sqrt(np.sum(v * v)))


def summarize_losses(records_by_tensor, loss_names):
    out = {}
    for name in loss_names:
        by_mode = {}
        for r in records_by_tensor[name]:
            by_mode.setdefault(r["mode"], []).append(r)
        for mode in sorted(by_mode, key=MODES.index):
            recs = by_mode[mode]
            values, unreadable = [], 0
            for r in recs:
                s = r["stats"]
                if s is None:
                    unreadable += 1
                    continue
                if s["finite_count"] == 1:
                    values.append((r["step"], s["min"]))
                else:
                    values.append((r["step"], float("nan") if s["nan_count"] else
                                   float("inf") if s["pos_inf_count"] else float("-inf")))
            finite = [(st, v) for st, v in values if math.isfinite(v)]
            best = min(finite, key=lambda p: p[1]) if finite else (None, None)
            out[f"{name}:{mode}"] = {
                "n": len(recs), "n_nonfinite": sum(1 for _, v in values if not math.isfinite(v)),
                "n_unreadable": unreadable,
                "first": num(values[0][1]) if values else None,
                "last": num(values[-1][1]) if values else None,
                "min_finite": min(v for _, v in finite) if finite else None,
                "max_finite": max(v for _, v in finite) if finite else None,
                "argmin_step": best[0],
            }
    return out


def summarize_ratios(ratios):
    out = {}
    for coll in ("weights", "biases"):
        vals = [e["ratio"] for e in ratios if e["collection"] == coll]
        if not vals:
            continue
        finite = [v for v in vals if isinstance(v, float) and math.isfinite(v)]
        out[coll] = {"n": len(vals), "n_nonfinite": len(vals) - len(finite),
                     "min": min(finite) if finite else None,
                     "max": max(finite) if finite else None,
                     "median": float(np.median(finite)) if finite else None}
    return out


def relu_zero_fraction(records_by_tensor):
    out = {}
    for name in sorted(records_by_tensor):
        if not (name.startswith("relu") and "_output_" in name):
            continue
        fr = [r["stats"]["zero_count"] / r["stats"]["numel"] for r in records_by_tensor[name]
              if r["stats"] and r["stats"]["numel"]]
        if fr:
            out[name] = {"mean_zero_fraction": float(np.mean(fr)), "min": min(fr), "max": max(fr)}
    return out


def evidence(name, doc, values):
    """pathology_evidence: a short summary derived from the statistics above."""
    recs = {t: body["records"] for t, body in doc["tensors"].items()}
    losses = doc["collections"].get("losses", {}).get("tensor_names_in_trial", [])
    ev = {}
    if name in ("healthy_mlp", "dead_relu"):
        ev["relu_zero_fraction"] = relu_zero_fraction(recs)
    if name == "exploding":
        first = {}
        for t in sorted(recs):
            for r in recs[t]:
                s = r["stats"]
                if s and s["nan_count"] + s["pos_inf_count"] + s["neg_inf_count"] > 0:
                    first[t] = {"step": r["step"], "nan": s["nan_count"],
                                "pos_inf": s["pos_inf_count"], "neg_inf": s["neg_inf_count"],
                                "numel": s["numel"]}
                    break
        ev["first_nonfinite_step_per_tensor"] = first
        ev["first_nonfinite_step_any"] = min((v["step"] for v in first.values()), default=None)
        ev["loss_first_steps"] = [num(np.asarray(values[(losses[0], r["step"], WORKER)]).item())
                                  for r in recs[losses[0]][:12]]
    if name == "vanishing":
        last = doc["steps"]["GLOBAL"][-1]
        mean_abs = {}
        layers = sorted((t for t in recs if t.startswith("gradient/") and t.endswith(".weight")),
                        key=lambda t: int(t.split("layers.")[1].split(".")[0]))
        for t in layers:
            for r in recs[t]:
                if r["step"] == last and r["stats"]:
                    mean_abs[t] = r["stats"]["mean_abs"]
        ev["gradient_weight_mean_abs_at_last_step"] = mean_abs
        if layers and layers[0] in mean_abs and layers[-1] in mean_abs:
            ev["ratio_first_layer_to_last_layer"] = mean_abs[layers[0]] / mean_abs[layers[-1]]
    ev["loss"] = summarize_losses(recs, losses)
    ratios = summarize_ratios(doc["weight_update_ratios"])
    if ratios:
        ev["weight_update_ratio"] = ratios
    if name == "overfit":
        loss = losses[0]
        evals = [(r["mode_step"], r["step"], r["stats"]["min"]) for r in recs[loss]
                 if r["mode"] == "EVAL" and r["stats"]]
        trains = [r["stats"]["min"] for r in recs[loss] if r["mode"] == "TRAIN" and r["stats"]]
        ms, gs, v = min(evals, key=lambda e: e[2])
        ev["eval_loss_min"] = {"eval_mode_step": ms, "global_step": gs, "value": v}
        ev["eval_loss_last"] = evals[-1][2]
        ev["eval_loss_rises_after_min"] = bool(evals[-1][2] > v and ms < evals[-1][0])
        ev["train_loss_first_last"] = [trains[0], trains[-1]]
    if name == "reductions_only":
        checks = []
        for t in sorted(recs):
            for r in recs[t]:
                if r["step"] != 0 or "saved_reductions" not in r:
                    continue
                saved = {(x["reduction"], x["abs"]): x["value"] for x in r["saved_reductions"]}
                if ("variance", False) not in saved:
                    continue
                if r["stats"]:
                    source, v = "smdebug", values[(t, 0, WORKER)]
                elif "raw_decode" in r and "stats" in r["raw_decode"]:
                    source, v = "raw_decode", values[("raw:" + t, 0, WORKER)]
                else:
                    continue
                x = np.asarray(v).astype(np.float64).ravel()
                checks.append({"tensor": t, "step": 0, "source": source,
                               "saved_variance": saved[("variance", False)],
                               "numpy_population_variance": float(x.var()),
                               "numpy_sample_variance": float(x.var(ddof=1)),
                               "saved_std": saved[("std", False)],
                               "numpy_population_std": float(x.std())})
        ev["variance_convention_check"] = checks
    return ev


def expected_for(name, trial_dir, generation):
    trial = create_trial(trial_dir)
    doc = {"schema_version": 1, "trial": name, "generation": generation}
    doc["training_ended"] = bool(has_training_ended(trial_dir))
    with open(os.path.join(trial_dir, "collections", "000000000",
                           f"{WORKER}_collections.json")) as f:
        coll_file = json.load(f)
    doc["num_workers_in_collection_file"] = coll_file["_meta"]["num_workers"]
    doc["workers"] = sorted(trial.workers())
    mode_keys = {m: ModeKeys[m] for m in MODES}
    doc["steps"] = {m: trial.steps(mode=mode_keys[m]) for m in MODES}
    doc["steps_including_incomplete"] = {m: trial.steps(mode=mode_keys[m],
                                                        show_incomplete_steps=True)
                                         for m in MODES}
    doc["mode_step_to_global_step"] = {
        m: {str(s): trial.global_step(mode_keys[m], s) for s in doc["steps"][m]}
        for m in MODES[1:] if doc["steps"][m]}
    global_to_mode = {}
    for g in doc["steps"]["GLOBAL"]:
        mode, mode_step = trial.mode_modestep(g)
        global_to_mode[str(g)] = [mode.name, mode_step]
    doc["global_step_to_mode"] = global_to_mode
    doc["loaded_all_steps"] = bool(trial.loaded_all_steps)
    doc["last_complete_step"] = trial.last_complete_step
    names = sorted(trial.tensor_names())
    doc["tensor_names"] = names
    present = sorted(m.name for m in trial.modes() if m != GLOBAL)
    doc["modes_present"] = present
    doc["tensor_names_by_mode"] = {m: sorted(trial.tensor_names(mode=mode_keys[m]))
                                   for m in present}
    collections = {}
    for cname in sorted(coll_file["collections"]):
        c = coll_file["collections"][cname]
        collections[cname] = {
            "include_regex": c["include_regex"],
            "tensor_names_in_collection_file": sorted(c["tensor_names"]),
            "tensor_names_in_trial": sorted(trial.tensor_names(collection=cname)),
            "reduction_config": c["reduction_config"],
            "save_config": c["save_config"],
        }
    doc["collections"] = collections

    raw_index, reduction_index, shape_index = read_index(trial_dir)
    values = {}  # (name, step, worker) -> value smdebug returned; ("raw:"+name, ...) -> decoded
    tensors = {}
    counts = {"tensor_names": len(names), "value_records": 0, "reduction_values": 0,
              "read_errors": 0}
    for tname in names:
        tensor = trial.tensor(tname)
        steps = {m: tensor.steps(mode=mode_keys[m]) for m in MODES}
        steps = {m: s for m, s in steps.items() if s}
        records = []
        for step in steps["GLOBAL"]:
            mode, mode_step = trial.mode_modestep(step)
            for worker in sorted(tensor.workers(step)):
                key = (tname, step, worker)
                rec = {"step": step, "mode": mode.name, "mode_step": mode_step, "worker": worker,
                       "raw_saved": key in raw_index}
                value = None
                if rec["raw_saved"]:  # else saved as reductions only: no value to ask for
                    try:
                        value = tensor.value(mode_step, mode=mode, worker=worker)
                        if value is None:
                            rec["value_is_none"] = True
                    except Exception as e:  # noqa: BLE001 - recorded
                        rec["error"] = error_text(e)
                        counts["read_errors"] += 1
                rec["stats"] = stats(value) if value is not None else None
                if value is not None:
                    values[key] = value
                reds = sorted(reduction_index.get(key, ()), key=lambda r: (r[1], r[0]))
                if reds:
                    saved = []
                    for red, is_abs in reds:
                        v = np.asarray(tensor.reduction_value(mode_step, red, mode=mode,
                                                              worker=worker, abs=is_abs))
                        saved.append({"reduction": red, "abs": is_abs, "value": num(v.item()),
                                      "dtype": str(v.dtype)})
                        counts["reduction_values"] += 1
                    rec["saved_reductions"] = saved
                    try:
                        rec["shape_from_index"] = [int(d) for d in
                                                   tensor.shape(mode_step, mode=mode, worker=worker)]
                    except Exception:  # noqa: BLE001 - no shape
                        pass
                if key in raw_index:
                    # Decoded from the bytes when smdebug gave no value or another dtype.
                    decoded, array = raw_decode(trial_dir, raw_index[key])
                    if value is None or (array is not None and array.dtype != np.asarray(value).dtype):
                        rec["raw_decode"] = decoded
                        if array is not None:
                            values[("raw:" + tname, step, worker)] = array
                counts["value_records"] += 1
                records.append(rec)
        tensors[tname] = {"steps": steps, "records": records}
    doc["tensors"] = tensors
    doc["counts"] = counts

    ratios = []
    for coll in ("weights", "biases"):
        for tname in sorted(trial.tensor_names(collection=coll)) if coll in collections else []:
            for worker in doc["workers"]:
                prev = None
                for r in tensors[tname]["records"]:
                    key = (tname, r["step"], worker)
                    if r["worker"] != worker or key not in values:
                        continue
                    cur = np.asarray(values[key]).astype(np.float64)
                    if prev is not None:
                        p, pr = prev
                        with np.errstate(all="ignore"):
                            ratio = l2(cur - p) / (l2(p) + 1e-9)
                        ratios.append({"tensor": tname, "collection": coll, "worker": worker,
                                       "prev_step": pr["step"], "step": r["step"],
                                       "prev_mode": pr["mode"], "prev_mode_step": pr["mode_step"],
                                       "mode": r["mode"], "mode_step": r["mode_step"],
                                       "ratio": num(ratio)})
                    prev = (cur, r)
    doc["weight_update_ratios"] = ratios

    files = []
    for folder, _, fs in os.walk(trial_dir):
        for f in fs:
            path = os.path.join(folder, f)
            files.append({"path": os.path.relpath(path, trial_dir).replace(os.sep, "/"),
                          "bytes": os.path.getsize(path)})
    files.sort(key=lambda e: e["path"])
    doc["files"] = files
    doc["size"] = {"files": len(files), "bytes": sum(e["bytes"] for e in files)}
    with np.errstate(all="ignore"):
        doc["pathology_evidence"] = evidence(name, doc, values)
    return doc


def dump(doc):
    """The shared set's layout: one line per top-level key, collections and tensor records one
    per line. Non-finite floats never reach here (num() turned them into strings)."""
    def j(v):
        return json.dumps(v, allow_nan=False)

    lines = ["{"]
    items = list(doc.items())
    for i, (k, v) in enumerate(items):
        comma = "," if i + 1 < len(items) else ""
        if k in ("collections", "tensors") and v:
            lines.append(f" {j(k)}: {{")
            sub = list(v.items())
            for n, (name, body) in enumerate(sub):
                c2 = "," if n + 1 < len(sub) else ""
                if k == "tensors":
                    lines.append(f"  {j(name)}: {{")
                    lines.append(f"   \"steps\": {j(body['steps'])},")
                    lines.append("   \"records\": [")
                    recs = body["records"]
                    for m, r in enumerate(recs):
                        lines.append(f"    {j(r)}" + ("," if m + 1 < len(recs) else ""))
                    lines.append("   ]")
                    lines.append("  }" + c2)
                else:
                    lines.append(f"  {j(name)}: {j(body)}{c2}")
            lines.append(" }" + comma)
        elif k in ("files", "weight_update_ratios") and v:
            lines.append(f" {j(k)}: [")
            for n, e in enumerate(v):
                lines.append(f"  {j(e)}" + ("," if n + 1 < len(v) else ""))
            lines.append(" ]" + comma)
        else:
            lines.append(f" {j(k)}: {j(v)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def check_pathology(name, doc):
    """The story each trial exists to tell (../shared/trials/README.md), checked on what smdebug
    read back: a set that does not tell it fails here, not somewhere in the golden tests."""
    ev = doc["pathology_evidence"]
    losses = ev["loss"]
    problems = []
    if name == "exploding":
        loss = losses["MSELoss_output_0:TRAIN"]
        if not (loss["n_nonfinite"] > 0 and loss["last"] == "NaN"):
            problems.append("the loss must overflow to +Inf and end NaN")
        ratios = ev["weight_update_ratio"]["weights"]
        if ratios["median"] != 0.0:
            problems.append("the dead network's weights must stop changing (update ratio 0)")
    elif name == "vanishing":
        if not ev.get("ratio_first_layer_to_last_layer", 1.0) < 1e-6:
            problems.append("the first layer's gradients must be orders of magnitude smaller")
    elif name == "dead_relu":
        if min(r["mean_zero_fraction"] for r in ev["relu_zero_fraction"].values()) < 0.9:
            problems.append("most ReLU outputs must be exactly 0")
    elif name == "overfit":
        if not ev["eval_loss_rises_after_min"] or ev["train_loss_first_last"][1] > 0.01:
            problems.append("the TRAIN loss must fall to ~0 while the EVAL loss rises after a minimum")
    if name != "exploding" and any(v["n_nonfinite"] for v in losses.values()):
        problems.append("the loss must stay finite")
    if problems:
        sys.exit(f"{name}: the trial does not show its pathology: {'; '.join(problems)}")


def make(name, out_dir, x, y):
    trial_dir = os.path.join(out_dir, name)
    if os.path.exists(trial_dir):
        shutil.rmtree(trial_dir)
    start = time.time()
    generation = MAKERS[name](trial_dir, x, y)
    trained = time.time() - start
    generation["smdebug_version"] = smdebug.__version__
    generation["torch_version"] = torch.__version__.split("+")[0]
    generation["numpy_version"] = np.__version__
    doc = expected_for(name, trial_dir, generation)
    check_pathology(name, doc)
    if name == "dtypes":
        written = set(doc["tensor_names"])
        generation["attempted_but_not_in_trial"] = [n for n in HOOK_DTYPES if n not in written]
    with open(os.path.join(out_dir, name + ".expected.json"), "w") as f:
        f.write(dump(doc))
    return trained, time.time() - start - trained


def check(golden_dir, names):
    """Recompute every <name>.expected.json of an existing golden set (e.g. ../shared/trials)
    from its trial and compare, all but `generation`: the reader half of this script gives
    exactly the answers, keys and nesting of the set's own generator. 0 when all match."""
    failed = 0
    for name in names:
        with open(os.path.join(golden_dir, name + ".expected.json")) as f:
            want = json.load(f)
        got = json.loads(dump(expected_for(name, os.path.join(golden_dir, name),
                                           want["generation"])))
        differs = [key for key in sorted(set(want) | set(got)) if want.get(key) != got.get(key)]
        for key in differs:
            print(f"{name}: {key} differs: {json.dumps(want.get(key))[:300]} != "
                  f"{json.dumps(got.get(key))[:300]}")
        print(f"{name}: {'DIFFERS' if differs else 'matches'}", flush=True)
        failed += bool(differs)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="where to write the trials (with --check: the set to check)")
    parser.add_argument("--only", nargs="*", choices=TRIALS, help="just these trials")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: recompute OUT_DIR's expected.json files and compare")
    args = parser.parse_args()
    if args.check:
        return check(args.out_dir, args.only or TRIALS)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(args.out_dir, exist_ok=True)
    x, y = digits()
    for name in args.only or TRIALS:
        trained, read = make(name, args.out_dir, x, y)
        print(f"{name}: trained {trained:.1f} s, expected.json {read:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
