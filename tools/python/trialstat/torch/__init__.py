# SPDX-License-Identifier: Apache-2.0
"""trialstat.torch — capture tensors from a PyTorch training job into a trial, with smdebug's
PyTorch hook API (spec/HOOK_API.md):

    import trialstat.torch as smd            # where scripts had: import smdebug.pytorch as smd
    hook = smd.Hook(out_dir="trial", save_config=smd.SaveConfig(save_interval=10),
                    include_collections=["weights", "gradients", "losses"])
    hook.register_module(model)
    hook.register_loss(loss_fn)
    ...
    hook.close()

Needs torch (imported here only; ``import trialstat`` never needs it). See hook.py for what
differs from smdebug's hook and README.md, "Capturing a trial from PyTorch".
"""
try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised without torch
    raise ImportError("trialstat.torch needs PyTorch: pip install torch") from e

from .. import modes  # noqa: E402
from ..modes import ModeKeys  # noqa: E402
from .collection import Collection, CollectionKeys, CollectionManager  # noqa: E402
from .hook import CaptureError, Hook  # noqa: E402
from .reduction_config import ReductionConfig  # noqa: E402
from .save_config import SaveConfig, SaveConfigMode  # noqa: E402
from .singleton import del_hook, get_hook, set_hook  # noqa: E402

__all__ = ["Hook", "SaveConfig", "SaveConfigMode", "ReductionConfig", "Collection", "CollectionKeys",
           "CollectionManager", "ModeKeys", "modes", "get_hook", "set_hook", "del_hook", "CaptureError"]
