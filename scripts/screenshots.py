#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README's screenshots: an example trial whose training explodes, its HTML report
(`trialstat report`) and its TensorBoard export (`trialstat tensorboard`) served by TensorBoard
on 127.0.0.1, each opened in headless Chromium with the network disabled.

    .venv/bin/python scripts/screenshots.py [--build build] [--out docs/images]

Needs the built CLI and example trainer, Debian's chromium, and tensorboard in the running
Python (tools/python/requirements-build.txt) for the second screenshot."""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import headless_chromium  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "docs", "images"))
    args = ap.parse_args()
    cli = os.path.join(args.build, "tools", "trialstat", "trialstat")
    trainer = os.path.join(args.build, "tools", "example_trial", "trialstat-example-trial")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        trial = os.path.join(tmp, "exploding")
        # Two workers, explodes around step 11 of 60 (so the curves show the run-up).
        subprocess.run([trainer, "--out", trial, "--pathology", "exploding", "--steps", "60",
                        "--save-interval", "1", "--workers", "2", "--lr", "12"],
                       check=True, capture_output=True)
        html = os.path.join(tmp, "report.html")
        subprocess.run([cli, "report", trial, "-o", html, "--no-progress"], check=False)
        shot = os.path.join(args.out, "report.png")
        headless_chromium.run("file://" + html, screenshot=shot, size=(1300, 1700))
        print("wrote", shot, "blank" if headless_chromium.png_is_blank(shot) else "")

        logdir = os.path.join(tmp, "tb")
        subprocess.run([cli, "tensorboard", trial, "--logdir", logdir, "--no-progress"], check=True)
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir,
                                   "--host", "127.0.0.1", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            for _ in range(120):  # bounded wait for the server (60 s)
                try:
                    urllib.request.urlopen(url + "data/runs", timeout=1).read()
                    break
                except OSError:
                    time.sleep(0.5)
            shot = os.path.join(args.out, "tensorboard.png")
            headless_chromium.run(url + "?tagFilter=fc1.weight#scalars", screenshot=shot,
                                  size=(1400, 1000), budget_ms=20000)
            print("wrote", shot, "blank" if headless_chromium.png_is_blank(shot) else "")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
