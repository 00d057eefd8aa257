#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-process timings of trialstat commands against a plain `cat` of the same event files,
measured in interleaved rounds (cat, then each command, round after round) so that a busy,
shared machine slows every contender alike; prints medians and each command's ratio to the
read (read time / command time, per round, then the median of those ratios), and each
command's median CPU time (user + system of the process and its threads, from
getrusage(RUSAGE_CHILDREN)) beside its wall time.

    bench/end_to_end/run_interleaved.py TRIAL --rounds 7 \
        --cmd before='/tmp/old/trialstat stats {trial} --format json --log-hist' \
        --cmd after='build-perf/tools/trialstat/trialstat stats {trial} --format json --log-hist'

`{trial}` is replaced by the trial folder, `{tmp}` by a fresh scratch folder per run (for
commands that write, e.g. `tensorboard --logdir {tmp}/tb`). Output goes to /dev/null.
"""
import argparse
import glob
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def event_files(trial):
    return sorted(p for p in glob.glob(os.path.join(trial, "events", "**", "*"), recursive=True)
                  if os.path.isfile(p))


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv):
    """(wall seconds, CPU seconds) of one run of argv."""
    cpu_before = children_cpu_seconds()
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    return wall, children_cpu_seconds() - cpu_before


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trial")
    parser.add_argument("--cmd", action="append", required=True, help="NAME=command line")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="write the per-round times here too")
    args = parser.parse_args()
    files = event_files(args.trial)
    nbytes = sum(os.path.getsize(p) for p in files)
    cmds = []
    for spec in args.cmd:
        name, _, line = spec.partition("=")
        cmds.append((name, line))
    subprocess.run(["cat"] + files, check=True, stdout=subprocess.DEVNULL)  # warm the page cache
    times = {"cat": []}
    times.update({name: [] for name, _ in cmds})
    cpu_times = {name: [] for name in times}
    for _ in range(args.rounds):
        wall, cpu = timed(["cat"] + files)
        times["cat"].append(wall)
        cpu_times["cat"].append(cpu)
        for name, line in cmds:
            tmp = tempfile.mkdtemp(prefix="ts-interleaved-")
            try:
                argv = shlex.split(line.replace("{trial}", args.trial).replace("{tmp}", tmp))
                wall, cpu = timed(argv)
                times[name].append(wall)
                cpu_times[name].append(cpu)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.trial}: {len(files)} event files, {nbytes / 1e9:.3f} GB, {args.rounds} interleaved rounds")
    print(f"load average before the last round: {os.getloadavg()[0]:.2f}")
    print("| command | median s | median CPU s (user+sys) | GB/s | ratio to cat (median of per-round ratios) | ratios min–max |")
    print("|---|---|---|---|---|---|")
    for name, ts in times.items():
        ratios = [c / t for c, t in zip(times["cat"], ts)]
        print(f"| {name} | {statistics.median(ts):.3f} | {statistics.median(cpu_times[name]):.3f} "
              f"| {nbytes / 1e9 / statistics.median(ts):.2f} "
              f"| {statistics.median(ratios):.0%} | {min(ratios):.0%}–{max(ratios):.0%} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"trial": args.trial, "event_bytes": nbytes, "times": times, "cpu_times": cpu_times,
                       "commands": dict(cmds)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
