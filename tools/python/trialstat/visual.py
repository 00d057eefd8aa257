# SPDX-License-Identifier: Apache-2.0
"""TensorBoard export and the HTML report (issue 11), the engine of ``trialstat tensorboard`` and
``trialstat report``: ``trial.to_tensorboard(logdir)``, ``trialstat.report(trial, path)``."""
from . import _core
from . import rules as _rules
from ._steps import step_selection
from .exceptions import from_core_error


def _names(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _contiguous(steps):
    begin, end, keep = step_selection(steps)
    if keep is not None and len(keep) != (end - begin):
        raise ValueError("steps: give a range (begin, end), a range() or one step")
    return begin, end


def to_tensorboard(trial, logdir, collection=None, regex=None, steps=None, overwrite=False,
                   device="auto"):
    """Write TensorBoard event files of the trial's statistics under ``logdir``, one run per
    worker (``logdir/<worker>/``), tags ``<mode>/<collection>/<tensor>/<statistic>``: scalars
    mean, std, min, max, l2, linf, zero_fraction, nan_count, pos_inf_count, neg_inf_count,
    update_ratio and the log-scale histogram (see README "TensorBoard export"). Selection as
    ``Trial.stats``. A non-empty ``logdir`` is refused unless ``overwrite``. Returns a dict:
    steps, scalars, histograms, failed_records, files, warnings."""
    begin, end = _contiguous(steps)
    trial.maybe_refresh()
    try:
        return trial._core.to_tensorboard(str(logdir), _names(collection), _names(regex),
                                          bool(overwrite), device, begin, end)
    except _core.Error as e:
        raise from_core_error(e) from None


def report(trial, path, rules=None, config=None, tensor_regex=None, steps=None, device="auto"):
    """Write the self-contained HTML report of ``trial`` to ``path`` (as ``trialstat report``):
    rules as :func:`trialstat.rules.evaluate` takes them (default: the default rules), heatmaps
    for the flagged tensors and those matching ``tensor_regex``. Returns (list of
    :class:`trialstat.rules.RuleResult`, dict with bytes, steps, tensors, heatmaps,
    failed_records, warnings)."""
    if rules is None and config is None:
        rules = _rules.default_rules()
    specs = _rules._specs(rules, config)
    begin, end = _contiguous(steps)
    trial.maybe_refresh()
    try:
        raw, info = trial._core.write_report(str(path), specs, _names(tensor_regex), device, begin, end)
    except _core.Error as e:
        raise from_core_error(e) from None
    return _rules._rule_results(raw), info
