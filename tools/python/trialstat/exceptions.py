# SPDX-License-Identifier: Apache-2.0
"""Exceptions with smdebug 1.0.34's names, fields and messages (``smdebug.exceptions``,
spec/TRIAL_API.md §7), so that ``except TensorUnavailableForStep`` code ports unchanged.
``TrialstatError`` (a ``SMDebugRuntimeError``) is trialstat's own: a native-layer failure such
as a corrupt record, with ``code`` = the library's error code name ("data_loss", "io_error", ...).
``WaitTimeout`` (also a ``TimeoutError``) is raised when a bounded wait runs out.

When ``smdebug.exceptions`` is loaded in the process, every trialstat exception is also an
instance of smdebug's class of the same name, so ``except`` clauses written for smdebug catch
it (trialstat/_smdebug_interop.py explains the design; trialstat never imports smdebug).
"""
from ._smdebug_interop import smdebug_flavoured, smdebug_peers
from .modes import ModeKeys as modes

__all__ = [
    "SMDebugError", "SMDebugCustomerError", "SMDebugTypeError", "SMDebugRuntimeError",
    "SMDebugNotImplementedError", "SMDebugValueError", "InvalidCollectionConfiguration",
    "StepNotYetAvailable", "MissingCollectionFiles", "IndexReaderException", "StepUnavailable",
    "TensorUnavailableForStep", "ShapeUnavailableForStep", "TensorUnavailable", "InvalidWorker",
    "NoMoreProfilerData", "NoMoreData", "RuleEvaluationConditionMet",
    "InsufficientInformationForRuleInvocation", "TrialstatError", "WaitTimeout",
]


class SMDebugError(Exception):
    def __new__(cls, *args, **kwargs):
        # Also an instance of smdebug's class of the same name when smdebug is loaded.
        return super().__new__(smdebug_flavoured(cls, __name__), *args, **kwargs)

    def __reduce__(self):
        # Rebuild from trialstat's own class (the mixed class is not importable by name).
        own = type(self).__dict__.get("_trialstat_class", type(self))
        return own, self.args, self.__dict__


class SMDebugCustomerError(SMDebugError):
    pass


class SMDebugTypeError(SMDebugError, TypeError):
    pass


class SMDebugRuntimeError(SMDebugError, RuntimeError):
    pass


class SMDebugNotImplementedError(SMDebugError, NotImplementedError):
    pass


class SMDebugValueError(SMDebugError, ValueError):
    pass


class InvalidCollectionConfiguration(SMDebugError):
    def __init__(self, c_name):
        self.c_name = c_name

    def __str__(self):
        return (f"Collection {self.c_name} has not been configured. "
                "Please fill in tensor_name or include_regex")


class StepNotYetAvailable(SMDebugError):
    def __init__(self, step, mode):
        self.step = step
        self.mode = mode

    def __str__(self):
        return "Step {} of mode {} not yet available".format(self.step, self.mode.name)


class MissingCollectionFiles(SMDebugError):
    def __init__(self):
        pass

    def __str__(self):
        return "Training job has ended. All the collection files could not be loaded"


class IndexReaderException(SMDebugError):
    def __init__(self, message):
        self.message = message

    def __str__(self):
        return self.message


class StepUnavailable(SMDebugError):
    def __init__(self, step, mode):
        self.step = step
        self.mode = mode

    def __str__(self):
        return "Step {} of mode {} is not available as it was not saved".format(
            self.step, self.mode.name)


class TensorUnavailableForStep(SMDebugError):
    def __init__(self, tname, step, mode=modes.GLOBAL, has_reductions=False):
        self.step = step
        self.mode = mode
        self.tname = tname
        self.has_reductions = has_reductions

    def __str__(self):
        msg = ("Value for tensor {} is not available for step {} "
               "with mode {} as it was not saved."
               "".format(self.tname, self.step, self.mode.name))
        if self.has_reductions:
            msg += ("This tensor has reductions saved for this step. "
                    "You might want to query for the reductions.")
        return msg


class ShapeUnavailableForStep(SMDebugError):
    def __init__(self, tname, step, mode=modes.GLOBAL):
        self.step = step
        self.mode = mode
        self.tname = tname

    def __str__(self):
        return ("Shape for tensor {} is not available for step {} "
                "with mode {} as it was not saved."
                "".format(self.tname, self.step, self.mode.name))


class TensorUnavailable(SMDebugError):
    def __init__(self, tname):
        self.tname = tname

    def __str__(self):
        return "Tensor {} was not saved.".format(self.tname)


class InvalidWorker(SMDebugError):
    def __init__(self, worker):
        self.worker = worker

    def __str__(self):
        return "Invalid Worker: {}".format(self.worker)


class NoMoreProfilerData(SMDebugError):
    def __init__(self, timestamp):
        self.timestamp = timestamp
        self.msg = "Looking for timestamp {} and reached end of training.".format(timestamp)

    def __str__(self):
        return self.msg


class NoMoreData(SMDebugError):
    def __init__(self, step, mode, last_step):
        self.step = step
        self.mode = mode
        self.last_step = last_step
        self.msg = ("Looking for step {} of mode {} and reached "
                    "end of training. Max step available is {}".format(
                        self.step, self.mode.name, self.last_step))

    def __str__(self):
        return self.msg


class RuleEvaluationConditionMet(SMDebugError):
    def __init__(self, rule_name, step, end_of_rule=False):
        self.rule_name = rule_name
        self.step = step
        self.end_of_rule = end_of_rule

    def __str__(self):
        return "Evaluation of the rule {} at step {} resulted in the condition being met".format(
            self.rule_name, self.step)


class InsufficientInformationForRuleInvocation(SMDebugError):
    def __init__(self, rule_name, message):
        self.rule_name = rule_name
        self.message = message

    def __str__(self):
        return "Insufficient information to invoke rule {}: {}".format(self.rule_name, self.message)


class TrialstatError(SMDebugRuntimeError):
    """A failure reported by the native library: ``code`` is its error code name
    ("not_found", "data_loss", "io_error", "invalid_argument", "unsupported_dtype", ...)."""

    def __init__(self, code, message):
        self.code = code
        self.message = message

    def __str__(self):
        return f"{self.code}: {self.message}"


class WaitTimeout(SMDebugError, TimeoutError):
    """A bounded wait ran out (``create_trial(..., wait_timeout=s)``, ``wait_for_steps(...,
    timeout=s)`` or the environment variable TRIALSTAT_WAIT_TIMEOUT): ``what`` it waited for,
    after ``seconds``."""

    def __init__(self, what, seconds):
        self.what = what
        self.seconds = seconds

    def __str__(self):
        return f"gave up waiting for {self.what} after {self.seconds:g} s"


def catching(*classes):
    """For trialstat's own ``except`` clauses: ``classes`` plus smdebug's classes of the same
    names when smdebug is loaded (smdebug's own code, such as its ``Rule``, raises those)."""
    return smdebug_peers(classes)


def from_core_error(error):
    """Turn a ``trialstat._core.Error`` ("<code>: <message>") into a TrialstatError."""
    text = str(error)
    code, sep, message = text.partition(": ")
    if not sep or " " in code:
        code, message = "unknown", text
    return TrialstatError(code, message)
