# SPDX-License-Identifier: Apache-2.0
"""Real XGBoost trials (issue 16), written at test time by smdebug 1.0.34's own XGBoost hook
(make_xgboost_trials.py in .venv-smdebug: xgboost 1.7.x, scikit-learn's digits): a
multi:softprob model (predictions [N, 10]) and a multi:softmax one with max_depth 6, and a 95/5
imbalanced binary:logistic one. Each verdict of trialstat's TreeDepth, FeatureImportanceOverweight,
Confusion and ClassImbalance is compared with one computed independently from smdebug's reading of
the same trial (xgboost_reference.py); string tensors read as str like smdebug's; `trialstat stats`
counts string records apart from unreadable ones. Skips when the smdebug venv lacks xgboost."""
import collections
import json
import math
import os
import subprocess
from fractions import Fraction

import numpy as np
import pytest

import trialstat
from conftest import HERE
from parity import compare
from test_parity import _dumps

TRIALS = ("softprob", "softmax", "binary")


@pytest.fixture(scope="module")
def xgb(tmp_path_factory, smdebug_python_path):
    """{name: (trial path, reference verdict inputs)} for the three trials."""
    probe = subprocess.run([smdebug_python_path, "-c", "import xgboost, sklearn"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("xgboost or scikit-learn missing in the smdebug venv "
                    "(tools/python/requirements-smdebug.txt)")
    root = tmp_path_factory.mktemp("xgboost_trials")
    subprocess.run([smdebug_python_path, os.path.join(HERE, "make_xgboost_trials.py"), str(root)],
                   check=True, capture_output=True, timeout=600)
    ref = str(root / "reference.json")
    subprocess.run([smdebug_python_path, os.path.join(HERE, "xgboost_reference.py"), ref,
                    *(str(root / name) for name in TRIALS)],
                   check=True, capture_output=True, timeout=600)
    with open(ref) as f:
        refs = json.load(f)
    return {name: (str(root / name), refs[name]) for name in TRIALS}


def rules(cli, trial, rule, **params):
    """`trialstat rules --format json` for one rule: (exit code, result object, stderr)."""
    args = [cli, "rules", trial, "--rule", rule, "--format", "json"]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=300)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (run.stdout, run.stderr)
    return run.returncode, lines[0], run.stderr


def steps_of(result):
    return [f["step"] for f in result["findings"]]


# ---- TreeDepth -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softprob", "softmax", "binary"])
@pytest.mark.parametrize("depth", [2, 4, 5])
def test_tree_depth_is_exact(xgb, cli, name, depth):
    path, ref = xgb[name]
    code, result, _ = rules(cli, path, "TreeDepth", depth=depth)
    expected = [s for s in ref["steps"] if ref["depth"][str(s)] > depth]
    assert steps_of(result) == expected
    assert [f["value"] for f in result["findings"]] == [ref["depth"][str(s)] for s in expected]
    for f in result["findings"]:
        assert f["tensor"] == "trees/Node"
        assert "from the trees/ID, trees/Yes and trees/No links" in f["message"]
    assert result["status"] == ("IssuesFound" if expected else "NoIssuesFound")
    assert code == (1 if expected else 0)
    assert "warnings" not in result  # the links were saved at every step


def test_tree_depth_node_id_formula_would_miss(xgb):
    """The trial exercises the difference: XGBoost's creation-order node ids make the formula
    underestimate (the depth-4 verdicts above differ from the formula's)."""
    _, ref = xgb["softprob"]
    under = [s for s in ref["depth"] if ref["formula_depth"][s] <= 4 < ref["depth"][s]]
    assert len(under) >= 2, ref


# ---- FeatureImportanceOverweight -------------------------------------------------------------

@pytest.mark.parametrize("name", ["softprob", "binary"])
def test_feature_importance_all_features_hold_exactly_one(xgb, cli, name):
    path, ref = xgb[name]
    n = max(len(v) for v in ref["importance"].values())
    for k in (n, 64):
        code, result, _ = rules(cli, path, "FeatureImportanceOverweight", nfeatures=k,
                                threshold="1.0")
        assert (code, result["status"], result["findings"]) == (0, "NoIssuesFound", [])
        _, below, _ = rules(cli, path, "FeatureImportanceOverweight", nfeatures=k,
                            threshold="0.9999999")
        assert [f["value"] for f in below["findings"]] == [1.0] * len(ref["steps"])


@pytest.mark.parametrize("name", ["softprob", "binary"])
@pytest.mark.parametrize("nfeatures,threshold", [(3, 0.3), (1, 0.25), (5, 0.6)])
def test_feature_importance_matches_exact_shares(xgb, cli, name, nfeatures, threshold):
    path, ref = xgb[name]
    expected, shares = [], []
    for s in map(str, ref["steps"]):
        scores = sorted((Fraction(v) for v in ref["importance"][s].values()), reverse=True)
        share = sum(scores[:nfeatures]) / sum(scores)
        if share > Fraction(threshold):
            expected.append(int(s))
            shares.append(float(share))
    _, result, _ = rules(cli, path, "FeatureImportanceOverweight", nfeatures=nfeatures,
                         threshold=threshold)
    assert steps_of(result) == expected
    for f, share in zip(result["findings"], shares):
        assert math.isclose(f["value"], share, rel_tol=1e-14)


# ---- Confusion and ClassImbalance ------------------------------------------------------------

def confusion_fires(labels, predicted, min_diag=0.9, max_off_diag=0.1):
    k = max(2, max(max(labels), max(predicted)) + 1)
    c = np.zeros((k, k), dtype=np.int64)
    for label, p in zip(labels, predicted):
        if 0 <= label < k and 0 <= p < k:
            c[label, p] += 1
    for i in range(k):
        column = c[:, i].sum()
        if column == 0:
            continue
        if c[i, i] / column < min_diag:
            return True
        if any(c[j, i] / column > max_off_diag for j in range(k) if j != i):
            return True
    return False


@pytest.mark.parametrize("name,reading,params", [
    ("softprob", "argmax", {}),
    ("softmax", "cast", {}),
    ("binary", "cast", {}),
    ("binary", "threshold_0.5", {"prediction_threshold": 0.5}),
])
def test_confusion_matches_reference(xgb, cli, name, reading, params):
    path, ref = xgb[name]
    expected = [int(s) for s in map(str, ref["steps"])
                if confusion_fires(ref["pairs"][s]["labels"], ref["pairs"][s][reading])]
    code, result, _ = rules(cli, path, "Confusion", **params)
    assert result["status"] != "Error", result
    assert steps_of(result) == expected
    warnings = result.get("warnings", [])
    if name == "softprob":
        assert warnings == ["predictions 'predictions' [60, 10] with labels 'labels' [60]: took "
                            "the argmax over the last axis (10 classes) as the predicted class "
                            "(from step 0)"]
    elif name == "binary" and not params:
        assert len(warnings) == 1 and "look like probabilities" in warnings[0], warnings
        assert "predictions 'predictions' [100]" in warnings[0]
    else:
        assert warnings == []


def imbalance_verdict(ref, reading, samples=500, threshold_imbalance=10.0,
                      threshold_misprediction=0.7):
    """(step, message part) of each ClassImbalance finding, from the reference pairs."""
    n, hits = collections.Counter(), collections.Counter()
    out = []
    for s in map(str, ref["steps"]):
        labels, predicted = ref["pairs"][s]["labels"], ref["pairs"][s][reading]
        for label, p in zip(labels, predicted):
            n[label] += 1
            hits[label] += int(label == p)
        seen = sum(n.values())
        if seen < samples:
            continue
        most, fewest = max(n.values()), min(n.values())
        miss = {c: 1 - hits[c] / n[c] for c in n}
        worst = max(sorted(miss), key=lambda c: miss[c])
        if most / fewest > threshold_imbalance or miss[worst] > threshold_misprediction:
            out.append((int(s), worst, n[worst] - hits[worst], n[worst], seen))
    return out


@pytest.mark.parametrize("name,reading,params", [
    ("softprob", "argmax", {"samples": 100, "threshold_misprediction": 0.2}),
    ("softmax", "cast", {"samples": 100, "threshold_misprediction": 0.2}),
    ("binary", "cast", {}),
    ("binary", "threshold_0.5", {"prediction_threshold": 0.5}),
])
def test_class_imbalance_matches_reference(xgb, cli, name, reading, params):
    path, ref = xgb[name]
    kwargs = {k: v for k, v in params.items() if k != "prediction_threshold"}
    expected = imbalance_verdict(ref, reading, **kwargs)
    code, result, _ = rules(cli, path, "ClassImbalance", **params)
    assert result["status"] != "Error", result
    assert steps_of(result) == [e[0] for e in expected]
    for f, (_, worst, missed, count, seen) in zip(result["findings"], expected):
        # Both the count and the rate of the worst class, when misprediction fired.
        if "mispredicted" in f["message"]:
            assert (f"class {worst} mispredicted in {missed} of its {count} samples "
                    f"(rate ") in f["message"], f["message"]
        assert f["message"].endswith(f"({seen} samples so far)")


def test_class_imbalance_binary_probabilities(xgb, cli):
    """95/5 binary:logistic: cast to int, every probability is class 0 — class 1 reads 100%
    mispredicted, with a warning; with prediction_threshold=0.5 the true rate."""
    path, ref = xgb["binary"]
    _, cast, _ = rules(cli, path, "ClassImbalance")
    ones = sum(ref["pairs"][str(s)]["labels"].count(1) for s in ref["steps"])
    assert f"class 1 mispredicted in {ones} of its {ones} samples (rate 1)" in \
        cast["findings"][-1]["message"]
    assert any("set prediction_threshold" in w for w in cast["warnings"])
    _, thresholded, _ = rules(cli, path, "ClassImbalance", prediction_threshold=0.5)
    assert "warnings" not in thresholded
    right = sum(sum(1 for label, p in zip(ref["pairs"][str(s)]["labels"],
                                          ref["pairs"][str(s)]["threshold_0.5"])
                    if label == p == 1) for s in ref["steps"])
    assert 0 < right < ones  # the model gets part of the minority class right


@pytest.mark.parametrize("rule", ["Confusion", "ClassImbalance"])
def test_labels_and_predictions_that_do_not_pair_are_an_error(xgb, cli, rule):
    # argmax=True over binary output [100] reduces it to one value for 100 labels.
    path, _ = xgb["binary"]
    if rule == "ClassImbalance":
        code, result, _ = rules(cli, path, rule, argmax="True")
        assert result["status_details"] == (
            "invalid_argument: labels 'labels' [100] and predictions 'predictions' [100] do not pair at step 0: "
            "the argmax over the last axis (100) gives 1 predicted classes for 100 labels")
    else:
        # Predictions from a tensor of another length (trees/Node: one value per tree node).
        code, result, _ = rules(cli, path, rule, predictions="trees/Node",
                                predictions_collection="none")
        assert result["status_details"].startswith(
            "invalid_argument: labels 'labels' [100] and predictions 'trees/Node' [")
        assert "do not pair at step 0" in result["status_details"]
    assert (code, result["status"], result["findings"]) == (2, "Error", [])


# ---- string tensors ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", TRIALS)
def test_string_tensors_read_as_str_like_smdebug(xgb, name):
    path, ref = xgb[name]
    trial = trialstat.create_trial(path)
    assert ref["strings"], "the trial has string tensors"
    for tensor, by_step in ref["strings"].items():
        for step, expected in by_step.items():
            v = trial.tensor(tensor).value(int(step))
            assert str(v.dtype) == expected["dtype"], (tensor, step)
            assert v.tolist() == expected["values"], (tensor, step)
    feature = trial.tensor("trees/Feature").value(ref["steps"][-1])
    smd = ref["strings"]["trees/Feature"][str(ref["steps"][-1])]["values"]
    assert (feature == "Leaf").sum() == smd.count("Leaf") > 0


def test_cli_stats_counts_string_records_apart(xgb, cli):
    path, ref = xgb["binary"]
    run = subprocess.run([cli, "stats", path, "--format", "csv"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    strings = sum(len(by_step) for by_step in ref["strings"].values())
    assert (f"trialstat: {strings} string record(s): string tensors have no numeric statistics"
            in run.stderr), run.stderr
    assert "could not be read" not in run.stderr


@pytest.mark.parametrize("name", ["binary"])
def test_xgboost_trial_parity(xgb, smdebug_python_path, tmp_path, name):
    """Every value (string tensors included, as str) and statistic reads as smdebug reads it."""
    path, _ = xgb[name]
    smd, smd_arrays, ts, ts_arrays = _dumps(tmp_path, smdebug_python_path, path)
    diffs, documented = compare(smd, smd_arrays, ts, ts_arrays)
    assert not diffs, "\n".join(diffs[:50])
    assert documented == []
