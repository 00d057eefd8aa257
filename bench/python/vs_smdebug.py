# SPDX-License-Identifier: Apache-2.0
"""trialstat vs smdebug 1.0.34: the statistics that VanishingGradient, ExplodingTensor, AllZero
and WeightUpdateRatio need, over every tensor and step of a trial, timed as whole processes:

  smdebug    .venv-smdebug/bin/python smdebug_stats.py TRIAL   (value() + numpy per tensor)
  python     .venv/bin/python trialstat_stats.py TRIAL         (create_trial(...).stats())
  cli        build/tools/trialstat/trialstat stats TRIAL --format csv > /dev/null

Trials are written by the example trainer: "256k" (width 256, batch 256, input 256: weights,
gradients and ReLU outputs of 256 KiB, >= 1 GB) and "1k" (width 16, batch 16, input 16, many
layers: tensors of <= 1 KiB). Each process is run on warm files (the trial is read once right
before each run: this machine drops idle page cache within ~30 s) and the median is reported.
The three answers are checked against each other before timing counts.

    .venv/bin/python bench/python/vs_smdebug.py [--work /tmp/trialstat-bench] [--repeat 3]
        [--big-bytes 1100M] [--small-bytes 48M] [--device auto] [--results bench/RESULTS.md]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BEGIN = "<!-- python-vs-smdebug:begin -->"
END = "<!-- python-vs-smdebug:end -->"


def trial_bytes(path):
    total = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += 1
    return total, files


def warm(path):
    """Read every file of the trial once so the timed run finds it in the page cache."""
    for root, _, names in os.walk(path):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                while f.read(1 << 24):
                    pass


def make_trial(trainer, path, kind, target):
    marker = os.path.join(path, ".bench-" + kind + "-" + target)
    if os.path.exists(marker):
        return
    if kind == "256k":
        args = ["--width", "256", "--batch", "256", "--input-dim", "256", "--layers", "6",
                "--save-interval", "1", "--target-bytes", target, "--threads", "0"]
    else:
        args = ["--width", "16", "--batch", "16", "--input-dim", "16", "--layers", "24",
                "--save-interval", "1", "--target-bytes", target, "--threads", "0"]
    subprocess.run([trainer, "--out", path, "--overwrite", *args], check=True)
    open(marker, "w").close()


def run(cmd, trial, stdout=subprocess.PIPE, env=None):
    warm(trial)
    start = time.perf_counter()
    result = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False,
                            env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
    return elapsed, result.stdout


def check_same(a, b, what):
    for key in ("values", "nan", "inf", "zero", "ratios"):
        if a[key] != b[key]:
            raise AssertionError(f"{what}: {key} differs: smdebug {a[key]} vs trialstat {b[key]}")
    for key in ("grad_mean_abs_sum", "ratio_sum"):
        if abs(a[key] - b[key]) > 1e-6 * max(1.0, abs(a[key])):
            raise AssertionError(f"{what}: {key} differs: {a[key]} vs {b[key]}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", default="/tmp/trialstat-bench")
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--smdebug-repeat", type=int, default=1)
    p.add_argument("--big-bytes", default="1100M")
    p.add_argument("--small-bytes", default="48M")
    p.add_argument("--device", default="auto")
    p.add_argument("--only", choices=["256k", "1k"], default=None)
    p.add_argument("--results", default=os.path.join(REPO, "bench", "RESULTS.md"))
    p.add_argument("--label", default="this machine (2 cores, CPU backend)")
    args = p.parse_args()

    trainer = os.path.join(args.build, "tools", "example_trial", "trialstat-example-trial")
    cli = os.path.join(args.build, "tools", "trialstat", "trialstat")
    smdebug_python = os.path.join(REPO, ".venv-smdebug", "bin", "python")
    python = sys.executable
    os.makedirs(args.work, exist_ok=True)
    # Every process runs with numpy's OpenBLAS thread pool at one thread: its idle workers spin
    # for a while after import and took 0.05-0.08 s of the 2 cores from every run here (neither
    # side uses BLAS).
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    rows = []
    for kind, target in (("256k", args.big_bytes), ("1k", args.small_bytes)):
        if args.only and kind != args.only:
            continue
        path = os.path.join(args.work, kind)
        make_trial(trainer, path, kind, target)
        size, files = trial_bytes(path)
        _, out = run([python, os.path.join(HERE, "trialstat_stats.py"), path, args.device], path,
                     env=env)
        ours = json.loads(out)
        times = {"smdebug": [], "python": [], "cli": [], "cli_bins0": [], "floor": []}
        for _ in range(args.smdebug_repeat):
            t, out = run([smdebug_python, os.path.join(HERE, "smdebug_stats.py"), path], path, env=env)
            check_same(json.loads(out), ours, kind)
            times["smdebug"].append(t)
        for _ in range(args.repeat):
            t, out = run([python, os.path.join(HERE, "trialstat_stats.py"), path, args.device], path,
                         env=env)
            check_same(json.loads(out), ours, kind)
            times["python"].append(t)
            t, _ = run([python, os.path.join(HERE, "read_floor.py"), path], path, env=env)
            times["floor"].append(t)
            with open(os.devnull, "w") as devnull:
                t, _ = run([cli, "stats", path, "--format", "csv", "--device", args.device], path,
                           stdout=devnull, env=env)
                times["cli"].append(t)
                t, _ = run([cli, "stats", path, "--format", "csv", "--bins", "0", "--no-reductions",
                            "--device", args.device], path, stdout=devnull, env=env)
                times["cli_bins0"].append(t)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"trial": kind, "bytes": size, "files": files, "values": ours["values"],
               "smdebug_s": med["smdebug"], "python_s": med["python"], "cli_s": med["cli"],
               "cli_bins0_s": med["cli_bins0"], "floor_s": med["floor"],
               "speedup_ceiling": med["smdebug"] / med["floor"],
               "speedup_python": med["smdebug"] / med["python"],
               "speedup_cli": med["smdebug"] / med["cli"],
               "speedup_cli_bins0": med["smdebug"] / med["cli_bins0"], "runs": times}
        rows.append(row)
        print(json.dumps(row), flush=True)
    write_results(args, rows)


def write_results(args, rows):
    if not rows:
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [BEGIN, "## Python API and CLI vs smdebug 1.0.34 (bench/python/vs_smdebug.py)", "",
             f"Machine: {args.label}; {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} CPUs, load average {load:.1f} at the end of the run; "
             f"{time.strftime('%Y-%m-%d')}. Device: `{args.device}`.",
             "Whole processes, warm page cache (trial read right before each run), median of "
             f"{args.repeat} (smdebug: {args.smdebug_repeat}). The statistics VanishingGradient, "
             "ExplodingTensor, AllZero and WeightUpdateRatio need, every tensor and step; the three "
             "answers are checked equal before timing counts. smdebug: `value()` + numpy per "
             "tensor; python: `trialstat.create_trial(path).stats()` (dict of numpy arrays); CLI: "
             "`trialstat stats --format csv > /dev/null` (also 64-bin histograms and CSV text), "
             "every process with `OPENBLAS_NUM_THREADS=1`. Whole-process times include interpreter start-up and "
             "imports (numpy ≈ 0.06–0.1 s here; smdebug's imports ≈ 1.5 s). *Floor*: a Python "
             "process that imports numpy and trialstat and reads every event-file byte once "
             "(bench/python/read_floor.py), nothing else — smdebug's time over it is the "
             "*ceiling*, the most any Python library could gain here.", "",
             "| trial | size | tensors×steps | smdebug + numpy | trialstat Python | speed-up | "
             "CLI | speed-up | CLI `--bins 0 --no-reductions` | speed-up | floor | ceiling |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['trial']} tensors | {r['bytes'] / 1e9:.2f} GB, {r['files']} files | "
                     f"{r['values']} | {r['smdebug_s']:.2f} s | {r['python_s']:.3f} s | "
                     f"{r['speedup_python']:.1f}× | {r['cli_s']:.3f} s | {r['speedup_cli']:.1f}× | "
                     f"{r['cli_bins0_s']:.3f} s | {r['speedup_cli_bins0']:.1f}× | "
                     f"{r['floor_s']:.3f} s | {r['speedup_ceiling']:.1f}× |")
    lines += ["", "Reproduce: `scripts/setup.sh && .venv/bin/python bench/python/vs_smdebug.py` "
              "(writes the trials under /tmp/trialstat-bench first; "
              f"`--big-bytes {args.big_bytes} --small-bytes {args.small_bytes}`).", END]
    section = "\n".join(lines) + "\n"
    text = ""
    if os.path.exists(args.results):
        with open(args.results) as f:
            text = f.read()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + section + "\n" + tail
    else:
        if not text:
            text = "# Benchmark results\n\n"
        text = text.rstrip("\n") + "\n\n" + section
    with open(args.results, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
