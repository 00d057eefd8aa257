# SPDX-License-Identifier: Apache-2.0
"""``trial.tensor(name)``: smdebug 1.0.34's Tensor (spec/TRIAL_API.md §5).

Values are numpy arrays read straight from the indexed record (no protobuf objects); when the
record's bytes are suitably aligned the array views the record buffer without a copy.
Saved reductions come back as smdebug returns them (0-d numpy arrays of the record's dtype);
reductions that were not saved are computed from the raw value with numpy (reductions.py).
"""
import numpy as np

from . import _core
from ._steps import StepState
from .exceptions import (InvalidWorker, ShapeUnavailableForStep, SMDebugNotImplementedError,
                         StepNotYetAvailable, StepUnavailable, TensorUnavailableForStep,
                         from_core_error)
from .modes import GLOBAL, to_mode
from .reductions import get_numpy_reduction

__all__ = ["Tensor"]


class Tensor:
    def __init__(self, name, trial):
        self.name = name
        self.trial = trial
        self._generation = -1
        self._by_step = {}
        self._steps = []

    @property
    def original_name(self):
        return self.name

    def step(self, *args, **kwargs):
        raise SMDebugNotImplementedError("Tensor.step() was removed in smdebug; use value()")

    def _index(self):
        t = self.trial
        if self._generation != t._generation:
            entries = t._core.tensor_steps(self.name)
            self._by_step = {step: workers for step, workers in entries}
            self._steps = [step for step, _ in entries]
            self._generation = t._generation
        return self._by_step

    # ---- steps ------------------------------------------------------------------------------
    def steps(self, mode=GLOBAL, show_incomplete_steps=False):
        """Steps where this tensor has any entry (value, reduction or shape): global steps for
        GLOBAL (every mode), mode steps otherwise; complete steps only unless asked."""
        t = self.trial
        t.maybe_refresh()
        mode = to_mode(mode)
        self._index()
        table = t._table()
        out = []
        for g in self._steps:
            if not show_incomplete_steps and not (t.loaded_all_steps or t._core.is_complete(g)):
                continue
            if mode == GLOBAL:
                out.append(g)
            else:
                m, ms = table.get(g, (None, None))
                if m == mode:
                    out.append(ms)
        return sorted(out)

    def prev_steps(self, step, n=None, mode=GLOBAL):
        """Complete steps <= step, the last ``n`` if n is given (0 or None: all)."""
        steps = [s for s in self.steps(mode=mode) if s <= step]
        if n:
            return steps[-n:]
        return steps

    # ---- lookups ------------------------------------------------------------------------------
    def _locate(self, step, mode, worker):
        """(global step, worker name) holding an entry, or the smdebug exception for the miss."""
        t = self.trial
        mode = to_mode(mode)
        g = t._global_of(step, mode)
        workers = self._index().get(g) if g is not None else None
        if not workers:
            t.maybe_refresh()
            g = t._global_of(step, mode)
            workers = self._index().get(g) if g is not None else None
        if not workers:
            state = t._step_state(step, mode)
            if state == StepState.AVAILABLE:
                raise TensorUnavailableForStep(self.name, step, mode)
            if state == StepState.UNAVAILABLE:
                raise StepUnavailable(step, mode)
            raise StepNotYetAvailable(step, mode)
        if worker is None:
            return g, workers[0]
        if worker not in workers:
            raise InvalidWorker(worker)
        return g, worker

    def _read(self, g, worker, reduction="", abs=False):
        try:
            result = self.trial._core.read(self.name, g, worker, reduction, abs)
        except _core.Error as e:
            raise from_core_error(e) from None
        if isinstance(result, tuple):  # string tensor: ("str", [bytes], shape)
            _, items, shape = result
            # str (numpy '<U…'), decoded as UTF-8 like smdebug (FORMAT §4), not bytes.
            return np.array([item.decode("utf-8") for item in items], dtype=str).reshape(shape)
        if self.trial.int8_as_uint8 and result.dtype == np.int8:
            result = result.view(np.uint8)
        return result

    def workers(self, step, mode=GLOBAL):
        mode = to_mode(mode)
        g = self.trial._global_of(step, mode)
        workers = self._index().get(g) if g is not None else None
        if not workers:
            self.trial.maybe_refresh()
            g = self.trial._global_of(step, mode)
            workers = self._index().get(g) if g is not None else None
        if not workers:
            raise TensorUnavailableForStep(self.name, step, mode)
        return list(workers)

    # ---- values -------------------------------------------------------------------------------
    def value(self, step_num, mode=GLOBAL, worker=None):
        """The raw tensor at a step as a numpy array (shape and dtype as saved)."""
        mode = to_mode(mode)
        g, worker = self._locate(step_num, mode, worker)
        cache = self.trial._value_cache if self.trial.cache else None
        if cache is not None and (self.name, g, worker) in cache:
            return cache[(self.name, g, worker)]
        info = self.trial._core.entry(self.name, g, worker)
        if info is None or not info["raw"]:
            raise TensorUnavailableForStep(self.name, step_num, mode,
                                           has_reductions=bool(info and info["reductions"]))
        value = self._read(g, worker)
        if cache is not None:
            cache[(self.name, g, worker)] = value
        return value

    def values(self, mode=GLOBAL, worker=None):
        """{step: value} over ``steps(mode)``."""
        return {s: self.value(s, mode=mode, worker=worker) for s in self.steps(mode=mode)}

    def reduction_value(self, step_num, reduction_name, mode=GLOBAL, worker=None, abs=False):
        """A saved reduction (0-d array, as written), else computed from the raw value with
        numpy (a numpy scalar; l1/l2 are numpy.linalg.norm: matrix norms for 2-D tensors)."""
        # smdebug's order: saved record, else the raw value (the name is validated there),
        # else TensorUnavailableForStep.
        mode = to_mode(mode)
        g, worker = self._locate(step_num, mode, worker)
        info = self.trial._core.entry(self.name, g, worker)
        if info is not None and (reduction_name, bool(abs)) in info["reductions"]:
            return self._read(g, worker, reduction_name, bool(abs))
        if info is not None and info["raw"]:
            return get_numpy_reduction(reduction_name, self.value(step_num, mode, worker), abs)
        raise TensorUnavailableForStep(self.name, step_num, mode)

    def reduction_values(self, step_num, mode=GLOBAL, worker=None):
        """{(name, abs): value} of the reductions saved at that step."""
        mode = to_mode(mode)
        g, worker = self._locate(step_num, mode, worker)
        info = self.trial._core.entry(self.name, g, worker)
        return {(name, abs): self._read(g, worker, name, abs) for name, abs in info["reductions"]}

    def shape(self, step_num, mode=GLOBAL, worker=None):
        """The saved shape (tuple), else the value's shape."""
        mode = to_mode(mode)
        g, worker = self._locate(step_num, mode, worker)
        info = self.trial._core.entry(self.name, g, worker)
        if info is not None and info["shape"] is not None:
            return tuple(info["shape"])
        if info is not None and info["raw"]:
            return self.value(step_num, mode, worker).shape
        raise ShapeUnavailableForStep(self.name, step_num, mode)

    def has_reductions(self, step_num, mode=GLOBAL, worker=None):
        mode = to_mode(mode)
        g, worker = self._locate(step_num, mode, worker)
        info = self.trial._core.entry(self.name, g, worker)
        return bool(info and info["reductions"])

    def __repr__(self):
        return f"<trialstat.Tensor {self.name!r} of trial {self.trial.name!r}>"
