# SPDX-License-Identifier: Apache-2.0
"""Run the scenarios of scenarios.py with one hook library:
    python run_scenarios.py smdebug|trialstat OUT_ROOT [NAME...]
smdebug: in .venv-smdebug (smdebug.pytorch); trialstat: in .venv (trialstat.torch)."""
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402


def main():
    lib, out_root, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    logging.disable(logging.WARNING)
    if lib == "smdebug":
        import smdebug.pytorch as smd
    else:
        import trialstat.torch as smd
    scenarios.run(smd, out_root, names or None)


if __name__ == "__main__":
    main()
