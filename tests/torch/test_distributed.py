# SPDX-License-Identifier: Apache-2.0
"""trialstat.torch under DistributedDataParallel (spec/HOOK_API.md §7, §11 item 12, D4): two ranks
(gloo on 127.0.0.1, CPU) train a DDP-wrapped MLP on different data for 3 TRAIN steps, saving
weights, biases, gradients and losses every step (ddp_train.py). trialstat's hook runs three
configurations in one pair of processes — include_workers "all" and "one" with the default
``gradients="optimizer"``, and "all" with ``gradients="local"`` — and smdebug 1.0.34's hook runs
"all" and "one" in another pair, at the same time.

Checked: workers ``worker_0``/``worker_1``, the file sets and ``_meta.num_workers`` of §7 (and
smdebug's), smdebug's reader seeing the same names/steps/workers in both trials; trialstat's
``gradient/*`` equal to the averaged ``.grad`` the optimizer applied, bit for bit, and weights
equal to the pre-forward parameters; smdebug's gradients equal to each rank's local gradient and
unequal to the averaged one (D4); with ``gradients="local"`` trialstat's trial read by smdebug's
reader is identical to smdebug's, value for value."""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch

import trial_files
from conftest import HERE, smdebug_dump
from hook_helpers import optional_fixture

WORKERS = ["worker_0", "worker_1"]
STEPS = [0, 1, 2]
PREFIX = "DistributedDataParallel_"
OURS = ["all-optimizer", "one-optimizer", "all-local"]
THEIRS = ["all-local", "one-local"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_ranks(python, lib, out_root, configs):
    port = _free_port()
    procs = []
    for rank in range(2):
        env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
               "WORLD_SIZE": "2", "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([python, os.path.join(HERE, "ddp_train.py"), lib, str(out_root),
                                       ",".join(configs)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    return procs


def _finish(procs, what):
    outs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        outs.append(out)
    for proc, out in zip(procs, outs):
        assert proc.returncode == 0, f"{what} failed:\n{out[-6000:]}"


@pytest.fixture(scope="module")
def ddp(request, tmp_path_factory):
    """(root, smdebug's dumps or None without the smdebug venv)."""
    root = tmp_path_factory.mktemp("ddp")
    smdebug_python = optional_fixture(request, "smdebug_python")
    python = os.environ.get("TRIALSTAT_PYTHON", sys.executable)
    ours = _start_ranks(python, "trialstat", root / "trialstat", OURS)
    theirs = smdebug_python and _start_ranks(smdebug_python, "smdebug", root / "smdebug", THEIRS)
    _finish(ours, "trialstat.torch DDP ranks")
    if not theirs:
        return root, None
    _finish(theirs, "smdebug DDP ranks")
    dumps = smdebug_dump(smdebug_python, [(root / "trialstat" / "all-optimizer", root / "dump_ours_all"),
                                          (root / "trialstat" / "all-local", root / "dump_ours_local"),
                                          (root / "smdebug" / "all-local", root / "dump_theirs")])
    return root, dumps


def _need_smdebug(dumps):
    if dumps is None:
        pytest.skip("no smdebug venv: smdebug's side of the DDP comparison was not run")


def _expected(root, lib, config, rank):
    return torch.load(root / lib / f"{config}.rank{rank}.pt")


def _reader(path):
    import trialstat
    return trialstat.create_trial(str(path))


def _value(trial, name, step, worker):
    from trialstat.modes import ModeKeys
    return np.asarray(trial.tensor(name).value(step, mode=ModeKeys.TRAIN, worker=worker))


def _bitwise_equal(array, tensor):
    t = tensor.detach().cpu().numpy()
    return array.dtype == t.dtype and array.shape == t.shape and array.tobytes() == t.tobytes()


def _collections_meta(path):
    files = sorted(os.listdir(path / "collections" / "000000000"))
    metas = {}
    for f in files:
        with open(path / "collections" / "000000000" / f) as fh:
            metas[f] = json.load(fh)["_meta"]["num_workers"]
    return metas


def test_file_sets_and_num_workers(ddp):
    root, dumps = ddp
    ours_all = trial_files.relative_files(root / "trialstat" / "all-optimizer")
    assert ours_all == trial_files.relative_files(root / "trialstat" / "all-local")
    expected = sorted(
        [f"events/{s:012d}/{s:012d}_{w}.tfevents" for s in STEPS for w in WORKERS]
        + [f"index/000000000/{s:012d}_{w}.json" for s in STEPS for w in WORKERS]
        + [f"collections/000000000/{w}_collections.json" for w in WORKERS] + ["training_job_end.ts"])
    assert ours_all == expected
    assert _collections_meta(root / "trialstat" / "all-optimizer") == {
        "worker_0_collections.json": 2, "worker_1_collections.json": 2}
    ours_one = trial_files.relative_files(root / "trialstat" / "one-optimizer")
    assert ours_one == sorted([f"events/{s:012d}/{s:012d}_worker_0.tfevents" for s in STEPS]
                              + [f"index/000000000/{s:012d}_worker_0.json" for s in STEPS]
                              + ["collections/000000000/worker_0_collections.json", "training_job_end.ts"])
    assert _collections_meta(root / "trialstat" / "one-optimizer") == {"worker_0_collections.json": 1}
    _need_smdebug(dumps)  # smdebug's hook writes the same files
    assert ours_all == trial_files.relative_files(root / "smdebug" / "all-local")
    assert _collections_meta(root / "smdebug" / "all-local") == {
        "worker_0_collections.json": 2, "worker_1_collections.json": 2}
    assert ours_one == trial_files.relative_files(root / "smdebug" / "one-local")
    assert _collections_meta(root / "smdebug" / "one-local") == {"worker_0_collections.json": 1}


def test_index_files_name_their_worker(ddp):
    root, _ = ddp
    for config in ("all-optimizer", "one-optimizer"):
        for path, facts in trial_files.index_facts(root / "trialstat" / config).items():
            worker = "worker_" + path.split("_worker_")[1].split(".")[0]
            assert facts["meta"]["event_file_name"].endswith(f"_{worker}.tfevents"), path
            assert facts["meta"]["mode"] == "TRAIN"


def test_smdebug_reader_sees_the_same_names_steps_workers(ddp):
    root, dumps = ddp
    _need_smdebug(dumps)
    ours, _ = dumps[str(root / "trialstat" / "all-optimizer")]
    theirs, _ = dumps[str(root / "smdebug" / "all-local")]
    assert ours["workers"] == theirs["workers"] == WORKERS
    assert ours["tensor_names"] == theirs["tensor_names"]
    assert f"gradient/{PREFIX}module.fc1.weight" in ours["tensor_names"]
    assert f"{PREFIX}module.fc1.weight" in ours["tensor_names"]
    assert ours["steps"] == theirs["steps"]
    assert ours["steps"]["TRAIN"] == STEPS
    assert ours["mode_of"] == theirs["mode_of"]
    for name, record in ours["tensors"].items():
        assert sorted(record["records"]) == sorted(theirs["tensors"][name]["records"]), name
        assert sorted(record["records"]) == [f"{s}|{w}" for s in STEPS for w in WORKERS], name


def test_gradients_are_the_averaged_grad_and_weights_pre_forward(ddp):
    root, _ = ddp
    trial = _reader(root / "trialstat" / "all-optimizer")
    assert trial.workers() == WORKERS
    checked = 0
    for rank, worker in enumerate(WORKERS):
        expected = _expected(root, "trialstat", "all-optimizer", rank)
        for step in STEPS:
            record = expected[step]
            for pname, grad in record["avg_grad"].items():
                saved = _value(trial, f"gradient/{PREFIX}{pname}", step, worker)
                assert _bitwise_equal(saved, grad), (pname, step, worker)
                # D4 fixed: not the rank's local gradient
                assert not _bitwise_equal(saved, record["local_grad"][pname]), (pname, step, worker)
                checked += 1
            for pname, weight in record["weights"].items():
                assert _bitwise_equal(_value(trial, f"{PREFIX}{pname}", step, worker), weight), (pname, step)
            loss = _value(trial, "CrossEntropyLoss_output_0", step, worker)
            assert loss.shape == () and _bitwise_equal(loss, record["loss"])
    assert checked == 2 * 3 * 6
    # The averaged gradient is the same on both ranks; the losses differ (different data).
    g0 = _value(trial, f"gradient/{PREFIX}module.fc1.weight", 1, "worker_0")
    g1 = _value(trial, f"gradient/{PREFIX}module.fc1.weight", 1, "worker_1")
    assert g0.tobytes() == g1.tobytes()
    assert (_value(trial, "CrossEntropyLoss_output_0", 1, "worker_0").tobytes()
            != _value(trial, "CrossEntropyLoss_output_0", 1, "worker_1").tobytes())


def test_include_workers_one_writes_worker_0_only(ddp):
    root, _ = ddp
    trial = _reader(root / "trialstat" / "one-optimizer")
    assert trial.workers() == ["worker_0"]
    expected = _expected(root, "trialstat", "one-optimizer", 0)
    for step in STEPS:
        for pname, grad in expected[step]["avg_grad"].items():
            assert _bitwise_equal(_value(trial, f"gradient/{PREFIX}{pname}", step, "worker_0"), grad)


def test_smdebug_gradients_are_local(ddp):
    root, dumps = ddp
    _need_smdebug(dumps)
    trial = _reader(root / "smdebug" / "all-local")
    for rank, worker in enumerate(WORKERS):
        expected = _expected(root, "smdebug", "all-local", rank)
        for step in STEPS:
            record = expected[step]
            for pname, local in record["local_grad"].items():
                saved = _value(trial, f"gradient/{PREFIX}{pname}", step, worker)
                assert _bitwise_equal(saved, local), (pname, step, worker)
                assert not _bitwise_equal(saved, record["avg_grad"][pname]), (pname, step, worker)  # D4


def test_local_gradients_option_equals_smdebug(ddp):
    root, dumps = ddp
    trial = _reader(root / "trialstat" / "all-local")
    for rank, worker in enumerate(WORKERS):
        expected = _expected(root, "trialstat", "all-local", rank)
        for step in STEPS:
            for pname, local in expected[step]["local_grad"].items():
                assert _bitwise_equal(_value(trial, f"gradient/{PREFIX}{pname}", step, worker), local)
    # Same seeds and data: the whole trial, read by smdebug's reader, equals smdebug's.
    _need_smdebug(dumps)
    ours_json, ours_npz = dumps[str(root / "trialstat" / "all-local")]
    theirs_json, theirs_npz = dumps[str(root / "smdebug" / "all-local")]
    ours_json.pop("lib")
    theirs_json.pop("lib")
    assert ours_json == theirs_json
    ours_arrays, theirs_arrays = np.load(ours_npz), np.load(theirs_npz)
    assert sorted(ours_arrays.files) == sorted(theirs_arrays.files) and len(ours_arrays.files) == 2 * 3 * 13
    for key in ours_arrays.files:
        a, b = ours_arrays[key], theirs_arrays[key]
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
    assert trial_files.index_facts(root / "trialstat" / "all-local") == \
        trial_files.index_facts(root / "smdebug" / "all-local")
    assert trial_files.collections_facts(root / "trialstat" / "all-local") == \
        trial_files.collections_facts(root / "smdebug" / "all-local")
