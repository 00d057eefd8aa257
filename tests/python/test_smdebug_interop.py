# SPDX-License-Identifier: Apache-2.0
"""smdebug notebooks run unchanged against trialstat (issue 14). Trials are written by smdebug's
own writers (FileWriter, CollectionManager; smdebug_side.py) and read by notebook-style code
that keeps smdebug's imports (``from smdebug import modes``, ``from smdebug.exceptions import
*``, ``StepState``, ``smdebug.rules.Rule``) with trialstat's ``create_trial``. That code runs in
the smdebug venv (.venv-smdebug, same Python version as .venv; scripts/setup.sh makes both from
one interpreter) with trialstat's package on PYTHONPATH. Where smdebug itself can answer, the
same code runs with smdebug's ``create_trial`` and the answers must match.

The waits (collections file, steps) are checked in this process: bounded by a timeout and
logging what they wait for."""
import json
import logging
import os
import subprocess
import sys
import textwrap
import time

import pytest

import trialstat
from conftest import golden_trials_or_none

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- running code in the smdebug venv ----------------------------------------------------------

@pytest.fixture(scope="module")
def smdebug_run(smdebug_python_path, tmp_path_factory):
    """run(code, *args, timeout=...) -> stdout of ``code`` run by the smdebug venv's Python with
    trialstat importable (a link to this process's trialstat package; never the rest of this
    venv's site-packages, whose numpy 2 would shadow smdebug's numpy 1.26)."""
    package = os.path.dirname(os.path.abspath(trialstat.__file__))
    link_dir = tmp_path_factory.mktemp("trialstat_path")
    os.symlink(package, os.path.join(link_dir, "trialstat"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(link_dir), HERE])
    env["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"
    env["TRIALSTAT_POLL_SECONDS"] = "0.05"
    env["TRIALSTAT_WAIT_TIMEOUT"] = "60"  # a regression fails with WaitTimeout, never hangs
    env.pop("PYTHONHOME", None)
    probe = subprocess.run(
        [smdebug_python_path, "-c",
         "import sys, trialstat._core, smdebug; print('%d.%d' % sys.version_info[:2])"],
        env=env, capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        theirs = subprocess.run([smdebug_python_path, "-c",
                                 "import sys; print('%d.%d' % sys.version_info[:2])"],
                                capture_output=True, text=True).stdout.strip()
        ours = "%d.%d" % sys.version_info[:2]
        if theirs != ours:
            pytest.skip(f"trialstat is built for Python {ours}, .venv-smdebug has {theirs} "
                        "(scripts/setup.sh makes both venvs from one interpreter)")
        raise AssertionError(f"trialstat is not importable in .venv-smdebug:\n{probe.stderr}")

    def run(code, *args, timeout=120):
        result = subprocess.run([smdebug_python_path, "-c", textwrap.dedent(code), *map(str, args)],
                                env=env, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"script failed (rc {result.returncode}):\n"
                                 f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}")
        return result.stdout

    return run


def _result(stdout):
    """The JSON on the line starting RESULT: (smdebug logs to stdout too)."""
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT:")]
    assert lines, stdout[-3000:]
    return json.loads(lines[-1][len("RESULT:"):])


WRITE_FINISHED = """
import sys
import numpy as np
from smdebug import modes
from smdebug_side import end_training, mlp_tensors, write_collections, write_step
path = sys.argv[1]
rng = np.random.default_rng(7)
write_collections(path)
# global steps: 0-3 TRAIN (mode steps 0-3), 4-5 EVAL (0-1), 6 and 8 TRAIN (4, 6); 7 never saved
for g, mode, ms in [(0, modes.TRAIN, 0), (1, modes.TRAIN, 1), (2, modes.TRAIN, 2),
                    (3, modes.TRAIN, 3), (4, modes.EVAL, 0), (5, modes.EVAL, 1),
                    (6, modes.TRAIN, 4), (8, modes.TRAIN, 6)]:
    tensors = mlp_tensors(g, rng, scale=3.0 if g in (2, 6) else 1.0,
                          extra=["late_tensor"] if g == 8 else [])
    if mode == modes.EVAL:  # evaluation saves no weights or gradients
        tensors = {k: v for k, v in tensors.items() if "relu" in k or "Loss" in k}
    write_step(path, g, tensors, mode=mode, mode_step=ms)
end_training(path)
"""


@pytest.fixture(scope="module")
def finished_trial(smdebug_run, tmp_path_factory):
    """A finished trial written by smdebug's FileWriter: TRAIN and EVAL steps, a gap, a tensor
    that appears late, the PyTorch hook's default collections."""
    path = tmp_path_factory.mktemp("smdebug_written") / "trial"
    smdebug_run(WRITE_FINISHED, path)
    return str(path)


# ---- 1. modes, step states and exceptions ---------------------------------------------------------

NOTEBOOK_ENUMS_AND_EXCEPTIONS = """
import sys, json
from smdebug import modes
from smdebug.core.modes import ModeKeys
from smdebug.core.tensor import StepState
from smdebug.exceptions import *
import trialstat
from trialstat import create_trial

trial = create_trial(sys.argv[1])
out = {}
# modes: ==, != both ways, `in`, sets and dict keys
assert trial.mode(0) == modes.TRAIN and modes.TRAIN == trial.mode(0)
assert trial.mode(4) == ModeKeys.EVAL and trial.mode(4) != modes.TRAIN
assert not (modes.TRAIN != trial.mode(1)) and trial.mode(4) in [modes.PREDICT, modes.EVAL]
assert set(trial.modes()) == {modes.TRAIN, modes.EVAL}
assert hash(trial.mode(0)) == hash(modes.TRAIN)
assert {modes.TRAIN: "train", modes.EVAL: "eval"}[trial.mode(5)] == "eval"
assert trialstat.modes.TRAIN == modes.TRAIN and trialstat.modes.TRAIN != modes.EVAL
out["train_steps"] = [s for s in trial.steps() if trial.mode(s) == modes.TRAIN]
out["eval_mode_steps"] = trial.steps(mode=modes.EVAL)
assert trial.tensor("relu1_output_0").value(1, mode=modes.EVAL).shape == (4, 6)
# step states, both sides of ==
assert trial.has_passed_step(2) == StepState.AVAILABLE
assert StepState.UNAVAILABLE == trial.has_passed_step(7)
assert trial.has_passed_step(9) == StepState.UNAVAILABLE  # finished: nothing after step 8
assert trial.has_passed_step(1, mode=modes.EVAL) == StepState.AVAILABLE
assert trial.has_passed_step(2) != StepState.NOT_YET_AVAILABLE
# smdebug's except clauses
caught = []
def expect(fn, cls):
    try:
        fn()
    except cls as e:
        assert isinstance(e, SMDebugError) and isinstance(e, trialstat.SMDebugError)
        assert isinstance(e, getattr(trialstat.exceptions, cls.__name__))
        caught.append([cls.__name__, type(e).__name__, str(e)])
        return
    raise AssertionError(f"{cls.__name__} not raised")
w = trial.tensor("fc1.weight")
expect(lambda: trial.tensor("nope"), TensorUnavailable)
expect(lambda: w.value(7), StepUnavailable)
expect(lambda: w.value(0, mode=modes.EVAL), TensorUnavailableForStep)
expect(lambda: trial.tensor("late_tensor").value(6), TensorUnavailableForStep)
expect(lambda: w.value(0, worker="worker_9"), InvalidWorker)
expect(lambda: w.reduction_value(0, "median"), SMDebugValueError)
expect(lambda: trial.wait_for_steps([20]), NoMoreData)
expect(lambda: trial.tensor("nope"), SMDebugError)
try:
    trial.wait_for_steps([20])
except NoMoreData as e:
    assert e.last_step == 8 and e.mode == modes.GLOBAL
out["caught"] = caught
print("RESULT:" + json.dumps(out))
"""


def test_modes_step_states_and_exceptions_interoperate(smdebug_run, finished_trial):
    out = _result(smdebug_run(NOTEBOOK_ENUMS_AND_EXCEPTIONS, finished_trial))
    assert out["train_steps"] == [0, 1, 2, 3, 6, 8]
    assert out["eval_mode_steps"] == [0, 1]
    names = [c[0] for c in out["caught"]]
    assert names == ["TensorUnavailable", "StepUnavailable", "TensorUnavailableForStep",
                     "TensorUnavailableForStep", "InvalidWorker", "SMDebugValueError",
                     "NoMoreData", "SMDebugError"]
    assert [c[1] for c in out["caught"]][:-1] == names[:-1]  # trialstat's class names and texts
    assert out["caught"][1][2] == "Step 7 of mode GLOBAL is not available as it was not saved"


NOTHING_IMPORTED = """
import sys, json
import trialstat
trial = trialstat.create_trial(sys.argv[1])
try:
    trial.tensor("nope")
except trialstat.TensorUnavailable as e:
    before = e
assert not [m for m in sys.modules if m == "smdebug" or m.startswith("smdebug.")], "imported"
assert type(before) is trialstat.exceptions.TensorUnavailable
assert not [c for c in type(before).__mro__ if c.__module__.startswith("smdebug")]
import pickle
import smdebug.exceptions
try:
    trial.tensor("nope")
except smdebug.exceptions.TensorUnavailable as e:
    after = e
assert isinstance(after, trialstat.TensorUnavailable) and type(after).__name__ == "TensorUnavailable"
again = pickle.loads(pickle.dumps(after))
assert isinstance(again, smdebug.exceptions.TensorUnavailable) and str(again) == str(after)
print("RESULT:" + json.dumps({"ok": True}))
"""


def test_nothing_imported_without_smdebug(smdebug_run, finished_trial):
    """smdebug installed but not imported: trialstat imports none of it and its exceptions are
    plain trialstat classes; once the notebook imports smdebug.exceptions they are both."""
    assert _result(smdebug_run(NOTHING_IMPORTED, finished_trial)) == {"ok": True}


def test_enums_without_smdebug():
    """In trialstat's own venv (no smdebug): members behave as plain enum members."""
    assert trialstat.modes.TRAIN == trialstat.ModeKeys.TRAIN and trialstat.modes.TRAIN != 1
    assert trialstat.StepState.AVAILABLE != trialstat.StepState.UNAVAILABLE
    assert len({trialstat.modes.TRAIN, trialstat.modes.EVAL, trialstat.modes.TRAIN}) == 2
    e = trialstat.TensorUnavailable("x")
    if "smdebug.exceptions" not in sys.modules:
        assert type(e) is trialstat.TensorUnavailable


# ---- 2. collections: smdebug's methods, edits across refreshes, live trials ----------------------

NOTEBOOK_COLLECTIONS_LIVE = """
import sys, json, threading, time, logging
import numpy as np
from smdebug import modes
from smdebug.core.collection import Collection as SmdebugCollection
from smdebug.exceptions import *
from smdebug.trials import create_trial as smdebug_create_trial
from smdebug_side import end_training, mlp_tensors, write_collections, write_step
from trialstat import create_trial
import trialstat

path = sys.argv[1]
rng = np.random.default_rng(3)
write_collections(path, tensor_names={"losses": ["CrossEntropyLoss_output_0"]})
for g in (0, 1):
    write_step(path, g, mlp_tensors(g, rng))
trial = create_trial(path)
ref = smdebug_create_trial(path)  # smdebug's own reading of the same folder
out = {}
assert not trial.loaded_all_steps and trial.steps() == ref.steps() == [0, 1]
# the same collections, to_json and all; smdebug's Collection parses ours
assert sorted(trial.collections()) == sorted(ref.collections())
for name, c in trial.collections().items():
    assert c.to_json_dict() == ref.collection(name).to_json_dict(), name
    assert SmdebugCollection.from_json(c.to_json()) == ref.collection(name), name
# notebook edits, made on both
for t in (trial, ref):
    mine = t.collection("mine")                   # created empty, as smdebug
    mine.include("^relu")
    mine.include(["^fc2"])
    mine.add_tensor_name("CrossEntropyLoss_output_0")
    mine.add_tensor_name("gradient/fc1.bias")
    mine.remove_tensor_name("gradient/fc1.bias")
    t.collection("losses").remove_tensor_name("CrossEntropyLoss_output_0")
    t.collection("weights").add_tensor_name("fc1.bias")
mine = trial.collection("mine")
assert mine.has_tensor_name("CrossEntropyLoss_output_0") and not mine.has_tensor_name("gradient/fc1.bias")
assert mine.to_json_dict() == ref.collection("mine").to_json_dict()
out["mine_before"] = trial.tensor_names(collection="mine")
# a bounded wait for a step that is not there yet, with a message while it waits
messages = []
class Keep(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
logging.getLogger("trialstat").addHandler(Keep())
start = time.monotonic()
try:
    trial.wait_for_steps([3], timeout=0.5)
    raise AssertionError("no timeout")
except trialstat.WaitTimeout as e:
    assert isinstance(e, TimeoutError) and isinstance(e, SMDebugError)
    out["timeout_after"] = time.monotonic() - start
out["messages"] = messages
# the job goes on: new steps, a new tensor, while the notebook waits
def train_more():
    time.sleep(0.3)
    for g in (2, 3):
        write_step(path, g, mlp_tensors(g, rng, extra=["relu2_output_0"]))
writer = threading.Thread(target=train_more)
writer.start()
trial.wait_for_steps([3], timeout=60)
writer.join()
assert trial.collection("mine") is mine               # the same object after the refreshes
out["steps"] = [trial.steps(), ref.steps()]
out["mine_after"] = [trial.tensor_names(collection="mine"), ref.tensor_names(collection="mine")]
out["losses_after"] = [trial.tensor_names(collection="losses"), ref.tensor_names(collection="losses")]
out["weights_after"] = [trial.tensor_names(collection=trial.collection("weights")),
                        ref.tensor_names(collection=ref.collection("weights"))]
stats = trial.stats(collection="mine", as_frame=False)
out["stats_tensors"] = sorted(set(stats["tensor"].tolist()))
out["new_tensor"] = trial.tensor("relu2_output_0").value(3).tolist()
out["new_tensor_ref"] = ref.tensor("relu2_output_0").value(3).tolist()
# end of training
end_training(path)
try:
    trial.wait_for_steps([4])
except NoMoreData as e:
    out["no_more_data"] = e.last_step
assert trial.loaded_all_steps
print("RESULT:" + json.dumps(out))
"""


def test_collection_edits_persist_on_a_live_trial(smdebug_run, tmp_path):
    out = _result(smdebug_run(NOTEBOOK_COLLECTIONS_LIVE, tmp_path / "live"))
    assert out["mine_before"] == ["CrossEntropyLoss_output_0", "fc2.bias", "fc2.weight",
                                  "relu1_output_0"]
    assert 0.4 <= out["timeout_after"] < 10
    assert any("waiting for step 3" in m for m in out["messages"]), out["messages"]
    assert out["steps"] == [[0, 1, 2, 3], [0, 1, 2, 3]]
    mine, mine_ref = out["mine_after"]
    assert mine == mine_ref == out["mine_before"][:-1] + ["relu1_output_0", "relu2_output_0"]
    assert out["losses_after"][0] == out["losses_after"][1] == ["CrossEntropyLoss_output_0"]
    assert out["weights_after"][0] == out["weights_after"][1] == ["fc1.bias", "fc1.weight",
                                                                  "fc2.weight"]
    assert out["stats_tensors"] == mine
    assert out["new_tensor"] == out["new_tensor_ref"] and len(out["new_tensor"]) == 5
    assert out["no_more_data"] == 3


# ---- 3. custom rules: smdebug's Rule class on a trialstat trial, and trialstat's Rule ----------

NOTEBOOK_RULES = """
import sys, json
from smdebug import modes
from smdebug.exceptions import *
from smdebug.rules import Rule as SmdebugRule
from smdebug.rules.rule_invoker import invoke_rule as smdebug_invoke_rule
from smdebug.trials import create_trial as smdebug_create_trial
import trialstat.rules
from trialstat import create_trial

def make_rule(base):
    class LossAbove(base):
        def __init__(self, base_trial, threshold):
            super().__init__(base_trial, action_str="")
            self.threshold = threshold
            self.seen = []
            self.fired = []

        def set_required_tensors(self, step):
            self.req_tensors.add("CrossEntropyLoss_output_0", steps=[step])
            self.req_tensors.add("^gradient/fc1", steps=[step], should_match_regex=True)

        def invoke_at_step(self, step):
            values = {t.name: t.value(step) for t in self.req_tensors.get()}
            self.seen.append([step, sorted(values), sorted(self.req_tensors.get_names()),
                              self.req_tensors.get_tensor_steps("CrossEntropyLoss_output_0")])
            if self.base_trial.mode(step) == modes.TRAIN and \\
                    float(values["CrossEntropyLoss_output_0"]) > self.threshold:
                self.fired.append(step)
                return True
            return False
    return LossAbove

path = sys.argv[1]
runs = {}
for label, base, opener, invoker in [
        ("smdebug", SmdebugRule, smdebug_create_trial, smdebug_invoke_rule),
        ("smdebug_rule_on_trialstat", SmdebugRule, create_trial, smdebug_invoke_rule),
        ("trialstat", trialstat.rules.Rule, create_trial, trialstat.rules.invoke_rule),
        ("smdebug_rule_trialstat_invoker", SmdebugRule, create_trial, trialstat.rules.invoke_rule)]:
    trial = opener(path)
    rule = make_rule(base)(trial, threshold=3.0)
    record = {}
    try:
        invoker(rule)                                    # open-ended: ends with NoMoreData
    except NoMoreData as e:
        record["end"] = [type(e).__name__, e.last_step]
    record["seen"], record["fired"] = rule.seen, rule.fired
    try:
        invoker(make_rule(base)(trial, threshold=3.0), start_step=0, end_step=9,
                raise_eval_cond=True)
    except RuleEvaluationConditionMet as e:
        record["first"] = [e.rule_name, e.step]
    runs[label] = record
print("RESULT:" + json.dumps(runs))
"""


def test_custom_rules_with_smdebug_rule_class(smdebug_run, finished_trial):
    runs = _result(smdebug_run(NOTEBOOK_RULES, finished_trial))
    reference = runs.pop("smdebug")
    assert reference["fired"] == [2, 6]      # the loss is scaled up at TRAIN steps 2 and 6
    assert reference["end"] == ["NoMoreData", 8]
    assert reference["first"] == ["LossAbove", 2]
    # EVAL steps have no gradients (TensorUnavailableForStep: skipped), step 7 was not saved
    assert [s[0] for s in reference["seen"]] == [0, 1, 2, 3, 6, 8]
    assert reference["seen"][0][1] == ["CrossEntropyLoss_output_0", "gradient/fc1.bias",
                                       "gradient/fc1.weight"]
    for label, record in runs.items():
        assert record == reference, label


# ---- 4. a collections file that lists no collections ----------------------------------------------

EMPTY_COLLECTIONS = """
import sys, json, time
import numpy as np
from smdebug_side import end_training, mlp_tensors, write_collections, write_step
lib, path, ended = sys.argv[1], sys.argv[2], sys.argv[3] == "ended"
if lib == "trialstat":
    from trialstat import create_trial
else:
    from smdebug.trials import create_trial
rng = np.random.default_rng(1)
write_collections(path, collections={})
for g in (0, 1):
    write_step(path, g, mlp_tensors(g, rng))
if ended:
    end_training(path)
start = time.monotonic()
trial = create_trial(path)
out = {"open_seconds": time.monotonic() - start, "collections": sorted(trial.collections()),
       "names": trial.tensor_names(), "steps": trial.steps(), "workers": sorted(trial.workers()),
       "loaded_all_steps": trial.loaded_all_steps,
       "weights": trial.tensor_names(collection="weights"),
       "loss": float(trial.tensor("CrossEntropyLoss_output_0").value(1))}
print("RESULT:" + json.dumps(out))
"""


@pytest.mark.parametrize("state", ["ended", "live"])
def test_empty_collections_file_opens_as_smdebug(smdebug_run, tmp_path, state):
    """smdebug opens a trial whose collections file lists no collections (ended or live);
    trialstat must too, promptly (the script's own time bound: TRIALSTAT_WAIT_TIMEOUT)."""
    ours = _result(smdebug_run(EMPTY_COLLECTIONS, "trialstat", tmp_path / "t", state, timeout=90))
    theirs = _result(smdebug_run(EMPTY_COLLECTIONS, "smdebug", tmp_path / "s", state, timeout=90))
    assert ours.pop("open_seconds") < 10
    theirs.pop("open_seconds")
    assert ours == theirs
    assert ours["collections"] == [] and ours["weights"] == [] and len(ours["names"]) == 10
    assert ours["loaded_all_steps"] == (state == "ended")


# ---- 5. every wait bounded, with a message (trialstat only: this process) ------------------------

def _collections_file(path, collections="{}"):
    os.makedirs(os.path.join(path, "collections", "000000000"), exist_ok=True)
    with open(os.path.join(path, "collections", "000000000", "worker_0_collections.json"),
              "w") as f:
        f.write('{"collections": %s, "_meta": {"num_workers": 1}}' % collections)


def test_waits_are_bounded_and_talk(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr("trialstat.trial._POLL_SECONDS", 0.05)
    caplog.set_level(logging.WARNING, logger="trialstat")
    path = str(tmp_path / "no_collections")
    os.makedirs(path)
    start = time.monotonic()
    with pytest.raises(trialstat.WaitTimeout) as info:
        trialstat.create_trial(path, wait_timeout=0.3)
    assert 0.25 <= time.monotonic() - start < 5
    assert "collections file" in str(info.value) and isinstance(info.value, TimeoutError)
    assert any("waiting for a collections file" in r.getMessage() and "0.3 s" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
    monkeypatch.setenv("TRIALSTAT_WAIT_TIMEOUT", "0.2")
    with pytest.raises(trialstat.WaitTimeout):
        trialstat.create_trial(path)
    monkeypatch.delenv("TRIALSTAT_WAIT_TIMEOUT")
    open(os.path.join(path, "training_job_end.ts"), "w").close()
    with pytest.raises(trialstat.MissingCollectionFiles):   # ended without one: as smdebug
        trialstat.create_trial(path)

    live = str(tmp_path / "empty_live")
    _collections_file(live)
    trial = trialstat.create_trial(live)                     # no wait at all
    assert trial.collections() == {} and trial.steps() == [] and not trial.loaded_all_steps
    caplog.clear()
    start = time.monotonic()
    with pytest.raises(trialstat.WaitTimeout) as info:
        trial.wait_for_steps([0, 1], timeout=0.3)
    assert 0.25 <= time.monotonic() - start < 5
    assert "step 0 of mode GLOBAL" in str(info.value)
    assert any("waiting for step 0" in r.getMessage() for r in caplog.records)
    bounded = trialstat.create_trial(live, wait_timeout=0.2)  # the trial's default bound
    with pytest.raises(trialstat.WaitTimeout):
        bounded.wait_for_steps([0])


def test_local_trial_and_no_refresh_signatures(tmp_path):
    path = str(tmp_path / "t")
    _collections_file(path, '{"weights": {"name": "weights", "include_regex": ["weight"], '
                            '"tensor_names": ["a"], "reduction_config": null, '
                            '"save_config": null, "save_histogram": true}}')
    t1 = trialstat.LocalTrial(name="first", dirname=path)
    t2 = trialstat.LocalTrial("second", path, range_steps=(0, 10))
    assert (t1.name, t2.name, t1.path) == ("first", "second", path)
    assert isinstance(trialstat.create_trial(path), trialstat.LocalTrial)
    with pytest.raises(TypeError):
        trialstat.LocalTrial(path)                           # smdebug: name and dirname
    with trialstat.no_refresh([t1, t2]) as trials:
        assert trials == [t1, t2] and not t1.dynamic_refresh and not t2.dynamic_refresh
    with trialstat.no_refresh(t1) as trial:
        assert trial is t1
    assert t1.dynamic_refresh and t2.dynamic_refresh
    c = t1.collection("weights")
    assert c.to_json_dict() == {"name": "weights", "include_regex": ["weight"],
                                "tensor_names": ["a"], "reduction_config": None,
                                "save_config": None, "save_histogram": True}
    assert trialstat.Collection.from_json(c.to_json()) == c
    with pytest.raises(trialstat.exceptions.SMDebugTypeError):
        c.include(3)


# ---- 6. an smdebug analysis notebook, unchanged but for create_trial --------------------------

def _notebook_trials(finished_trial):
    trials = {"smdebug_written": finished_trial}
    golden = golden_trials_or_none()  # None without golden trials; fails where they are required
    if golden is not None:
        for name in ("healthy_mlp", "vanishing"):
            trials[name] = os.path.join(golden, name)
    return trials


def test_notebook_flow_matches_smdebug(smdebug_run, finished_trial, tmp_path):
    """tests/python/notebook_flow.py (load, collections, statistics over steps, mode walk,
    rules on smdebug's Rule class) gives the same report with trialstat as with smdebug."""
    runner = ("import runpy, sys\nsys.argv = sys.argv[1:]\n"
              "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    for name, trial in _notebook_trials(finished_trial).items():
        reports = {}
        for lib in ("smdebug", "trialstat"):
            out = tmp_path / f"{name}_{lib}.json"
            smdebug_run(runner, os.path.join(HERE, "notebook_flow.py"), lib, trial, out,
                        timeout=300)
            with open(out) as f:
                reports[lib] = json.load(f)
        assert reports["trialstat"] == reports["smdebug"], name
        report = reports["trialstat"]
        assert report["steps"] and report["collections"] and report["walk"]
        if name == "vanishing":
            assert report["rules"]["vanishing"], "the vanishing trial must fire the rule"
        if name == "smdebug_written":
            assert report["rules"]["loss_first"] == ["LossNotDecreasing", 2]  # loss 5.75 > 2.3
