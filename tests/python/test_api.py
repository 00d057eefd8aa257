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


def _first_loss_step(shared, counter):
    """The first step at which the exploding trial's loss has `counter` > 0 (expected.json: the
    loss is +Inf from step 17 and NaN from step 51 in both golden sets)."""
    records = _expected(shared, "exploding")["tensors"]["MSELoss_output_0"]["records"]
    steps = [r["step"] for r in records if r["stats"] and r["stats"][counter] > 0]
    assert steps, f"the exploding loss never has {counter} > 0"
    return steps[0]


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
    assert nan_steps and min(nan_steps) == _first_loss_step(shared_trials, "nan_count")
    assert "threshold" in results[3].status_details
    f = results[0].findings[0]
    assert f.mode == modes.TRAIN and f.worker == "worker_0" and f.tensor
    healthy = trialstat.create_trial(os.path.join(shared_trials, "healthy_mlp"))
    config = [{"RuleConfigurationName": "v", "RuleParameters": {
        "rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}}]
    (r,) = trialstat.rules.evaluate(healthy, config=config)
    assert r.status == "NoIssuesFound" and r.configuration_name == "v"
    assert "VanishingGradient" in trialstat.rules.builtin_rule_names()


def test_skipped_records_and_strict(shared_trials, tmp_path):
    """Issue 12: records a rule could not read are listed on its result; strict makes it Error."""
    dst = tmp_path / "cut"
    shutil.copytree(os.path.join(shared_trials, "exploding"), dst)
    cut = sorted((dst / "events").rglob("*.tfevents"))[2]
    os.truncate(cut, 100)
    trial = trialstat.create_trial(str(dst))
    (r,) = trialstat.rules.evaluate(trial, ["ExplodingTensor"])
    assert r.status == "IssuesFound" and r.skipped
    k = r.skipped[0]
    assert k.file.endswith(cut.name) and k.step == 2 and isinstance(k.offset_bytes, int) and k.reason
    assert r.to_dict()["skipped"][0]["file"] == k.file
    (strict,) = trialstat.rules.evaluate(trial, ["ExplodingTensor"], strict=True)
    assert strict.status == "Error" and "strict" in strict.status_details
    (w,) = trialstat.rules.evaluate(trial, [("ExplodingTensor", {"collection_names": "nope"})])
    assert any("nope" in m for m in w.warnings)


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
    first_inf = _first_loss_step(shared_trials, "pos_inf_count")
    assert met and met[0] == first_inf
    with pytest.raises(RuleEvaluationConditionMet) as info:
        invoke_stats_rule(NonFinite(trial), raise_eval_cond=True)
    assert info.value.step == first_inf


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
        with trialstat.refresh([trial]):                      # nested: on again, then off
            assert trial.dynamic_refresh
        assert not trial.dynamic_refresh
        assert trial.steps() == [0, 5, 10, 15, 20]
    assert trial.dynamic_refresh
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


def test_verify_device_is_honoured(shared_trials, monkeypatch):
    """create_trial(verify_device=, pinned_mb=): bad values raise; the choice reaches the run.
    TRIALSTAT_FAULT_INJECT=cuda-result@2 raises nan_count in the first record of every batch
    from the second on, on a stand-in device backend (README "GPU safety"): "first" checks
    the first step only and lets it through; "sampled" checks the last step too and
    recomputes on the CPU."""
    path = os.path.join(shared_trials, "vanishing")
    monkeypatch.delenv("TRIALSTAT_VERIFY_DEVICE", raising=False)
    with pytest.raises(ValueError, match="never"):
        trialstat.create_trial(path, verify_device="never")
    with pytest.raises(ValueError, match="pinned-mb"):
        trialstat.create_trial(path, pinned_mb=0)
    want = trialstat.create_trial(path, store="off").stats(as_frame=False, device="cpu")
    monkeypatch.setenv("TRIALSTAT_FAULT_INJECT", "cuda-result@2")
    first = trialstat.create_trial(path, store="off", verify_device="first", pinned_mb=16)
    got = first.stats(as_frame=False, device="auto")
    assert got["nan_count"].sum() > want["nan_count"].sum()  # the perturbed counts came through
    sampled = trialstat.create_trial(path, store="off", verify_device="sampled")
    got = sampled.stats(as_frame=False, device="auto")
    for k in COUNTS:
        np.testing.assert_array_equal(got[k], want[k])
    assert sampled.last_stats_counters["device_fallback"]


# ---- fixed log-scale histograms (stats(log_histogram=True)) ---------------------------------
LOG_SIDE = ["log_hist_nan", "log_hist_pos_inf", "log_hist_neg_inf", "log_hist_below",
            "log_hist_above"]
CLI_SIDE = ["nan", "pos_inf", "neg_inf", "below", "above"]


def _smdebug_edges():
    """TensorBoard's default buckets as smdebug builds them (smdebug _get_default_bins)."""
    v, positive = 1e-12, []
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return np.asarray([-p for p in reversed(positive)] + [0.0] + positive, dtype=np.float64)


def _numpy_log_hist(value, edges):
    """(counts [1548], [nan, +inf, -inf, below, above]) by numpy.histogram's rule on float64:
    bin i = [edge[i], edge[i+1]), the last bin closed; side counts for the rest."""
    x = np.asarray(value).astype(np.float64).ravel()
    nan = np.isnan(x)
    pos_inf = np.isposinf(x)
    neg_inf = np.isneginf(x)
    finite = np.isfinite(x)
    below = finite & (x < edges[0])
    above = finite & (x > edges[-1])
    inside = x[finite & ~below & ~above]
    bins = np.searchsorted(edges, inside, side="right") - 1
    bins[bins == len(edges) - 1] = len(edges) - 2  # x == edge[last]: the closed last bin
    counts = np.bincount(bins, minlength=len(edges) - 1).astype(np.int64)
    side = [int(m.sum()) for m in (nan, pos_inf, neg_inf, below, above)]
    return counts, side


def _check_log_hist_rows(trial, cols, edges, max_rows=None):
    """Every row: with a raw value, counts == numpy's recount of tensor(name).value(step) and
    Σ counts + side counts == numel; without one, zero bins and −1 side counts."""
    n = len(cols["step"])
    assert cols["log_hist_counts"].shape == (n, 1548) and cols["log_hist_counts"].dtype == np.int64
    for k in LOG_SIDE:
        assert cols[k].shape == (n,) and cols[k].dtype == np.int64
    checked = missing = 0
    for i in range(n):
        counts = cols["log_hist_counts"][i]
        side = [int(cols[k][i]) for k in LOG_SIDE]
        if not cols["has_raw"][i]:
            assert not counts.any() and side == [-1] * 5
            missing += 1
            continue
        assert int(counts.sum()) + sum(side) == cols["numel"][i]
        assert side[:3] == [int(cols[k][i]) for k in ("nan_count", "pos_inf_count", "neg_inf_count")]
        if max_rows is not None and checked >= max_rows:
            continue
        value = trial.tensor(cols["tensor"][i]).value(int(cols["step"][i]), worker=cols["worker"][i])
        want_counts, want_side = _numpy_log_hist(value, edges)
        where = (cols["tensor"][i], int(cols["step"][i]), cols["worker"][i])
        np.testing.assert_array_equal(counts, want_counts, err_msg=str(where))
        assert side == want_side, where
        checked += 1
    return checked, missing


def _cli_log_hist(cli, path):
    """{(tensor, step, worker): (counts [1548], side) or None} from `trialstat stats --log-hist`."""
    import subprocess
    result = subprocess.run([cli, "stats", path, "--format", "json", "--log-hist", "--device", "cpu"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    out = {}
    for line in result.stdout.splitlines():
        row = json.loads(line)
        lh = row.get("log_hist")
        entry = None
        if lh is not None:
            assert lh["bins"] == 1548
            counts = np.zeros(1548, dtype=np.int64)
            for b, c in lh["nonzero"]:
                counts[b] = c
            entry = (counts, [lh[k] for k in CLI_SIDE])
        out[(row["tensor"], row["step"], row["worker"])] = entry
    return out


def _check_against_cli(cols, cli_rows):
    n = len(cols["step"])
    assert len(cli_rows) == n
    with_hist = 0
    for i in range(n):
        entry = cli_rows[(cols["tensor"][i], int(cols["step"][i]), cols["worker"][i])]
        side = [int(cols[k][i]) for k in LOG_SIDE]
        if entry is None:
            assert not cols["has_raw"][i] and side == [-1] * 5
            continue
        np.testing.assert_array_equal(cols["log_hist_counts"][i], entry[0])
        assert side == entry[1]
        with_hist += 1
    return with_hist


def test_log_histogram_edges():
    edges = trialstat.log_histogram_edges()
    assert edges.dtype == np.float64 and edges.shape == (1549,)
    np.testing.assert_array_equal(edges, _smdebug_edges())  # bit-exact float64 products
    assert edges[774] == 0.0 and (np.diff(edges) > 0).all()
    np.testing.assert_array_equal(edges, -edges[::-1])
    edges[0] = 0.0  # a fresh copy each call
    assert trialstat.log_histogram_edges()[0] < -9.9e19


@pytest.mark.parametrize("name", ["healthy_mlp", "exploding", "dtypes", "reductions_only"])
def test_stats_log_histogram_matches_numpy(name, shared_trials):
    """Counts equal a numpy recount of every raw value (float64 conversion, searchsorted on the
    edges); golden trials with NaN/±Inf (exploding), every dtype (dtypes) and rows without a raw
    value (reductions_only)."""
    trial = trialstat.create_trial(os.path.join(shared_trials, name))
    edges = trialstat.log_histogram_edges()
    cols = trial.stats(as_frame=False, device="cpu", log_histogram=True)
    checked, missing = _check_log_hist_rows(trial, cols, edges)
    if name == "reductions_only":
        assert missing > 0
    else:
        assert checked > 10
    if name == "exploding":  # the loss is +Inf from step 17 and NaN from step 51
        assert (cols["log_hist_pos_inf"] > 0).any() and (cols["log_hist_nan"] > 0).any()
    plain = trial.stats(as_frame=False, device="cpu")
    assert "log_hist_counts" not in plain and "log_hist_nan" not in plain
    for k in ["numel", *COUNTS]:
        np.testing.assert_array_equal(plain[k], cols[k])


@pytest.mark.parametrize("name", ["exploding", "reductions_only"])
def test_stats_log_histogram_matches_cli(name, shared_trials, cli):
    path = os.path.join(shared_trials, name)
    cols = trialstat.create_trial(path).stats(as_frame=False, device="cpu", log_histogram=True)
    with_hist = _check_against_cli(cols, _cli_log_hist(cli, path))
    assert with_hist == int(cols["has_raw"].sum())


def test_log_histogram_example_writer_trial(example_trials, cli):
    """A trial of the project's example writer (two workers, EVAL steps): numpy recount, the
    CLI's --log-hist JSON, for_each_step and the DataFrame form all agree."""
    path = example_trials["writer_two_workers_eval"]
    trial = trialstat.create_trial(path)
    edges = trialstat.log_histogram_edges()
    cols = trial.stats(as_frame=False, device="cpu", log_histogram=True)
    checked, _ = _check_log_hist_rows(trial, cols, edges)
    assert checked > 10 and len(set(cols["worker"])) == 2
    assert _check_against_cli(cols, _cli_log_hist(cli, path)) == int(cols["has_raw"].sum())

    index = {(cols["tensor"][i], int(cols["step"][i]), cols["worker"][i]): i
             for i in range(len(cols["step"]))}
    seen = []

    def on_step(step, mode, mode_step, step_cols):
        assert step_cols["log_hist_counts"].shape == (len(step_cols["step"]), 1548)
        for j in range(len(step_cols["step"])):
            i = index[(step_cols["tensor"][j], int(step_cols["step"][j]), step_cols["worker"][j])]
            np.testing.assert_array_equal(step_cols["log_hist_counts"][j], cols["log_hist_counts"][i])
            for k in LOG_SIDE:
                assert step_cols[k][j] == cols[k][i]
            seen.append(i)

    trial.for_each_step(on_step, device="cpu", log_histogram=True)
    assert sorted(seen) == list(range(len(cols["step"])))

    pd = pytest.importorskip("pandas")
    frame = trial.stats(device="cpu", log_histogram=True)
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(cols["step"])
    for k in LOG_SIDE:
        np.testing.assert_array_equal(frame[k].to_numpy(), cols[k])
    np.testing.assert_array_equal(np.stack(frame["log_hist_counts"].to_list()), cols["log_hist_counts"])


def test_stats_rule_log_histogram(example_trials):
    """StatsRule.log_histogram = True hands the log_hist columns to invoke_at_step."""
    class FarOutliers(StatsRule):
        log_histogram = True
        device = "cpu"

        def invoke_at_step(self, step, records):
            assert records["log_hist_counts"].shape[1] == 1548
            return bool((records["log_hist_above"] + records["log_hist_below"] > 0).any())

    trial = trialstat.create_trial(example_trials["writer_exploding"])
    cols = trial.stats(as_frame=False, device="cpu", log_histogram=True)
    far = cols["log_hist_above"] + cols["log_hist_below"] > 0
    want = sorted({int(s) for s in cols["step"][far]})
    assert want  # the exploding writer's values pass ±9.92e19 (steps 4 and 5 at these settings)
    assert invoke_stats_rule(FarOutliers(trial)) == want
