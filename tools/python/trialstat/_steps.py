# SPDX-License-Identifier: Apache-2.0
"""Steps, shared by the trial, tensor, rules and visual modules (none of which this imports):
``StepState`` (smdebug.core.tensor.StepState), and ``step_selection``, which reads the ``steps=``
argument of ``Trial.stats``, ``rules.evaluate`` and the exports."""
import numpy as np

from ._smdebug_interop import SmdebugEqualEnum

__all__ = ["StepState", "step_selection"]


class StepState(SmdebugEqualEnum):
    """smdebug.core.tensor.StepState; members equal and hash like smdebug's of the same name."""
    UNAVAILABLE = 0
    AVAILABLE = 1
    NOT_YET_AVAILABLE = 2


def step_selection(steps):
    """(begin, end, keep-set or None) for the native run."""
    if steps is None:
        return None, None, None
    if isinstance(steps, (int, np.integer)):
        return int(steps), int(steps) + 1, None
    if isinstance(steps, tuple) and len(steps) == 2 and all(
            s is None or isinstance(s, (int, np.integer)) for s in steps):
        return steps[0], steps[1], None
    if isinstance(steps, range) and steps.step == 1:
        return steps.start, steps.stop, None
    keep = {int(s) for s in steps}
    if not keep:
        return 0, 0, keep
    return min(keep), max(keep) + 1, keep
