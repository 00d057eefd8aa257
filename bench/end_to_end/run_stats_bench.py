#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end benchmark of `trialstat stats` (issue 2), as ratios measured side by side in one run:

  read   : plainly reading the trial's event files from the page cache, two ways, the faster
           one being the ceiling the ratios use: `read` (1 MiB readinto: the kernel's copy) and
           `mapped` (mmap with MAP_POPULATE, then numpy sums every 8-byte word of the mapping:
           no copy; what `trialstat stats` does for files of >= 256 KiB);
  stats  : `trialstat stats --format json --bins 0 > /dev/null` (fused statistics, no histogram);
  hist   : `trialstat stats --format json > /dev/null` (fused statistics + 64-bin histograms);
  numpy  : numpy computing the same statistics from raw arrays already in memory (loading them
           is not timed, so this favours numpy), without and with histograms.

Two generated trials (written by the project's own example trainer): one of large tensors
(>= 1 GB) and one of many ~1 KiB tensors. Each measurement warms the files right before it (this
machine evicts page cache idle for ~30 s) and the median of --repeat runs is reported.

Usage: bench/end_to_end/run_stats_bench.py --build build [--work /tmp/trialstat-bench]
       [--big-bytes 1200M] [--small-bytes 160M] [--repeat 5] [--json out.json]
"""
import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def event_files(trial):
    return sorted(glob.glob(os.path.join(trial, "events", "*", "*.tfevents")))


def read_all(files, buf):
    total = 0
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                total += n
    return total


def mapped_read_all(files):
    """mmap each file (pages populated) and read every byte: numpy sums the file as uint64."""
    import mmap
    import numpy as np
    total = 0
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    for path in files:
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                continue
            m = mmap.mmap(f.fileno(), size, flags=flags, prot=mmap.PROT_READ)
            words = np.frombuffer(m, dtype=np.uint64, count=size // 8)
            total += int(words.sum(dtype=np.uint64)) & 1
            del words
            m.close()
    return total


def warm(files, buf):
    read_all(files, buf)


def median_time(fn, files, buf, repeat):
    times = []
    for _ in range(repeat):
        warm(files, buf)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def generate(trainer, out, pathology_args, target):
    marker = os.path.join(out, ".bench-params")
    params = " ".join(pathology_args + ["--target-bytes", target])
    if os.path.exists(marker) and open(marker).read() == params:
        return
    cmd = [trainer, "--out", out, "--overwrite"] + pathology_args + ["--target-bytes", target]
    print("generating:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(marker, "w") as f:
        f.write(params)


def tensor_count_and_bytes(trial):
    count = content = 0
    for index_file in glob.glob(os.path.join(trial, "index", "*", "*.json")):
        with open(index_file) as f:
            count += len(json.load(f)["tensor_payload"])
    return count


def bench_trial(name, trial, cli, repeat):
    files = event_files(trial)
    buf = bytearray(1 << 20)
    nbytes = sum(os.path.getsize(p) for p in files)
    tensors = tensor_count_and_bytes(trial)
    devnull = open(os.devnull, "w")

    def run_cli(extra):
        return lambda: subprocess.run([cli, "stats", trial, "--format", "json"] + extra,
                                      check=True, stdout=devnull)

    env_threads = os.environ.get("OMP_NUM_THREADS", "default")
    r_copy, _ = median_time(lambda: read_all(files, buf), files, buf, repeat)
    r_mapped, _ = median_time(lambda: mapped_read_all(files), files, buf, repeat)
    r_read = min(r_copy, r_mapped)
    r_stats, _ = median_time(run_cli(["--bins", "0"]), files, buf, repeat)
    r_hist, _ = median_time(run_cli([]), files, buf, repeat)
    numpy_results = {}
    for flag in ([], ["--histogram"]):
        out = subprocess.run([sys.executable, os.path.join(HERE, "numpy_stats.py"), trial,
                              "--repeat", str(max(1, repeat // 2))] + flag,
                             check=True, capture_output=True, text=True).stdout
        numpy_results["hist" if flag else "stats"] = json.loads(out)
    gb = nbytes / 1e9
    row = {
        "trial": name, "path": trial, "event_bytes": nbytes, "tensors": tensors,
        "read_copy_s": r_copy, "read_mapped_s": r_mapped,
        "read_copy_GBps": gb / r_copy, "read_mapped_GBps": gb / r_mapped,
        "read_s": r_read, "stats_s": r_stats, "hist_s": r_hist,
        "read_GBps": gb / r_read, "stats_GBps": gb / r_stats, "hist_GBps": gb / r_hist,
        "stats_vs_read": r_read / r_stats, "hist_vs_read": r_read / r_hist,
        "numpy_stats_s": numpy_results["stats"]["seconds"], "numpy_hist_s": numpy_results["hist"]["seconds"],
        "speedup_vs_numpy_stats": numpy_results["stats"]["seconds"] / r_stats,
        "speedup_vs_numpy_hist": numpy_results["hist"]["seconds"] / r_hist,
        "stats_us_per_tensor": 1e6 * r_stats / tensors, "hist_us_per_tensor": 1e6 * r_hist / tensors,
        "numpy_hist_us_per_tensor": 1e6 * numpy_results["hist"]["seconds_per_tensor"],
        "omp_num_threads": env_threads,
    }
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--work", default="/tmp/trialstat-bench")
    parser.add_argument("--big-bytes", default="1200M")
    parser.add_argument("--small-bytes", default="160M")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    cli = os.path.join(args.build, "tools", "trialstat", "trialstat")
    trainer = os.path.join(args.build, "tools", "example_trial", "trialstat-example-trial")
    big = os.path.join(args.work, "big")
    small = os.path.join(args.work, "small")
    generate(trainer, big, ["--width", "2048", "--save-interval", "1", "--batch", "64"], args.big_bytes)
    generate(trainer, small, ["--width", "16", "--layers", "32", "--batch", "16", "--input-dim", "16",
                              "--classes", "16", "--save-interval", "1"], args.small_bytes)
    rows = [bench_trial("large tensors", big, cli, args.repeat),
            bench_trial("1 KiB tensors", small, cli, args.repeat)]
    meta = {"machine": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "command": " ".join(sys.argv)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print("| trial | event bytes | tensors | read GB/s: copy / mapped | stats GB/s (ratio to read) | stats+hist GB/s (ratio) "
          "| µs/tensor stats / +hist | numpy+hist µs/tensor | speedup vs numpy (stats / +hist) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['trial']} | {r['event_bytes']/1e9:.2f} GB | {r['tensors']} | {r['read_copy_GBps']:.2f} / {r['read_mapped_GBps']:.2f} "
              f"| {r['stats_GBps']:.2f} ({r['stats_vs_read']:.0%}) | {r['hist_GBps']:.2f} ({r['hist_vs_read']:.0%}) "
              f"| {r['stats_us_per_tensor']:.2f} / {r['hist_us_per_tensor']:.2f} | {r['numpy_hist_us_per_tensor']:.1f} "
              f"| {r['speedup_vs_numpy_stats']:.1f}x / {r['speedup_vs_numpy_hist']:.1f}x |")


if __name__ == "__main__":
    main()
