# SPDX-License-Identifier: Apache-2.0
"""Dump what an analysis library answers about a trial, for the parity tests.

    python dump_trial.py --lib smdebug|trialstat TRIAL OUT_PREFIX [TRIAL OUT_PREFIX ...]

Runs the same sequence of smdebug-API calls through either smdebug 1.0.34 (in .venv-smdebug)
or trialstat (in .venv) and writes OUT_PREFIX.json (names, steps, maps, shapes, reductions,
exception class names) and OUT_PREFIX.npz (every raw value, bit for bit).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np

REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"]
REGEXES = ["weight", "^gradient/", ["bias", "relu"], "(?!gradient)fc1", "output_0$"]


def load(lib):
    if lib == "smdebug":
        os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
        import logging
        logging.disable(logging.WARNING)
        from smdebug.core.modes import ModeKeys
        from smdebug.trials import create_trial
    else:
        from trialstat import create_trial
        from trialstat.modes import ModeKeys
    return create_trial, ModeKeys


def error_name(e):
    return {"error": type(e).__name__}


def call(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - we record which exception
        return error_name(e)


def reduction_record(r):
    a = np.asarray(r)
    kind = ("ndarray" if isinstance(r, np.ndarray)
            else "numpy_scalar" if isinstance(r, np.generic) else type(r).__name__)
    record = {"type": kind,
              "dtype": str(a.dtype), "shape": list(a.shape)}
    if a.dtype.kind == "c":
        record["value"] = [float(a.real), float(a.imag)]
    elif a.dtype.kind == "b":
        record["value"] = bool(a)
    elif a.dtype.kind in "iu":
        record["value"] = int(a)
    else:
        v = float(a)
        record["value"] = v if np.isfinite(v) else repr(v)
    return record


def dump(lib, path):
    warnings.simplefilter("ignore")
    create_trial, ModeKeys = load(lib)
    trial = create_trial(path)
    out = {"lib": lib}
    arrays = {}
    modes = sorted(trial.modes(), key=lambda m: m.value)
    all_modes = [ModeKeys.GLOBAL] + modes
    out["workers"] = trial.workers()
    out["modes"] = [m.name for m in modes]
    out["loaded_all_steps"] = bool(trial.loaded_all_steps)
    out["steps"] = {m.name: trial.steps(mode=m) for m in all_modes}
    out["steps_incomplete"] = {m.name: trial.steps(mode=m, show_incomplete_steps=True)
                               for m in all_modes}
    out["tensor_names"] = trial.tensor_names()
    out["tensor_names_by_mode"] = {m.name: call(lambda m=m: trial.tensor_names(mode=m))
                                   for m in all_modes}
    global_steps = trial.steps()
    out["tensor_names_by_step"] = {str(s): trial.tensor_names(step=s) for s in global_steps}
    out["tensor_names_by_mode_step"] = {
        m.name: {str(s): call(lambda s=s, m=m: trial.tensor_names(step=s, mode=m))
                 for s in trial.steps(mode=m)} for m in modes}
    out["collections"] = {c: call(lambda c=c: trial.tensor_names(collection=c))
                          for c in sorted(trial.collections())}
    out["regex"] = {json.dumps(r): trial.tensor_names(regex=r) for r in REGEXES}
    out["mode_of"] = {str(g): [trial.mode(g).name, trial.mode_step(g)] for g in global_steps}
    out["global_of"] = {m.name: {str(s): trial.global_step(m, s) for s in trial.steps(mode=m)}
                        for m in modes}
    last = global_steps[-1] if global_steps else 0
    out["has_passed_step"] = {
        m.name: {str(s): trial.has_passed_step(s, mode=m).name
                 for s in range(0, (trial.steps(mode=m) or [0])[-1] + 3)} for m in all_modes}
    if trial.loaded_all_steps:  # on a live trial both libraries would wait for it
        out["wait_beyond"] = call(lambda: trial.wait_for_steps([last + 1]))
    else:
        out["wait_beyond"] = None
    out["missing_tensor"] = call(lambda: trial.tensor("no/such/tensor"))

    tensors = {}
    counter = 0
    for name in trial.tensor_names():
        t = trial.tensor(name)
        rec = {"steps": {m.name: t.steps(mode=m) for m in all_modes}, "records": {}}
        steps = t.steps()
        for g in steps:
            workers = t.workers(g)
            for w in workers:
                r = {"workers_at_step": list(workers)}
                try:
                    v = t.value(g, worker=w)
                    if v is None:
                        r["value"] = {"none": True}
                    else:
                        v = np.asarray(v)
                        key = f"a{counter}"
                        counter += 1
                        arrays[key] = v
                        r["value"] = {"array": key, "dtype": str(v.dtype), "shape": list(v.shape)}
                except Exception as e:  # noqa: BLE001
                    r["value"] = error_name(e)
                m, ms = trial.mode(g), trial.mode_step(g)
                try:
                    vm = np.asarray(t.value(ms, mode=m, worker=w))
                    r["value_by_mode_step"] = {"dtype": str(vm.dtype), "shape": list(vm.shape),
                                               "bytes": vm.tobytes().hex()[:64]}
                except Exception as e:  # noqa: BLE001
                    r["value_by_mode_step"] = error_name(e)
                r["shape"] = call(lambda g=g, w=w: list(t.shape(g, worker=w)))
                try:
                    saved = t.reduction_values(g, worker=w)
                    r["reduction_values"] = {f"{n}|{a}": reduction_record(v)
                                             for (n, a), v in sorted(saved.items())}
                except Exception as e:  # noqa: BLE001
                    r["reduction_values"] = error_name(e)
                red = {}
                for n in REDUCTIONS:
                    for a in (False, True):
                        try:
                            red[f"{n}|{a}"] = reduction_record(
                                t.reduction_value(g, n, worker=w, abs=a))
                        except Exception as e:  # noqa: BLE001
                            red[f"{n}|{a}"] = error_name(e)
                r["reduction_value"] = red
                rec["records"][f"{g}|{w}"] = r
        if steps:
            s0 = steps[-1]
            rec["prev_steps"] = t.prev_steps(s0, n=2)
            rec["bad_worker"] = call(lambda: t.value(s0, worker="worker_999"))
            rec["bad_reduction"] = call(lambda: t.reduction_value(s0, "median"))
            rec["beyond_last"] = call(lambda: t.value(last + 1))  # no wait in value()
            unsaved = [s for s in range(0, last) if s not in set(global_steps)]
            if unsaved:
                rec["unsaved_step"] = call(lambda: t.value(unsaved[0]))
            absent = [s for s in global_steps if s not in set(steps)]
            if absent:
                rec["step_without_tensor"] = call(lambda: t.value(absent[0]))
        tensors[name] = rec
    out["tensors"] = tensors
    return out, arrays


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", choices=["smdebug", "trialstat"], required=True)
    parser.add_argument("trial_and_out", nargs="+", metavar="TRIAL OUT_PREFIX",
                        help="one or more pairs: a trial and the prefix of its dump")
    args = parser.parse_args()
    pairs = args.trial_and_out
    if len(pairs) % 2:
        parser.error("expected pairs of TRIAL OUT_PREFIX")
    for trial, prefix in zip(pairs[::2], pairs[1::2]):
        out, arrays = dump(args.lib, trial)
        with open(prefix + ".json", "w") as f:
            json.dump(out, f)
        np.savez(prefix + ".npz", **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())
