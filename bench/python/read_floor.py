# SPDX-License-Identifier: Apache-2.0
"""The floor for any Python analysis of a trial (run by .venv/bin/python): start the interpreter,
import numpy and trialstat, and read every byte of the trial's event files once (mmap with
MAP_POPULATE, numpy sums each file as uint64 words: no copy). No decoding, no statistics. Its
whole-process time bounds the speed-up any Python library can reach over smdebug on this machine
(vs_smdebug.py reports smdebug's time over it as "ceiling")."""
import glob
import mmap
import os
import sys

import numpy as np

import trialstat  # noqa: F401  (its import is part of every trialstat analysis)


def main(path):
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    total = 0
    for name in sorted(glob.glob(os.path.join(path, "events", "*", "*.tfevents"))):
        with open(name, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                continue
            m = mmap.mmap(f.fileno(), size, flags=flags, prot=mmap.PROT_READ)
            words = np.frombuffer(m, dtype=np.uint64, count=size // 8)
            total ^= int(words.sum(dtype=np.uint64))
            del words
            m.close()
    print(total)


if __name__ == "__main__":
    main(sys.argv[1])
