#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The numpy side of the end-to-end benchmark: load every raw tensor of a trial into memory
(untimed), then time numpy computing the same statistics `trialstat stats` computes — counts of
NaN/±Inf/zero, min, max, mean, variance, std, sum, l1, l2, linf, mean|x| over finite values in
float64, and optionally the 64-bin histogram over [min, max].

Prints one JSON object: {"tensors", "bytes", "seconds", "seconds_per_tensor"}.
Usage: numpy_stats.py TRIAL [--histogram] [--repeat N]
"""
import argparse
import glob
import json
import os
import struct
import time

import numpy as np

DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8,
          9: np.int64, 10: np.bool_, 17: np.uint16, 19: np.float16, 22: np.uint32, 23: np.uint64}


def varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def fields(buf, start, end):
    """Yield (field number, wire type, value or (begin, end)) of one protobuf message."""
    pos = start
    while pos < end:
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
            yield number, wire, value
        elif wire == 1:
            yield number, wire, buf[pos:pos + 8]
            pos += 8
        elif wire == 2:
            length, pos = varint(buf, pos)
            yield number, wire, (pos, pos + length)
            pos += length
        elif wire == 5:
            yield number, wire, buf[pos:pos + 4]
            pos += 4
        else:
            raise ValueError(f"wire type {wire}")


def tensor_of(buf, start, end):
    """Event → Summary(5) → Value(1) → TensorProto(8) → numpy array (C order)."""
    for n, _, v in fields(buf, start, end):
        if n == 5:
            for n2, _, v2 in fields(buf, *v):
                if n2 == 1:
                    for n3, _, v3 in fields(buf, *v2):
                        if n3 == 8:
                            dtype, shape, content = None, [], b""
                            for n4, _, v4 in fields(buf, *v3):
                                if n4 == 1:
                                    dtype = v4
                                elif n4 == 2:
                                    for n5, _, v5 in fields(buf, *v4):
                                        if n5 == 2:
                                            for n6, _, v6 in fields(buf, *v5):
                                                if n6 == 1:
                                                    shape.append(v6)
                                elif n4 == 4:
                                    content = buf[v4[0]:v4[1]]
                            if dtype not in DTYPES:
                                return None
                            return np.frombuffer(content, DTYPES[dtype]).reshape(shape)
    return None


def load_trial(root):
    arrays = []
    for index_file in sorted(glob.glob(os.path.join(root, "index", "*", "*.json"))):
        with open(index_file) as f:
            index = json.load(f)
        event_name = index["meta"].get("event_file_name")
        if not event_name:
            continue
        with open(os.path.join(root, event_name), "rb") as f:
            data = f.read()
        for entry in index["tensor_payload"]:
            start = entry["start_idx"]
            (length,) = struct.unpack_from("<Q", data, start)
            array = tensor_of(data, start + 12, start + 12 + length)
            if array is not None:
                arrays.append(array)
    return arrays


def statistics(x, histogram):
    x = x.astype(np.float64, copy=False).ravel()
    nan = np.isnan(x)
    posinf = np.isposinf(x)
    neginf = np.isneginf(x)
    finite = x[np.isfinite(x)]
    out = [int(nan.sum()), int(posinf.sum()), int(neginf.sum()), int((x == 0).sum())]
    if finite.size:
        a = np.abs(finite)
        out += [finite.min(), finite.max(), finite.mean(), finite.var(), finite.std(), finite.sum(),
                a.sum(), np.sqrt(np.dot(finite, finite)), a.max(), a.mean()]
        if histogram:
            out.append(np.histogram(finite, bins=64, range=(out[4], out[5]))[0])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trial")
    parser.add_argument("--histogram", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    arrays = load_trial(args.trial)
    total_bytes = sum(a.nbytes for a in arrays)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for a in arrays:
            statistics(a, args.histogram)
        times.append(time.perf_counter() - t0)
    seconds = sorted(times)[len(times) // 2]
    print(json.dumps({"tensors": len(arrays), "bytes": total_bytes, "seconds": seconds,
                      "seconds_per_tensor": seconds / max(len(arrays), 1)}))


if __name__ == "__main__":
    main()
