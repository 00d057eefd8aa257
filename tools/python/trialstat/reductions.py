# SPDX-License-Identifier: Apache-2.0
"""smdebug's analysis-side reductions (``smdebug.core.reductions``, spec/TRIAL_API.md §8),
computed with numpy exactly as smdebug does: the answer is numpy's, dtype and all.

Note (followed deliberately): ``l1``/``l2`` are ``numpy.linalg.norm(x, ord=1|2)``, so for a 2-D
tensor they are *matrix* norms (max column sum of |x|, largest singular value) and a 0-D or
>= 3-D tensor raises ValueError. Users' thresholds were tuned on these numbers.
"""
import numpy as np

from .exceptions import SMDebugValueError

ALLOWED_REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod"]
ALLOWED_NORMS = ["l1", "l2"]


def get_numpy_reduction(reduction_name, numpy_data, abs=False):
    if reduction_name not in ALLOWED_REDUCTIONS and reduction_name not in ALLOWED_NORMS:
        raise SMDebugValueError("Invalid reduction type %s" % reduction_name)
    if abs:
        numpy_data = np.absolute(numpy_data)
    return get_basic_numpy_reduction(reduction_name, numpy_data)


def get_basic_numpy_reduction(reduction_name, numpy_data):
    if reduction_name in ALLOWED_REDUCTIONS:
        if reduction_name in ["min", "max"]:
            return getattr(np, "a" + reduction_name)(numpy_data)
        if reduction_name == "variance":
            return np.var(numpy_data)
        return getattr(np, reduction_name)(numpy_data)
    if reduction_name in ALLOWED_NORMS:
        order = int(reduction_name[1])
        if np.isscalar(numpy_data):
            numpy_data = [numpy_data]
        return np.linalg.norm(numpy_data, ord=order)
    return None
