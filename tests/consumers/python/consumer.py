# SPDX-License-Identifier: Apache-2.0
"""Python consumer (ctest consumer.python): the installed trialstat package reads a trial.

    python consumer.py TRIAL
Checks that trialstat comes from the venv's site-packages (not the source or build tree), that
the trial has steps and tensors, and that a tensor's value is a numpy array.
"""
import os
import sys

import numpy as np
import trialstat


def main(path):
    where = os.path.dirname(os.path.abspath(trialstat.__file__))
    assert "site-packages" in where, f"trialstat imported from {where}, not an installation"
    trial = trialstat.create_trial(path)
    names = trial.tensor_names()
    steps = trial.steps()
    assert names and steps, f"empty trial: tensors {names}, steps {steps}"
    value = trial.tensor(names[0]).value(steps[-1])
    assert isinstance(value, np.ndarray) and value.size > 0, f"{names[0]}: {value!r}"
    print(f"trialstat {trialstat.__version__} from {where}: backend {trialstat.backend()[0]}, "
          f"{len(names)} tensors, steps {steps[0]}..{steps[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
