# SPDX-License-Identifier: Apache-2.0
"""The process-wide hook (spec/HOOK_API.md §2.3): every ``Hook(...)`` becomes it (last wins);
``get_hook`` returns it, or creates one from the JSON hook config when asked."""
import os

__all__ = ["get_hook", "set_hook", "del_hook"]

_hook = None


def set_hook(hook):
    global _hook
    _hook = hook


def del_hook():
    global _hook
    _hook = None


def get_hook(json_config_path=None, create_if_not_exists=False):
    """The current hook; else, with ``create_if_not_exists``, one from the JSON config
    (``Hook.create_from_json_file``; None when the file is missing); else None. None when env
    ``USE_SMDEBUG`` is false (``0``, ``false``, ``no``). Unlike smdebug 1.0.34, any torch 2.x or
    later is accepted (D11)."""
    if os.getenv("USE_SMDEBUG", "true").strip().lower() in ("0", "false", "no", "off"):
        return None
    if _hook is not None:
        return _hook
    if create_if_not_exists:
        from .hook import Hook
        try:
            return Hook.create_from_json_file(json_config_path)
        except FileNotFoundError:
            return None
    return None
