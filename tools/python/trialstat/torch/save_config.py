# SPDX-License-Identifier: Apache-2.0
"""Which steps a collection saves: ``SaveConfigMode`` (one mode) and ``SaveConfig`` (all four).

Same classes, arguments, defaults and JSON form as smdebug 1.0.34's ``smdebug.SaveConfig`` /
``smdebug.SaveConfigMode`` (spec/HOOK_API.md §4.1–§4.2, FORMAT.md §8), so existing training
scripts and SageMaker JSON hook configs keep working.
"""
from ..exceptions import SMDebugTypeError, SMDebugValueError
from ..modes import ModeKeys, to_mode

__all__ = ["SaveConfig", "SaveConfigMode", "DEFAULT_SAVE_INTERVAL"]

DEFAULT_SAVE_INTERVAL = 500
_ALLOWED_PARAMS = ("save_interval", "save_steps", "start_step", "end_step")


class SaveConfigMode:
    """One mode's save rule. A *mode step* ``s`` is saved iff ``s in save_steps`` or
    (``start_step <= s`` and (``end_step is None`` or ``s < end_step``) and
    ``s % save_interval == 0``) — HOOK_API §4.1: ``save_steps`` adds to the interval rule,
    ``start_step`` does not shift its phase, ``end_step`` is exclusive.

    ``save_interval``, ``start_step`` and ``end_step`` accept ints or numeric strings;
    ``save_steps`` is a list of ints. Raises SMDebugValueError for anything else.
    """

    def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
        self.save_interval = DEFAULT_SAVE_INTERVAL if save_interval is None else int(save_interval)
        self.save_steps = [] if save_steps is None else save_steps
        self.start_step = 0 if start_step is None else int(start_step)
        self.end_step = None if end_step is None else int(end_step)
        if not (isinstance(self.save_steps, list) and all(isinstance(x, int) for x in self.save_steps)):
            raise SMDebugValueError(f"save_steps={self.save_steps} must be type(list(int))")
        if self.save_interval == 0:
            # smdebug raises ZeroDivisionError at the first step; say so at construction.
            raise SMDebugValueError("save_interval must not be 0")

    def should_save_step(self, step_num):
        """Whether mode step ``step_num`` (int) is saved."""
        if self.save_steps and step_num in self.save_steps:
            return True
        if step_num < self.start_step:
            return False
        if self.end_step is not None and step_num >= self.end_step:
            return False
        return step_num % self.save_interval == 0

    def to_json_dict(self):
        """The collections file's per-mode object (FORMAT §8)."""
        return {"save_interval": self.save_interval, "save_steps": self.save_steps,
                "start_step": self.start_step, "end_step": self.end_step}

    @classmethod
    def from_dict(cls, params, default_values=None):
        """From ``{save_interval, start_step, end_step, save_steps}`` (missing keys from
        ``default_values``); None gives None."""
        if params is None:
            return None
        if not isinstance(params, dict):
            raise SMDebugTypeError(f"params={params} is not a dict.")
        default_values = default_values or {}
        return cls(**{k: params.get(k, default_values.get(k)) for k in _ALLOWED_PARAMS})

    def __eq__(self, other):
        if not isinstance(other, SaveConfigMode):
            return NotImplemented
        return self.to_json_dict() == other.to_json_dict()

    def __repr__(self):
        return (f"<class SaveConfig: save_interval={self.save_interval}, save_steps={self.save_steps}, "
                f"start_step={self.start_step}, end_step={self.end_step}>")


class SaveConfig:
    """A ``SaveConfigMode`` per mode (TRAIN, EVAL, PREDICT, GLOBAL).

    ``SaveConfig(save_interval=..., start_step=..., end_step=..., save_steps=...)`` gives every mode
    the same rule; ``SaveConfig(mode_save_configs={ModeKeys.TRAIN: SaveConfigMode(...)})`` sets
    some modes and leaves the others unset until the hook merges its own config into them
    (HOOK_API §3.3). A step in a mode that stays unset raises SMDebugValueError ("not ready").
    """

    def __init__(self, mode_save_configs=None, save_interval=None, start_step=None, end_step=None,
                 save_steps=None):
        if mode_save_configs is None:
            self.mode_save_configs = {
                m: SaveConfigMode(save_interval, start_step, end_step, save_steps) for m in ModeKeys}
            return
        configs = {}
        for mode, value in mode_save_configs.items():
            try:
                mode = to_mode(mode)
            except ValueError:
                raise SMDebugValueError(
                    f"Each key,value in mode_save_configs={mode_save_configs} must be of type "
                    "ModeKey,SaveConfigMode") from None
            if isinstance(value, dict):
                value = SaveConfigMode.from_dict(value)
            if value is not None and not isinstance(value, SaveConfigMode):
                raise SMDebugValueError(
                    f"Each key,value in mode_save_configs={mode_save_configs} must be of type "
                    "ModeKey,SaveConfigMode")
            configs[mode] = value
        self.mode_save_configs = {m: configs.get(m) for m in ModeKeys}

    def get_save_config(self, mode):
        config = self.mode_save_configs[to_mode(mode)]
        if config is None:
            raise SMDebugValueError(f"SaveConfig={self} is not ready. Call SaveManager.prepare() first.")
        return config

    def set_save_config(self, mode, save_config_mode):
        if not isinstance(save_config_mode, SaveConfigMode):
            raise SMDebugValueError(f"save_config_mode={save_config_mode} must be type SaveConfigMode")
        self.mode_save_configs[to_mode(mode)] = save_config_mode

    def should_save_step(self, mode, step_num):
        """Whether mode step ``step_num`` of ``mode`` is saved (HOOK_API §4.1)."""
        return self.get_save_config(mode).should_save_step(step_num)

    def merge_default_save_config(self, default_save_config):
        """Fill unset modes from ``default_save_config`` (or ``SaveConfigMode()``), HOOK_API §3.3."""
        for mode in ModeKeys:
            if self.mode_save_configs[mode] is None:
                base = default_save_config.mode_save_configs[mode]
                self.mode_save_configs[mode] = base if base is not None else SaveConfigMode()

    def to_json_dict(self):
        """``{"TRAIN": {...} | None, "EVAL": ..., "PREDICT": ..., "GLOBAL": ...}`` (FORMAT §8)."""
        return {m.name: (c.to_json_dict() if c else None) for m, c in self.mode_save_configs.items()}

    @classmethod
    def from_dict(cls, params, default_values=None):
        """From a dict of mode (ModeKeys or name) to SaveConfigMode or its dict form."""
        if params is None:
            return None
        converted = {}
        for key, value in params.items():
            mode = ModeKeys[key] if isinstance(key, str) else to_mode(key)
            if value is None or isinstance(value, dict):
                value = SaveConfigMode.from_dict(value, default_values)
            converted[mode] = value
        return cls(mode_save_configs=converted)

    @classmethod
    def from_save_config_mode(cls, save_config_mode):
        return cls(mode_save_configs={m: save_config_mode for m in ModeKeys})

    @classmethod
    def parse(cls, obj):
        """None → ``SaveConfig()``; a SaveConfig; a SaveConfigMode (all modes); a dict of modes."""
        if obj is None:
            return cls()
        if isinstance(obj, SaveConfig):
            return obj
        if isinstance(obj, SaveConfigMode):
            return cls.from_save_config_mode(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        raise SMDebugTypeError(f"obj={obj} cannot be parsed into a SaveConfig object")

    def __eq__(self, other):
        if not isinstance(other, SaveConfig):
            return NotImplemented
        return all(self.mode_save_configs[m] == other.mode_save_configs[m] for m in ModeKeys)

    def __repr__(self):
        return f"<class SaveConfig: {self.mode_save_configs}>"
