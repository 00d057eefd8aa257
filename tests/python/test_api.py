# SPDX-License-Identifier: Apache-2.0
"""trialstat's own Python API: batched statistics against the golden expected.json (smdebug +
float64 numpy), weight-update ratios, rules from Python (built-in, smdebug-style custom rules,
statistics rules), live-trial refresh and step states, compat flags, exceptions."""
import json
import math
import os
import shutil

import numpy as np
import pytest

import trialstat
from trialstat import modes
from trialstat.exceptions import (InvalidWorker, NoMoreData, RuleEvaluationConditionMet,
                                  SMDebugError, StepUnavailable, TensorUnavailable,
                                  TensorUnavailableForStep)
from trialstat.rules import Rule, StatsRule, invoke_rule, invoke_stats_rule

STATS = ["min", "max", "mean", "variance", "std", "sum", "l1", "l2", "linf", "mean_abs"]
COUNTS = ["nan_count", "pos_inf_count", "neg_inf_count", "zero_count"]


def _expected(shared, name):
    with open(os.path.join(shared, name + ".expected.json")) as f:
        return json.load(f)


def _rel(a, b):
    if a is None:
        return math.isnan(b)
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b)) or (a == b)


@pytest.mark.parametrize("name", ["healthy_mlp", "exploding", "vanishing", "dtypes"])
def test_stats_match_expected_json(name, shared_trials):
    """Every (tensor, step, worker) statistic equals smdebug+numpy's float64 statistics."""
    expected = _expected(shared_trials, name)
    trial = trialstat.create_trial(os.path.join(shared_trials, name))
    cols = trial.stats(as_frame=False, device="cpu")
    n = len(cols["step"])
    assert n > 0
    rows = {(cols["tensor"][i], int(cols["step"][i]), cols["worker"][i]): i for i in range(n)}
    checked = 0
    for tname, tensor in expected["tensors"].items():
        for rec in tensor["records"]:
            s = rec["stats"]
            if not s or s["dtype"] == "uint8" and "int8" in tname:
                continue  # smdebug's uint8 view of int8 data: statistics differ on purpose
            i = rows[(tname, rec["step"], rec["worker"])]
            assert cols["has_raw"][i]
            assert cols["numel"][i] == s["numel"]
            for k in COUNTS:
                assert cols[k][i] == s[k], (tname, rec["step"], k)
            for k in STATS:
                assert _rel(s[k], cols[k][i]), (tname, rec["step"], k, s[k], cols[k][i])
            checked += 1
    assert checked > 10


def test_update_ratio_matches_expected_json(shared_trials):
    expected = _expected(shared_trials, "healthy_mlp")
    trial = trialstat.create_trial(os.path.join(shared_trials, "healthy_mlp"))
    cols = trial.stats(collection=["weights", "biases"], as_frame=False)
    index = {(cols["tensor"][i], int(cols["step"][i])): i for i in range(len(cols["step"]))}
    assert expected["weight_update_ratios"]
    for r in expected["weight_update_ratios"]:
        i = index[(r["tensor"], r["step"])]
        assert cols["prev_step"][i] == r["prev_step"]
        assert abs(cols["update_ratio"][i] - float(r["ratio"])) <= 1e-9 * abs(float(r["ratio"]))


def test_stats_selection_frames_and_histograms(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "healthy_mlp"))
    full = trial.stats(as_frame=False)
    grads = trial.stats(collection="gradients", steps=(0, 50), as_frame=False)
    assert set(grads["tensor"]) == set(trial.tensor_names(collection="gradients"))
    assert grads["step"].min() >= 0 and grads["step"].max() < 50
    assert "update_ratio" not in grads
    evals = trial.stats(regex="output_0$", mode=modes.EVAL, as_frame=False)
    assert set(evals["mode"]) == {"EVAL"} and len(evals["step"]) == 16 * 3
    picked = trial.stats(steps=[0, 29], as_frame=False)
    assert set(picked["step"].tolist()) == {0, 29}
    hist = trial.stats(regex="^relu1", histogram_bins=16, as_frame=False)
    finite = hist["numel"] - hist["nan_count"] - hist["pos_inf_count"] - hist["neg_inf_count"]
    assert hist["hist_counts"].shape == (len(hist["step"]), 16)
    assert (hist["hist_counts"].sum(axis=1) == finite).all()
    pd = pytest.importorskip("pandas")
    frame = trial.stats()
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(full["step"])
    assert list(frame["tensor"].astype(str)) == list(full["tensor"])
    np.testing.assert_array_equal(frame["l2"].to_numpy(), full["l2"])


def test_saved_reduction_columns(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "reductions_only"))
    cols = trial.stats(regex=r"^MLP_fc1\.weight$", as_frame=False)
    assert not cols["has_raw"].any()
    t = trial.tensor("MLP_fc1.weight")
    for i, step in enumerate(cols["step"]):
        assert cols["reduction_abs_mean"][i] == float(t.reduction_value(int(step), "mean", abs=True))
        assert cols["reduction_l2"][i] == float(t.reduction_value(int(step), "l2"))


def test_builtin_rules_from_python(shared_trials):
    exploding = trialstat.create_trial(os.path.join(shared_trials, "exploding"))
    results = trialstat.rules.evaluate(exploding, [
        "ExplodingTensor",
        ("nan-only", "ExplodingTensor", {"only_nan": True, "collection_names": ["losses"]}),
        {"rule_to_invoke": "VanishingGradient", "threshold": 0.0},
        ("VanishingGradient", {"threshold": "not-a-number"}),
    ])
    assert [r.status for r in results] == ["IssuesFound", "IssuesFound", "NoIssuesFound", "Error"]
    assert results[1].configuration_name == "nan-only"
    nan_steps = {f.step for f in results[1].findings}
    assert nan_steps and min(nan_steps) == 51  # README: the loss is NaN from step 51
    assert "threshold" in results[3].status_details
    f = results[0].findings[0]
    assert f.mode == modes.TRAIN and f.worker == "worker_0" and f.tensor
    healthy = trialstat.create_trial(os.path.join(shared_trials, "healthy_mlp"))
    config = [{"RuleConfigurationName": "v", "RuleParameters": {
        "rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}}]
    (r,) = trialstat.rules.evaluate(healthy, config=config)
    assert r.status == "NoIssuesFound" and r.configuration_name == "v"
    assert "VanishingGradient" in trialstat.rules.builtin_rule_names()


class LossAbove(Rule):
    """smdebug-style custom rule: fires when the loss exceeds a threshold."""

    def __init__(self, base_trial, threshold):
        super().__init__(base_trial, action_str="")
        self.threshold = threshold
        self.visited = []

    def set_required_tensors(self, step):
        self.req_tensors.add("MSELoss_output_0", [step])

    def invoke_at_step(self, step):
        self.visited.append(step)
        return float(self.base_trial.tensor("MSELoss_output_0").value(step)) > self.threshold


def test_custom_rule_invoke_rule(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "exploding"))
    assert "MSELoss_output_0" in trial.tensor_names()
    rule = LossAbove(trial, threshold=1e9)
    with pytest.raises(NoMoreData):  # smdebug: NoMoreData ends an open-ended run
        invoke_rule(rule)
    assert rule.visited == trial.steps()
    rule = LossAbove(trial, threshold=1e9)
    met = invoke_rule(rule, start_step=0, end_step=10)
    assert met == [s for s in range(10) if float(trial.tensor("MSELoss_output_0").value(s)) > 1e9]
    with pytest.raises(RuleEvaluationConditionMet) as info:
        invoke_rule(LossAbove(trial, threshold=1e9), end_step=10, raise_eval_cond=True)
    assert info.value.step == met[0] and info.value.rule_name == "LossAbove"


class NonFinite(StatsRule):
    collection = "losses"

    def invoke_at_step(self, step, records):
        return bool((records["nan_count"] + records["pos_inf_count"] + records["neg_inf_count"] > 0).any())


def test_stats_rule(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "exploding"))
    met = invoke_stats_rule(NonFinite(trial))
    loss = trial.tensor("MSELoss_output_0")
    assert met == [s for s in trial.steps() if not np.isfinite(loss.value(s))]
    assert met and met[0] == 17  # README: +Inf from step 17
    with pytest.raises(RuleEvaluationConditionMet) as info:
        invoke_stats_rule(NonFinite(trial), raise_eval_cond=True)
    assert info.value.step == 17


def _copy_steps(src, dst, keep):
    """Copy a trial's collections and the index/event files of global steps in `keep`."""
    for root, _, files in os.walk(src):
        rel = os.path.relpath(root, src)
        for f in files:
            if rel.startswith(("index", "events")):
                if int(f.split("_")[0].split(".")[0]) not in keep:
                    continue
            elif f == "training_job_end.ts":
                continue
            os.makedirs(os.path.join(dst, rel), exist_ok=True)
            shutil.copy(os.path.join(src, root, f), os.path.join(dst, rel, f))


def test_live_trial_refresh_and_step_states(shared_trials, tmp_path, monkeypatch):
    monkeypatch.setattr("trialstat.trial._POLL_SECONDS", 0.01)
    src = os.path.join(shared_trials, "dead_relu")  # steps 0, 5, ..., 55
    live = str(tmp_path / "live")
    _copy_steps(src, live, {0, 5, 10})
    trial = trialstat.create_trial(live)
    assert trial.steps() == [0, 5, 10] and not trial.loaded_all_steps
    state = trialstat.StepState
    assert trial.has_passed_step(5) == state.AVAILABLE
    assert trial.has_passed_step(3) == state.UNAVAILABLE       # skipped: a later step exists
    assert trial.has_passed_step(15) == state.NOT_YET_AVAILABLE
    with pytest.raises(StepUnavailable):
        trial.wait_for_steps([3])
    t = trial.tensor("relu1_output_0")
    with pytest.raises(trialstat.StepNotYetAvailable):
        t.value(15)
    _copy_steps(src, live, {15, 20})
    assert trial.steps() == [0, 5, 10, 15, 20]                 # automatic refresh
    with trialstat.no_refresh(trial):
        _copy_steps(src, live, {25})
        assert trial.steps() == [0, 5, 10, 15, 20]
    assert trial.steps()[-1] == 25
    assert t.value(15).ndim == 2
    open(os.path.join(live, "training_job_end.ts"), "w").close()
    with pytest.raises(NoMoreData) as info:
        trial.wait_for_steps([30])
    assert info.value.last_step == 25 and trial.loaded_all_steps
    assert trial.has_passed_step(30) == state.UNAVAILABLE


def test_exceptions_and_compat(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "dtypes"))
    t = trial.tensor("dtype_int8_vec")
    assert t.value(0).dtype == np.int8 and t.value(0)[1] == -1
    compat = trialstat.create_trial(os.path.join(shared_trials, "dtypes"), int8_as_uint8=True)
    v = compat.tensor("dtype_int8_vec").value(0)
    assert v.dtype == np.uint8 and v[1] == 255
    with pytest.raises(TensorUnavailable):
        trial.tensor("nope")
    with pytest.raises(InvalidWorker):
        t.value(0, worker="worker_9")
    with pytest.raises(TensorUnavailableForStep) as info:
        t.value(0, mode=modes.PREDICT)  # PREDICT step 0 (global 3) exists, not for this tensor
    assert isinstance(info.value, SMDebugError) and info.value.mode == modes.PREDICT
    with pytest.raises(TensorUnavailableForStep):
        t.value(3)
    with pytest.raises(StepUnavailable):
        t.value(1, mode=modes.PREDICT)  # beyond the last PREDICT step of a finished trial
    empty = trial.tensor("fw_empty_i64_2x0x3").value(3)
    assert empty.shape == (2, 0, 3) and empty.dtype == np.int64
    assert trial.tensor("fw_uint64").value(3)[-1] == 2 ** 63
    assert trial.mode(3) == modes.PREDICT and trial.global_step("predict", 0) == 3
    v = t.value(0)
    assert not v.flags["OWNDATA"] or v.flags["C_CONTIGUOUS"]


def test_cpu_and_auto_backends_agree(shared_trials):
    trial = trialstat.create_trial(os.path.join(shared_trials, "vanishing"))
    a = trial.stats(as_frame=False, device="cpu")
    b = trial.stats(as_frame=False, device="auto")
    for k in COUNTS:
        np.testing.assert_array_equal(a[k], b[k])
    np.testing.assert_allclose(a["mean_abs"], b["mean_abs"], rtol=1e-12)
    assert trialstat.backend("cpu")[0] == "cpu"
