# SPDX-License-Identifier: Apache-2.0
"""trialstat: read smdebug trials with smdebug's analysis API, fast batched statistics and rules.

    import trialstat
    trial = trialstat.create_trial("path/to/trial")
    trial.tensor_names(collection="weights")
    trial.tensor("MLP_fc1.weight").value(10)                 # numpy array
    trial.stats(collection="gradients")                      # DataFrame / dict of numpy columns
    trialstat.rules.evaluate(trial, [("VanishingGradient", {"threshold": "1e-6"})])

See tools/python/README.md for the API and the documented differences from smdebug.
"""
from . import exceptions, modes, rules  # noqa: E402
from .exceptions import *  # noqa: F401,F403,E402
from .modes import ModeKeys  # noqa: E402
from .tensor import Tensor  # noqa: E402
from .trial import Collection, LocalTrial, StepState, Trial, create_trial, no_refresh, refresh
from .visual import report  # noqa: E402

__version__ = "0.1.0"

__all__ = ["create_trial", "Trial", "LocalTrial", "Tensor", "Collection", "StepState", "ModeKeys",
           "modes", "exceptions", "rules", "no_refresh", "refresh", "backend",
           "log_histogram_edges", "report"] + exceptions.__all__


def backend(device="auto"):
    """(backend name, reason) that ``device`` resolves to on this machine."""
    from . import _core
    return tuple(_core.backend_for(device))


def log_histogram_edges():
    """The 1549 ascending edges of the fixed log-scale histogram (``Trial.stats(log_histogram=True)``,
    ``trialstat stats --log-hist``) as a new float64 numpy array: TensorBoard's default buckets as
    smdebug builds them, v = 1e-12, v *= 1.1 while v < 1e20 (774 positive edges p), edges =
    [−p[773] … −p[0], 0, p[0] … p[773]]; edge[774] = 0. Bin i = [edge[i], edge[i+1]), the last
    bin closed (``numpy.histogram(x, bins=edges)``). Source: spec/FORMAT.md §10, smdebug
    ``_get_default_bins``."""
    from . import _core
    return _core.log_histogram_edges()
