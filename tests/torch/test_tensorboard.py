# SPDX-License-Identifier: Apache-2.0
"""TensorBoard export of trialstat.torch against smdebug's (spec/HOOK_API.md §8.2, §11 item 18): the
``tensorboard`` scenario of extra_scenarios.py (``tensorboard_dir=``, weights/biases/gradients/losses
every 2 steps, ``save_scalar`` every step, TRAIN/EVAL/TRAIN) and ``tensorboard_export_flag``
(``export_tensorboard=True``: ``<out_dir>/tensorboard``) trained with both hooks: the same layout
``<tb_dir>/<MODE>/<S12>_<pid>_<host>.tfevents`` (pid and host aside), one file per (mode, step),
and per file the same events in the same order — tags, steps, scalar values, histogram
min/max/num/sum, bucket limits and counts exactly, sum_squares within float rounding. Files are
read with tensorboard's own record reader (which checks the CRCs)."""
import os
import re
import socket

import pytest

import extra_scenarios

FILE_RE = re.compile(r"^(\d{12})_(\d+)_(.+)\.tfevents$")


@pytest.fixture(scope="module")
def trials(tmp_path_factory, smdebug_python):
    import trialstat.torch as smd
    root = tmp_path_factory.getbasetemp() / "extra_smdebug"
    proc = extra_scenarios.start(smdebug_python, "smdebug", root)  # shared with test_compile.py
    ours = tmp_path_factory.mktemp("tensorboard")
    for name in ("tensorboard", "tensorboard_export_flag"):
        hook = getattr(extra_scenarios, name)(smd, str(ours / name))
        assert hook.capture_errors == []
    extra_scenarios.results(proc)
    return ours, root


def _layout(tb_dir):
    """{(mode folder, S12): (pid, host)} of a TensorBoard folder."""
    out = {}
    for mode in sorted(os.listdir(tb_dir)):
        for name in sorted(os.listdir(os.path.join(tb_dir, mode))):
            m = FILE_RE.match(name)
            assert m, name
            assert (mode, m.group(1)) not in out, f"two files for {mode} step {m.group(1)}"
            out[(mode, m.group(1))] = (int(m.group(2)), m.group(3))
    return out


def _events(path):
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    out = []
    for raw in RawEventFileLoader(path).Load():
        event = event_pb2.Event.FromString(raw)
        assert event.HasField("summary"), event
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                data = value.simple_value
            else:
                assert kind == "histo", kind
                h = value.histo
                data = (h.min, h.max, h.num, h.sum, tuple(h.bucket_limit), tuple(h.bucket), h.sum_squares)
            out.append((event.step, value.tag, kind, value.metadata.SerializeToString(), data))
    return out


def _file(tb_dir, layout, key):
    pid, host = layout[key]
    return os.path.join(tb_dir, key[0], f"{key[1]}_{pid}_{host}.tfevents")


def _compare_dirs(ours_dir, theirs_dir):
    ours, theirs = _layout(ours_dir), _layout(theirs_dir)
    assert sorted(ours) == sorted(theirs)
    assert {v for v in ours.values()} == {(os.getpid(), socket.gethostname())}
    counts = {"histo": 0, "simple_value": 0}
    for key in ours:
        a, b = _events(_file(ours_dir, ours, key)), _events(_file(theirs_dir, theirs, key))
        assert [e[:4] for e in a] == [e[:4] for e in b], key
        for x, y in zip(a, b):
            counts[x[2]] += 1
            if x[2] == "simple_value":
                assert x[4] == y[4], (key, x[1])
            else:
                assert x[4][:6] == y[4][:6], (key, x[1])
                assert x[4][6] == pytest.approx(y[4][6], rel=1e-12), (key, x[1])
                assert x[4][2] > 0 and sum(x[4][5]) == x[4][2], (key, x[1])
    return ours, counts


def test_same_layout_tags_and_values(trials):
    ours, theirs = trials
    layout, counts = _compare_dirs(str(ours / "tensorboard.tb"), str(theirs / "tensorboard.tb"))
    # TRAIN saved steps 0, 2 (global 0, 2) and mode step 4 (global 6); EVAL mode step 0 (global 3);
    # scalars queued in TRAIN step 2 and flushed after set_mode(EVAL) go to an EVAL file of step 2
    assert sorted(layout) == [("EVAL", "000000000002"), ("EVAL", "000000000003"), ("TRAIN", "000000000000"),
                              ("TRAIN", "000000000002"), ("TRAIN", "000000000006")]
    assert counts["histo"] == 3 * 12 + 6 and counts["simple_value"] == 4 + 6
    tags = {e[1] for e in _events(_file(str(ours / "tensorboard.tb"), layout, ("TRAIN", "000000000000")))}
    assert {"weights/MLP_fc1.weight", "biases/MLP_fc1.bias", "gradients/gradient/MLP_fc1.weight",
            "CrossEntropyLoss_output_0", "scalar/lr", "scalar/loss_value"} <= tags


def test_export_tensorboard_flag_writes_inside_the_trial(trials):
    ours, theirs = trials
    ours_tb = ours / "tensorboard_export_flag" / "tensorboard"
    layout, counts = _compare_dirs(str(ours_tb), str(theirs / "tensorboard_export_flag" / "tensorboard"))
    assert sorted(layout) == [("TRAIN", "000000000000"), ("TRAIN", "000000000001")]
    assert counts["histo"] == 2 * 3 and counts["simple_value"] == 2
    import trialstat
    trial = trialstat.create_trial(str(ours / "tensorboard_export_flag"))
    assert trial.steps() == [0, 1]  # the tensorboard folder is not part of the trial
