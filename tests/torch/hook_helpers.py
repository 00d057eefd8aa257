# SPDX-License-Identifier: Apache-2.0
"""Helpers of the capture-hook tests that train in the pytest process or read files directly:
a TFRecord reader for event files (FORMAT §2–§3; CRCs not checked), expected-value recorders
for a training loop, and bit-exact comparisons of what trialstat's reader returns."""
import struct

import numpy as np
import pytest
import torch


def tfrecords(path):
    """The payloads of a TFRecord file (length, masked CRC, data, masked CRC per record)."""
    with open(path, "rb") as f:
        blob = f.read()
    out, i = [], 0
    while i + 12 <= len(blob):
        (n,) = struct.unpack_from("<Q", blob, i)
        out.append(blob[i + 12:i + 12 + n])
        i += 12 + n + 4
    return out


def event_tensors(path):
    """[(Event.step, tag, TensorProto dtype number, tensor_content bytes, shape)] of a trial's
    event file (tensorboard's protos, which are TensorFlow's)."""
    from tensorboard.compat.proto import event_pb2
    out = []
    for data in tfrecords(path):
        event = event_pb2.Event.FromString(data)
        if not event.HasField("summary"):
            continue
        for value in event.summary.value:
            t = value.tensor
            out.append((event.step, value.tag, t.dtype, t.tensor_content,
                        [d.size for d in t.tensor_shape.dim]))
    return out


class Recorder:
    """Expected values of a training loop: ``expected[step][name] = tensor clone``."""

    def __init__(self):
        self.expected = {}
        self.step = -1
        self._handles = []

    def next_step(self):
        self.step += 1
        self.expected[self.step] = {}

    def put(self, name, value):
        self.expected[self.step][name] = value.detach().clone()

    def params(self, prefix, model):
        for n, p in model.named_parameters():
            self.put(f"{prefix}_{n}", p)

    def grads(self, prefix, model):
        for n, p in model.named_parameters():
            self.put(f"gradient/{prefix}_{n}", p.grad)

    def watch_modules(self, model, names):
        """Record ``<name>_input_0`` / ``<name>_output_0`` of submodules ``names`` (own hooks)."""
        modules = dict(model.named_modules())
        for name in names:
            def fn(_m, inputs, output, name=name):
                self.put(f"{name}_input_0", inputs[0])
                self.put(f"{name}_output_0", output)
            self._handles.append(modules[name].register_forward_hook(fn))


def torch_bits(t):
    """The bytes of a tensor as stored (any dtype, bfloat16 included)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bool:
        return t.numpy().tobytes()
    width = t.element_size()
    view = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width]
    return t.view(view).numpy().tobytes()


def assert_read_back_equal(value, expected, name=""):
    """``value`` (from trialstat's reader) equals ``expected`` bit for bit. trialstat's reader
    returns bfloat16 as float32 (numpy has no bfloat16): then its upper 16 bits must be the
    bf16 bits and the lower 16 zero."""
    array = np.asarray(value)
    assert list(array.shape) == list(expected.shape), (name, array.shape, expected.shape)
    if expected.dtype == torch.bfloat16:
        assert array.dtype == np.float32, (name, array.dtype)
        words = array.view(np.uint32)
        assert not (words & 0xFFFF).any(), name
        assert (words >> 16).astype(np.uint16).tobytes() == torch_bits(expected), name
        return
    want = expected.detach().cpu().numpy()
    assert array.dtype == want.dtype, (name, array.dtype, want.dtype)
    assert array.tobytes() == want.tobytes(), name


def optional_fixture(request, name):
    """The fixture's value, or None where it skips (e.g. no smdebug venv outside CI; under CI
    conftest.require fails instead, and so does this)."""
    try:
        return request.getfixturevalue(name)
    except pytest.skip.Exception:
        return None
