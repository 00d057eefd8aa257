# SPDX-License-Identifier: Apache-2.0
"""``trialstat.torch.Hook``: smdebug 1.0.34's PyTorch hook API (spec/HOOK_API.md §2–§9) on
PyTorch 2.x, writing through trialstat's C++ trial writer on a background thread.

What a training script sees is smdebug's hook: the same constructor, methods, collections, tensor
names, global and mode steps, workers and files (HOOK_API §11). What differs is what smdebug
cannot do (HOOK_API §10, "Deviations"), each documented at its option below and in README.md:

* every dtype a model has is saved from its own bytes (bfloat16 as DT_BFLOAT16), no numpy
  round trip, so bf16 models and numpy >= 2.3 work (D1, D3);
* the training thread only enqueues: a CPU tensor is copied once into the writer's bounded queue,
  a CUDA tensor crosses to pinned memory on a side stream (``capture.HostCopier``) — no
  synchronisation of the training stream; reductions are computed on the tensor's device;
* ``gradients="optimizer"`` (default): ``gradient/*`` is the gradient the optimizer applies —
  after DDP's averaging (and after a GradScaler's unscale) — taken when the optimizer steps
  (D4); ``gradients="local"`` keeps smdebug's per-backward local gradients;
* a compiled module is named like the eager one and capturing weights, gradients and losses adds
  no graph break (D5, D6);
* a failure to capture or write never stops training and is never silent: it is logged at ERROR,
  counted (``capture_errors``, ``capture_counters()``) and summarised at ``close()`` (D7);
  ``raise_errors=True`` makes it raise instead. Configuration errors raise as in smdebug;
* the worker name is taken at the first write, not at construction (D8).
"""
import atexit
import logging
import os
import socket
import time
import weakref
from collections import defaultdict

import numpy as np
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from ..exceptions import (InvalidCollectionConfiguration, SMDebugError, SMDebugRuntimeError,
                          SMDebugTypeError, SMDebugValueError)
from ..modes import ModeKeys, to_mode
from . import singleton
from .capture import HostCopier, compute_reductions, reduction_tag, tf_dtype_of
from .collection import (DEFAULT_PYTORCH_COLLECTIONS, NON_HISTOGRAM_COLLECTIONS,
                         NON_REDUCTION_COLLECTIONS, SCALAR_COLLECTIONS, TRAIN_ONLY_COLLECTIONS,
                         Collection, CollectionKeys, CollectionManager)
from .reduction_config import ReductionConfig
from .save_config import SaveConfig

__all__ = ["Hook", "CaptureError"]

logger = logging.getLogger("trialstat.torch")

END_OF_JOB_FILENAME = "training_job_end.ts"
CLAIM_FILENAME = "claim.smd"
CHIEF_WORKER = "worker_0"
_GRADIENT_MODES = ("optimizer", "local")
_SCALAR_STEPS = ("flush", "call")
_MAX_KEPT_ERRORS = 100


class CaptureError(SMDebugRuntimeError):
    """A tensor could not be captured or written (raised only with ``raise_errors=True``)."""


def _optimized_module_class():
    try:
        from torch._dynamo.eval_frame import OptimizedModule
        return OptimizedModule
    except Exception:  # pragma: no cover - torch without dynamo
        return None


def _flatten(items):
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


class Hook:
    """Saves tensors of a PyTorch training job into a trial (spec/FORMAT.md).

    smdebug's parameters (HOOK_API §2.1): ``out_dir`` (required; local path, ``~`` expanded;
    ``s3://`` is refused — write locally and upload), ``export_tensorboard``,
    ``tensorboard_dir``, ``dry_run``, ``reduction_config``, ``save_config``, ``include_regex``,
    ``include_collections``, ``save_all``, ``include_workers`` ("one" | "all").

    trialstat's keyword-only options (defaults keep smdebug's files):

    * ``gradients``: "optimizer" (default) saves ``gradient/<param>`` as the optimizer applies it,
      read from ``.grad`` when any ``torch.optim`` optimizer steps (a global step pre-hook), in
      the order the gradients became ready — under DDP that is the averaged gradient; with
      gradient accumulation, the accumulated one. A step that ends without an optimizer step
      saves ``.grad`` at its end. "local": smdebug's tensor hooks, each backward's own gradient
      (before DDP's allreduce).
    * ``widen_bfloat16``: write bfloat16 tensors as float32 (exact) so that smdebug's reader,
      which cannot decode DT_BFLOAT16, opens the trial. Default False: bf16 bit for bit.
    * ``keep_wrapper_names``: name a registered ``torch.compile`` module as smdebug does
      (``OptimizedModule__orig_mod.fc1.weight``). Default False: the eager module's names.
    * ``queue_bytes`` (default 256 MiB): bytes of tensors queued for the writer thread; when full,
      the training thread waits (nothing lost) unless ``drop_when_full`` — then the tensor is
      dropped, counted and reported.
    * ``raise_errors``: raise ``CaptureError`` on a capture or write failure instead of logging it.
    * ``scalar_step``: "flush" (smdebug: ``save_scalar`` values are written into the next saved
      step's file with the mode and mode step current at that time) or "call" (into the file of
      the step in which ``save_scalar`` was called, with that call's mode and mode step).
    * ``rewrite_collections``: also rewrite the collections file at ``close()`` so that tensor
      names first seen after it was written are listed (smdebug writes it once).

    Raises RuntimeError without ``out_dir``; SMDebugRuntimeError when ``out_dir`` already holds a
    finished trial (``training_job_end.ts``); SMDebugValueError for an ``s3://`` out_dir or an
    unknown option value. Nothing is written at construction.
    """

    GRADIENT_PREFIX = "gradient/"
    SCALAR_PREFIX = "scalar/"
    INPUT_TENSOR_SUFFIX = "_input_"
    OUTPUT_TENSOR_SUFFIX = "_output_"

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *,
                 gradients="optimizer", widen_bfloat16=False, keep_wrapper_names=False,
                 queue_bytes=256 << 20, drop_when_full=False, raise_errors=False,
                 scalar_step="flush", rewrite_collections=False):
        if out_dir is None:
            raise RuntimeError("out_dir is a required argument")
        out_dir = os.fspath(out_dir)
        if out_dir.startswith("s3://"):
            raise SMDebugValueError(
                f"out_dir={out_dir}: trialstat.torch writes local trials only; write to a local "
                "folder and upload it (SageMaker uploads its LocalPath itself)")
        self.out_dir = os.path.expanduser(out_dir)
        if os.path.exists(os.path.join(self.out_dir, END_OF_JOB_FILENAME)):
            raise SMDebugRuntimeError(
                f"The path:{self.out_dir} already exists and holds a finished trial "
                f"({END_OF_JOB_FILENAME}). Please provide a directory path that does not already exist.")
        if gradients not in _GRADIENT_MODES:
            raise SMDebugValueError(f"gradients={gradients!r}: expected one of {_GRADIENT_MODES}")
        if scalar_step not in _SCALAR_STEPS:
            raise SMDebugValueError(f"scalar_step={scalar_step!r}: expected one of {_SCALAR_STEPS}")
        if int(queue_bytes) <= 0:
            raise SMDebugValueError(f"queue_bytes={queue_bytes}: must be positive")
        if tensorboard_dir is not None:
            self.tensorboard_dir = os.path.expanduser(os.fspath(tensorboard_dir))
        elif export_tensorboard:
            self.tensorboard_dir = os.path.join(self.out_dir, "tensorboard")
        else:
            self.tensorboard_dir = None
        self.dry_run = dry_run
        self.save_all_workers = include_workers == "all"
        self.gradients = gradients
        self.widen_bfloat16 = bool(widen_bfloat16)
        self.keep_wrapper_names = bool(keep_wrapper_names)
        self.queue_bytes = int(queue_bytes)
        self.drop_when_full = bool(drop_when_full)
        self.raise_errors = bool(raise_errors)
        self.scalar_step = scalar_step
        self.rewrite_collections = bool(rewrite_collections)

        default_include = [CollectionKeys.LOSSES]
        include_collections = (default_include if include_collections is None
                               else _flatten(list(include_collections)))
        self.include_collections = list(set(include_collections) | set(default_include))
        self.save_all = save_all
        self.save_config = SaveConfig.parse(save_config)
        self.reduction_config = (ReductionConfig(save_raw_tensor=True) if reduction_config is None
                                 else reduction_config)
        self.include_regex = include_regex
        self.collection_manager = CollectionManager()
        if include_regex is not None:
            self.collection_manager.get(CollectionKeys.DEFAULT).include(include_regex)
            if CollectionKeys.DEFAULT not in self.include_collections:
                self.include_collections.append(CollectionKeys.DEFAULT)
        if save_all:
            self.collection_manager.get(CollectionKeys.ALL).include(".*")
            if CollectionKeys.ALL not in self.include_collections:
                self.include_collections.append(CollectionKeys.ALL)

        # Counters (HOOK_API §6.1).
        self.step = -1
        self.mode = ModeKeys.GLOBAL
        self.mode_steps = {ModeKeys.GLOBAL: -1}
        self.last_saved_step = None
        self.prepared_collections = False
        self.exported_collections = False
        self._saved_collections = []     # in manager order
        self._due = None                 # due collections of the current (mode, mode step)
        self._due_set = frozenset()
        self._tensor_to_collections = {}
        self._written_name_counts = defaultdict(int)
        self.custom_tensors_to_save = {}
        self.scalar_cache = []

        # Modules.
        self._module_names = {}          # module -> name used in tensor names
        self._top_names = {}             # registered top module -> T
        self._naming_roots = {}          # registered top module -> module whose params are logged
        self._hooked_modules = []        # modules with the forward hook (_mark_compiled_activations)
        self.has_registered_module = False
        self.has_registered_loss_module = False
        self._pending_gradients = {}     # name -> parameter (gradients="optimizer")
        self._optimizer_hook = None

        # Writing.
        self.worker = None               # resolved at the first write (D8)
        self.first_process = None
        self._writer = None
        self._copier = None
        self._writer_failed = False
        self._claimed = False
        self._step_active = False        # smdebug: "a writer is open" for the current step
        self._step_begun = False         # begin_step sent for the current step
        self._record_key = None          # (mode, mode step) of the records being written
        self._errors = []
        self._error_count = 0
        self._final_counters = {}        # the writer's counters at close (capture_counters)
        self._raise_deferred = None      # raise_errors inside close(): raised once it finished
        self._warned = set()
        self._needs_close = False

        singleton.set_hook(self)
        atexit.register(self._close_at_exit)

    # ----------------------------------------------------------------------------------------
    # Construction from SageMaker's JSON hook config, repr
    # ----------------------------------------------------------------------------------------
    @classmethod
    def create_from_json_file(cls, json_file_path=None):
        """A hook from SageMaker's JSON hook config (HOOK_API §2.2): the path given, else env
        ``SMDEBUG_CONFIG_FILE_PATH``, else ``/opt/ml/input/config/debughookconfig.json``.
        Raises FileNotFoundError when the file is missing, SMDebugValueError for bad values."""
        from .json_config import create_hook_from_json_config
        return create_hook_from_json_config(cls, json_file_path)

    def __repr__(self):
        return (f"<{self.__class__.__module__}.{self.__class__.__name__} object at {hex(id(self))}>:(\n"
                f"    out_dir={self.out_dir},\n    tensorboard_dir={self.tensorboard_dir},\n"
                f"    step={self.step},\n    mode={self.mode},\n    mode_steps={self.mode_steps},\n"
                f"    include_collections={self.include_collections},\n"
                f"    save_config={str(self.save_config)[:200]} ...>,\n"
                f"    reduction_config={self.reduction_config},\n    save_all={self.save_all},\n"
                f"    dry_run={self.dry_run},\n)")

    # ----------------------------------------------------------------------------------------
    # Collections (HOOK_API §3)
    # ----------------------------------------------------------------------------------------
    def get_collection(self, name, create=True):
        """The collection ``name`` (created when missing unless ``create=False``)."""
        return self.collection_manager.get(name, create=create)

    def get_collections(self):
        """All collections by name."""
        return self.collection_manager.get_collections()

    def add_collection(self, collection):
        """Add or replace a ``trialstat.torch.Collection`` (SMDebugTypeError otherwise)."""
        if not isinstance(collection, Collection):
            raise SMDebugTypeError(
                f"collection must be an instance of Collection class. value of type "
                f"{collection.__class__} is not supported")
        self.collection_manager.add(collection)

    def add_to_collection(self, collection_name, item):
        """Put tensors in a collection: a tensor name (str) or a list of names joins its
        ``tensor_names``; a registered ``nn.Module`` saves its outputs there
        (``add_module_tensors``). Creates the collection when missing."""
        coll = self.collection_manager.get(collection_name)
        if isinstance(item, torch.nn.Module):
            coll.add_module_tensors(item, inputs=False, outputs=True)
        elif isinstance(item, str):
            coll.add_tensor_name(item)
        elif isinstance(item, (list, tuple, set)):
            for name in item:
                self.add_to_collection(collection_name, name)
        else:
            raise SMDebugTypeError(f"add_to_collection: expected a tensor name or a module, got {type(item)}")

    def has_default_configuration(self):
        """Whether only the ``losses`` collection is saved (smdebug's default configuration)."""
        if not self.prepared_collections:
            self._prepare_collections()
        return {c.name for c in self._saved_collections} == {CollectionKeys.LOSSES}

    def should_save_tensor_or_collection(self, tensor_name, collection_name):
        """Whether ``collection_name`` is due now and matches ``tensor_name`` (for framework
        integrations, as smdebug)."""
        if not self.prepared_collections:
            return False
        coll = self.collection_manager.get(collection_name)
        if coll in self._due_set:
            return coll.matches(tensor_name) or coll.include_regex == []
        return any(c.matches(tensor_name) for c in self._due_collections())

    def _prepare_collections(self):
        """HOOK_API §3.3: module regexes, validation, the saved set, configs for every collection."""
        for coll in self.collection_manager.get_collections().values():
            for module, (inputs, outputs) in coll.modules.items():
                name = self._module_names.get(module)
                if name is None:
                    raise SMDebugValueError(
                        f"collection {coll.name}: add_module_tensors needs a registered module "
                        f"({module.__class__.__name__} is not registered)")
                if inputs:
                    coll.include(name + self.INPUT_TENSOR_SUFFIX)
                if outputs:
                    coll.include(name + self.OUTPUT_TENSOR_SUFFIX)
        collections = self.collection_manager.get_collections()
        for name, coll in collections.items():
            if name not in DEFAULT_PYTORCH_COLLECTIONS and not coll.include_regex and not coll.tensor_names:
                raise InvalidCollectionConfiguration(name)
        save_everything = CollectionKeys.ALL in self.include_collections
        self._saved_collections = [c for n, c in collections.items()
                                   if save_everything or n in self.include_collections]
        for name, coll in collections.items():
            self._complete_collection(coll)
        self.prepared_collections = True
        logger.info("trialstat.torch: monitoring the collections: %s",
                    ", ".join(c.name for c in self._saved_collections))
        self._mark_compiled_activations()

    def _complete_collection(self, coll):
        """Give ``coll`` its save config, reduction config and histogram flag (HOOK_API §3.3)."""
        if coll.name in NON_HISTOGRAM_COLLECTIONS:
            coll.save_histogram = False
        if coll.save_config is None:
            coll.save_config = self.save_config
        else:
            coll.save_config.merge_default_save_config(self.save_config)
        if coll.name in NON_REDUCTION_COLLECTIONS:
            coll.reduction_config = ReductionConfig(save_raw_tensor=True)
        elif coll.reduction_config is None:
            coll.reduction_config = self.reduction_config

    def _due_collections(self):
        """Saved collections selected for the current (mode, mode step) (HOOK_API §4.3)."""
        if self._due is None:
            due = []
            mode_step = self.mode_steps[self.mode]
            for coll in self._saved_collections:
                if self.mode in (ModeKeys.EVAL, ModeKeys.PREDICT) and coll.name in TRAIN_ONLY_COLLECTIONS:
                    continue
                if coll.save_config.should_save_step(self.mode, mode_step):
                    due.append(coll)
            self._due = due
            self._due_set = frozenset(due)
        return self._due

    def _collections_with_tensor(self, name):
        """Saved collections ``name`` belongs to; the first time, each records the name
        (HOOK_API §3.4)."""
        colls = self._tensor_to_collections.get(name)
        if colls is None:
            colls = []
            for coll in self._saved_collections:
                if coll.has_tensor_name(name):
                    colls.append(coll)
                elif coll.matches(name):
                    coll.add_tensor_name(name)
                    colls.append(coll)
            self._tensor_to_collections[name] = colls
        return colls

    # ----------------------------------------------------------------------------------------
    # Registration (HOOK_API §6.3)
    # ----------------------------------------------------------------------------------------
    def register_hook(self, module):
        """Alias of ``register_module``."""
        self.register_module(module)

    def register_module(self, module):
        """Capture ``module``: every forward of it is a step; its parameters are saved before
        the forward, its and its submodules' inputs/outputs by forward hooks, its gradients
        during backward (``gradients``). Registering a module (or a submodule of it) twice
        raises AssertionError; a non-Module raises SMDebugError."""
        if not isinstance(module, torch.nn.Module):
            raise SMDebugError(f"Module type {module.__class__.__name__} must be type torch.nn.Module")
        optimized = _optimized_module_class()
        compiled = optimized is not None and isinstance(module, optimized)
        root = module._orig_mod if compiled and not self.keep_wrapper_names else module
        named = list(root.named_modules())
        for _, sub in named + [("", module)]:
            assert sub not in self._module_names, f"Don't register module={module} twice"
        top_name = root._get_name()
        for name, sub in named:
            self._module_names[sub] = name
        self._module_names[root] = top_name
        self._module_names[module] = top_name
        self._top_names[module] = top_name
        self._naming_roots[module] = root
        module.register_forward_pre_hook(self._compile_safe_pre_hook)
        # Of a compiled module, the eager wrapper reports the top module's outputs; its inner
        # root (the same outputs) gets no hook.
        hooked = [module] + [sub for _, sub in named if sub is not root] if compiled and not \
            self.keep_wrapper_names else [sub for _, sub in named]
        for sub in hooked:
            sub.register_forward_hook(self._compile_safe_forward_hook)
        self._hooked_modules.extend(hooked)
        for pname, param in root.named_parameters():
            if param.requires_grad:
                self._register_gradient_hook(f"{top_name}_{pname}", param)
        self.has_registered_module = True

    def register_loss(self, loss_module):
        """Capture a loss module's inputs and outputs (``<LossClass>_output_0`` joins
        ``losses``). AssertionError unless ``loss_module`` is a ``torch.nn.modules.loss._Loss``."""
        assert isinstance(loss_module, torch.nn.modules.loss._Loss), (
            f"loss_module={loss_module} must be subclass of `torch.nn.modules.loss._Loss`, "
            f"but has class hierarchy {type.mro(type(loss_module))}")
        self._module_names[loss_module] = loss_module._get_name()
        loss_module.register_forward_hook(self._forward_hook)
        self.has_registered_loss_module = True

    def _register_gradient_hook(self, name, param):
        full_name = self.GRADIENT_PREFIX + name
        hook_ref = weakref.ref(self)
        if self.gradients == "local":
            def on_gradient(grad):
                hook = hook_ref()
                if hook is not None:
                    hook._on_local_gradient(full_name, grad)
            param.register_hook(on_gradient)
            return
        param_ref = weakref.ref(param)

        def on_accumulated(_param):
            hook = hook_ref()
            if hook is not None:
                hook._on_gradient_ready(full_name, param_ref)
        param.register_post_accumulate_grad_hook(on_accumulated)
        if self._optimizer_hook is None:
            def on_optimizer_step(_optimizer, _args, _kwargs):
                hook = hook_ref()
                if hook is not None:
                    hook._on_optimizer_step()
            self._optimizer_hook = register_optimizer_step_pre_hook(on_optimizer_step)

    def _mark_compiled_activations(self):
        """Decide, per hooked module, whether its forward hook runs when Dynamo traces it (inside
        a ``torch.compile``-d module): only where a saved collection can match its input or
        output names (``<name>_input_<i>`` / ``<name>_output_<i>``, i < 4) — each such call then
        costs one graph break; the others trace to nothing. Eager calls always run the hook, as
        smdebug. Stored on the module (``_trialstat_capture``), which Dynamo guards as a constant."""
        for module in self._hooked_modules:
            name = self._module_names[module]
            candidates = [name + suffix + str(i) for suffix in (self.INPUT_TENSOR_SUFFIX, self.OUTPUT_TENSOR_SUFFIX)
                          for i in range(4)]
            wanted = any(c.matches(n) for c in self._saved_collections for n in candidates)
            object.__setattr__(module, "_trialstat_capture", wanted)

    def _compile_safe_pre_hook(self, module, inputs):
        """The step pre-hook; when Dynamo traces it (an eager module compiled after it was
        registered) it runs eagerly behind one graph break."""
        if torch.compiler.is_compiling():
            return _eager_pre_hook(self, module, inputs)
        return self._forward_pre_hook(module, inputs)

    def _compile_safe_forward_hook(self, module, inputs, outputs):
        """The forward hook; traced by Dynamo it is nothing unless the module's names can be
        saved (``_mark_compiled_activations``), then it runs eagerly behind a graph break."""
        if torch.compiler.is_compiling():
            if getattr(module, "_trialstat_capture", True):
                return _eager_forward_hook(self, module, inputs, outputs)
            return None
        return self._forward_hook(module, inputs, outputs)

    # ----------------------------------------------------------------------------------------
    # PyTorch callbacks
    # ----------------------------------------------------------------------------------------
    def _forward_pre_hook(self, module, inputs):
        with self._capturing("forward pre-hook"):
            self._poll()
            if self._step_active or (self.scalar_step == "call" and self.scalar_cache):
                self._finish_step()
            else:
                self._close_tensorboard()
            if not self.prepared_collections:
                self._prepare_collections()
            self._increment_step()
            if self._due_collections():
                self._start_step()
                root = self._naming_roots.get(module, module)
                top = self._top_names.get(module, module._get_name())
                for pname, param in root.named_parameters():
                    self._save_for_tensor(f"{top}_{pname}", param.data)
            if self.last_saved_step is not None and not self.exported_collections:
                self.export_collections()

    def _forward_hook(self, module, inputs, outputs):
        with self._capturing("forward hook"):
            if not self.prepared_collections or not self._due_collections():
                return
            name = self._module_names.get(module, module._get_name())
            self._write_tensors(name, inputs, self.INPUT_TENSOR_SUFFIX)
            self._write_tensors(name, outputs, self.OUTPUT_TENSOR_SUFFIX)
            self._save_custom_tensors_post_step()
            self.last_saved_step = self.step

    def _on_local_gradient(self, name, grad):
        with self._capturing("gradient hook"):
            if self.prepared_collections and self._due_collections() and grad is not None:
                self._save_for_tensor(name, grad)
            self._save_custom_tensors_post_step()

    def _on_gradient_ready(self, name, param_ref):
        with self._capturing("gradient hook"):
            if not (self.prepared_collections and self._due_collections()):
                self._save_custom_tensors_post_step()
                return
            # Taken when the optimizer steps, in the order gradients became ready. smdebug writes
            # pending save_tensor values right after each gradient record: keep them with it.
            custom, self.custom_tensors_to_save = self.custom_tensors_to_save, {}
            entry = self._pending_gradients.setdefault(name, (param_ref, {}))
            entry[1].update(custom)

    def _on_optimizer_step(self):
        with self._capturing("optimizer step pre-hook"):
            self._capture_pending_gradients()

    def _capture_pending_gradients(self):
        """Save ``.grad`` of every parameter whose gradient became ready in this step."""
        pending, self._pending_gradients = self._pending_gradients, {}
        if not pending:
            return
        due = self.prepared_collections and self._due_collections()
        for name, (param_ref, custom) in pending.items():
            param = param_ref()
            if due and param is not None and param.grad is not None:
                self._save_for_tensor(name, param.grad)
            self._write_custom_tensors(custom)

    def record_tensor_value(self, tensor_name, tensor_value):
        """Offer ``tensor_value`` now as ``<tensor_name>_output_<i>`` (``loss`` →
        ``loss_output_0`` joins ``losses``). AssertionError unless a ``torch.Tensor``."""
        assert isinstance(tensor_value, torch.Tensor), f"tensor_value={tensor_value} must be torch.Tensor"
        with self._capturing("record_tensor_value"):
            if self.prepared_collections and self._due_collections():
                self._write_tensors(tensor_name, tensor_value, self.OUTPUT_TENSOR_SUFFIX)

    # ----------------------------------------------------------------------------------------
    # Steps and modes (HOOK_API §6.1–§6.2)
    # ----------------------------------------------------------------------------------------
    def set_mode(self, mode):
        """Switch to ``mode`` (a ModeKeys member, trialstat's or smdebug's); the next forward of a
        top module advances its mode step. SMDebugValueError for anything else."""
        if not isinstance(getattr(mode, "name", None), str) or mode.name not in ModeKeys.__members__:
            raise SMDebugValueError(
                "Invalid mode {}. Valid modes are {}.".format(mode, ",".join(ModeKeys.__members__)))
        self.mode = to_mode(mode)
        self.mode_steps.setdefault(self.mode, -1)
        self._due = None

    def _increment_step(self):
        self.step += 1
        self.mode_steps[self.mode] += 1
        self._written_name_counts.clear()
        if self.mode != ModeKeys.GLOBAL:
            self.mode_steps[ModeKeys.GLOBAL] = self.step
        self._due = None
        self._pending_gradients = {}

    # ----------------------------------------------------------------------------------------
    # Offering tensors (HOOK_API §4.6, §5)
    # ----------------------------------------------------------------------------------------
    def _write_tensors(self, name, var, suffix):
        key = name + suffix
        self._written_name_counts[key] = self._walk(name, var, suffix, self._written_name_counts[key])

    def _walk(self, name, var, suffix, index):
        if var.__class__.__name__ == "Tensor":
            self._save_for_tensor(name + suffix + str(index), var)
            return index + 1
        if isinstance(var, (tuple, list)):
            for item in var:
                index = self._walk(name, item, suffix, index)
        return index

    def _save_for_tensor(self, name, value):
        due = self._due_set
        colls = [c for c in self._collections_with_tensor(name) if c in due]
        if colls:
            self._write_for_tensor(name, value, colls)

    def _write_for_tensor(self, name, value, colls):
        if not self._step_active:
            return
        if _is_dtensor(value):
            self._report(f"step {self.step}: {name} is a DTensor (FSDP2 / tensor parallel): "
                         "only full tensors are saved; it was skipped", once_key=("dtensor", name))
            return
        value = value.detach()
        configs = [c.reduction_config for c in colls]
        if any(rc.save_shape for rc in configs):
            self._emit_shape(name, value.shape)
        operations, seen = [], set()
        for coll in colls:
            if coll.name in SCALAR_COLLECTIONS:
                continue
            for op in coll.reduction_config.operations():
                if op not in seen:
                    seen.add(op)
                    operations.append(op)
        if operations:
            self._write_reductions(name, value, operations)
        if self.tensorboard_dir is not None:
            self._write_tensorboard_histogram(name, value, colls)
        if any(rc.save_raw_tensor for rc in configs):
            self._emit_tensor(name, value)
        if self.tensorboard_dir is not None:
            for coll in colls:
                if coll.name in SCALAR_COLLECTIONS:
                    if value.numel() == 1:
                        self._emit_tensorboard_scalar(name, value)
                    break

    def _write_reductions(self, name, value, operations):
        results = compute_reductions(value, operations)
        for op, abs_, reduced, error in results:
            if error is not None:
                self._report(f"step {self.step}: could not compute reduction {op} of {name} "
                             f"({value.dtype}): {error}", once_key=("reduction", name, op, abs_))
        done = [(reduction_tag(name, op, abs_), r) for op, abs_, r, e in results if e is None]
        if not done:
            return
        if value.device.type != "cuda":
            for tag, reduced in done:
                self._emit_tensor(tag, reduced)
            return
        # One device-to-host copy per run of same-dtype results (usually one).
        run = [done[0]]
        for item in done[1:]:
            if item[1].dtype == run[0][1].dtype:
                run.append(item)
            else:
                self._emit_stacked(run)
                run = [item]
        self._emit_stacked(run)

    def _emit_stacked(self, items):
        tags = [tag for tag, _ in items]
        stacked = torch.stack([r for _, r in items])
        stacked = self._writable(stacked)
        self._begin_record()
        wall = time.time()

        def deliver(host):
            for i, tag in enumerate(tags):  # noqa: B023 - called once, in order
                self._deliver_tensor(tag, host[i], wall)
        self._copier.tensor(deliver, stacked, ())

    def _writable(self, t):
        dtype, _ = tf_dtype_of(t.dtype, self.widen_bfloat16)
        return t if dtype == t.dtype else t.to(dtype)

    def _emit_tensor(self, name, value, stamp=(None, None)):
        """A raw record (skipped for zero elements, HOOK_API §4.6), stamped with ``stamp`` =
        (mode, mode step), the current ones by default."""
        if not self._step_active or value.numel() == 0:
            return
        value = self._writable(value.detach())
        self._begin_record(*stamp)
        self._copier.tensor("add_tensor", value, (name,), (time.time(),))

    def _deliver_tensor(self, name, host, wall):
        _, number = tf_dtype_of(host.dtype)
        self._writer.add_tensor(name, host.data_ptr(), host.numel() * host.element_size(), number,
                                list(host.shape), wall)

    def _emit_shape(self, name, shape):
        if not self._step_active:
            return
        self._begin_record()
        self._copier.command("add_shape", name, [int(d) for d in shape])

    def _write_tensorboard_histogram(self, name, value, colls):
        for coll in colls:
            if coll.name in NON_HISTOGRAM_COLLECTIONS:
                continue
            if coll.save_histogram:
                if value.dtype == torch.bool or value.numel() == 0:
                    return
                t = value.to(tf_dtype_of(value.dtype)[0])  # bfloat16 stays: the writer bins its bits
                self._copier.tensor("add_tensorboard_histogram", t,
                                    (f"{coll.name}/{name}", self.mode.value, self.step), (time.time(),))
                return

    def _emit_tensorboard_scalar(self, tag, value, timestamp=None):
        mode, step = self.mode.value, self.step
        wall = time.time() if timestamp is None else timestamp

        def deliver(host):
            self._writer.add_tensorboard_scalar(tag, mode, step, float(host.reshape(-1)[0]), wall)
        self._copier.tensor(deliver, self._writable(value.detach()), ())

    # ----------------------------------------------------------------------------------------
    # Explicit capture APIs (HOOK_API §6.5)
    # ----------------------------------------------------------------------------------------
    def save_scalar(self, name, value, sm_metric=False, timestamp=None):
        """Queue ``scalar/<name>`` (a number, or a one-element tensor or array) for the next
        flush (``scalar_step``); also a TensorBoard scalar when TensorBoard is on. SageMaker
        metrics (``sm_metric``) are not written (no SageMaker Experiments here).
        SMDebugTypeError when the value has more than one element."""
        full_name = self.SCALAR_PREFIX + name
        tensor = _as_tensor(value)
        if tensor is None or tensor.numel() != 1:
            raise SMDebugTypeError(f"{full_name} has non scalar value of type: {type(value)}")
        self._needs_close = True
        self.scalar_cache.append((full_name, tensor.clone(), self.mode, self.mode_steps.get(self.mode, -1),
                                  timestamp if timestamp is not None else time.time()))

    def save_tensor(self, tensor_name, tensor_value, collections_to_write=CollectionKeys.DEFAULT):
        """Save ``tensor_value`` (a tensor, array or number) under ``tensor_name`` at the next
        forward hook of a saved step or the next gradient hook, into ``collections_to_write``
        (a name or list; the last is kept). Values that are not tensors, arrays or numbers are
        ignored with a warning."""
        tensor = _as_tensor(tensor_value)
        if tensor is None:
            logger.warning("trialstat.torch: the value of %s could not be converted into a tensor", tensor_name)
            return
        if isinstance(collections_to_write, str):
            collections_to_write = [collections_to_write]
        for collection in collections_to_write:
            self.custom_tensors_to_save[tensor_name] = (tensor, collection)

    def _save_custom_tensors_post_step(self):
        items, self.custom_tensors_to_save = self.custom_tensors_to_save, {}
        self._write_custom_tensors(items)

    def _write_custom_tensors(self, items):
        for name, (value, collection_name) in items.items():
            coll = self.collection_manager.get(collection_name, create=True)
            coll.add_tensor_name(name)
            config = coll.reduction_config or self.reduction_config
            if config.save_raw_tensor:
                self._emit_tensor(name, value)

    def _write_scalars(self):
        """Write queued ``save_scalar`` values into the open step, opening it if needed
        (smdebug's ``_write_scalars``); stamped per ``scalar_step``."""
        cache, self.scalar_cache = self.scalar_cache, []
        for name, value, mode, mode_step, timestamp in cache:
            if not self._step_active:
                self._start_step()
            if not self._step_active:
                continue
            if self.tensorboard_dir is not None:
                self._emit_tensorboard_scalar(name, value, timestamp)
            if self.scalar_step == "call":
                self._emit_tensor(name, value, (mode, mode_step))
            else:
                self._emit_tensor(name, value)

    # ----------------------------------------------------------------------------------------
    # Writing: steps, files, workers (HOOK_API §7, §8)
    # ----------------------------------------------------------------------------------------
    def _process_writes(self):
        """Whether this process writes trial files (claim file for single-process jobs,
        ``include_workers``); resolves the worker name at the first call (D8)."""
        if self._writer_failed:
            return False
        if self.worker is None:
            self.worker = _worker_name()
        if self.first_process is None:
            if _world_size() == 1:
                self.first_process = self._claim()
            else:
                self.first_process = True
        if self.first_process is False:
            return False
        return self.save_all_workers or self.worker == CHIEF_WORKER

    def _claim(self):
        try:
            os.makedirs(self.out_dir, exist_ok=True)
            fd = os.open(os.path.join(self.out_dir, CLAIM_FILENAME), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
        except FileExistsError:
            logger.warning("trialstat.torch: another process writes the trial in %s (%s exists): "
                           "process %d will not write any data", self.out_dir, CLAIM_FILENAME, os.getpid())
            return False
        except OSError as e:
            self._writer_failed = True
            self._report(f"cannot create the trial folder {self.out_dir}: {e}")
            return False
        self._claimed = True
        return True

    def _ensure_writer(self):
        if self._writer is not None:
            return True
        if self._writer_failed:
            return False
        if self.worker is None:
            self.worker = _worker_name()
        from .. import _core
        num_workers = _world_size() if self.save_all_workers else 1
        try:
            self._writer = _core.CaptureWriter(
                self.out_dir, self.worker, num_workers, self.queue_bytes, self.drop_when_full,
                self.tensorboard_dir, f"{os.getpid()}_{socket.gethostname()}")
        except Exception as e:  # noqa: BLE001 - a hook never stops training (D7)
            self._writer_failed = True
            self._report(f"cannot write the trial in {self.out_dir}: {e}")
            return False
        self._copier = HostCopier(self._writer, self.queue_bytes)
        return True

    def _start_step(self):
        """smdebug's ``_initialize_writers``: this step is written if this process writes."""
        self._needs_close = True
        if self.dry_run or not self._process_writes() or not self._ensure_writer():
            return
        self._step_active = True
        self._step_begun = False

    def _begin_record(self, mode=None, mode_step=None):
        """Stamp the next records with (mode, mode step): the current ones unless given.
        The step's files are opened (``begin_step``) at its first record, whose mode the index
        file keeps (HOOK_API §6.2)."""
        if mode is None:
            mode, mode_step = self.mode, self.mode_steps[self.mode]
        key = (to_mode(mode).value, int(mode_step))
        if not self._step_begun:
            self._copier.command("begin_step", self.step, *key)
            self._step_begun = True
        elif key != self._record_key:
            self._copier.command("set_record_mode", *key)
        self._record_key = key

    def _finish_step(self):
        """smdebug's ``_close_writers``: gradients not yet taken, queued scalars, then the step's
        files are finished and the TensorBoard files closed."""
        self._capture_pending_gradients()
        self._write_scalars()
        if self._step_active and self._step_begun:
            self._copier.command("end_step")
        self._step_active = False
        self._step_begun = False
        self._record_key = None
        self._close_tensorboard()
        self._collect_writer_errors()

    def _close_tensorboard(self):
        if self._copier is not None and self.tensorboard_dir is not None and not self.dry_run:
            self._copier.command("close_tensorboard_files")

    def _poll(self):
        if self._copier is not None:
            self._copier.poll()

    def export_collections(self):
        """Write the collections file now (HOOK_API §8.1: smdebug does it once, at the first
        step after the first saved step, or at close)."""
        self.exported_collections = True
        if _world_size() == 1 and self.first_process is False:
            return
        if self.worker is None:
            self.worker = _worker_name()
        if not self.save_all_workers and self.worker != CHIEF_WORKER:
            return
        if not self._ensure_writer():
            return
        for coll in self.collection_manager.get_collections().values():
            if coll.reduction_config is None or coll.save_config is None:
                self._complete_collection(coll)
        specs = [_collection_spec(c) for c in self.collection_manager.get_collections().values()]
        self._copier.command("set_collections", specs)
        self._copier.command("write_collections")

    def close(self):
        """Finish: collections file (if not yet written), queued scalars into the current step,
        the step's files, TensorBoard files, then ``training_job_end.ts`` (not when
        ``TRAINING_JOB_NAME`` is set, as smdebug) and the claim file removed. Waits until the
        writer thread has written everything. Logs a summary of anything not saved. The hook
        can be used again afterwards (a later forward starts a new step). With
        ``raise_errors``, a failure found while closing raises CaptureError after the close
        has finished (end marker written, claim file removed)."""
        self._raise_deferred = []
        try:
            self._close()
        finally:
            deferred, self._raise_deferred = self._raise_deferred, None
        if deferred:
            raise CaptureError(deferred[0])

    def _close(self):
        with self._capturing("close"):
            self._capture_pending_gradients()  # their names belong in the collections file
            if not self.exported_collections or self.rewrite_collections:
                self.export_collections()
            self._finish_step()
            write_marker = "TRAINING_JOB_NAME" not in os.environ
            if self._copier is not None:
                self._copier.drain()
                self._writer.close(write_marker)
                self._collect_writer_errors()
                self._log_summary()
                self._final_counters = dict(self._writer.counters())
                self._writer = None
                self._copier = None
            elif write_marker:
                _write_end_marker(self.out_dir)
            if self._claimed:
                try:
                    os.remove(os.path.join(self.out_dir, CLAIM_FILENAME))
                except OSError:
                    pass
                self._claimed = False
                self.first_process = None
            self._needs_close = False

    def _close_at_exit(self):
        if self._needs_close or self._writer is not None:
            self.close()

    # ----------------------------------------------------------------------------------------
    # Errors (D7)
    # ----------------------------------------------------------------------------------------
    @property
    def capture_errors(self):
        """Messages of the capture and write failures so far (the first 100)."""
        self._collect_writer_errors()
        return list(self._errors)

    def capture_counters(self):
        """What the writer did: tensors_queued, tensors_written, tensors_dropped (queue full with
        ``drop_when_full``), tensors_lost (write failures), bytes_written, queue_bytes_now,
        queue_bytes_peak, errors_count (writer) — plus ``hook_errors`` (all failures seen here)."""
        counters = (dict(self._writer.counters()) if self._writer is not None
                    else dict(self._final_counters))  # after close: the closed writer's
        counters["hook_errors"] = self._error_count
        return counters

    def _collect_writer_errors(self):
        if self._writer is not None:
            for message in self._writer.take_errors():
                self._report(message)

    def _log_summary(self):
        counters = self._writer.counters()
        lost = counters.get("tensors_dropped", 0) + counters.get("tensors_lost", 0)
        if self._error_count or lost:
            logger.error("trialstat.torch: %s: %d capture/write failure(s), %d tensor(s) dropped "
                         "(queue full), %d lost (write failures); first: %s", self.out_dir,
                         self._error_count, counters.get("tensors_dropped", 0),
                         counters.get("tensors_lost", 0), self._errors[0] if self._errors else "-")

    def _report(self, message, once_key=None):
        self._error_count += 1
        if once_key is not None:
            if once_key in self._warned:
                return
            self._warned.add(once_key)
        if len(self._errors) < _MAX_KEPT_ERRORS:
            self._errors.append(message)
        logger.error("trialstat.torch: %s", message)
        if self.raise_errors:
            if self._raise_deferred is not None:
                self._raise_deferred.append(message)
                return
            raise CaptureError(message)

    def _capturing(self, where):
        return _CaptureGuard(self, where)


class _CaptureGuard:
    """Configuration errors (SMDebugError, AssertionError) propagate as in smdebug; any other
    failure inside a callback is reported (D7) and training goes on."""

    def __init__(self, hook, where):
        self.hook = hook
        self.where = where

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, (SMDebugError, AssertionError, KeyboardInterrupt)):
            return False
        self.hook._report(f"{self.where} at step {self.hook.step}: {exc_type.__name__}: {exc}")
        return True


@torch._dynamo.disable
def _eager_pre_hook(hook, module, inputs):
    return hook._forward_pre_hook(module, inputs)


@torch._dynamo.disable
def _eager_forward_hook(hook, module, inputs, outputs):
    return hook._forward_hook(module, inputs, outputs)


def _is_dtensor(value):
    return type(value).__name__ == "DTensor" and hasattr(value, "to_local")


def _as_tensor(value):
    """A tensor for ``save_scalar``/``save_tensor``: tensors as they are (detached); numpy
    arrays; Python numbers as shape-(1,) arrays (float64, int64, bool — smdebug's numpy
    conversion); tuples/lists via numpy. None when it cannot be converted."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    try:
        if isinstance(value, np.ndarray):
            array = value
        elif np.isscalar(value):
            array = np.array([value])
        elif isinstance(value, (tuple, list)):
            array = np.asarray(value)
        else:
            return None
        if array.dtype.kind not in "biufc":
            return None
        return torch.from_numpy(np.ascontiguousarray(array))
    except (TypeError, ValueError):
        return None


def _collection_spec(coll):
    """The C++ writer's collection_spec of a Collection (FORMAT §8)."""
    from ..modes import ALLOWED_MODES
    reduction = coll.reduction_config.to_json_dict()
    configs = []
    for mode in ALLOWED_MODES:
        config = coll.save_config.mode_save_configs.get(mode)
        configs.append(config.to_json_dict() if config is not None else None)
    return {"name": coll.name, "include_regex": list(coll.include_regex),
            "tensor_names": sorted(coll.tensor_names), "save_raw_tensor": reduction["save_raw_tensor"],
            "reductions": reduction["reductions"], "save_shape": reduction["save_shape"],
            "save_configs": configs, "save_histogram": bool(coll.save_histogram)}


def _world_size():
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return 1


def _worker_name():
    """``worker_<rank>`` under torch.distributed, else ``worker_0`` (HOOK_API §7)."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return f"worker_{dist.get_rank()}"
    return CHIEF_WORKER


def _write_end_marker(out_dir):
    """``training_job_end.ts`` from a process that wrote nothing else (smdebug: every process)."""
    try:
        os.makedirs(out_dir, exist_ok=True)
        tmp = os.path.join(out_dir, f".{END_OF_JOB_FILENAME}.{os.getpid()}.tmp")
        with open(tmp, "w"):
            pass
        os.replace(tmp, os.path.join(out_dir, END_OF_JOB_FILENAME))
    except OSError as e:
        logger.error("trialstat.torch: cannot write %s in %s: %s", END_OF_JOB_FILENAME, out_dir, e)
