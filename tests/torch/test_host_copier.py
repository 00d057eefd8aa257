# SPDX-License-Identifier: Apache-2.0
"""The ordering logic of ``trialstat.torch.capture.HostCopier`` without a GPU: a CUDA tensor's
copy is an item waiting on an event, and every command or CPU tensor offered after it must reach
the writer after it, in offer order; ``poll`` never blocks, ``drain`` waits; CPU tensors queued
behind a pending copy keep the value they had when offered. The events are stand-ins with
CUDA events' ``query``/``synchronize``; the CUDA path itself runs only on a GPU machine."""
import torch

from trialstat.torch.capture import HostCopier


class FakeEvent:
    def __init__(self):
        self.done = False
        self.waited = False

    def query(self):
        return self.done

    def synchronize(self):
        self.waited = True
        self.done = True


class RecordingWriter:
    def __init__(self):
        self.calls = []

    def begin_step(self, *args):
        self.calls.append(("begin_step",) + args)

    def end_step(self):
        self.calls.append(("end_step",))

    def add_tensor(self, name, ptr, nbytes, dtype, shape, wall):
        data = torch.frombuffer(bytearray((ctypes_bytes(ptr, nbytes))), dtype=torch.float32)
        self.calls.append(("add_tensor", name, data.tolist(), dtype, shape))


def ctypes_bytes(ptr, nbytes):
    import ctypes
    return ctypes.string_at(ptr, nbytes)


def pending_copy(copier, host, name, event):
    """What HostCopier.tensor appends for a CUDA tensor: an item that waits on ``event``."""
    copier._pending.append((event, host, "add_tensor", ((name,), (0.0,))))
    copier._pending_bytes += host.numel() * host.element_size()


def test_commands_and_cpu_tensors_wait_behind_a_pending_copy():
    writer = RecordingWriter()
    copier = HostCopier(writer, max_pending_bytes=1 << 20)
    copier.command("begin_step", 3, 1, 3)
    event = FakeEvent()
    pending_copy(copier, torch.tensor([1.0, 2.0]), "gpu_weight", event)
    cpu = torch.tensor([5.0, 6.0])
    copier.tensor("add_tensor", cpu, ("cpu_loss",), (0.0,))
    cpu.fill_(-1.0)  # the training job changes it afterwards: the offered value is kept
    copier.command("end_step")
    assert writer.calls == [("begin_step", 3, 1, 3)]
    copier.poll()  # the copy has not completed: nothing more, and poll does not wait
    assert len(writer.calls) == 1 and not event.waited
    event.done = True
    copier.poll()
    assert writer.calls == [("begin_step", 3, 1, 3),
                            ("add_tensor", "gpu_weight", [1.0, 2.0], 1, [2]),
                            ("add_tensor", "cpu_loss", [5.0, 6.0], 1, [2]),
                            ("end_step",)]
    assert copier.pending_count == 0 and copier._pending_bytes == 0


def test_drain_waits_for_every_copy_in_order():
    writer = RecordingWriter()
    copier = HostCopier(writer, max_pending_bytes=1 << 20)
    first, second = FakeEvent(), FakeEvent()
    pending_copy(copier, torch.tensor([1.0]), "a", first)
    pending_copy(copier, torch.tensor([2.0]), "b", second)
    copier.command("end_step")
    copier.drain()
    assert first.waited and second.waited
    assert [c[1] if c[0] == "add_tensor" else c[0] for c in writer.calls] == ["a", "b", "end_step"]


def test_a_later_copy_that_finished_first_still_waits_for_the_earlier_one():
    writer = RecordingWriter()
    copier = HostCopier(writer, max_pending_bytes=1 << 20)
    first, second = FakeEvent(), FakeEvent()
    pending_copy(copier, torch.tensor([1.0]), "a", first)
    pending_copy(copier, torch.tensor([2.0]), "b", second)
    second.done = True
    copier.poll()
    assert writer.calls == []
    first.done = True
    copier.poll()
    assert [c[1] for c in writer.calls] == ["a", "b"]


def test_cpu_tensors_without_pending_copies_go_straight_to_the_writer():
    writer = RecordingWriter()
    copier = HostCopier(writer, max_pending_bytes=1 << 20)
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # not contiguous
    copier.tensor("add_tensor", t, ("w",), (0.0,))
    assert writer.calls == [("add_tensor", "w", [0.0, 3.0, 1.0, 4.0, 2.0, 5.0], 1, [3, 2])]
