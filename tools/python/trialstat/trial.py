# SPDX-License-Identifier: Apache-2.0
"""The trial object: smdebug 1.0.34's analysis API (spec/TRIAL_API.md §1-§4, §9) over the
trialstat catalog, plus batched statistics (``Trial.stats``) that smdebug lacks.

Where trialstat differs from smdebug on purpose (each is a smdebug bug or quirk; see
tools/python/README.md "Differences from smdebug"):
  * int8 tensors are int8 (smdebug: uint8). ``create_trial(..., int8_as_uint8=True)`` mimics smdebug.
  * A raw tensor saved together with a shape record is returned (smdebug hides it).
  * int16/uint16/uint32/uint64/complex64 and empty tensors are readable.
  * Completeness is exact (all ``num_workers`` wrote the step, or training ended).
  * ``tensor_names(mode=M)`` for a mode without data, and ``tensor_names(step=s, mode=M)`` for an
    unknown mode step, return [] (smdebug raises KeyError).
  * A finished trial is final as soon as it is opened (no 1 s end-of-training delay; set
    TRIALSTAT_TRAINING_END_DELAY_REFRESH=<seconds> to wait and refresh once more, as smdebug does).
  * ``wait_for_steps`` leaves automatic refresh as it found it (smdebug turns it off).
  * Every wait is bounded on request (``wait_timeout=``, ``timeout=``, TRIALSTAT_WAIT_TIMEOUT)
    and logs what it waits for while it waits (smdebug waits silently, without a bound).
"""
import bisect
import copy
import json
import logging
import os
import re
import time

import numpy as np

from . import _core
from ._refresh import no_refresh, refresh
from ._steps import StepState, step_selection
from .exceptions import (MissingCollectionFiles, NoMoreData, StepUnavailable, TensorUnavailable,
                         SMDebugNotImplementedError, SMDebugTypeError, SMDebugValueError,
                         WaitTimeout, from_core_error)
from .modes import GLOBAL, ModeKeys, to_mode
from .tensor import Tensor
from .visual import to_tensorboard

__all__ = ["Trial", "LocalTrial", "create_trial", "StepState", "Collection", "no_refresh",
           "refresh"]

_POLL_SECONDS = float(os.environ.get("TRIALSTAT_POLL_SECONDS", "2"))
# Seconds between "still waiting" messages of a wait (the first comes when the wait starts).
_WAIT_MESSAGE_SECONDS = float(os.environ.get("TRIALSTAT_WAIT_MESSAGE_SECONDS", "60"))

logger = logging.getLogger("trialstat")

_LOG_HIST_COLUMNS = ["log_hist_nan", "log_hist_pos_inf", "log_hist_neg_inf", "log_hist_below",
                     "log_hist_above"]

_STAT_COLUMNS = ["numel", "nan_count", "pos_inf_count", "neg_inf_count", "zero_count", "min",
                 "max", "mean", "variance", "std", "sum", "l1", "l2", "linf", "mean_abs"]


class Collection:
    """smdebug.core.collection.Collection, analysis side: ``name``, ``include_regex`` (list),
    ``tensor_names`` (a set), ``reduction_config`` and ``save_config`` (the collections file's
    JSON objects as dicts, or None), ``save_histogram``; ``include()``, ``add_tensor_name()``,
    ``remove_tensor_name()``, ``has_tensor_name()``, ``to_json_dict()``, ``to_json()``,
    ``from_dict()``, ``from_json()``. A trial keeps its Collection objects for its lifetime, so
    edits persist across refreshes and are what ``tensor_names(collection=...)``, ``stats`` and
    ``for_each_step`` select by (built-in native rules read the collections file itself)."""

    def __init__(self, name, include_regex=None, tensor_names=None, reduction_config=None,
                 save_config=None, save_histogram=True):
        self.name = name
        self.include_regex = list(include_regex) if include_regex is not None else []
        self.reduction_config = reduction_config
        self.save_config = save_config
        self.save_histogram = save_histogram
        self.tensor_names = tensor_names

    @property
    def tensor_names(self):
        return self._tensor_names

    @tensor_names.setter
    def tensor_names(self, tensor_names):
        if tensor_names is None:
            tensor_names = set()
        elif isinstance(tensor_names, (list, tuple)):
            tensor_names = set(tensor_names)
        elif not isinstance(tensor_names, set):
            raise SMDebugTypeError("tensor_names can only be list or set")
        self._tensor_names = tensor_names

    # Fields of the collections file trialstat's catalog reads, for older callers.
    @property
    def save_raw_tensor(self):
        return (self.reduction_config or {}).get("save_raw_tensor", True)

    @property
    def save_shape(self):
        return (self.reduction_config or {}).get("save_shape", False)

    @property
    def reductions(self):
        return (self.reduction_config or {}).get("reductions", "")

    @property
    def include_regex_patterns(self):
        return [re.compile(r) for r in self.include_regex]

    def include(self, t):
        if isinstance(t, list):
            for i in t:
                self.include(i)
        elif isinstance(t, str):
            self.include_regex.append(t)
        else:
            raise SMDebugTypeError("Can only include str or list")

    def has_tensor_name(self, tname):
        return tname in self._tensor_names

    def add_tensor_name(self, tname):
        self._tensor_names.add(tname)

    def remove_tensor_name(self, tname):
        self._tensor_names.discard(tname)

    def to_json_dict(self):
        return {
            "name": self.name,
            "include_regex": self.include_regex,
            "tensor_names": sorted(self.tensor_names) if self.tensor_names else [],
            "reduction_config": copy.deepcopy(self.reduction_config),
            "save_config": copy.deepcopy(self.save_config),
            "save_histogram": self.save_histogram,
        }

    def to_json(self):
        return json.dumps(self.to_json_dict())

    @classmethod
    def from_dict(cls, params):
        if not isinstance(params, dict):
            raise SMDebugValueError(f"params={params} must be dict")
        return cls(params.get("name"), params.get("include_regex") or [],
                   set(params.get("tensor_names", [])), params.get("reduction_config"),
                   params.get("save_config"), params.get("save_histogram", True))

    @classmethod
    def from_json(cls, json_str):
        return cls.from_dict(json.loads(json_str))

    def __str__(self):
        return str(self.to_json_dict())

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        if isinstance(other, Collection):
            return self.to_json_dict() == other.to_json_dict()
        if not hasattr(other, "include_regex") or not hasattr(other, "tensor_names"):
            return NotImplemented
        return self.name == other.name and list(self.include_regex) == list(other.include_regex) \
            and set(self.tensor_names) == set(other.tensor_names)

    def __repr__(self):
        return f"<class Collection: name={self.name}>"


def _collection_from_core(c):
    save_config = None
    if any(m is not None for m in c["save_configs"]):
        save_config = {m.name: c["save_configs"][i] for i, m in enumerate(ModeKeys)}
    reduction_config = None
    if c["has_reduction_config"]:
        reduction_config = {"save_raw_tensor": c["save_raw_tensor"],
                            "reductions": c["reductions"], "save_shape": c["save_shape"]}
    return Collection(c["name"], c["include_regex"], c["tensor_names"], reduction_config,
                      save_config, c["save_histogram"])


class _Waiter:
    """One bounded, interruptible, talkative wait: ``tick()`` between polls logs what is awaited
    (at the start, then every TRIALSTAT_WAIT_MESSAGE_SECONDS), raises WaitTimeout past
    ``timeout`` seconds (None: no bound; Ctrl-C interrupts the sleep), and sleeps one poll."""

    def __init__(self, what, timeout, hint):
        self.what = what
        self.timeout = timeout
        self.hint = hint
        self.start = time.monotonic()
        self.next_message = self.start

    def tick(self):
        now = time.monotonic()
        waited = now - self.start
        if self.timeout is not None and waited >= self.timeout:
            raise WaitTimeout(self.what, self.timeout)
        if now >= self.next_message:
            bound = (f"gives up after {self.timeout:g} s" if self.timeout is not None
                     else "no time limit: interrupt (Ctrl-C) or pass timeout=/wait_timeout= to bound it")
            logger.warning("trialstat: waiting for %s (%.0f s so far; %s). %s", self.what, waited,
                           bound, self.hint)
            self.next_message = now + _WAIT_MESSAGE_SECONDS
        pause = _POLL_SECONDS
        if self.timeout is not None:
            pause = max(0.0, min(pause, self.timeout - waited))
        time.sleep(pause)


def _default_timeout():
    value = os.environ.get("TRIALSTAT_WAIT_TIMEOUT")
    return float(value) if value not in (None, "") else None


def _flatten(items):
    if isinstance(items, (str, bytes)) or hasattr(items, "include_regex"):  # a name or Collection
        return [items]
    out = []
    for item in items:
        out.extend(_flatten(item))
    return out


def _core_call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _core.Error as e:
        raise from_core_error(e) from None


class Trial:
    """An smdebug trial, local or ``s3://bucket/prefix``. Create it with :func:`create_trial`."""

    def __init__(self, path, name=None, range_steps=None, cache=False, check=False,
                 parallel=True, index_mode=True, int8_as_uint8=False,
                 wait_for_collections=True, wait_timeout=None, store=None, verify_device=None,
                 pinned_mb=None):
        path = path.strip()
        # s3://bucket/prefix is read where it lives (AWS settings from the environment).
        self.path = path if path.startswith("s3://") else os.path.expanduser(path)
        self.name = name if name is not None else os.path.basename(self.path.rstrip("/"))
        begin = end = None
        if range_steps is not None:
            assert len(range_steps) == 2
            begin, end = range_steps
            if begin is not None:
                assert begin >= 0, "range_steps begin must be >= 0"
            if begin is not None and end is not None:
                assert end > begin, "range_steps end must be > begin"
        self.range_steps = range_steps
        self.cache = cache
        self.check = check
        self.parallel = parallel
        self.index_mode = index_mode
        self.int8_as_uint8 = int8_as_uint8
        self.dynamic_refresh = True
        self.loaded_all_steps = False
        self.logger = logger  # smdebug's Rule and RequiredTensors log through trial.logger
        self.wait_timeout = wait_timeout if wait_timeout is not None else _default_timeout()
        self._core = _core_call(_core.Catalog.open, self.path, begin, end)
        # The statistics store (README "Statistics store"): "auto" (default: TRIALSTAT_STORE,
        # else auto), "off", or a file path.
        self.store = store if store is not None else (os.environ.get("TRIALSTAT_STORE") or "auto")
        self._core.set_store(os.fspath(self.store))
        # CUDA runs of this trial (README "GPU safety"): "off" | "first" | "sampled" (default:
        # TRIALSTAT_VERIFY_DEVICE, else sampled) and the pinned staging memory in MiB.
        try:
            self._core.set_device_options(verify_device, pinned_mb)
        except _core.Error as e:
            raise ValueError(str(e)) from None
        self._generation = 0
        self._tensors = {}
        self._value_cache = {}
        self._collections = None  # kept across refreshes: user edits persist
        self._collections_from_file = False
        self._reset_caches()
        if wait_for_collections:
            self._wait_for_collections()
        self._note_end_of_training()

    # ---- loading and refresh (TRIAL_API §2) -----------------------------------------------
    def _reset_caches(self):
        self._generation += 1
        self._step_table = None
        self._mode_to_global = None
        self._steps_cache = {}
        self._names_cache = {}

    def _wait_for_collections(self):
        """smdebug waits for a collections *file* (one that lists no collections will do)."""
        waiter = None
        while not self._core.has_collections_file():
            if self._core.training_ended():
                raise MissingCollectionFiles()
            if waiter is None:
                waiter = _Waiter(f"a collections file in {os.path.join(self.path, 'collections')}",
                                 self.wait_timeout, "The training job has not written one yet "
                                 "(or the trial path is wrong).")
            waiter.tick()
            self._refresh_now()

    def _note_end_of_training(self):
        if self.loaded_all_steps or not self._core.training_ended():
            return
        delay = float(os.environ.get("TRIALSTAT_TRAINING_END_DELAY_REFRESH", "0"))
        if delay > 0:
            time.sleep(delay)
            if _core_call(self._core.refresh):
                self._reset_caches()
        self.loaded_all_steps = True

    def _refresh_now(self):
        if self.loaded_all_steps:
            return
        if _core_call(self._core.refresh):
            self._reset_caches()
        self._note_end_of_training()

    def refresh(self):
        """Load index/event files written since the last look (live trials)."""
        self._refresh_now()

    def maybe_refresh(self, name=None):
        if self.dynamic_refresh and not self.loaded_all_steps:
            self._refresh_now()

    @property
    def last_complete_step(self):
        return self._core.last_complete_step()

    @property
    def num_workers(self):
        return self._core.num_workers()

    def has_training_ended(self):
        return self._core.training_ended()

    # ---- steps and modes ------------------------------------------------------------------
    def _table(self):
        if self._step_table is None:
            table = {}
            mode_to_global = {}
            for step, mode, mode_step, _ in self._core.step_table():
                m = ModeKeys(mode)
                table[step] = (m, mode_step)
                mode_to_global.setdefault(m, {})[mode_step] = step
            self._step_table = table
            self._mode_to_global = mode_to_global
        return self._step_table

    def steps(self, mode=GLOBAL, show_incomplete_steps=False):
        """Sorted saved steps (mode steps for a mode other than GLOBAL); complete ones only
        unless ``show_incomplete_steps``."""
        self.maybe_refresh()
        return list(self._steps(to_mode(mode), show_incomplete_steps))

    def _steps(self, mode, incomplete):
        key = (mode, bool(incomplete))
        if key not in self._steps_cache:
            self._steps_cache[key] = self._core.steps(mode.value, bool(incomplete))
        return self._steps_cache[key]

    def workers(self):
        self.maybe_refresh()
        return sorted(self._core.workers())

    def modes(self):
        """Modes other than GLOBAL seen so far."""
        return [ModeKeys(m) for m in self._core.modes() if m != GLOBAL.value]

    def mode_modestep(self, global_step):
        entry = self._table().get(global_step)
        if entry is None:
            self.maybe_refresh()
            entry = self._table().get(global_step)
        return entry if entry is not None else (None, None)

    def mode(self, global_step):
        return self.mode_modestep(global_step)[0]

    def mode_step(self, global_step):
        return self.mode_modestep(global_step)[1]

    def global_step(self, mode, mode_step):
        mode = to_mode(mode)
        if mode == GLOBAL:
            return mode_step
        self._table()
        step = self._mode_to_global.get(mode, {}).get(mode_step)
        if step is None:
            self.maybe_refresh()
            self._table()
            step = self._mode_to_global.get(mode, {}).get(mode_step)
        return step

    # ---- completeness and waiting (TRIAL_API §3-§4) ---------------------------------------
    def _global_of(self, step, mode):
        return step if mode == GLOBAL else self._mode_to_global_lookup(mode, step)

    def _mode_to_global_lookup(self, mode, mode_step):
        self._table()
        return self._mode_to_global.get(mode, {}).get(mode_step)

    def _step_state(self, step, mode):
        saved = self._steps(mode, True)
        i = bisect.bisect_left(saved, step)
        if i < len(saved) and saved[i] == step:
            g = self._global_of(step, mode)
            complete = self.loaded_all_steps or self._core.is_complete(g)
            return StepState.AVAILABLE if complete else StepState.NOT_YET_AVAILABLE
        if i < len(saved):
            g = self._global_of(saved[i], mode)
            complete = self.loaded_all_steps or self._core.is_complete(g)
            return StepState.UNAVAILABLE if complete else StepState.NOT_YET_AVAILABLE
        return StepState.UNAVAILABLE if self.loaded_all_steps else StepState.NOT_YET_AVAILABLE

    def has_passed_step(self, step, mode=GLOBAL):
        """AVAILABLE, UNAVAILABLE (skipped / never saved) or NOT_YET_AVAILABLE (TRIAL_API §4,
        with exact completeness)."""
        self.maybe_refresh()
        return self._step_state(step, to_mode(mode))

    def wait_for_steps(self, required_steps, mode=GLOBAL, timeout=None):
        """Block until every step is available. Raises StepUnavailable for a step that was
        skipped, NoMoreData for a step beyond the last one of a finished training, WaitTimeout
        after ``timeout`` seconds (default: the trial's ``wait_timeout``; None waits without a
        bound, logging what it waits for; Ctrl-C interrupts it)."""
        mode = to_mode(mode)
        timeout = timeout if timeout is not None else self.wait_timeout
        waiter = None
        for step in required_steps:
            while True:
                self._refresh_now()
                state = self._step_state(step, mode)
                if state == StepState.AVAILABLE:
                    break
                if state == StepState.UNAVAILABLE:
                    if not self.loaded_all_steps:
                        raise StepUnavailable(step, mode)
                    saved = self._steps(mode, True)
                    last_step = saved[-1] if saved else -1
                    if step < last_step:
                        raise StepUnavailable(step, mode)
                    raise NoMoreData(step, mode, last_step)
                if waiter is None:
                    waiter = _Waiter(f"step {step} of mode {mode.name} of trial {self.name!r}",
                                     timeout, "The training job has not completed it yet.")
                else:
                    waiter.what = f"step {step} of mode {mode.name} of trial {self.name!r}"
                waiter.tick()

    # ---- names and collections (TRIAL_API §9) ---------------------------------------------
    def collections(self):
        """{name: Collection} from the collections file; the same objects for the trial's
        lifetime, so that edits (``include``, ``add_tensor_name``, ...) persist."""
        if self._collections is None or not self._collections_from_file:
            found = self._core.has_collections_file()
            cols = {} if self._collections is None else self._collections
            for c in (self._core.collections() if found else []):
                cols.setdefault(c["name"], _collection_from_core(c))
            self._collections = cols
            self._collections_from_file = found
        return self._collections

    def collection(self, name):
        """The named Collection; one not in the file is created empty (as smdebug)."""
        cols = self.collections()
        if name not in cols:
            cols[name] = Collection(name)
        return cols[name]

    def _as_collection(self, collection):
        """A name or a Collection object -> the trial's Collection of that name (as smdebug
        looks it up); an object the trial does not hold stands for itself (smdebug: [])."""
        if isinstance(collection, str):
            return self.collection(collection)
        if hasattr(collection, "include_regex") and hasattr(collection, "tensor_names"):
            return self.collections().get(collection.name, collection)
        raise TypeError(f"Invalid argument type for collection {collection.__class__}")

    def _names_base(self, step, mode):
        if step is None:
            key = ("mode", mode)
            if key not in self._names_cache:
                self._names_cache[key] = set(self._core.tensor_names_in_mode(mode.value))
            return self._names_cache[key]
        g = self._global_of(step, mode)
        if g is None:
            return set()
        return set(self._core.tensor_names_at(g))

    def tensor_names(self, show_prefixed_tensors=False, *, step=None, mode=GLOBAL, regex=None,
                     collection=None):
        """Sorted tensor names: all, those of a mode, or those at a step; filtered by ``regex``
        (str or list, Python re.search) or ``collection`` (name or Collection)."""
        self.maybe_refresh()
        mode = to_mode(mode)
        names = self._names_base(step, mode)
        if regex is not None and collection is not None:
            raise ValueError("Only one of `regex` or `collection` can be passed to this method")
        if regex is not None:
            patterns = [re.compile(r) for r in _flatten(regex)]
            names = {n for n in names if any(p.search(n) for p in patterns)}
        elif collection is not None:
            names = self._in_collection(self._as_collection(collection), names)
        return sorted(names)

    @staticmethod
    def _in_collection(c, names):
        """The names among ``names`` that belong to collection ``c`` (listed or re.search)."""
        patterns = [re.compile(r) for r in c.include_regex]
        listed = set(c.tensor_names)
        return {n for n in names if n in listed or any(p.search(n) for p in patterns)}

    def has_tensor(self, tname):
        if self._core.find_tensor(tname) is None:
            self.maybe_refresh()
        return self._core.find_tensor(tname) is not None

    def tensor(self, tname):
        if not self.has_tensor(tname):
            raise TensorUnavailable(tname)
        t = self._tensors.get(tname)
        if t is None:
            t = self._tensors[tname] = Tensor(tname, self)
        return t

    # ---- batched statistics ---------------------------------------------------------------
    def _select_ids(self, collection, regex):
        """Tensor ids (by name) in any of the collections (this trial's Collection objects,
        edits included) or matching any regex (the native PCRE2 matcher)."""
        collections = [] if collection is None else _flatten(collection)
        regexes = [] if regex is None else _flatten(regex)
        all_names = self._core.tensor_names()
        if not collections and not regexes:
            return [self._core.find_tensor(n) for n in sorted(all_names)]
        ids = set(_core_call(self._core.select, [], regexes)) if regexes else set()
        for c in collections:
            ids.update(self._core.find_tensor(n)
                       for n in self._in_collection(self._as_collection(c), all_names))
        return sorted(ids, key=lambda i: all_names[i])

    def _default_ratio_ids(self, ids):
        """Tensors of the ``weights`` and ``biases`` collections among ``ids``."""
        names = self._core.tensor_names()
        members = set()
        for c in ("weights", "biases"):
            if c in self.collections():
                members |= self._in_collection(self.collections()[c], [names[i] for i in ids])
        return [i for i in ids if names[i] in members]

    def store_summary(self):
        """What the statistics store did for this trial so far: a dict with ``path``, ``served``
        (records read from the store), ``read`` (records read from the event files),
        ``written`` (rows written) and ``bytes_read`` (event-file bytes); None with
        ``store="off"``."""
        return self._core.store_summary()

    def to_tensorboard(self, logdir, collection=None, regex=None, steps=None, overwrite=False,
                       device="auto"):
        """TensorBoard event files of this trial's statistics (trialstat.visual.to_tensorboard,
        the engine of ``trialstat tensorboard``)."""
        return to_tensorboard(self, logdir, collection, regex, steps, overwrite, device)

    def stats(self, collection=None, regex=None, steps=None, mode=None, device="auto",
              update_ratio=None, histogram_bins=0, saved_reductions=True, as_frame=None,
              log_histogram=False):
        """Statistics of every (tensor, step, worker) in one pass over the event files.

        Selection: ``collection`` (name(s)) ∪ ``regex`` (pattern(s), re.search); neither = all.
        ``steps``: global steps — None (all), an int, ``(begin, end)`` (half-open, either None),
        a ``range`` or an iterable of steps. ``mode`` keeps rows of that mode only.
        ``update_ratio``: None → for tensors of the ``weights``/``biases`` collections, True →
        every selected tensor, False → none; the ratio ‖W_s − W_prev‖₂ / (‖W_prev‖₂ + 1e-9) is
        against the tensor's previous saved step (same worker), column ``prev_step``.
        ``histogram_bins`` > 0 adds ``hist_counts`` [rows, bins], ``hist_lo``, ``hist_hi``.
        ``log_histogram=True`` adds the fixed log-scale histogram, the same 1548 bins for every
        tensor and step (edges: :func:`trialstat.log_histogram_edges`, 1549 float64;
        ``numpy.histogram(x.astype(float64), bins=edges)`` semantics: bin i = [edge[i],
        edge[i+1]), the last bin closed, 0 and −0.0 in bin 774): ``log_hist_counts`` (int64
        [rows, 1548]; zeros without a raw value) and ``log_hist_nan``, ``log_hist_pos_inf``,
        ``log_hist_neg_inf``, ``log_hist_below``, ``log_hist_above`` (int64 [rows]; finite values
        below edge[0] / above edge[1548] ≈ ∓9.92e19; −1 without a raw value). With a raw value,
        ``log_hist_counts.sum(1)`` + the five counts == ``numel``. Same counts as
        ``trialstat stats --log-hist`` (JSON ``log_hist``).
        ``device``: "auto", "cpu" or "cuda".

        Columns: tensor, step, mode, mode_step, worker, dtype, has_raw, numel, nan_count,
        pos_inf_count, neg_inf_count, zero_count (−1 without a raw value), min, max, mean,
        variance, std, sum, l1, l2, linf, mean_abs (float64 over the finite values; NaN where
        undefined), [update_ratio, prev_step], [reduction_<name> / reduction_abs_<name>: saved
        smdebug reductions], [error: why a record could not be read], [hist_lo, hist_hi,
        hist_counts], [log_hist_nan, log_hist_pos_inf, log_hist_neg_inf, log_hist_below,
        log_hist_above, log_hist_counts]. In a DataFrame, ``hist_counts`` and
        ``log_hist_counts`` are object columns holding one int64 array per row.
        Returns a pandas DataFrame when pandas is importable (``as_frame=None``) or asked for
        (``as_frame=True``), else a dict of numpy arrays (``as_frame=False``). Afterwards
        ``trial.last_stats_counters`` holds the run's counters: ``steps``, ``records``,
        ``failed_records``, ``bytes_read``, ``tensor_bytes``, ``verified_steps`` (checked against
        the CPU twin, CUDA runs) and ``device_fallback`` (None, or why a CUDA run finished on the
        CPU; ``create_trial(verify_device=...)``).
        """
        self.maybe_refresh()
        ids = self._select_ids(collection, regex)
        begin, end, keep = step_selection(steps)
        if update_ratio is None:
            ratio_ids = self._default_ratio_ids(ids)
        elif update_ratio:
            ratio_ids = list(ids)
        else:
            ratio_ids = []
        ratio_set = set(ratio_ids)
        plain_ids = [i for i in ids if i not in ratio_set]
        raw = _core_call(self._core.statistics, plain_ids, ratio_ids, begin, end, device,
                         int(histogram_bins), bool(saved_reductions),
                         log_histogram=bool(log_histogram))
        self.last_stats_counters = raw.pop("counters")
        return self._columns(raw, keep, mode, as_frame, want_ratio=bool(ratio_ids))

    def _columns(self, raw, keep=None, mode=None, as_frame=None, want_ratio=False):
        errors = raw.pop("errors")
        tensor_names = np.asarray(self._core.tensor_names(), dtype=object)
        worker_names = np.asarray(self._core.workers(), dtype=object)
        n = len(raw["step"])
        mask = None
        if keep is not None:
            mask = np.isin(raw["step"], np.asarray(sorted(keep), dtype=np.int64))
        if mode is not None:
            m = raw["mode"] == to_mode(mode).value
            mask = m if mask is None else (mask & m)
        error_col = None
        if errors:
            error_col = np.full(n, None, dtype=object)
            for row, message in errors:
                error_col[row] = message
        if want_ratio and "update_ratio" not in raw:
            raw["update_ratio"] = np.full(n, np.nan)
            raw["prev_step"] = np.full(n, -1, dtype=np.int64)
        if mask is not None:
            raw = {k: (v[mask] if isinstance(v, np.ndarray) else v) for k, v in raw.items()}
            if error_col is not None:
                error_col = error_col[mask]
        mode_names = np.asarray(["", "TRAIN", "EVAL", "PREDICT", "GLOBAL"], dtype=object)
        dtype_ids = raw.pop("dtype_id")
        # The dtype ids present (bincount, not np.unique: in numpy 2 that imports numpy.ma,
        # ~7 ms of a stats() call on a small trial).
        present = np.flatnonzero(np.bincount(dtype_ids)) if len(dtype_ids) else []
        dtype_names = {int(u): _core.dtype_name(int(u)) for u in present}
        tensor_ids = raw.pop("tensor_id")
        worker_ids = raw.pop("worker_id")
        mode_ids = raw.pop("mode")
        use_pandas = as_frame
        pd = None
        if as_frame is None or as_frame:
            try:
                import pandas as pd  # noqa: F811
                use_pandas = True
            except ImportError:
                if as_frame:
                    raise
                use_pandas = False
        out = {}
        if use_pandas:
            out["tensor"] = pd.Categorical.from_codes(tensor_ids.astype(np.int64), tensor_names)
            out["step"] = raw.pop("step")
            out["mode"] = pd.Categorical.from_codes(mode_ids.astype(np.int64), mode_names)
            out["mode_step"] = raw.pop("mode_step")
            out["worker"] = pd.Categorical.from_codes(worker_ids.astype(np.int64), worker_names)
        else:
            out["tensor"] = tensor_names[tensor_ids] if len(tensor_names) else tensor_ids.astype(object)
            out["step"] = raw.pop("step")
            out["mode"] = mode_names[mode_ids]
            out["mode_step"] = raw.pop("mode_step")
            out["worker"] = worker_names[worker_ids] if len(worker_names) else worker_ids.astype(object)
        dtype_col = np.empty(len(dtype_ids), dtype=object)
        for u, name in dtype_names.items():
            dtype_col[dtype_ids == u] = name
        out["dtype"] = dtype_col
        out["has_raw"] = raw.pop("has_raw").astype(bool)
        for key in _STAT_COLUMNS:
            out[key] = raw.pop(key)
        for key in ("update_ratio", "prev_step"):
            if key in raw:
                out[key] = raw.pop(key)
        hist = {k: raw.pop(k) for k in ("hist_counts", "hist_lo", "hist_hi") if k in raw}
        log_hist = {k: raw.pop(k) for k in _LOG_HIST_COLUMNS + ["log_hist_counts"] if k in raw}
        out.update(raw)  # saved reductions
        if error_col is not None:
            out["error"] = error_col
        if use_pandas:
            frame = pd.DataFrame(out, copy=False)
            if hist:
                frame["hist_lo"] = hist["hist_lo"]
                frame["hist_hi"] = hist["hist_hi"]
                frame["hist_counts"] = list(hist["hist_counts"])
            if log_hist:
                for key in _LOG_HIST_COLUMNS:
                    frame[key] = log_hist[key]
                frame["log_hist_counts"] = list(log_hist["log_hist_counts"])
            return frame
        out.update(hist)
        out.update(log_hist)
        return out

    def for_each_step(self, callback, collection=None, regex=None, steps=None, device="auto",
                      update_ratio=None, histogram_bins=0, saved_reductions=True,
                      log_histogram=False):
        """Stream statistics: ``callback(step, mode, mode_step, columns)`` once per saved global
        step in increasing order, ``columns`` as :meth:`stats` with ``as_frame=False`` (the
        keywords as there, ``log_histogram=True`` included)."""
        ids = self._select_ids(collection, regex)
        begin, end, keep = step_selection(steps)
        if update_ratio is None:
            ratio_ids = self._default_ratio_ids(ids)
        elif update_ratio:
            ratio_ids = list(ids)
        else:
            ratio_ids = []
        ratio_set = set(ratio_ids)
        plain_ids = [i for i in ids if i not in ratio_set]

        def on_step(step, mode, mode_step, raw):
            if keep is not None and step not in keep:
                return
            callback(step, ModeKeys(mode), mode_step, self._columns(raw, as_frame=False,
                                                                    want_ratio=bool(ratio_ids)))

        _core_call(self._core.for_each_step, plain_ids, ratio_ids, begin, end, device,
                   int(histogram_bins), bool(saved_reductions), on_step,
                   log_histogram=bool(log_histogram))

    def __repr__(self):
        return (f"<trialstat.Trial {self.name!r}: path={self.path!r}, workers={self.num_workers}, "
                f"steps={len(self._steps(GLOBAL, True))}, tensors={len(self._core.tensor_names())}>")


class LocalTrial(Trial):
    """A trial in a local folder, with smdebug's signature: ``LocalTrial(name, dirname,
    range_steps=None, parallel=True, check=False, index_mode=True, cache=False)`` (trialstat's
    keywords of :func:`create_trial` are accepted too)."""

    def __init__(self, name, dirname, range_steps=None, parallel=True, check=False,
                 index_mode=True, cache=False, **kwargs):
        super().__init__(dirname, name=name, range_steps=range_steps, parallel=parallel,
                         check=check, index_mode=index_mode, cache=cache, **kwargs)


def create_trial(path, name=None, profiler=False, output_dir=None, **kwargs):
    """Open a trial (a local folder or ``s3://bucket/prefix``), as ``smdebug.trials.create_trial``.
    S3 settings come from the standard AWS environment (credentials, ``AWS_REGION``,
    ``AWS_ENDPOINT_URL_S3``...) and ``TRIALSTAT_S3_*`` (README "S3 trials"). Keyword arguments:
    ``range_steps=(begin, end)``, ``cache``, ``check``, ``parallel``, ``index_mode`` (smdebug's),
    ``int8_as_uint8`` (read int8 as smdebug does), ``wait_for_collections`` (default True: wait
    until a collections file exists, as smdebug; one that lists no collections will do),
    ``store`` (the statistics store: ``"auto"``, the default — a SQLite file under
    ``$XDG_CACHE_HOME/trialstat/`` keyed by the trial's location —, ``"off"``, or a file path;
    statistics, rules, reports and TensorBoard exports then read what it holds instead of the
    event files, README "Statistics store"),
    ``verify_device`` (``"off"``, ``"first"`` or ``"sampled"``: how CUDA runs of this trial check
    their results against the CPU twin, README "GPU safety"; default TRIALSTAT_VERIFY_DEVICE,
    else ``"sampled"``), ``pinned_mb`` (pinned host staging memory of CUDA runs in MiB, default
    256; the CPU backend ignores both; ValueError for another value),
    ``wait_timeout`` (seconds: bound every wait of this trial, raising WaitTimeout; default
    TRIALSTAT_WAIT_TIMEOUT or no bound — waits log what they wait for and Ctrl-C stops them).
    A local path gives a :class:`LocalTrial`."""
    if profiler:
        raise SMDebugNotImplementedError("profiler trials are not supported by trialstat")
    if isinstance(path, str) and not path.strip().startswith("s3://"):
        return LocalTrial(name, path, **kwargs)
    return Trial(path, name=name, **kwargs)
