# SPDX-License-Identifier: Apache-2.0
"""Verdicts for the XGBoost trials (make_xgboost_trials.py) computed independently of trialstat,
from smdebug 1.0.34's own reading of each trial (run in .venv-smdebug):

  python xgboost_reference.py OUT.json TRIAL...

writes {trial folder name: verdict inputs} (one process: smdebug imports once), per saved step: the exact tree depth (walking xgboost's trees/ID, Yes, No links from
each root, as xgboost's own text dump nests them) and the node-id formula floor(log2(max
trees/Node + 1)); the feature_importance/weight scores; the label and prediction shapes; the
(label, predicted class) pairs under each reading (cast to int, argmax over the last axis,
probability > 0.5); and every string tensor's values (str)."""
import json
import math
import os
import sys

import numpy as np
from smdebug.trials import create_trial


def exact_depth(ids, yes, no):
    children = {i: [c for c in (y, n) if c != "nan"] for i, y, n in zip(ids, yes, no)}
    linked = {c for cs in children.values() for c in cs}
    deepest = 0
    stack = [(i, 0) for i in ids if i not in linked]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in children[node])
    return deepest


def reference(path):
    trial = create_trial(path)
    out = {"steps": trial.steps(), "depth": {}, "formula_depth": {}, "importance": {},
           "label_shape": {}, "prediction_shape": {}, "pairs": {}, "strings": {}}
    for step in trial.steps():
        s = str(step)
        value = lambda n: trial.tensor(n).value(step)  # noqa: E731
        out["depth"][s] = exact_depth(value("trees/ID"), value("trees/Yes"), value("trees/No"))
        out["formula_depth"][s] = math.floor(math.log2(value("trees/Node").max() + 1))
        at_step = trial.tensor_names(step=step)
        out["importance"][s] = {n: float(value(n)[0]) for n in at_step
                                if n.startswith("feature_importance/weight/")}
        labels, predictions = value("labels"), value("predictions")
        out["label_shape"][s] = list(labels.shape)
        out["prediction_shape"][s] = list(predictions.shape)
        pairs = {"labels": labels.astype(int).tolist()}
        if predictions.ndim == 2:
            pairs["argmax"] = predictions.argmax(axis=-1).tolist()
        else:
            pairs["cast"] = predictions.astype(int).tolist()
            pairs["threshold_0.5"] = (predictions > 0.5).astype(int).tolist()
        out["pairs"][s] = pairs
        for n in at_step:
            v = value(n) if n.startswith("trees/") else None
            if v is not None and v.dtype.kind == "U":
                out["strings"].setdefault(n, {})[s] = {"dtype": str(v.dtype), "values": v.tolist()}
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump({os.path.basename(p): reference(p) for p in sys.argv[2:]}, f)
