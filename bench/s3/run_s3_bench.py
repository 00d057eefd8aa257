#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""S3 benchmark (issue 9), as ratios measured side by side in one run against one loopback
S3-compatible server (moto's server mode, as the tests use):

  raw    : every event object of the trial fetched concurrently with no processing (curl
           --parallel --parallel-max 32 into /dev/null): the transfer ceiling of this server;
           also as ranged GETs of 8 MiB parts, and as every object of the trial (index and
           collections files too, which `stats` fetches before the first event range);
  local  : the same `stats` command on the local copy of the trial (the processing alone);
  stats  : `trialstat stats s3://... --format json --bins 0 > /dev/null`;
  rule   : `trialstat rules s3://... --rule LossNotDecreasing` (1 tensor of ~20), with the bytes
           it transferred counted by a proxy in front of the server;
  smdebug: smdebug 1.0.34 computing the same moments from the same bucket (only with --smdebug,
           on a smaller trial: it downloads whole objects one by one);
  rss    : peak RSS of `stats` on two trial sizes (the in-flight budget bounds it);
  cpu    : CPU seconds of the server and of the client (curl or trialstat) during `raw` of every
           object and during `stats`, to say which side is the bottleneck; every sample is kept.

Trials come from the project's own example trainer. Usage:
  bench/s3/run_s3_bench.py --build build [--bytes 1G] [--big-bytes 4G] [--smdebug-bytes 100M]
                           [--repeat 3] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "s3"))
import s3_server  # noqa: E402

BUCKET = "bench"


def env_for(endpoint):
    env = dict(os.environ)
    env.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": endpoint, "OPENBLAS_NUM_THREADS": "1"})
    return env


def timed(cmd, env, stdout=subprocess.DEVNULL):
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done


def server_cpu_s(server):
    """CPU seconds (user + system) the loopback server's process has used so far."""
    fields = pathlib.Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb(cmd, env):
    """Peak RSS of one child process (GNU time's %M, KiB)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def make_trial(cli, out, size, width=0):
    if not out.exists():
        extra = ["--width", str(width)] if width else []
        subprocess.run([cli, "example", "--out", str(out), "--target-bytes", size, *extra], check=True,
                       stdout=subprocess.DEVNULL)
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def upload(client, folder, prefix):
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(folder).as_posix()}")


def raw_fetch(endpoint, folder, prefix, part_bytes=0, pattern="*.tfevents"):
    """Every event object fetched concurrently, no processing: curl's own SigV4 and parallel
    transfers (the same libcurl as trialstat), path-style URLs. With `part_bytes`, each object is
    fetched as ranged GETs of at most that many bytes (as `stats` splits large reads). With
    pattern "*", every object of the trial (index and collections files too: what `stats` fetches)."""
    config = tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False)
    for path in sorted(p for p in folder.rglob(pattern) if p.is_file()):
        url = f"{endpoint}/{BUCKET}/{prefix}/{path.relative_to(folder).as_posix()}"
        size = path.stat().st_size
        if not part_bytes:
            config.write(f'url = "{url}"\noutput = "/dev/null"\n')
            continue
        for offset in range(0, size, part_bytes):
            last = min(size, offset + part_bytes) - 1
            config.write(f'url = "{url}"\noutput = "/dev/null"\nrange = "{offset}-{last}"\n')
    config.close()
    start = time.perf_counter()
    subprocess.run(["curl", "--no-progress-meter", "--fail", "--retry", "5", "--retry-all-errors",
                    "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "testing:testing",
                    "--parallel", "--parallel-max", "32", "-K", config.name], check=True)
    elapsed = time.perf_counter() - start
    os.unlink(config.name)
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--work", default="/tmp/trialstat-s3-bench")
    parser.add_argument("--bytes", default="1G")
    parser.add_argument("--big-bytes", default="")
    parser.add_argument("--big-trial", default="", help="an existing trial folder for the peak-RSS comparison "
                        "(instead of writing one of --big-bytes)")
    parser.add_argument("--smdebug-bytes", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--width", type=int, default=0, help="hidden width of the trials (larger: fewer, bigger event files)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    cli = str(pathlib.Path(args.build).resolve() / "tools" / "trialstat" / "trialstat")
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    import boto3

    moto = s3_server.MotoServer()
    results = {"machine": os.uname().nodename, "cores": os.cpu_count()}
    try:
        client = boto3.client("s3", endpoint_url=moto.endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        client.create_bucket(Bucket=BUCKET)
        env = env_for(moto.endpoint)
        trial = work / f"trial-{args.bytes}-w{args.width}"
        total = make_trial(cli, trial, args.bytes, args.width)
        upload(client, trial, "main")
        event_bytes = sum(p.stat().st_size for p in trial.rglob("*.tfevents"))
        raw, raw_all, raw_parts, stats, local = [], [], [], [], []
        # Where the CPU went, per run: the server's, and the client's (curl or trialstat).
        cpu = {"raw_all_server": [], "raw_all_client": [], "stats_server": [], "stats_client": []}
        stats_cmd = [cli, "stats", f"s3://{BUCKET}/main", "--format", "json", "--bins", "0", "--no-progress"]
        for _ in range(args.repeat):
            raw.append(raw_fetch(moto.endpoint, trial, "main"))
            server, client_cpu = server_cpu_s(moto), children_cpu_s()
            raw_all.append(raw_fetch(moto.endpoint, trial, "main", pattern="*"))
            cpu["raw_all_server"].append(server_cpu_s(moto) - server)
            cpu["raw_all_client"].append(children_cpu_s() - client_cpu)
            raw_parts.append(raw_fetch(moto.endpoint, trial, "main", part_bytes=8 << 20))
            server, client_cpu = server_cpu_s(moto), children_cpu_s()
            stats.append(timed(stats_cmd, env)[0])
            cpu["stats_server"].append(server_cpu_s(moto) - server)
            cpu["stats_client"].append(children_cpu_s() - client_cpu)
            # The same command on the local folder (page cache warm): the processing alone.
            local.append(timed([cli, "stats", str(trial), *stats_cmd[3:]], env)[0])
        raw_s, stats_s = statistics.median(raw), statistics.median(stats)
        results["raw_fetch_8mib_parts_s"] = statistics.median(raw_parts)
        results["raw_fetch_all_objects_s"] = statistics.median(raw_all)
        results["stats_vs_raw_all_objects"] = statistics.median(raw_all) / stats_s
        results["stats_local_s"] = statistics.median(local)
        results["trial_bytes"] = total
        results["event_bytes"] = event_bytes
        results["raw_fetch_s"] = raw_s
        results["raw_fetch_mb_s"] = event_bytes / raw_s / 1e6
        results["stats_s"] = stats_s
        results["stats_mb_s"] = event_bytes / stats_s / 1e6
        results["stats_vs_raw"] = raw_s / stats_s
        results.update({f"cpu_{name}_s": statistics.median(values) for name, values in cpu.items()})
        results["samples_s"] = {"raw": raw, "raw_all": raw_all, "raw_parts": raw_parts, "stats": stats,
                                "local": local}
        proxy = s3_server.CountingProxy(moto.port)
        try:
            penv = env_for(proxy.endpoint)
            rule_s, _ = timed([cli, "rules", f"s3://{BUCKET}/main", "--rule", "LossNotDecreasing",
                               "--no-progress"], penv)
            results["rule_loss_s"] = rule_s
            results["rule_loss_bytes"] = proxy.body_bytes
            results["rule_loss_fraction"] = proxy.body_bytes / total
        finally:
            proxy.stop()
        results["stats_peak_rss_mb"] = peak_rss_mb([cli, "stats", f"s3://{BUCKET}/main", "--format", "json",
                                                    "--bins", "0", "--no-progress"], env)
        if args.big_bytes or args.big_trial:
            big = pathlib.Path(args.big_trial) if args.big_trial else work / f"trial-{args.big_bytes}"
            results["big_trial_bytes"] = make_trial(cli, big, args.big_bytes)
            upload(client, big, "big")
            results["big_stats_peak_rss_mb"] = peak_rss_mb([cli, "stats", f"s3://{BUCKET}/big", "--format",
                                                            "json", "--bins", "0", "--no-progress"], env)
            results["big_stats_s"], _ = timed([cli, "stats", f"s3://{BUCKET}/big", "--format", "json", "--bins", "0",
                                               "--no-progress"], env)
        if args.smdebug_bytes:
            smdebug_python = HERE.parent.parent / ".venv-smdebug" / "bin" / "python"
            small = work / f"trial-{args.smdebug_bytes}-w{args.width}"
            results["smdebug_trial_bytes"] = make_trial(cli, small, args.smdebug_bytes, args.width)
            upload(client, small, "small")
            ours, _ = timed([cli, "stats", f"s3://{BUCKET}/small", "--format", "json", "--bins", "0",
                             "--no-progress"], env)
            theirs, _ = timed([str(smdebug_python), str(HERE / "smdebug_s3_stats.py"), f"s3://{BUCKET}/small"], env)
            results["smdebug_trial_stats_peak_rss_mb"] = peak_rss_mb(
                [cli, "stats", f"s3://{BUCKET}/small", "--format", "json", "--bins", "0", "--no-progress"], env)
            results["smdebug_s"] = theirs
            results["trialstat_small_s"] = ours
            results["vs_smdebug"] = theirs / ours
    finally:
        moto.stop()
    print(json.dumps(results, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
