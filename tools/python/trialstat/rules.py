# SPDX-License-Identifier: Apache-2.0
"""Rules from Python.

* Built-in rules (native, one pass over the trial for all of them): :func:`evaluate`.
* Custom rules in smdebug's style: subclass :class:`Rule`, implement ``invoke_at_step(step)``
  (reading ``self.base_trial.tensor(...).value(...)``), run with :func:`invoke_rule` — the same
  loop, exceptions and semantics as smdebug 1.0.34 (spec/RULES.md §1).
* Custom rules over statistics records (much faster: no per-tensor Python reads): subclass
  :class:`StatsRule`, implement ``invoke_at_step(step, records)`` where ``records`` holds the
  columns of ``Trial.stats`` for that step, run with :func:`invoke_stats_rule`.
"""
import collections as _collections
import json
import logging
import os
from abc import ABC, abstractmethod

from . import _core
from ._refresh import no_refresh
from ._steps import step_selection
from .exceptions import (NoMoreProfilerData, RuleEvaluationConditionMet, StepUnavailable,
                         TensorUnavailable, TensorUnavailableForStep, catching, from_core_error)
from .modes import GLOBAL, ModeKeys

__all__ = ["Finding", "RuleResult", "SkippedRecord", "builtin_rule_names", "default_rules", "evaluate",
           "Rule", "RequiredTensors", "RequiredTensorsForTrial", "invoke_rule", "StatsRule",
           "invoke_stats_rule"]

Finding = _collections.namedtuple(
    "Finding", ["rule", "step", "mode", "mode_step", "tensor", "worker", "value", "message"])
Finding.__doc__ = ("A condition met: rule name, global step, mode (ModeKeys), mode step, tensor, "
                   "worker, the value that crossed the threshold, and a message.")


SkippedRecord = _collections.namedtuple(
    "SkippedRecord", ["tensor", "worker", "step", "file", "offset_bytes", "saved_reduction", "reason"])
SkippedRecord.__doc__ = ("A record a rule's verdict could not see (cut short, corrupt, its event "
                         "file missing): tensor, worker, global step, event file (trial-relative), "
                         "byte offset, whether it is a saved reduction, and why.")


class RuleResult:
    """Outcome of one rule: ``status`` is "IssuesFound", "NoIssuesFound" or "Error".

    ``skipped``: the :class:`SkippedRecord` s of the rule's tensors that could not be read (its
    verdict did not see them); ``warnings``: problems its preparation accepted (e.g. a collection
    name that names no collection)."""

    def __init__(self, configuration_name, rule_name, status, status_details, findings,
                 skipped=(), warnings=()):
        self.configuration_name = configuration_name
        self.rule_name = rule_name
        self.status = status
        self.status_details = status_details
        self.findings = findings
        self.skipped = list(skipped)
        self.warnings = list(warnings)

    @property
    def issues_found(self):
        return self.status == "IssuesFound"

    def to_dict(self):
        return {"configuration_name": self.configuration_name, "rule": self.rule_name,
                "status": self.status, "status_details": self.status_details,
                "findings": [f._replace(mode=f.mode.name)._asdict() for f in self.findings],
                "skipped": [k._asdict() for k in self.skipped], "warnings": list(self.warnings)}

    def __repr__(self):
        return (f"<RuleResult {self.configuration_name}: {self.status}, "
                f"{len(self.findings)} finding(s)>")


def builtin_rule_names():
    """Names of the built-in rules trialstat implements."""
    return list(_core.builtin_rule_names())


def default_rules():
    """The rules ``trialstat rules`` runs without --rule/--config (no parameter needed)."""
    return list(_core.default_rule_names())


def _param_text(value):
    """SageMaker passes every parameter as a string; accept Python values too."""
    if isinstance(value, str):
        return value
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, ModeKeys) or hasattr(value, "name") and not isinstance(value, (int, float)):
        return value.name
    if isinstance(value, (list, tuple, set)):
        return ",".join(_param_text(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def _specs(rules, config):
    specs = []
    if config is not None:
        if isinstance(config, (list, dict)):
            text, source = json.dumps(config), "<config>"
        elif isinstance(config, os.PathLike) or (isinstance(config, str) and os.path.exists(config)):
            with open(config, encoding="utf-8") as f:
                text, source = f.read(), os.fspath(config)
        else:
            text, source = config, "<config>"
        try:
            specs.extend(_core.parse_rule_config(text, source))
        except _core.Error as e:
            raise from_core_error(e) from None
    for rule in rules or []:
        if isinstance(rule, str):
            specs.append((rule, rule, {}))
        elif isinstance(rule, dict):
            params = {k: _param_text(v) for k, v in rule.items()}
            name = params.pop("rule_to_invoke")
            specs.append((params.pop("configuration_name", name), name, params))
        elif len(rule) == 2:
            name, params = rule
            specs.append((name, name, {k: _param_text(v) for k, v in (params or {}).items()}))
        elif len(rule) == 3:
            config_name, name, params = rule
            specs.append((config_name, name, {k: _param_text(v) for k, v in (params or {}).items()}))
        else:
            raise ValueError(f"not a rule: {rule!r}")
    return specs


def evaluate(trial, rules=None, config=None, steps=None, device="auto", strict=False):
    """Evaluate built-in rules natively, all of them in one pass over the trial.

    ``rules``: a list of rule names, ``(name, params)``, ``(configuration_name, name, params)``
    or ``{"rule_to_invoke": name, **params}``; params values may be strings (as SageMaker passes
    them) or Python values (True, 1e-6, ["a", "b"]). ``config``: a SageMaker rule configuration
    (a JSON file path, JSON text or the parsed list). Neither: :func:`default_rules`.
    ``steps``: global steps as in ``Trial.stats``. Returns one :class:`RuleResult` per rule, in
    order. A rule that cannot be built or prepared (bad parameter) gets status "Error".
    Records that cannot be read are listed in each rule's ``skipped``; ``strict=True`` makes a
    rule with any such record "Error" instead.
    """
    if rules is None and config is None:
        rules = default_rules()
    specs = _specs(rules, config)
    begin, end, _ = step_selection(steps)
    trial.maybe_refresh()
    try:
        raw = trial._core.evaluate_rules(specs, device, begin, end, strict)
    except _core.Error as e:
        raise from_core_error(e) from None
    return _rule_results(raw)


def _rule_results(raw):
    """RuleResult objects from the native (configuration, rule, status, details, findings)."""
    out = []
    for configuration_name, rule_name, status, details, findings, skipped, warnings in raw:
        out.append(RuleResult(configuration_name, rule_name, status, details,
                              [Finding(r, s, ModeKeys(m), ms, t, w, v, msg)
                               for r, s, m, ms, t, w, v, msg in findings],
                              [SkippedRecord(*k) for k in skipped], warnings))
    return out


# ---- smdebug-style custom rules ---------------------------------------------------------------

class RequiredTensorsForTrial:
    """smdebug.rules.req_tensors.RequiredTensorsForTrial: the tensors (and steps) a rule needs
    from one trial."""

    def __init__(self, trial):
        self.trial = trial
        self._tensor_steps = {}
        self._tensors = {}
        self.logger = getattr(trial, "logger", None)

    def _add_steps_for_tensor(self, name, steps):
        self._tensor_steps.setdefault(name, []).extend(steps)
        if name not in self._tensors:
            self._tensors[name] = self.trial.tensor(name)

    def add(self, name, steps, should_match_regex=False):
        if should_match_regex:
            for n in self.trial.tensor_names(regex=[name]):
                self._add_steps_for_tensor(n, steps)
        else:
            if not self.trial.has_tensor(name):
                raise TensorUnavailable(name)
            self._add_steps_for_tensor(name, steps)

    def get_tensor_steps(self, name):
        return self._tensor_steps[name]

    def get_names(self):
        return self._tensor_steps.keys()

    def get(self):
        """The Tensor objects added (smdebug returns the same dict values view)."""
        return self._tensors.values()

    def clear(self):
        self._tensor_steps.clear()
        self._tensors.clear()

    def fetch(self):
        """Wait for every required step, then read each required value once (raising
        TensorUnavailableForStep / StepUnavailable as smdebug does)."""
        required = sorted({s for steps in self._tensor_steps.values() for s in steps})
        self.trial.wait_for_steps(required)
        for name, steps in self._tensor_steps.items():
            t = self._tensors[name]
            for step in steps:
                t.value(step)


class RequiredTensors:
    """smdebug.rules.req_tensors.RequiredTensors: ``add(name, steps, trial=None,
    should_match_regex=False)``, ``get(trial=None)`` (Tensor objects), ``get_names(trial=None)``,
    ``get_tensor_steps(name, trial=None)``, ``clear()``, ``fetch()``."""

    def __init__(self, base_trial, other_trials=None):
        self.base_trial = base_trial
        self._per_trial = {base_trial: RequiredTensorsForTrial(base_trial)}
        for trial in other_trials or []:
            self._per_trial[trial] = RequiredTensorsForTrial(trial)

    def _for(self, trial):
        return self._per_trial[trial if trial is not None else self.base_trial]

    def add(self, name, steps, trial=None, should_match_regex=False):
        self._for(trial).add(name, steps, should_match_regex=should_match_regex)

    def get_tensor_steps(self, name, trial=None):
        return self._for(trial).get_tensor_steps(name)

    def get_names(self, trial=None):
        return self._for(trial).get_names()

    def get(self, trial=None):
        return self._for(trial).get()

    def clear(self):
        for r in self._per_trial.values():
            r.clear()

    def fetch(self):
        for r in self._per_trial.values():
            r.fetch()


class Rule(ABC):
    """smdebug.rules.Rule: subclass and implement ``invoke_at_step(step)`` (global step);
    return a truthy value when the condition is met. The same subclass code runs on smdebug's
    own ``smdebug.rules.Rule`` with a trialstat trial (tools/python/README.md). Differences:
    ``action_str`` may be left out, and actions (SageMaker notifications) are not run."""

    def __init__(self, base_trial, action_str="", other_trials=None):
        self.base_trial = base_trial
        self.other_trials = other_trials
        self.trials = [base_trial] + list(other_trials or [])
        self.req_tensors = RequiredTensors(base_trial, other_trials)
        self.logger = getattr(base_trial, "logger", None) or logging.getLogger("trialstat")
        self.rule_name = self.__class__.__name__
        self.action_str = action_str
        self.report = {"RuleTriggered": 0, "Violations": 0, "Details": {}, "Datapoints": 0,
                       "RuleParameters": ""}

    def set_required_tensors(self, step):
        pass

    @abstractmethod
    def invoke_at_step(self, step):
        pass

    def invoke(self, step):
        self.base_trial.wait_for_steps([step])
        with no_refresh(self.trials):
            self.req_tensors.clear()
            self.set_required_tensors(step)
            self.req_tensors.fetch()
            val = self.invoke_at_step(step)
        if val:
            raise RuleEvaluationConditionMet(self.rule_name, step)


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    """smdebug.rules.rule_invoker.invoke_rule: visit every global step from ``start_step``;
    TensorUnavailableForStep / StepUnavailable / TensorUnavailable skip the step;
    RuleEvaluationConditionMet is re-raised with ``raise_eval_cond``; NoMoreData propagates
    (that is how an open-ended run ends on a finished trial). Accepts rules built on smdebug's
    own ``Rule`` class too. Returns the list of steps at which the condition was met (smdebug
    returns None)."""
    step = start_step if start_step is not None else 0
    met = []
    while end_step is None or step < end_step:
        try:
            rule_obj.invoke(step)
        except catching(TensorUnavailableForStep, StepUnavailable, TensorUnavailable):
            pass
        except catching(RuleEvaluationConditionMet) as e:
            met.append(e.step)
            if raise_eval_cond:
                raise
            if e.end_of_rule:
                break
        except catching(NoMoreProfilerData):
            break
        step += 1
    return met


class StatsRule(ABC):
    """A custom rule over statistics records: ``invoke_at_step(step, records)`` is called once
    per saved global step with that step's rows as a dict of numpy arrays (the columns of
    ``Trial.stats(as_frame=False)``: tensor, worker, mode, numel, nan_count, min, max, mean, ...).

    Class attributes select what is computed: ``collection`` / ``regex`` (None: all tensors),
    ``update_ratio`` (None: weights and biases), ``histogram_bins``, ``log_histogram`` (True adds
    the ``log_hist_*`` columns), ``device``.
    """

    collection = None
    regex = None
    update_ratio = None
    histogram_bins = 0
    log_histogram = False
    device = "auto"

    def __init__(self, base_trial, action_str=""):
        self.base_trial = base_trial
        self.rule_name = self.__class__.__name__
        self.action_str = action_str

    @abstractmethod
    def invoke_at_step(self, step, records):
        pass


def invoke_stats_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    """Run a :class:`StatsRule` over the saved steps in [start_step, end_step) in one native
    pass. Returns the global steps where ``invoke_at_step`` was truthy. With
    ``raise_eval_cond`` the first such step raises RuleEvaluationConditionMet (after the pass
    finishes reading; no further ``invoke_at_step`` calls are made)."""
    met = []

    def on_step(step, mode, mode_step, records):
        if rule_obj.invoke_at_step(step, records):
            met.append(step)
            if raise_eval_cond:
                raise RuleEvaluationConditionMet(rule_obj.rule_name, step)

    rule_obj.base_trial.for_each_step(
        on_step, collection=rule_obj.collection, regex=rule_obj.regex,
        steps=(start_step if start_step is not None else 0, end_step), device=rule_obj.device,
        update_ratio=rule_obj.update_ratio, histogram_bins=rule_obj.histogram_bins,
        log_histogram=rule_obj.log_histogram)
    return met
