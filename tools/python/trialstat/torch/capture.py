# SPDX-License-Identifier: Apache-2.0
"""From a torch tensor to bytes in the C++ writer's queue (spec/HOOK_API.md §4.5–§4.6).

* ``tf_dtype_of`` — the ``TensorProto.dtype`` number a torch dtype is written as (FORMAT §4):
  every dtype keeps its own bytes (bfloat16 as DT_BFLOAT16 = 14, bit-exact) unless the hook was
  asked to widen bfloat16 for smdebug's reader; dtypes TensorFlow has no number for (float8,
  complex32) are widened to float32 / complex64, exactly.
* ``compute_reductions`` — smdebug's reductions with the same torch ops, on the tensor's own
  device and in its own dtype, stacked so that one copy brings them all to the host.
* ``HostCopier`` — hands tensors to the writer in the order they were offered. A CPU tensor is
  copied once, straight into the writer's queue. A CUDA tensor is first snapshotted on the
  producing stream (``clone``: the value at capture time, although the optimizer updates
  parameters in place right after), then copied to pinned host memory on a side stream that
  waits on an event recorded after the snapshot; the training stream is never synchronised. The
  writer receives it once that copy's event has completed (checked without blocking at every
  hook call; ``drain`` waits, at step ends that need it and at close).
"""
import collections
import re

import torch

__all__ = ["tf_dtype_of", "compute_reductions", "reduction_tag", "HostCopier"]

# torch dtype -> TensorFlow DataType number (FORMAT §4).
_TF_DTYPES = {
    torch.float32: 1, torch.float64: 2, torch.int32: 3, torch.uint8: 4, torch.int16: 5,
    torch.int8: 6, torch.complex64: 8, torch.int64: 9, torch.bool: 10, torch.bfloat16: 14,
    torch.complex128: 18, torch.float16: 19,
}
for _name, _number in (("uint16", 17), ("uint32", 22), ("uint64", 23)):
    if hasattr(torch, _name):
        _TF_DTYPES[getattr(torch, _name)] = _number


def tf_dtype_of(dtype, widen_bfloat16=False):
    """(dtype to write as, its TF DataType number) for a torch dtype.

    bfloat16 stays bfloat16 (DT_BFLOAT16) unless ``widen_bfloat16`` (then float32, exact).
    Floating dtypes without a TF number (float8 variants) → float32; complex32 → complex64 (both
    exact). Raises TypeError for anything else (quantized types)."""
    if dtype == torch.bfloat16 and widen_bfloat16:
        return torch.float32, 1
    number = _TF_DTYPES.get(dtype)
    if number is not None:
        return dtype, number
    if dtype.is_complex:
        return torch.complex64, 8
    if dtype.is_floating_point:
        return torch.float32, 1
    raise TypeError(f"dtype {dtype} cannot be written to a trial")


def reduction_tag(tensor_name, op, abs_):
    """``smdebug/reductions/[abs_]<op>/<tensor>`` with every ``:<digits>`` removed (FORMAT §7)."""
    tag = re.sub(r":\d+", "", f"{op}/{tensor_name}")
    return "smdebug/reductions/" + ("abs_" if abs_ else "") + tag


def _reduce(t, op):
    if op == "variance":
        return torch.Tensor.var(t)
    if op in ("l1", "l2"):
        return torch.norm(t, p=int(op[1]))
    return getattr(torch.Tensor, op)(t)


def compute_reductions(value, operations):
    """smdebug's reductions of ``value`` (HOOK_API §4.5): for each (op, abs) in ``operations``,
    ``torch.abs`` if abs, then the full-tensor ``min max mean sum prod`` method, unbiased
    ``std``/``var``, or ``torch.norm(p=1|2)`` — on the tensor's device, in its dtype.

    Returns a list of (op, abs, 0-d tensor | None, error message | None); an op torch refuses for
    this dtype (e.g. ``mean`` of an integer tensor) gives its error message instead of a value.
    Results of the same dtype are computed into one stacked tensor so that a CUDA tensor's
    reductions cross to the host in one copy (the caller copies ``.stack``-ed groups)."""
    out = []
    with torch.no_grad():
        t = value.detach()
        absolute = None
        for op, abs_ in operations:
            src = t
            if abs_:
                if absolute is None:
                    absolute = torch.abs(t)
                src = absolute
            try:
                out.append((op, abs_, _reduce(src, op), None))
            except (RuntimeError, NotImplementedError, ValueError, TypeError) as e:
                out.append((op, abs_, None, str(e).splitlines()[0]))
    return out


class HostCopier:
    """Delivers writer commands in offer order; tensors reach host memory without synchronising
    the training stream (module docstring).

    ``writer``: the ``trialstat._core.CaptureWriter``; ``max_pending_bytes``: pinned bytes in
    flight before ``tensor`` waits for the oldest copy (back-pressure on the host thread only).
    """

    def __init__(self, writer, max_pending_bytes):
        self._writer = writer
        self._max_pending_bytes = max_pending_bytes
        self._pending = collections.deque()  # (done_event | None, host tensor | None, method, args)
        self._pending_bytes = 0
        self._side_streams = {}

    @property
    def pending_count(self):
        return len(self._pending)

    def command(self, method, *args):
        """Call ``writer.<method>(*args)`` after everything offered before it."""
        if self._pending:
            self._pending.append((None, None, method, args))
            self.poll()
        else:
            getattr(self._writer, method)(*args)

    def tensor(self, method, tensor, head_args, tail_args=()):
        """Call ``writer.<method>(*head_args, data_ptr, nbytes, dtype_number, shape, *tail_args)``
        with ``tensor``'s bytes (already of a writable dtype, see ``tf_dtype_of``) in host memory;
        ``method`` may also be a callable, called as ``method(host_tensor, *head_args, *tail_args)``.
        """
        t = tensor.detach()
        if t.device.type == "cpu":
            if self._pending:  # keep the value at capture time while earlier copies finish
                self._pending.append((None, t.contiguous().clone(), method, (head_args, tail_args)))
                self.poll()
            else:
                self._deliver(method, t.contiguous(), head_args, tail_args)
            return
        if t.device.type != "cuda":
            t = t.to("cpu")
            self.tensor(method, t, head_args, tail_args)
            return
        producer = torch.cuda.current_stream(t.device)
        snapshot = t.contiguous().clone()  # on the producing stream: the value at capture time
        ready = torch.cuda.Event()
        ready.record(producer)
        side = self._side_streams.get(t.device)
        if side is None:
            side = self._side_streams[t.device] = torch.cuda.Stream(device=t.device)
        with torch.cuda.stream(side):
            side.wait_event(ready)
            host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
            host.copy_(snapshot, non_blocking=True)
            done = torch.cuda.Event()
            done.record(side)
        snapshot.record_stream(side)  # the caching allocator keeps it until the copy has run
        self._pending.append((done, host, method, (head_args, tail_args)))
        self._pending_bytes += host.numel() * host.element_size()
        while self._pending_bytes > self._max_pending_bytes and self._pending:
            self._pop(block=True)
        self.poll()

    def poll(self):
        """Deliver every leading item whose copy has completed (never blocks)."""
        while self._pending and self._pop(block=False):
            pass

    def drain(self):
        """Deliver everything, waiting for outstanding copies (host thread only)."""
        while self._pending:
            self._pop(block=True)

    def _pop(self, block):
        done, host, method, args = self._pending[0]
        if done is not None:
            if block:
                done.synchronize()
            elif not done.query():
                return False
        self._pending.popleft()
        if host is None:
            getattr(self._writer, method)(*args)
            return True
        if done is not None:
            self._pending_bytes -= host.numel() * host.element_size()
        head_args, tail_args = args
        self._deliver(method, host, head_args, tail_args)
        return True

    def _deliver(self, method, host, head_args, tail_args):
        if callable(method):
            method(host, *head_args, *tail_args)
            return
        _, number = tf_dtype_of(host.dtype)
        nbytes = host.numel() * host.element_size()
        getattr(self._writer, method)(*head_args, host.data_ptr(), nbytes, number, list(host.shape),
                                      *tail_args)

