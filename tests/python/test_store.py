# SPDX-License-Identifier: Apache-2.0
"""The statistics store from Python (issue 26): ``create_trial(path, store=...)`` gives the same
statistics, rule results and TensorBoard files with and without the store, cold and warm, and a
warm run reads no event-file byte."""
import os

import numpy as np
import pytest

trialstat = pytest.importorskip("trialstat")


@pytest.fixture(autouse=True)
def store_everything(monkeypatch):
    """These trials' tensors are small: by default a local record under 4 KiB is read, not
    stored (README "Statistics store"); here every record is stored."""
    monkeypatch.setenv("TRIALSTAT_STORE_MIN_RECORD_BYTES", "0")


def frames_equal(a, b):
    assert list(a.keys()) == list(b.keys())
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), key
        else:
            assert (x == y).all(), key


def test_stats_rules_and_tensorboard_same_cold_and_warm(example_trials, tmp_path):
    path = example_trials["writer_two_workers_eval"]
    store = str(tmp_path / "store.sqlite")
    off = trialstat.create_trial(path, store="off")
    plain = off.stats(histogram_bins=16, log_histogram=True, as_frame=False)
    plain_rules = [(r.rule_name, r.status, len(r.findings)) for r in trialstat.rules.evaluate(off)]
    assert len(plain["tensor"]) > 50 and np.nanmax(plain["max"]) > 0
    for run in ("cold", "warm"):
        trial = trialstat.create_trial(path, store=store)
        frames_equal(plain, trial.stats(histogram_bins=16, log_histogram=True, as_frame=False))
        assert [(r.rule_name, r.status, len(r.findings)) for r in trialstat.rules.evaluate(trial)] == plain_rules
        summary = trial.store_summary()
        assert summary["path"] == store
        if run == "warm":
            assert summary["served"] > 0 and summary["read"] == 0 and summary["bytes_read"] == 0, summary
        else:
            assert summary["written"] > 0, summary
    # TensorBoard files, warm, byte for byte.
    off.to_tensorboard(str(tmp_path / "tb_off"))
    trialstat.create_trial(path, store=store).to_tensorboard(str(tmp_path / "tb_warm"))
    for root, _, files in os.walk(tmp_path / "tb_off"):
        for name in files:
            a = os.path.join(root, name)
            b = os.path.join(tmp_path / "tb_warm", os.path.relpath(a, tmp_path / "tb_off"))
            with open(a, "rb") as fa, open(b, "rb") as fb:
                assert fa.read() == fb.read(), a


def test_auto_store_lives_under_the_cache_folder(example_trials, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TRIALSTAT_STORE", raising=False)
    trial = trialstat.create_trial(example_trials["writer_exploding"])
    assert trial.store == "auto"
    trial.stats(as_frame=False)
    summary = trial.store_summary()
    assert summary["path"].startswith(str(tmp_path / "cache" / "trialstat"))
    assert os.path.exists(summary["path"])


def test_a_corrupt_store_is_a_warning_and_the_trial_is_read(example_trials, tmp_path, capfd):
    path = example_trials["writer_exploding"]
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(os.urandom(4096))
    plain = trialstat.create_trial(path, store="off").stats(as_frame=False)
    got = trialstat.create_trial(path, store=str(bad)).stats(as_frame=False)
    frames_equal(plain, got)
    assert "statistics store" in capfd.readouterr().err
