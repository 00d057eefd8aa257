# SPDX-License-Identifier: Apache-2.0
"""Training modes, as smdebug's ``smdebug.modes`` / ``smdebug.core.modes.ModeKeys``.

``trialstat.modes.TRAIN`` is ``ModeKeys.TRAIN`` (value 1), and so on; the numeric values are the
ones written into event files (spec/TRIAL_API.md §6). Functions of trialstat also accept
smdebug's own ``ModeKeys`` members, mode names ("train", "TRAIN") and the numbers 1-4, and
trialstat's members compare equal to smdebug's (``trial.mode(s) == smdebug.modes.TRAIN``).
"""
from ._smdebug_interop import SmdebugEqualEnum

__all__ = ["ModeKeys", "TRAIN", "EVAL", "PREDICT", "GLOBAL", "ALLOWED_MODES",
           "ALLOWED_MODE_NAMES", "str_to_mode_keys", "to_mode"]


class ModeKeys(SmdebugEqualEnum):
    """Members equal and hash like smdebug's ``ModeKeys`` members of the same name, so
    ``trial.mode(s) == smdebug.modes.TRAIN`` holds (trialstat/_smdebug_interop.py)."""

    TRAIN = 1  # training/fitting mode
    EVAL = 2  # testing/evaluation mode
    PREDICT = 3  # prediction/inference mode
    GLOBAL = 4


TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL

ALLOWED_MODES = [ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL]
ALLOWED_MODE_NAMES = [x.name for x in ALLOWED_MODES]


def str_to_mode_keys(mode_str):
    """smdebug's parser: "train", "eval", "predict", "global" (lower case only)."""
    table = {"train": TRAIN, "eval": EVAL, "predict": PREDICT, "global": GLOBAL}
    if mode_str not in table:
        raise Exception("Invalid mode")
    return table[mode_str]


def to_mode(mode):
    """Normalise a mode given as ModeKeys (ours or smdebug's), a name or a number."""
    if isinstance(mode, ModeKeys):
        return mode
    if mode is None:
        return GLOBAL
    name = getattr(mode, "name", None)
    if isinstance(name, str) and name in ModeKeys.__members__:
        return ModeKeys[name]
    if isinstance(mode, str) and mode.upper() in ModeKeys.__members__:
        return ModeKeys[mode.upper()]
    if isinstance(mode, int) and not isinstance(mode, bool):
        return ModeKeys(mode)
    raise ValueError(f"not a mode: {mode!r}")
