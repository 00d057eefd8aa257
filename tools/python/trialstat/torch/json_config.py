# SPDX-License-Identifier: Apache-2.0
"""A hook from SageMaker's JSON hook config (spec/HOOK_API.md §2.2), parsed as smdebug 1.0.34's
``create_hook_from_json_config`` does: LocalPath → out_dir; HookParameters (save_interval,
start_step, end_step, save_steps and their ``train.``/``eval.``/``predict.``/``global.``
overrides; reductions with save_raw_tensor / save_shape; save_all; include_regex;
include_workers; export_tensorboard; tensorboard_dir); CollectionConfigurations (per collection:
the same save keys — first present of collection ``mode.key``, collection ``key``, hook
``mode.key``, hook ``key`` — reductions, include_regex appended, save_histogram).
Under SageMaker (env TRAINING_JOB_NAME) TensorBoard settings come from the file named by
TENSORBOARD_CONFIG_FILE_PATH instead. ``dry_run`` in the file is ignored, as smdebug."""
import json
import os

from ..exceptions import SMDebugValueError
from ..modes import ModeKeys
from .reduction_config import ReductionConfig
from .save_config import SaveConfig, SaveConfigMode

__all__ = ["create_hook_from_json_config", "DEFAULT_CONFIG_FILE_PATH"]

DEFAULT_CONFIG_FILE_PATH = "/opt/ml/input/config/debughookconfig.json"
DEFAULT_TENSORBOARD_CONFIG_PATH = "/opt/ml/input/config/tensorboardoutputconfig.json"
DEFAULT_SAGEMAKER_OUTDIR = "/opt/ml/output/tensors"
_MODE_PREFIXES = {ModeKeys.TRAIN: "train.", ModeKeys.EVAL: "eval.", ModeKeys.PREDICT: "predict.",
                  ModeKeys.GLOBAL: "global."}


def _split(text):
    return [x.strip() for x in text.split(",")]


def _parse_bool(value, default):
    if value is None:
        return default
    if value in (False, True):
        return value
    if value in ("False", "false"):
        return False
    if value in ("True", "true"):
        return True
    raise ValueError(f"boolean argument expected, but found {value}")


def _save_keys(params, prefix):
    params = {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}
    out = {}
    for key in ("save_interval", "start_step", "end_step"):
        if key in params:
            out[key] = params[key]
    if "save_steps" in params:
        out["save_steps"] = [int(x) for x in _split(params["save_steps"])]
    return out


def _save_config_modes(params, base=None):
    """{mode: {save keys}} — mode-prefixed keys over plain keys, over ``base`` (HOOK_API §2.2)."""
    if not isinstance(params, dict):
        raise SMDebugValueError("parameter must be dict")
    plain = _save_keys(params, "")
    configs = {m: {**plain, **_save_keys(params, prefix)} for m, prefix in _MODE_PREFIXES.items()}
    if base:
        configs = {m: {**base[m], **configs[m]} for m in ModeKeys}
    return configs


def create_hook_from_json_config(hook_cls, json_config_path=None):
    """``hook_cls`` built from the JSON file at ``json_config_path`` (else env
    SMDEBUG_CONFIG_FILE_PATH, else ``DEFAULT_CONFIG_FILE_PATH``). FileNotFoundError when missing;
    SMDebugValueError / ValueError for malformed values (e.g. ``"save_raw_tensor": "true"``)."""
    path = json_config_path or os.getenv("SMDEBUG_CONFIG_FILE_PATH", DEFAULT_CONFIG_FILE_PATH)
    with open(path) as f:
        config = json.load(f)
    hook_params = config.get("HookParameters") or {}
    base_modes = _save_config_modes(hook_params)
    reduction_config = ReductionConfig.from_dict(hook_params) if "reductions" in hook_params else None
    collection_configs = config.get("CollectionConfigurations")
    include_collections = None
    if collection_configs is not None:
        include_collections = []
        for entry in collection_configs:
            if "CollectionName" not in entry:
                raise SMDebugValueError("Must specify 'CollectionName' in JSON config.")
            include_collections.append(entry["CollectionName"])
    if "TRAINING_JOB_NAME" in os.environ:
        tb_path = os.getenv("TENSORBOARD_CONFIG_FILE_PATH", DEFAULT_TENSORBOARD_CONFIG_PATH)
        tensorboard_dir = None
        if os.path.isfile(tb_path):
            with open(tb_path) as f:
                tensorboard_dir = json.load(f).get("LocalPath")
        export_tensorboard = tensorboard_dir is not None
    else:
        tensorboard_dir = hook_params.get("tensorboard_dir")
        export_tensorboard = _parse_bool(hook_params.get("export_tensorboard", False), False)
    hook = hook_cls(
        out_dir=config.get("LocalPath", DEFAULT_SAGEMAKER_OUTDIR),
        export_tensorboard=export_tensorboard,
        tensorboard_dir=tensorboard_dir,
        reduction_config=reduction_config,
        save_config=SaveConfig.from_dict(base_modes),
        include_regex=_split(hook_params["include_regex"]) if "include_regex" in hook_params else None,
        include_collections=include_collections,
        save_all=_parse_bool(hook_params["save_all"], False) if "save_all" in hook_params else False,
        include_workers=hook_params.get("include_workers", "one"),
    )
    for entry in collection_configs or []:
        params = entry.get("CollectionParameters") or {}
        coll = hook.get_collection(entry["CollectionName"])
        modes = _save_config_modes(params, base_modes)
        coll.save_config = {m: SaveConfigMode.from_dict(v) for m, v in modes.items()}
        if "reductions" in params:
            coll.reduction_config = ReductionConfig.from_dict(params)
        if "include_regex" in params:
            coll.include(_split(params["include_regex"]))
        if "save_histogram" in params:
            coll.save_histogram = _parse_bool(params["save_histogram"], True)
    return hook
