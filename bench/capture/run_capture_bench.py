# SPDX-License-Identifier: Apache-2.0
"""Step time of a training job with no hook, smdebug 1.0.34's hook and trialstat.torch's hook
(issue 22 "Speed"): weights + biases + gradients + losses saved every 1, 10 and 100 steps, raw
tensors and reductions only (min, max, mean, l2), a small transformer on the CPU
(capture_step.py). Every configuration runs in its own process, ROUNDS times, interleaved, so
that the ratios are measured side by side; prints a Markdown table and writes JSON.

    .venv/bin/python bench/capture/run_capture_bench.py [--steps 200] [--rounds 3] [--out results.json]

Added time per step = mean step time with the hook − without (same round). The mean, not the
median, because a saved step every 10 or 100 steps is what costs. Processes differ by a few ms
per step on a 2-core machine, so at intervals 10 and 100 the table also gives the cost of a saved
step measured inside each process (saved-step median − unsaved-step median). smdebug runs in .venv-smdebug
(numpy < 2.3, float32: where it works), trialstat in .venv."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PYTHON = {"none": os.path.join(REPO, ".venv", "bin", "python"),
          "trialstat": os.path.join(REPO, ".venv", "bin", "python"),
          "smdebug": os.path.join(REPO, ".venv-smdebug", "bin", "python")}


def run_one(lib, interval, kind, steps, root, env):
    out_dir = tempfile.mkdtemp(dir=root)
    out_dir = os.path.join(out_dir, "trial")
    proc = subprocess.run([PYTHON[lib], os.path.join(HERE, "capture_step.py"), lib, str(interval), kind,
                           str(steps), out_dir], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{lib} {interval} {kind} failed:\n{proc.stdout}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _saved_cost(samples):
    """Median over rounds of (saved-step median − unsaved-step median) in one process; None at
    interval 1 (every step is saved)."""
    costs = [s["saved_median_s"] - s["unsaved_median_s"] for s in samples
             if s.get("saved_median_s") is not None and s.get("unsaved_median_s") is not None]
    return statistics.median(costs) if costs else None


def _ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.1f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "results.json"))
    args = parser.parse_args()
    env = dict(os.environ)
    build_python = os.path.join(REPO, "build", "tools", "python")
    if os.path.isdir(build_python):
        env["PYTHONPATH"] = build_python + os.pathsep + env.get("PYTHONPATH", "")
    configs = [("none", 1, "raw")] + [(lib, interval, kind) for interval in (1, 10, 100)
                                      for kind in ("raw", "reductions")
                                      for lib in ("smdebug", "trialstat")]
    samples = {c: [] for c in configs}
    with tempfile.TemporaryDirectory() as root:
        for r in range(args.rounds):
            baseline = None
            for config in configs:
                result = run_one(*config, args.steps, root, env)
                if config[0] == "none":
                    baseline = result
                result["added_s"] = result["mean_s"] - baseline["mean_s"]
                samples[config].append(result)
                print(f"round {r}: {config}: mean {result['mean_s'] * 1e3:.2f} ms, "
                      f"added {result['added_s'] * 1e3:.2f} ms, rss {result['peak_rss_mib']:.0f} MiB",
                      file=sys.stderr)
    rows = []
    base = statistics.median(s["mean_s"] for s in samples[("none", 1, "raw")])
    print(f"\nno hook: {base * 1e3:.2f} ms per step (median of {args.rounds} rounds, "
          f"{args.steps} steps each)\n")
    print("| interval | saved | smdebug added ms/step | trialstat added ms/step | trialstat / smdebug "
          "| trialstat over no hook | saved step − unsaved step, ms (sm / ts) "
          "| close() s (sm / ts) | peak RSS MiB (none / sm / ts) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rss_none = statistics.median(s["peak_rss_mib"] for s in samples[("none", 1, "raw")])
    for interval in (1, 10, 100):
        for kind in ("raw", "reductions"):
            sm = samples[("smdebug", interval, kind)]
            ts = samples[("trialstat", interval, kind)]
            sm_added = statistics.median(s["added_s"] for s in sm)
            ts_added = statistics.median(s["added_s"] for s in ts)
            row = {"interval": interval, "kind": kind, "smdebug_added_s": sm_added,
                   "trialstat_added_s": ts_added,
                   "ratio": ts_added / sm_added if sm_added > 0 else None,
                   "trialstat_over_none": ts_added / base,
                   "saved_step_cost_s": [_saved_cost(sm), _saved_cost(ts)],
                   "close_s": [statistics.median(s["close_s"] for s in sm),
                               statistics.median(s["close_s"] for s in ts)],
                   "peak_rss_mib": [rss_none, statistics.median(s["peak_rss_mib"] for s in sm),
                                    statistics.median(s["peak_rss_mib"] for s in ts)]}
            rows.append(row)
            ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "-"
            print(f"| {interval} | {kind} | {sm_added * 1e3:.2f} | {ts_added * 1e3:.2f} | {ratio} | "
                  f"{100 * row['trialstat_over_none']:+.1f}% | {_ms(row['saved_step_cost_s'][0])} / "
                  f"{_ms(row['saved_step_cost_s'][1])} | {row['close_s'][0]:.2f} / {row['close_s'][1]:.2f} | "
                  f"{row['peak_rss_mib'][0]:.0f} / {row['peak_rss_mib'][1]:.0f} / {row['peak_rss_mib'][2]:.0f} |")
    with open(args.out, "w") as f:
        json.dump({"baseline_mean_s": base, "rows": rows,
                   "samples": {"|".join(map(str, k)): v for k, v in samples.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
