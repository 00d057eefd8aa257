# SPDX-License-Identifier: Apache-2.0
"""The wheel's ``trialstat`` console script: runs the CLI executable shipped in the package
(``trialstat/bin/trialstat``, installed by the wheel build; README "Installing")."""
import os
import sys


def executable():
    """Path of the bundled ``trialstat`` CLI (it may be absent from a source-tree import)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "trialstat")


def main():
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"trialstat: this installation has no CLI executable ({exe}); "
                         "build the wheel with TRIALSTAT_BUILD_TOOLS=ON\n")
        return 2
    os.execv(exe, [exe, *sys.argv[1:]])
    return 2  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
