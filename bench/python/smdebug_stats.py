# SPDX-License-Identifier: Apache-2.0
"""The smdebug way (run by .venv-smdebug/bin/python): every tensor, every step, value() and the
numpy statistics that VanishingGradient (mean |g|), ExplodingTensor (NaN/Inf counts), AllZero
(zero counts) and WeightUpdateRatio (||W_s - W_p|| / (||W_p|| + 1e-9)) need. Prints a JSON
summary that vs_smdebug.py checks against trialstat's."""
import json
import logging
import os
import sys

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
logging.disable(logging.WARNING)

import numpy as np  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402


def main(path):
    trial = create_trial(path)
    weights = set(trial.tensor_names(collection="weights"))
    gradients = set(trial.tensor_names(collection="gradients"))
    summary = {"values": 0, "nan": 0, "inf": 0, "zero": 0, "grad_mean_abs_sum": 0.0,
               "ratio_sum": 0.0, "ratios": 0}
    for name in trial.tensor_names():
        tensor = trial.tensor(name)
        previous = None
        for step in tensor.steps():
            v = tensor.value(step)
            summary["values"] += 1
            summary["nan"] += int(np.isnan(v).sum())
            summary["inf"] += int(np.isinf(v).sum())
            summary["zero"] += int(np.count_nonzero(v == 0))
            if name in gradients:
                summary["grad_mean_abs_sum"] += float(np.mean(np.abs(v)))
            if name in weights:
                if previous is not None:
                    diff = np.linalg.norm((v - previous).ravel().astype(np.float64))
                    summary["ratio_sum"] += float(
                        diff / (np.linalg.norm(previous.ravel().astype(np.float64)) + 1e-9))
                    summary["ratios"] += 1
                previous = v
    print(json.dumps(summary))


if __name__ == "__main__":
    main(sys.argv[1])
