# SPDX-License-Identifier: Apache-2.0
"""smdebug 1.0.34 computing trialstat's moments (count, NaN/Inf, min, max, mean, std, l2) of
every tensor of an S3 trial, as a user would: create_trial("s3://...") then numpy per value.
Its boto3 reads the endpoint from AWS_ENDPOINT_URL_S3."""
import sys

import numpy as np
from smdebug.trials import create_trial

trial = create_trial(sys.argv[1])
rows = 0
for name in trial.tensor_names():
    tensor = trial.tensor(name)
    for step in tensor.steps():
        for worker in trial.workers():
            try:
                v = np.asarray(tensor.value(step, worker=worker), dtype=np.float64)
            except Exception:
                continue
            finite = v[np.isfinite(v)]
            _ = (v.size, np.isnan(v).sum(), np.isinf(v).sum(), finite.min() if finite.size else 0,
                 finite.max() if finite.size else 0, finite.mean() if finite.size else 0,
                 finite.std() if finite.size else 0, np.sqrt((finite * finite).sum()))
            rows += 1
print(rows)
