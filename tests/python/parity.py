# SPDX-License-Identifier: Apache-2.0
"""Compare two dumps (dump_trial.py) of the same trial: smdebug's and trialstat's.

``compare(smd, smd_arrays, ts, ts_arrays)`` returns (differences, documented): ``differences``
are real mismatches (a test failure); ``documented`` lists the deliberate differences met, each
tagged with its reason (README "Differences from smdebug"):

  int8                 DT_INT8 reads as int8 (smdebug: uint8); the bytes are identical.
  unreadable_dtype     smdebug raises (KeyError / SMDebugValueError) or returns None for int16,
                       uint16, uint32, uint64, complex64 and empty tensors; trialstat reads them.
  shape_hides_raw      a raw tensor saved with a shape record: smdebug raises
                       TensorUnavailableForStep, trialstat returns the value (and computes
                       reductions from it).
  missing_reduction_tname  (no field compared) -.

Tolerances: raw values bitwise (dtype, shape, bytes); saved reductions exactly; reductions
computed with numpy: same dtype and type, value within rtol 2e-6 (float32/float16 results:
numpy 1.26 vs 2.x may order a pairwise sum or an SVD differently) or 1e-12 (float64),
integers and booleans exactly.
"""
import json
import math

import numpy as np

SMDEBUG_READ_FAILURES = {"KeyError", "SMDebugValueError", "SMDebugTypeError", "TypeError"}


def _float(v):
    if isinstance(v, str):
        return float(v)
    return v


def _close(a, b, dtype):
    if isinstance(a, list) or isinstance(b, list):
        return a == b
    if isinstance(a, (bool, int)) and isinstance(b, (bool, int)):
        return a == b
    a, b = _float(a), _float(b)
    if math.isnan(a) and math.isnan(b):
        return True
    if math.isinf(a) or math.isinf(b):
        return a == b
    rtol = 1e-12 if dtype == "float64" else 2e-6
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + (1e-30 if dtype == "float64" else 1e-12)


def _numpy_error(record):
    """numpy 1.26 (the smdebug venv) raises UFuncTypeError, a TypeError, where numpy 2.x raises
    TypeError itself (e.g. the mean of a str array): the same error under two names."""
    if record.get("error") == "UFuncTypeError":
        return dict(record, error="TypeError")
    return record


def compare(smd, smd_arrays, ts, ts_arrays):
    diffs = []
    documented = []

    def same(key, a, b):
        if a != b:
            diffs.append(f"{key}: smdebug {json.dumps(a)[:300]} != trialstat {json.dumps(b)[:300]}")

    for key in ("workers", "modes", "loaded_all_steps", "steps", "steps_incomplete",
                "tensor_names", "tensor_names_by_step", "tensor_names_by_mode_step", "collections",
                "regex", "mode_of", "global_of", "has_passed_step", "wait_beyond",
                "missing_tensor"):
        same(key, smd[key], ts[key])
    for mode, names in smd["tensor_names_by_mode"].items():
        same(f"tensor_names_by_mode[{mode}]", names, ts["tensor_names_by_mode"][mode])

    same("tensor set", sorted(smd["tensors"]), sorted(ts["tensors"]))
    for name, srec in smd["tensors"].items():
        trec = ts["tensors"].get(name)
        if trec is None:
            continue
        where = f"tensor {name}"
        same(f"{where} steps", srec["steps"], trec["steps"])
        for k in ("prev_steps", "bad_worker", "beyond_last", "unsaved_step",
                  "step_without_tensor"):
            same(f"{where} {k}", srec.get(k), trec.get(k))
        documented_before = len(documented)
        same(f"{where} records", sorted(srec["records"]), sorted(trec["records"]))
        for rkey, sr in srec["records"].items():
            tr = trec["records"].get(rkey)
            if tr is None:
                continue
            at = f"{where} @ {rkey}"
            same(f"{at} workers", sr["workers_at_step"], tr["workers_at_step"])
            sv, tv = sr["value"], tr["value"]
            reason = None
            if "array" in sv and "array" in tv:
                a, b = smd_arrays[sv["array"]], ts_arrays[tv["array"]]
                if a.dtype == np.uint8 and b.dtype == np.int8:
                    reason = "int8"
                    if a.shape != b.shape or a.tobytes() != b.tobytes():
                        diffs.append(f"{at} int8 value bytes differ")
                elif a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                    diffs.append(f"{at} value: smdebug {a.dtype}{a.shape} != trialstat "
                                 f"{b.dtype}{b.shape} or bytes differ")
            elif (sv.get("none") or sv.get("error") in SMDEBUG_READ_FAILURES) and "array" in tv:
                reason = "unreadable_dtype"
            elif sv.get("error") == "TensorUnavailableForStep" and "array" in tv:
                reason = "shape_hides_raw"
            else:
                same(f"{at} value", sv, tv)
            if reason:
                documented.append((reason, at))
                continue  # everything derived from the value differs for the same reason
            same(f"{at} value_by_mode_step", sr["value_by_mode_step"], tr["value_by_mode_step"])
            same(f"{at} shape", sr["shape"], tr["shape"])
            same(f"{at} reduction_values keys",
                 sorted(sr["reduction_values"]) if isinstance(sr["reduction_values"], dict) else sr["reduction_values"],
                 sorted(tr["reduction_values"]) if isinstance(tr["reduction_values"], dict) else tr["reduction_values"])
            if isinstance(sr["reduction_values"], dict) and "error" not in sr["reduction_values"]:
                for k, s_red in sr["reduction_values"].items():
                    t_red = tr["reduction_values"].get(k)
                    if t_red != s_red:  # saved reductions: exact
                        diffs.append(f"{at} saved reduction {k}: {s_red} != {t_red}")
            saved_keys = set(sr["reduction_values"]) if isinstance(sr["reduction_values"], dict) else set()
            for k, s_red in sr["reduction_value"].items():
                t_red = tr["reduction_value"][k]
                if "error" in s_red or "error" in t_red:
                    same(f"{at} reduction_value {k}", _numpy_error(s_red), _numpy_error(t_red))
                    continue
                if k in saved_keys:
                    if s_red != t_red:
                        diffs.append(f"{at} reduction_value {k} (saved): {s_red} != {t_red}")
                    continue
                for field in ("type", "dtype", "shape"):
                    if s_red[field] != t_red[field]:
                        diffs.append(f"{at} reduction_value {k} {field}: {s_red[field]} != {t_red[field]}")
                if not _close(s_red["value"], t_red["value"], s_red["dtype"]):
                    diffs.append(f"{at} reduction_value {k}: {s_red['value']} != {t_red['value']}")
        if len(documented) == documented_before:
            # "median": smdebug validates the name only once it has the raw value
            same(f"{where} bad_reduction", srec.get("bad_reduction"), trec.get("bad_reduction"))
    return diffs, documented
