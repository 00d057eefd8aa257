# SPDX-License-Identifier: Apache-2.0
"""File-level facts of a trial folder for the hook parity tests (spec/HOOK_API.md §11 items 1, 5,
6): the relative paths, each index file's meta and payloads, each event record's bytes with the
8 bytes of ``Event.wall_time`` masked (FORMAT §2–§3: the payload starts with field 1, a double,
right after the 12-byte header), and the collections file normalised (sorted keys)."""
import hashlib
import json
import os


def relative_files(root, skip=("tensorboard",)):
    out = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel.split(os.sep)[0] in skip:
            continue
        out += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return sorted(out)


def _masked_record(data):
    masked = bytearray(data)
    if len(masked) > 21 and masked[12] == 0x09:  # Event.wall_time (field 1, fixed64)
        masked[13:21] = b"\0" * 8
    return hashlib.sha256(bytes(masked)).hexdigest()


def index_facts(root):
    """{index file: {meta, tensor_payload: [(name, start, length, masked record sha)], shape_payload}}."""
    facts = {}
    for rel in relative_files(root):
        if not rel.startswith("index" + os.sep):
            continue
        with open(os.path.join(root, rel)) as f:
            index = json.load(f)
        event = index["meta"].get("event_file_name")
        blob = open(os.path.join(root, event), "rb").read() if event else b""
        payload = [(e["tensorname"], e["start_idx"], e["length"],
                    _masked_record(blob[e["start_idx"]:e["start_idx"] + e["length"]]))
                   for e in index["tensor_payload"]]
        facts[rel] = {"meta": index["meta"], "tensor_payload": payload,
                      "shape_payload": index["shape_payload"]}
    return facts


def collections_facts(root):
    """{collections file: parsed JSON with collections keyed by name and tensor_names sorted}."""
    facts = {}
    for rel in relative_files(root):
        if rel.startswith("collections" + os.sep):
            with open(os.path.join(root, rel)) as f:
                doc = json.load(f)
            for c in doc["collections"].values():
                c["tensor_names"] = sorted(c["tensor_names"])
            facts[rel] = doc
    return facts
