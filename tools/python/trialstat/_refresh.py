# SPDX-License-Identifier: Apache-2.0
"""Automatic refresh on and off for a block (smdebug.analysis.utils.no_refresh / refresh), shared
by the trial and rules modules: it only sets ``dynamic_refresh`` on the trials it is given, so it
imports neither."""
import contextlib

__all__ = ["no_refresh", "refresh"]


@contextlib.contextmanager
def _dynamic_refresh(trials, enabled):
    """Set ``dynamic_refresh`` of one trial or a list of them for the block, then restore it.
    Yields what it was given (``with no_refresh([t1, t2]) as trials:``, as smdebug)."""
    trials_arg = trials
    trials = trials if isinstance(trials, (list, tuple)) else [trials]
    previous = [t.dynamic_refresh for t in trials]
    for t in trials:
        t.dynamic_refresh = enabled
    try:
        yield trials_arg
    finally:
        for t, p in zip(trials, previous):
            t.dynamic_refresh = p


def no_refresh(trials):
    """Disable automatic refresh (smdebug.analysis.utils.no_refresh)."""
    return _dynamic_refresh(trials, False)


def refresh(trials):
    """Enable automatic refresh (smdebug.analysis.utils.refresh)."""
    return _dynamic_refresh(trials, True)
