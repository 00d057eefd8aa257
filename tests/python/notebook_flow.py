# SPDX-License-Identifier: Apache-2.0
"""An smdebug analysis notebook, kept as a script: load a trial, see what was saved per
collection and mode, follow statistics over the steps (what the notebook plots), walk the
steps by mode, and run rules written against smdebug's ``Rule`` class — the shape of smdebug's
example analysis notebooks. It keeps every smdebug import; only ``create_trial`` changes:

    python notebook_flow.py smdebug|trialstat TRIAL OUT.json

test_smdebug_interop.py runs it with both in the smdebug venv and compares the two outputs.
"""
import json
import os
import sys

import numpy as np
from smdebug import modes
from smdebug.analysis.utils import no_refresh
from smdebug.core.tensor import StepState
from smdebug.exceptions import *  # noqa: F401,F403
from smdebug.exceptions import (NoMoreData, RuleEvaluationConditionMet, StepUnavailable,
                                TensorUnavailableForStep)
from smdebug.rules import Rule
from smdebug.rules.rule_invoker import invoke_rule

LIB, PATH, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
if LIB == "trialstat":
    from trialstat import create_trial  # the one line a user changes
else:
    from smdebug.trials import create_trial

report = {}

# ---- 1. Load the trial and look around --------------------------------------------------------
trial = create_trial(PATH)
report["steps"] = trial.steps()
report["train_steps"] = trial.steps(mode=modes.TRAIN)
report["eval_steps"] = trial.steps(mode=modes.EVAL)
report["workers"] = trial.workers()
report["modes"] = sorted(m.name for m in trial.modes())
report["collections"] = {
    name: trial.tensor_names(collection=name) for name in sorted(trial.collections())}
report["collection_json"] = {
    name: c.to_json_dict() for name, c in sorted(trial.collections().items())}
loss_names = trial.tensor_names(regex="[Ll]oss")
report["losses"] = loss_names


# ---- 2. Statistics over steps (the notebook plots these) ---------------------------------------
def get_data(trial, tname, mode):
    """The helper of smdebug's example notebooks: (steps, values) of a tensor in a mode."""
    tensor = trial.tensor(tname)
    steps = tensor.steps(mode=mode)
    return steps, [float(np.asarray(tensor.value(s, mode=mode)).mean()) for s in steps]


curves = {}
for mode in [modes.TRAIN, modes.EVAL]:
    for name in loss_names:
        steps, values = get_data(trial, name, mode)
        curves[f"{name}@{mode.name}"] = [steps, values]
report["loss_curves"] = curves

norms = {}
for name in trial.tensor_names(collection="gradients"):
    t = trial.tensor(name)
    norms[name] = [[s, float(t.reduction_value(s, "l2", mode=modes.TRAIN)),
                    float(t.reduction_value(s, "mean", mode=modes.TRAIN, abs=True)),
                    float(np.max(np.abs(t.value(s, mode=modes.TRAIN))))]
                   for s in t.steps(mode=modes.TRAIN)]
report["gradient_norms"] = norms

# ---- 3. Walk the steps by mode (branching on smdebug's enums) -----------------------------------
walk = []
for step in trial.steps():
    mode = trial.mode(step)
    if mode == modes.TRAIN:
        kind = "train"
    elif mode == modes.EVAL:
        kind = "eval"
    else:
        kind = "other"
    state = trial.has_passed_step(step)
    walk.append([step, kind, trial.mode_step(step), state == StepState.AVAILABLE,
                 trial.global_step(mode, trial.mode_step(step)) == step])
report["walk"] = walk
per_mode = {}
for step in trial.steps():
    per_mode.setdefault(trial.mode(step), []).append(step)  # smdebug's members as keys below
report["per_mode_counts"] = {m.name: len(per_mode.get(m, [])) for m in [modes.TRAIN, modes.EVAL]}

# A tensor missing at a step: the notebook's except clause.
missing = []
for name in trial.tensor_names(collection="weights")[:2]:
    for step in trial.steps(mode=modes.EVAL)[:2]:
        try:
            trial.tensor(name).value(step, mode=modes.EVAL)
            missing.append([name, step, "value"])
        except TensorUnavailableForStep as e:
            missing.append([name, step, type(e).__name__, e.mode.name])
report["missing"] = missing


# ---- 4. Rules written against smdebug's Rule class ---------------------------------------------
class VanishingGradient(Rule):
    """As smdebug's built-in rule: a gradient's mean |x| below a threshold."""

    def __init__(self, base_trial, threshold=0.0001):
        super().__init__(base_trial, action_str="")
        self.threshold = float(threshold)
        self.fired = []

    def set_required_tensors(self, step):
        for tname in self.base_trial.tensor_names(collection="gradients"):
            self.req_tensors.add(tname, steps=[step])

    def invoke_at_step(self, step):
        for tensor in self.req_tensors.get():
            if tensor.reduction_value(step, "mean", abs=True) < self.threshold:
                self.fired.append([step, tensor.name])
                return True
        return False


class LossNotDecreasing(Rule):
    """A custom rule over the loss: fires when the TRAIN loss did not fall over ``window``
    saved steps."""

    def __init__(self, base_trial, loss_name, window=3):
        super().__init__(base_trial, action_str="")
        self.loss_name = loss_name
        self.window = window
        self.fired = []

    def set_required_tensors(self, step):
        if self.base_trial.mode(step) == modes.TRAIN:
            self.req_tensors.add(self.loss_name, steps=[step])

    def invoke_at_step(self, step):
        if self.base_trial.mode(step) != modes.TRAIN:
            return False
        t = self.base_trial.tensor(self.loss_name)
        history = t.prev_steps(step, n=self.window + 1)
        if len(history) <= self.window:
            return False
        first, last = (float(t.value(s)) for s in (history[0], history[-1]))
        if last >= first:
            self.fired.append(step)
            return True
        return False


rules = {}
rule = VanishingGradient(trial, threshold=1e-4)
try:
    invoke_rule(rule, start_step=0, end_step=None)
except NoMoreData as e:
    rules["vanishing_end"] = [type(e).__name__, e.last_step]
rules["vanishing"] = rule.fired
if loss_names:
    rule = LossNotDecreasing(trial, loss_names[0], window=2)
    try:
        invoke_rule(rule, start_step=0, end_step=trial.steps()[-1] + 1, raise_eval_cond=True)
        rules["loss_first"] = None
    except RuleEvaluationConditionMet as e:
        rules["loss_first"] = [e.rule_name, e.step]
    checked = []
    for step in trial.steps()[:12]:
        try:
            LossNotDecreasing(trial, loss_names[0], window=2).invoke(step)
            checked.append([step, "ok"])
        except RuleEvaluationConditionMet as e:
            checked.append([step, "met", e.step])
        except (TensorUnavailableForStep, StepUnavailable) as e:
            checked.append([step, type(e).__name__])
    rules["loss_steps"] = checked
report["rules"] = rules

with no_refresh([trial]) as trials:
    report["no_refresh"] = [t.dynamic_refresh for t in trials]

with open(OUT, "w") as f:
    json.dump(report, f, indent=1, sort_keys=True)
