#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The statistics store over s3:// (issue 26), against the loopback S3-compatible server the
tests use (moto's server mode) behind a counting proxy: `trialstat rules` (the 5 default rules)
with --store off, cold and warm; wall time (median of --repeat) and the event-file bytes each
run fetched. Usage:
  bench/store/bench_store_s3.py --cli build/tools/trialstat/trialstat --trial DIR [--repeat 3]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "s3"))
import s3_server  # noqa: E402
import boto3  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--trial", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    trial = pathlib.Path(a.trial)
    events = sum(p.stat().st_size for p in (trial / "events").rglob("*") if p.is_file())
    moto = s3_server.MotoServer()
    try:
        client = boto3.client("s3", endpoint_url=moto.endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        client.create_bucket(Bucket="bench")
        t0 = time.perf_counter()
        for path in sorted(p for p in trial.rglob("*") if p.is_file()):
            client.upload_file(str(path), "bench", f"t/{path.relative_to(trial).as_posix()}")
        print(f"uploaded {events} event bytes in {time.perf_counter() - t0:.1f} s")
        proxy = s3_server.CountingProxy(moto.port)
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1", AWS_ENDPOINT_URL_S3=proxy.endpoint)
        store = pathlib.Path(tempfile.mkdtemp()) / "store.sqlite"

        def run(mode):
            proxy.reset_counts()
            t = time.perf_counter()
            done = subprocess.run([a.cli, "rules", "s3://bench/t", "--store", mode], env=env,
                                  capture_output=True, text=True)
            assert done.returncode in (0, 1), done.stderr[-2000:]
            return time.perf_counter() - t, proxy.event_bytes, proxy.requests, done.stdout

        results = {"off": [], "cold": [], "warm": []}
        outputs = set()
        for _ in range(a.repeat):
            results["off"].append(run("off"))
            for suffix in ("", "-wal", "-shm"):
                pathlib.Path(str(store) + suffix).unlink(missing_ok=True)
            results["cold"].append(run(str(store)))
            results["warm"].append(run(str(store)))
            outputs.update(r[3] for r in (results["off"][-1], results["cold"][-1], results["warm"][-1]))
        assert len(outputs) == 1, "outputs differ"
        for mode, runs in results.items():
            secs = statistics.median(r[0] for r in runs)
            ev = runs[-1][1]
            print(f"{mode:5s} {secs:7.3f} s  event bytes fetched {ev:12d} ({100.0 * ev / events:6.3f}% of "
                  f"{events})  requests {runs[-1][2]}")
        off = statistics.median(r[0] for r in results["off"])
        cold = statistics.median(r[0] for r in results["cold"])
        warm = statistics.median(r[0] for r in results["warm"])
        print(f"cold/warm {cold / warm:.1f}x  off/warm {off / warm:.1f}x  write overhead {100 * (cold - off) / off:+.1f}%  "
              f"store {store.stat().st_size} bytes; outputs identical")
        proxy.stop()
    finally:
        moto.stop()


if __name__ == "__main__":
    main()
