# SPDX-License-Identifier: Apache-2.0
"""Interoperation with smdebug's own classes, for notebooks that keep smdebug's imports
(``from smdebug import modes``, ``from smdebug.exceptions import *``,
``from smdebug.core.tensor import StepState``) and only swap ``create_trial``.

Design: trialstat never imports smdebug (not at import time, not later). It only looks into
``sys.modules``:

* Enums (``ModeKeys``, ``StepState``): trialstat's members compare equal to smdebug's members of
  the same name (``trial.mode(s) == smdebug.modes.TRAIN``, either side of ``==``, ``in`` a list)
  and hash equal (both hash their name, as ``enum.Enum`` does), so they also work as dict and set
  keys. This needs no import: smdebug's members are recognised by their class's module and name.
* Exceptions: an ``except`` clause matches by the real class hierarchy (``__subclasscheck__`` is
  not consulted), so a trialstat exception must *be* an instance of smdebug's class. When a
  trialstat exception is created and ``smdebug.exceptions`` is already loaded in the process,
  its class is a cached subclass of both trialstat's class and smdebug's class of the same name
  (``trialstat.exceptions.TrialstatError`` pairs with smdebug's ``SMDebugRuntimeError``). This is
  sound: an ``except`` clause that names an ``smdebug.exceptions`` class can only run in a process
  where that module is loaded, and the check happens when the exception is created, after the
  notebook's imports. Without smdebug loaded, trialstat's exceptions are plain trialstat classes
  (nothing changes, nothing is imported). The class name, module and message stay trialstat's;
  pickling rebuilds the exception from trialstat's class.
"""
import sys
from enum import Enum

__all__ = ["SmdebugEqualEnum", "smdebug_flavoured", "smdebug_peers"]

# trialstat enum name -> (module, qualname) of smdebug's enum with the same members
_ENUM_PEERS = {
    "ModeKeys": ("smdebug.core.modes", "ModeKeys"),
    "StepState": ("smdebug.core.tensor", "StepState"),
}


class SmdebugEqualEnum(Enum):
    """An Enum whose members equal (and hash like) smdebug's members of the same name."""

    def __eq__(self, other):
        if type(other) is type(self):
            return self is other
        if isinstance(other, Enum):
            kind = type(other)
            if _ENUM_PEERS.get(type(self).__name__) == (kind.__module__, kind.__qualname__):
                return self._name_ == other._name_
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._name_)  # what enum.Enum (and so smdebug's members) hashes


_mixed = {}


def _smdebug_exceptions():
    module = sys.modules.get("smdebug.exceptions")
    # A module still being imported may lack classes; getattr below copes with that.
    return module


def smdebug_flavoured(cls, own_module):
    """``cls`` (a trialstat exception class) or, when smdebug.exceptions is loaded, the cached
    subclass of ``cls`` and the smdebug class named like ``cls``'s nearest trialstat ancestor."""
    module = _smdebug_exceptions()
    if module is None:
        return cls
    hit = _mixed.get(cls)
    if hit is not None:
        return hit
    peer = None
    for base in cls.__mro__:
        if base.__module__ != own_module:
            continue
        candidate = getattr(module, base.__name__, None)
        if isinstance(candidate, type) and issubclass(candidate, BaseException):
            peer = candidate
            break
    if peer is None or issubclass(cls, peer):
        return cls
    try:
        mixed = type(cls.__name__, (cls, peer), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__, "_trialstat_class": cls})
    except TypeError:  # an incompatible hierarchy (a future smdebug): stay trialstat's own
        mixed = cls
    _mixed[cls] = mixed
    return mixed


def smdebug_peers(classes):
    """``classes`` plus, when smdebug.exceptions is loaded, smdebug's classes of the same names:
    for ``except`` clauses in trialstat that must also catch exceptions raised by smdebug's own
    code (smdebug's ``Rule.invoke`` raises smdebug's ``RuleEvaluationConditionMet``)."""
    module = _smdebug_exceptions()
    out = list(classes)
    if module is not None:
        for cls in classes:
            candidate = getattr(module, cls.__name__, None)
            if isinstance(candidate, type) and issubclass(candidate, BaseException):
                out.append(candidate)
    return tuple(out)
