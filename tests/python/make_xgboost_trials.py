# SPDX-License-Identifier: Apache-2.0
"""Write small XGBoost trials with smdebug 1.0.34's own XGBoost hook (run in .venv-smdebug, which
has xgboost 1.7.x and scikit-learn: tools/python/requirements-smdebug.txt).

  python make_xgboost_trials.py OUT_DIR

writes OUT_DIR/{softprob,softmax,binary}: the digits data (64 features, 10 classes) with
multi:softprob (predictions [N, 10]) and multi:softmax (predictions [N]), max_depth 6, and a 95/5
imbalanced binary:logistic model (predictions [N] probabilities). Every round is saved with the
collections trees, labels, predictions, feature_importance and metrics."""
import os
import sys

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_digits
from smdebug import SaveConfig
from smdebug.xgboost import Hook

COLLECTIONS = ["trees", "labels", "predictions", "feature_importance", "metrics"]


def train(out_dir, params, x_train, y_train, x_val, y_val, rounds):
    train_data = xgb.DMatrix(x_train, label=y_train)
    val_data = xgb.DMatrix(x_val, label=y_val)
    hook = Hook(out_dir=out_dir, include_collections=COLLECTIONS,
                save_config=SaveConfig(save_interval=1), train_data=train_data,
                validation_data=val_data)
    xgb.train(params, train_data, num_boost_round=rounds, callbacks=[hook],
              evals=[(train_data, "train"), (val_data, "validation")], verbose_eval=False)


def main(out):
    digits = load_digits()
    x, y = digits.data.astype(np.float32), digits.target
    rng = np.random.default_rng(16)
    order = rng.permutation(len(y))
    train_idx, val_idx = order[:600], order[600:660]
    common = {"max_depth": 6, "eta": 0.3, "num_class": 10, "nthread": 1, "seed": 0}
    for name, objective in (("softprob", "multi:softprob"), ("softmax", "multi:softmax")):
        train(os.path.join(out, name), dict(common, objective=objective), x[train_idx],
              y[train_idx], x[val_idx], y[val_idx], rounds=12)
    # 95/5 binary: 380 negatives, 20 positives (training and validation alike), features that
    # separate the classes only in part.
    n_neg, n_pos = 380, 20
    labels = np.r_[np.zeros(n_neg), np.ones(n_pos)]
    features = rng.normal(size=(n_neg + n_pos, 8)).astype(np.float32)
    features[:, 0] += 1.2 * labels
    val_labels = np.r_[np.zeros(95), np.ones(5)]
    val_features = rng.normal(size=(100, 8)).astype(np.float32)
    val_features[:, 0] += 1.2 * val_labels
    train(os.path.join(out, "binary"),
          {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3, "nthread": 1, "seed": 0,
           "scale_pos_weight": 19.0},
          features, labels, val_features, val_labels, rounds=6)


if __name__ == "__main__":
    main(sys.argv[1])
