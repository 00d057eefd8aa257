#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmarks of `trialstat watch` (issue 4).

1. Latency from a step's index file appearing to its rule verdict. A source trial of N steps
   (default 1000) with 100 tensors per step is written first by the project's example trainer
   (19 hidden layers: 20 weights, 20 biases, 19 ReLU outputs, the loss and 40 gradients = 100
   tensors, saved every step). It is then replayed into an empty folder the way smdebug's writer publishes files —
   event file to `<name>.tmp` then renamed, then the index file likewise — one step every
   --interval-ms, while `trialstat watch --events` runs the default built-in rules on it. The
   replayer notes the wall time right after each index rename; the verdict time of step S is
   the `time` of the first `progress` event whose `last_step` >= S (emitted after every rule
   evaluated S). Latency = verdict - rename: median, p99, max. Run with inotify wake-ups (the
   default) and with plain polling (--no-inotify --poll-ms P).

2. Throughput of the built-in rules together (`trialstat rules`, one pass) relative to
   `trialstat stats` on the same >= 1 GB trial (ratio of wall times, page cache warm, median of
   --repeat), against `stats --format json` (64-bin histograms, the default) and `--bins 0`:
   the default rules (every built-in rule that needs no parameter) and all eight built-in rules
   (bench/live/all_rules.json: AllZero, TensorVariance, UnchangedTensor with selections).

Usage: bench/live/latency.py --build build [--work /tmp/trialstat-live-bench] [--steps 1000]
       [--width 64] [--interval-ms 30] [--poll-ms 100] [--big-bytes 1200M] [--repeat 3]
       [--skip-latency] [--skip-throughput] [--json out.json]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def load():
    return os.getloadavg()


def percentile(sorted_values, q):
    """numpy 'linear' percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def copy_atomically(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = dst + ".tmp"
    shutil.copyfile(src, tmp)
    os.rename(tmp, dst)


def make_source_trial(trialstat, path, steps, width):
    if os.path.isdir(path) and os.path.exists(os.path.join(path, "training_job_end.ts")):
        return
    run([trialstat, "example", "--out", path, "--overwrite", "--steps", str(steps),
         "--save-interval", "1", "--layers", "19", "--width", str(width)],
        stdout=subprocess.DEVNULL)


def step_files(src):
    """[(step, event_rel or None, index_rel)] in step order (one worker)."""
    out = []
    for index in sorted(glob.glob(os.path.join(src, "index", "*", "*.json"))):
        rel = os.path.relpath(index, src)
        base = os.path.basename(index)
        step = int(base.split("_", 1)[0])
        worker = base[len("%012d_" % step):-len(".json")]
        event = os.path.join("events", "%012d" % step, "%012d_%s.tfevents" % (step, worker))
        out.append((step, event if os.path.exists(os.path.join(src, event)) else None, rel))
    return out


def tensors_per_step(src, files):
    with open(os.path.join(src, files[0][2])) as f:
        return len(json.load(f)["tensor_payload"])


def latency_run(trialstat, src, files, live, interval_s, extra_flags, label, env=None):
    shutil.rmtree(live, ignore_errors=True)
    os.makedirs(live)
    events = live + ".events.jsonl"
    watch = subprocess.Popen([trialstat, "watch", live, "--events", events, "--format", "table"]
                             + extra_flags, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    time.sleep(0.5)  # let it start (it waits for the collections file anyway)
    for col in glob.glob(os.path.join(src, "collections", "*", "*")):
        copy_atomically(col, os.path.join(live, os.path.relpath(col, src)))
    renamed = {}
    next_slot = time.monotonic()
    for step, event, index in files:
        next_slot += interval_s
        if event is not None:
            copy_atomically(os.path.join(src, event), os.path.join(live, event))
        copy_atomically(os.path.join(src, index), os.path.join(live, index))
        renamed[step] = time.time()
        delay = next_slot - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    time.sleep(1.0)
    copy_atomically(os.path.join(src, "training_job_end.ts"), os.path.join(live, "training_job_end.ts"))
    _, err = watch.communicate(timeout=600)
    if watch.returncode not in (0, 1):
        sys.exit("watch failed (%d): %s" % (watch.returncode, err.decode()[-2000:]))
    progress = []
    with open(events) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "progress" and e.get("last_step") is not None:
                progress.append((e["last_step"], e["time"]))
    latencies = []
    for step, t0 in sorted(renamed.items()):
        verdict = next((t for last, t in progress if last >= step), None)
        if verdict is None:
            sys.exit("%s: no verdict for step %d" % (label, step))
        latencies.append((verdict - t0) * 1000.0)
    s = sorted(latencies)
    return {"label": label, "flags": extra_flags, "steps": len(s),
            "median_ms": statistics.median(s), "p99_ms": percentile(s, 99), "max_ms": s[-1],
            "mean_ms": statistics.fmean(s)}


def warm(trial):
    buf = bytearray(1 << 20)
    for path in glob.glob(os.path.join(trial, "events", "*", "*.tfevents")):
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def timed(cmd, trial, repeat):
    times = []
    rc = None
    for _ in range(repeat):
        warm(trial)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        rc = p.returncode
    return statistics.median(times), times, rc


def throughput(trialstat, work, big_bytes, repeat):
    big = os.path.join(work, "big")
    if not os.path.exists(os.path.join(big, "training_job_end.ts")):
        run([trialstat, "example", "--out", big, "--overwrite", "--target-bytes", big_bytes,
             "--width", "512", "--layers", "3"], stdout=subprocess.DEVNULL)
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(big, "**", "*"), recursive=True)
               if os.path.isfile(p))
    rules = timed([trialstat, "rules", big, "--format", "json", "--device", "cpu"], big, repeat)
    all_rules = timed([trialstat, "rules", big, "--format", "json", "--device", "cpu", "--config",
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), "all_rules.json")],
                      big, repeat)
    stats = timed([trialstat, "stats", big, "--format", "json", "--device", "cpu"], big, repeat)
    stats0 = timed([trialstat, "stats", big, "--format", "json", "--bins", "0", "--device", "cpu"],
                   big, repeat)
    if rules[2] not in (0, 1) or all_rules[2] not in (0, 1) or stats[2] != 0 or stats0[2] != 0:
        sys.exit("a command failed: rules %s, all rules %s, stats %s, stats --bins 0 %s"
                 % (rules[2], all_rules[2], stats[2], stats0[2]))
    return {"trial_bytes": size, "rules_s": rules[0], "all_rules_s": all_rules[0], "stats_s": stats[0],
            "stats_bins0_s": stats0[0], "rules_runs": rules[1], "all_rules_runs": all_rules[1],
            "stats_runs": stats[1], "stats_bins0_runs": stats0[1],
            "rules_gb_per_s": size / rules[0] / 1e9, "stats_gb_per_s": size / stats[0] / 1e9,
            "ratio_vs_stats": stats[0] / rules[0], "ratio_vs_stats_bins0": stats0[0] / rules[0],
            "all_ratio_vs_stats": stats[0] / all_rules[0],
            "all_ratio_vs_stats_bins0": stats0[0] / all_rules[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/trialstat-live-bench")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--interval-ms", type=float, default=30.0)
    ap.add_argument("--poll-ms", type=int, default=100)
    ap.add_argument("--big-bytes", default="1200M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--omp-wait-policy", default="",
                    help="OMP_WAIT_POLICY for the watcher (e.g. PASSIVE: no spinning OpenMP threads "
                         "between polls); default: inherited")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    trialstat = os.path.abspath(os.path.join(a.build, "tools", "trialstat", "trialstat"))
    os.makedirs(a.work, exist_ok=True)
    out = {"load_before": load(), "cpus": os.cpu_count()}
    if not a.skip_latency:
        src = os.path.join(a.work, "source")
        make_source_trial(trialstat, src, a.steps, a.width)
        files = step_files(src)[: a.steps]
        out["tensors_per_step"] = tensors_per_step(src, files)
        out["step_bytes"] = os.path.getsize(os.path.join(src, files[1][1])) if files[1][1] else 0
        out["latency"] = []
        env = dict(os.environ)
        if a.omp_wait_policy:
            env["OMP_WAIT_POLICY"] = a.omp_wait_policy
        out["omp_wait_policy"] = env.get("OMP_WAIT_POLICY", "")
        for flags, label in ((["--poll-ms", str(a.poll_ms)], "inotify"),
                             (["--poll-ms", str(a.poll_ms), "--no-inotify"], "poll %d ms" % a.poll_ms)):
            r = latency_run(trialstat, src, files, os.path.join(a.work, "live"), a.interval_ms / 1000.0,
                            flags, label, env)
            r["load_after"] = load()
            out["latency"].append(r)
            print("latency [%s]: %d steps x %d tensors (%d bytes/step), one every %.0f ms: "
                  "median %.1f ms, p99 %.1f ms, max %.1f ms (load %.2f)"
                  % (label, r["steps"], out["tensors_per_step"], out["step_bytes"], a.interval_ms,
                     r["median_ms"], r["p99_ms"], r["max_ms"], r["load_after"][0]))
    if not a.skip_throughput:
        t = throughput(trialstat, a.work, a.big_bytes, a.repeat)
        t["load_after"] = load()
        out["throughput"] = t
        print("throughput: trial %.2f GB; default rules %.2f s (%.2f GB/s), all 8 rules %.2f s, "
              "stats %.2f s, stats --bins 0 %.2f s; rules/stats throughput ratio: default %.2f "
              "(vs --bins 0: %.2f), all 8 %.2f (vs --bins 0: %.2f) (load %.2f)"
              % (t["trial_bytes"] / 1e9, t["rules_s"], t["rules_gb_per_s"], t["all_rules_s"],
                 t["stats_s"], t["stats_bins0_s"], t["ratio_vs_stats"], t["ratio_vs_stats_bins0"],
                 t["all_ratio_vs_stats"], t["all_ratio_vs_stats_bins0"], t["load_after"][0]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
