# SPDX-License-Identifier: Apache-2.0
"""`trialstat tensorboard` and `trialstat report` (issue 11).

TensorBoard: TensorBoard's own reader (EventAccumulator, pip `tensorboard`) loads every event
file written for the golden trials and example trials, with its CRC checks; every scalar equals
the `trialstat stats --format json` value (rounded to float32, as TensorBoard stores it), every
histogram's buckets equal the `--log-hist` counts trimmed as smdebug trims them, steps are global
steps, nothing else is written.

Report: written for golden and example trials; headless Chromium (Debian's `chromium`) opens it
with the network disabled: no console errors, one plot per tensor, every finding in the DOM, a
screenshot that is not blank. Skips cleanly without the CLI, tensorboard or chromium."""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import GOLDEN, REPO

sys.path.insert(0, os.path.join(REPO, "scripts"))
import headless_chromium  # noqa: E402

STATS = ["mean", "std", "min", "max", "l2", "linf", "zero_fraction", "nan_count", "pos_inf_count",
         "neg_inf_count", "update_ratio"]
VISUAL_EXAMPLES = ["writer_two_workers_eval", "writer_exploding"]


def tb_tag(text):
    return re.sub(r"[^-/\w.]", "_", text).lstrip("/")


def run_cli(cli, *args, ok=(0,)):
    r = subprocess.run([cli, *args], capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode in ok, f"{args}: exit {r.returncode}\n{r.stderr[-3000:]}"
    return r


def stats_rows(cli, trial):
    out = run_cli(cli, "stats", trial, "--format", "json", "--log-hist", "--bins", "0",
                  "--no-reductions", "--no-progress").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def expected_scalars(row):
    out = {}
    for key in ["mean", "std", "min", "max", "l2", "linf"]:
        if row.get(key) is not None:
            out[key] = float(row[key])
    if row["numel"] > 0:
        out["zero_fraction"] = row["zero_count"] / row["numel"]
    for key in ["nan_count", "pos_inf_count", "neg_inf_count"]:
        out[key] = float(row[key])
    ratio = row.get("update_ratio")
    if ratio is not None:
        r = ratio["ratio"]
        out["update_ratio"] = float(r) if not isinstance(r, str) else float(r.replace("Infinity", "inf"))
    return out


def trimmed_buckets(log_hist, edges):
    """smdebug's _make_histogram trimming of the full counts (FORMAT §10)."""
    counts = np.zeros(log_hist["bins"], dtype=np.int64)
    for b, c in log_hist["nonzero"]:
        counts[b] = c
    if counts.sum() == 0:
        return None
    cum = np.cumsum((counts > 0).astype(np.int32))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    c = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    return edges[start:end + 1].tolist(), c.tolist()


def masked_crc(data):
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
    return masked_crc32c(data)


def check_crcs(path):
    """Every record's length CRC and payload CRC, independently of TensorBoard's reader."""
    with open(path, "rb") as f:
        data = f.read()
    pos, records = 0, 0
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        (len_crc,) = struct.unpack_from("<I", data, pos + 8)
        assert len_crc == masked_crc(data[pos:pos + 8]), f"{path}: length CRC at byte {pos}"
        payload = data[pos + 12:pos + 12 + length]
        (crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        assert crc == masked_crc(payload), f"{path}: payload CRC at byte {pos}"
        pos += 16 + length
        records += 1
    assert pos == len(data)
    return records


def load_logdir(logdir):
    """{(run, tag): [events]} through TensorBoard's EventAccumulator (its CRC-checking reader)."""
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    scalars, histograms = {}, {}
    for run in sorted(os.listdir(logdir)):
        run_dir = os.path.join(logdir, run)
        files = [f for f in os.listdir(run_dir) if "tfevents" in f]
        assert len(files) == 1, files
        records = check_crcs(os.path.join(run_dir, files[0]))
        acc = ea.EventAccumulator(run_dir, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
        acc.Reload()
        tags = acc.Tags()
        n = 0
        for tag in tags["scalars"]:
            scalars[(run, tag)] = acc.Scalars(tag)
            n += len(scalars[(run, tag)])
        for tag in tags["histograms"]:
            histograms[(run, tag)] = acc.Histograms(tag)
            n += len(histograms[(run, tag)])
        assert n + 1 == records, f"{run}: {records} records but {n} events + file_version read back"
    return scalars, histograms


def check_export(cli, trial, logdir):
    pytest.importorskip("tensorboard")
    import trialstat
    run_cli(cli, "tensorboard", trial, "--logdir", logdir, "--no-progress")
    scalars, histograms = load_logdir(logdir)
    edges = np.asarray(trialstat.log_histogram_edges())
    # Index what TensorBoard read: (run, mode, tensor tag part, statistic) -> {step: event}.
    got = {}
    for (run, tag), events in list(scalars.items()) + list(histograms.items()):
        mode, collection, rest = tag.split("/", 2)
        tensor, stat = rest.rsplit("/", 1)
        key = (run, mode, tensor, stat)
        assert key not in got, f"tag {tag} under two collections"
        got[key] = {e.step: e for e in events}
        assert len(got[key]) == len(events), f"{tag}: a step written twice"
    expected_count = 0
    for row in stats_rows(cli, trial):
        if "error" in row:
            continue
        base = (row["worker"], row["mode"].lower(), tb_tag(row["tensor"]))
        for stat, value in expected_scalars(row).items():
            events = got.get(base + (stat,))
            assert events is not None and row["step"] in events, f"missing {base} {stat} step {row['step']}"
            e = events[row["step"]]
            with np.errstate(over="ignore"):  # float32 rounding of huge values gives inf, as stored
                want, have = np.float32(value), np.float32(e.value)
            assert (np.isnan(want) and np.isnan(have)) or want == have, (base, stat, row["step"], value, e.value)
            assert e.wall_time > 1.0e9
            expected_count += 1
        trimmed = trimmed_buckets(row["log_hist"], edges)
        if trimmed is not None:
            h = got[base + ("histogram",)][row["step"]].histogram_value
            assert list(h.bucket_limit) == trimmed[0]
            assert [int(c) for c in h.bucket] == trimmed[1]
            assert h.num == sum(trimmed[1])
            expected_count += 1
    written = sum(len(v) for v in got.values())
    assert written == expected_count, f"{written} events written, {expected_count} expected"
    return got


@pytest.mark.parametrize("name", GOLDEN)
def test_tensorboard_golden(cli, shared_trials, tmp_path, name):
    check_export(cli, os.path.join(shared_trials, name), str(tmp_path / "tb"))


@pytest.mark.parametrize("name", VISUAL_EXAMPLES)
def test_tensorboard_example(cli, example_trials, tmp_path, name):
    got = check_export(cli, example_trials[name], str(tmp_path / "tb"))
    runs = {k[0] for k in got}
    if name == "writer_two_workers_eval":
        assert len(runs) == 2 and any(k[1] == "eval" for k in got)


def test_tensorboard_logdir_refused_unless_overwrite(cli, example_trials, tmp_path):
    trial = example_trials["writer_exploding"]
    logdir = str(tmp_path / "tb")
    run_cli(cli, "tensorboard", trial, "--logdir", logdir, "--no-progress")
    r = run_cli(cli, "tensorboard", trial, "--logdir", logdir, "--no-progress", ok=(2,))
    assert "--overwrite" in r.stderr
    keep = tmp_path / "tb" / "notes.txt"
    keep.write_text("mine")
    run_cli(cli, "tensorboard", trial, "--logdir", logdir, "--overwrite", "--no-progress")
    for run in os.listdir(logdir):
        if os.path.isdir(os.path.join(logdir, run)):
            assert len([f for f in os.listdir(os.path.join(logdir, run)) if "tfevents" in f]) == 1
    assert keep.read_text() == "mine"


def test_tensorboard_python_matches_cli(cli, example_trials, tmp_path):
    pytest.importorskip("tensorboard")
    import trialstat
    trial = trialstat.create_trial(example_trials["writer_two_workers_eval"])
    summary = trial.to_tensorboard(str(tmp_path / "py"))
    assert summary["scalars"] > 0 and summary["histograms"] > 0 and len(summary["files"]) == 2
    scalars_py, hist_py = load_logdir(str(tmp_path / "py"))
    run_cli(cli, "tensorboard", example_trials["writer_two_workers_eval"], "--logdir",
            str(tmp_path / "cli"), "--no-progress")
    scalars_cli, hist_cli = load_logdir(str(tmp_path / "cli"))
    assert {k: [(e.step, e.value) for e in v] for k, v in scalars_py.items()} == \
           {k: [(e.step, e.value) for e in v] for k, v in scalars_cli.items()}
    assert sum(len(v) for v in hist_py.values()) == summary["histograms"]


def test_corrupt_record_warns_and_is_marked(cli, tmp_path, example_trials):
    import shutil
    trial = str(tmp_path / "trial")
    shutil.copytree(example_trials["writer_exploding"], trial)
    events = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(trial, "events"))
                    for f in fs if f.endswith(".tfevents"))
    with open(events[3], "r+b") as f:  # flip a byte inside the first record's payload
        f.seek(40)
        b = f.read(1)
        f.seek(40)
        f.write(bytes([b[0] ^ 0xFF]))
    r = run_cli(cli, "tensorboard", trial, "--logdir", str(tmp_path / "tb"), "--no-progress")
    assert "warning:" in r.stderr and "could not be read" in r.stderr
    # The report marks it: listed in the trial summary (and on the tensor's plots).
    html = str(tmp_path / "r.html")
    r = run_cli(cli, "report", trial, "-o", html, "--no-progress", ok=(0, 1))
    assert "could not be read" in r.stderr
    with open(html, encoding="utf-8") as f:
        page = f.read()
    assert page.count('<tr class="record-error">') >= 1


# ---- report ---------------------------------------------------------------------------------

def rules_json(cli, trial):
    out = run_cli(cli, "rules", trial, "--format", "json", "--no-progress", ok=(0, 1)).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def check_report(cli, trial, html, *extra):
    r = run_cli(cli, "report", trial, "-o", html, "--no-progress", *extra, ok=(0, 1))
    size = os.path.getsize(html)
    assert size < 5_000_000, size
    with open(html, encoding="utf-8") as f:
        page = f.read()
    tensors = {row["tensor"] for row in stats_rows(cli, trial)}
    assert page.count('class="tensor-plot"') == len(tensors)
    results = rules_json(cli, trial)
    for result in results:
        assert f'data-rule="{result["rule"]}" data-status="{result["status"]}"' in page
    findings = sum(len(x["findings"]) for x in results)
    assert page.count('<tr class="finding"') == findings
    assert "BSD" in page and "http://" not in page.split("<script>", 1)[0]
    return r, page, tensors, findings


def test_report_example_trials(cli, example_trials, tmp_path):
    for name in VISUAL_EXAMPLES:
        _, page, _, findings = check_report(cli, example_trials[name], str(tmp_path / f"{name}.html"))
        if name == "writer_exploding":
            assert findings > 0 and page.count('class="heatmap-plot"') > 0


def test_report_golden(cli, shared_trials, tmp_path):
    for name in ["exploding", "healthy_mlp", "dtypes"]:
        check_report(cli, os.path.join(shared_trials, name), str(tmp_path / f"{name}.html"))


def test_report_tensor_regex_heatmap(cli, example_trials, tmp_path):
    html = str(tmp_path / "r.html")
    _, page, _, _ = check_report(cli, example_trials["writer_two_workers_eval"], html,
                                 "--tensor-regex", "fc1")
    assert page.count('class="heatmap-plot"') >= 1 and 'data-tensor="MLP_fc1.weight"' in page


def test_report_in_headless_chromium(cli, example_trials, tmp_path):
    if headless_chromium.chromium_path() is None:
        pytest.skip("chromium not installed (scripts/setup.sh installs it)")
    html = str(tmp_path / "report.html")
    _, page, tensors, findings = check_report(cli, example_trials["writer_exploding"], html)
    dom, errors, console = headless_chromium.load_with_error_capture(html)
    assert errors == [], errors
    assert 'data-rendered="true"' in dom, "the renderer did not finish"
    assert dom.count('class="tensor-plot"') == len(tensors)
    # Every tensor panel got its plots (BokehJS draws inside .bk-figure, in a shadow root).
    curves = dom[:dom.index('id="distributions"')]
    panels = curves.split('<div class="tensor-plot"')[1:]
    assert len(panels) == len(tensors)
    for p in panels:
        assert p.count('class="bk-figure"') >= 2, p[:200]
    assert dom.count('<tr class="finding"') == findings > 0
    shot = str(tmp_path / "report.png")
    headless_chromium.run("file://" + html, screenshot=shot, size=(1300, 1800))
    assert os.path.exists(shot) and not headless_chromium.png_is_blank(shot)


def test_report_python(example_trials, tmp_path):
    import trialstat
    trial = trialstat.create_trial(example_trials["writer_exploding"])
    results, info = trialstat.report(trial, str(tmp_path / "r.html"))
    assert any(r.issues_found for r in results)
    assert info["tensors"] > 0 and info["bytes"] == os.path.getsize(tmp_path / "r.html")


# ---- progress -------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["stats", "rules", "tensorboard", "report"])
def test_progress_forced_and_off(cli, example_trials, tmp_path, command):
    trial = example_trials["writer_two_workers_eval"]
    extra = {"stats": ["--format", "json"], "rules": [], "report": ["-o", str(tmp_path / "r.html")],
             "tensorboard": ["--logdir", str(tmp_path / "tb")]}[command]
    # A store of this test's own: cold, the line counts steps and the bytes read; warm (every
    # record served by the store, nothing read), steps and the records from the store, no bytes.
    store = ["--store", str(tmp_path / "store.sqlite")]
    r = run_cli(cli, command, trial, *extra, *store, "--progress", ok=(0, 1))
    line = r.stderr.split("\r")[-1]
    assert re.search(r"\d+/\d+ steps, \d+/\d+ MB", line), r.stderr[-500:]
    assert "from the store" not in line, line
    if command == "tensorboard":
        extra = ["--logdir", str(tmp_path / "tb_warm")]
    r = run_cli(cli, command, trial, *extra, *store, "--progress", ok=(0, 1))
    line = r.stderr.split("\r")[-1]
    assert re.search(r"(\d+)/\1 steps, \d+ records from the store", line), r.stderr[-500:]
    assert not re.search(r"steps, [^\n]*\d+/\d+ MB", line), line
    if command == "tensorboard":
        extra = ["--logdir", str(tmp_path / "tb2")]
    r = run_cli(cli, command, trial, *extra, "--no-progress", ok=(0, 1))
    assert " steps, " not in r.stderr  # not a terminal and --no-progress: nothing
    # Both flags at once are refused.
    run_cli(cli, command, trial, *extra, "--progress", "--no-progress", ok=(2,))


def test_tensorboard_serves_export(cli, example_trials, tmp_path):
    """TensorBoard itself serves the exported logdir on 127.0.0.1: its scalars and histograms
    plugins list every run and tag (bounded: 90 s to start and load, then stopped)."""
    pytest.importorskip("tensorboard")
    import socket
    import time
    import urllib.request
    logdir = str(tmp_path / "tb")
    run_cli(cli, "tensorboard", example_trials["writer_two_workers_eval"], "--logdir", logdir,
            "--no-progress")
    scalars, histograms = load_logdir(logdir)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir,
                               "--host", "127.0.0.1", "--port", str(port), "--load_fast", "false"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    want = {}
    for run, tag in scalars:
        want.setdefault(run, set()).add(tag)
    try:
        # TensorBoard loads the runs in a background thread, a few events at a time: poll until
        # it lists everything (or the deadline passes), then compare what it listed last.
        base = f"http://127.0.0.1:{port}/data/plugin"
        deadline, tags, hist = time.time() + 90, None, None
        while time.time() < deadline:
            try:
                tags = json.loads(urllib.request.urlopen(base + "/scalars/tags", timeout=2).read())
                hist = json.loads(urllib.request.urlopen(base + "/histograms/tags", timeout=2).read())
                if ({run: set(t) for run, t in tags.items()} == want
                        and sum(len(t) for t in hist.values()) == len(histograms)):
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert tags is not None and hist is not None, "TensorBoard did not start"
        assert {run: set(t) for run, t in tags.items()} == want
        assert sum(len(t) for t in hist.values()) == len(histograms)
    finally:
        server.terminate()
        server.wait(timeout=30)
