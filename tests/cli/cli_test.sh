#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the `trialstat` CLI as a user runs it: exit codes, output shapes, rules
# firing where the golden pathologies are, SageMaker rule configs, and bad input (corrupt, empty,
# truncated and huge-length records, malformed index JSON) costing only the affected records.
#   cli_test.sh <trialstat binary> <scratch dir>
# Golden trials: $TRIALSTAT_SHARED_TRIALS (ctest: the generated set, <build>/golden_trials). Tests
# needing them are skipped when it is absent — or fail where golden trials are required
# (TRIALSTAT_REQUIRE_GOLDEN=1, or CI=true).
set -uo pipefail
bin=$1
work=$2
golden=${TRIALSTAT_SHARED_TRIALS:-}
rm -rf "$work" && mkdir -p "$work"
# The statistics store (auto, issue 26) lives in this run's folder: every repeated command here
# also checks that a warm store gives the cold answers.
export XDG_CACHE_HOME="$work/cache"
passed=0 failed=0 skipped=0

ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# run NAME EXPECTED_EXIT CMD...: run, keep stdout/stderr in $work/NAME.{out,err}, check the exit.
run() {
  local name=$1 want=$2; shift 2
  "$@" >"$work/$name.out" 2>"$work/$name.err"
  local got=$?
  if [[ $got == "$want" ]]; then ok "$name exits $want"; else bad "$name exits $got, expected $want: $(head -c 600 "$work/$name.err")"; fi
}
contains() { grep -qF -- "$2" "$work/$1"; }
py() { python3 - "$@"; }

# --- the example trainer + default rules (the README's main job) ------------------------------
run example 0 "$bin" example --out "$work/exploding" --pathology exploding --steps 60 --width 16 --save-interval 1
run example_rules 1 "$bin" rules "$work/exploding"
check "ExplodingTensor fires on the example exploding trial" grep -Eq '^ExplodingTensor +IssuesFound' "$work/example_rules.out"
run example_info 0 "$bin" info "$work/exploding"
check "info names the backend and why" contains example_info.out "backend:"

# --- usage errors --------------------------------------------------------------------------------
run missing_trial 2 "$bin" stats "$work/does_not_exist"
check "a missing trial is named" contains missing_trial.err "does_not_exist"
run bad_format 2 "$bin" stats "$work/exploding" --format xml
run bad_steps 2 "$bin" stats "$work/exploding" --steps 3:x
run unknown_rule 2 "$bin" rules "$work/exploding" --rule NoSuchRule
check "unknown rule named in the Error status" contains unknown_rule.out "NoSuchRule"
run bad_param 2 "$bin" rules "$work/exploding" --rule VanishingGradient --param threshold=abc
check "unparsable parameter is named" contains bad_param.out "threshold"
run unknown_param 2 "$bin" rules "$work/exploding" --rule VanishingGradient --param thresold=1
check "unknown parameter is named" contains unknown_param.out "thresold"
# --device cuda: an error naming CUDA on a machine without a visible device (never a CPU
# fallback); on a machine with one (a lent GPU), it runs.
if "$bin" info "$work/exploding" | grep -q "^backend: *cuda"; then
  run cuda_with_gpu 0 "$bin" stats "$work/exploding" --device cuda
else
  run cuda_without_gpu 2 "$bin" stats "$work/exploding" --device cuda
  check "--device cuda without a device is an error, not a fallback" contains cuda_without_gpu.err "cuda"
fi

golden_required() {
  case "${TRIALSTAT_REQUIRE_GOLDEN:-}" in 1) return 0 ;; 0) return 1 ;; esac
  [[ "${CI:-}" == [Tt][Rr][Uu][Ee] ]]
}
if [[ -z "$golden" || ! -d "$golden" ]] && golden_required; then
  bad "golden trials not found (\$TRIALSTAT_SHARED_TRIALS) and required here (TRIALSTAT_REQUIRE_GOLDEN=1 or CI=true)"
elif [[ -z "$golden" || ! -d "$golden" ]]; then
  skipped=$((skipped + 1))
  echo "SKIP: golden trials not found (\$TRIALSTAT_SHARED_TRIALS); skipping golden CLI tests"
else
  # --- info ----------------------------------------------------------------------------------------
  run info 0 "$bin" info "$golden/healthy_mlp"
  check "info: workers" contains info.out "1 seen, 1 expected: worker_0"
  check "info: global steps" contains info.out "GLOBAL 36 (0..115)"
  check "info: TRAIN steps" contains info.out "TRAIN   20 (0..95)"

  # --- stats --format json: one row per record, the golden keys and values ----------------------
  run stats_json 0 "$bin" stats "$golden/healthy_mlp" --format json
  check "stats json matches expected.json (rows, keys, values)" py "$work/stats_json.out" "$golden/healthy_mlp.expected.json" <<'PY'
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
expected = json.load(open(sys.argv[2]))
want = {(t, r["step"], r["worker"]): r for t, b in expected["tensors"].items() for r in b["records"]}
assert len(rows) == len(want) == expected["counts"]["value_records"], (len(rows), len(want))
keys = ["tensor", "step", "mode", "mode_step", "worker", "dtype", "shape", "numel", "nan_count",
        "pos_inf_count", "neg_inf_count", "zero_count", "min", "max", "mean", "variance", "std",
        "sum", "l1", "l2", "linf", "mean_abs", "hist"]
for row in rows:
    assert all(k in row for k in keys), row.keys()
    rec = want[(row["tensor"], row["step"], row["worker"])]
    s = rec["stats"]
    assert row["mode"] == rec["mode"] and row["mode_step"] == rec["mode_step"]
    for k in ["dtype", "shape", "numel", "nan_count", "zero_count", "min", "max", "linf"]:
        assert row[k] == s[k], (k, row[k], s[k])
    assert abs(row["sum"] - s["sum"]) <= 1e-12 * s["l1"] + 1e-300
    assert row["hist"]["counts"] == s["hist"]["counts"]
ratios = {(r["tensor"], r["step"]): r["ratio"] for r in expected["weight_update_ratios"]}
got = {(r["tensor"], r["step"]): r["update_ratio"]["ratio"] for r in rows if "update_ratio" in r}
assert got.keys() == ratios.keys(), set(got) ^ set(ratios)
for k, v in ratios.items():
    assert math.isclose(got[k], v, rel_tol=1e-10), (k, got[k], v)
PY
  run stats_csv 0 "$bin" stats "$golden/healthy_mlp" --format csv --collection weights --steps 0:20
  check "csv: header + 3 weights x 4 steps" test "$(wc -l <"$work/stats_csv.out")" -eq 13
  run stats_regex 0 "$bin" stats "$golden/healthy_mlp" --format json --tensor-regex '^(?!gradient).*weight' --steps 5
  check "regex with look-ahead selects the 3 weights at one step" test "$(wc -l <"$work/stats_regex.out")" -eq 3
  run stats_dtypes 0 "$bin" stats "$golden/dtypes" --format json
  check "dtypes: int8 read as signed, uint64 readable, empty tensors have counts" py "$work/stats_dtypes.out" <<'PY'
import json, sys
rows = {(r["tensor"], r["step"]): r for r in map(json.loads, open(sys.argv[1]))}
assert rows[("dtype_int8_vec", 0)]["dtype"] == "int8" and rows[("dtype_int8_vec", 0)]["min"] < 0
assert rows[("fw_uint64", 3)]["dtype"] == "uint64"
empty = rows[("fw_empty_i64_2x0x3", 3)]
assert empty["shape"] == [2, 0, 3] and empty["numel"] == 0 and empty["min"] is None
PY
  run stats_reductions 0 "$bin" stats "$golden/reductions_only" --format json --tensor-regex 'fc1.weight' --steps 5
  check "reduction-only tensor: saved reductions listed, error says no raw value" py "$work/stats_reductions.out" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
assert len(row["saved_reductions"]) == 13 and "no raw value" in row["error"], row
PY

  # --- stats --log-hist: the fixed log-scale histogram, JSON key log_hist (sparse) -----------------
  check "no log_hist key unless --log-hist is given" bash -c "! grep -q log_hist '$work/stats_json.out'"
  run stats_log_hist 0 "$bin" stats "$golden/dtypes" --format json --log-hist
  check "log_hist: 1548 bins, counts beside the bins equal the NaN/Inf counts, extremes in the end bins" \
      py "$work/stats_log_hist.out" "$golden/dtypes.expected.json" <<'PY'
import json, sys
pos = []
v = 1e-12
while v < 1e20:  # smdebug _get_default_bins (float64 products)
    pos.append(v)
    v *= 1.1
edges = [-x for x in reversed(pos)] + [0.0] + pos
assert len(edges) == 1549
rows = [json.loads(line) for line in open(sys.argv[1])]
expected = json.load(open(sys.argv[2]))
want = {(t, r["step"]): r["stats"] for t, b in expected["tensors"].items() for r in b["records"]}
checked = nonfinite = 0
for row in rows:
    if "error" in row:
        assert "log_hist" not in row, row
        continue
    h = row["log_hist"]
    assert set(h) == {"bins", "nonzero", "nan", "pos_inf", "neg_inf", "below", "above"}, h.keys()
    assert h["bins"] == 1548
    bins = [b for b, c in h["nonzero"]]
    assert bins == sorted(set(bins)) and all(c > 0 for b, c in h["nonzero"]), h["nonzero"]
    extra = h["nan"] + h["pos_inf"] + h["neg_inf"] + h["below"] + h["above"]
    assert sum(c for b, c in h["nonzero"]) + extra == row["numel"], row
    assert (h["nan"], h["pos_inf"], h["neg_inf"]) == (row["nan_count"], row["pos_inf_count"], row["neg_inf_count"])
    nonfinite += h["nan"] + h["pos_inf"] + h["neg_inf"]
    s = want.get((row["tensor"], row["step"]))
    if row["min"] is not None and s and s.get("dtype") == row["dtype"]:
        first, last = bins[0], bins[-1]
        assert edges[first] <= s["min"] < edges[first + 1], (row["tensor"], first, s["min"])
        assert edges[last] <= s["max"] and (s["max"] < edges[last + 1] or last == 1547), (row["tensor"], last, s["max"])
        checked += 1
assert checked >= 20 and nonfinite > 0, (checked, nonfinite)
PY
  run log_hist_csv 2 "$bin" stats "$golden/dtypes" --format csv --log-hist
  check "--log-hist with csv is refused, naming the flag" contains log_hist_csv.err "--log-hist"

  # --- rules on the golden pathologies -------------------------------------------------------------
  run rules_exploding 1 "$bin" rules "$golden/exploding" --rule ExplodingTensor --format json
  check "ExplodingTensor: first finding where the loss turns +Inf (step 17)" py "$work/rules_exploding.out" "$golden/exploding.expected.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["rule"] == "ExplodingTensor" and r["status"] == "IssuesFound"
expected = json.load(open(sys.argv[2]))
inf = [x["step"] for x in expected["tensors"]["MSELoss_output_0"]["records"]
       if x["stats"] and x["stats"]["pos_inf_count"] > 0]
assert inf, "the exploding loss never reaches +Inf"
first = min(r["findings"], key=lambda f: f["step"])
assert first["step"] == inf[0] and first["tensor"] == "MSELoss_output_0", (first, inf[0])
PY
  run rules_vanishing 1 "$bin" rules "$golden/vanishing" --rule VanishingGradient
  check "VanishingGradient fires on vanishing" grep -Eq '^VanishingGradient +IssuesFound' "$work/rules_vanishing.out"
  run rules_dead 1 "$bin" rules "$golden/dead_relu" --rule DeadRelu --param tensor_regex='relu\d+_output'
  check "DeadRelu fires on dead_relu" grep -Eq '^DeadRelu +IssuesFound' "$work/rules_dead.out"
  run rules_healthy 0 "$bin" rules "$golden/healthy_mlp" --rule VanishingGradient --rule ExplodingTensor \
      --rule DeadRelu --param tensor_regex='relu\d+_output' --rule WeightUpdateRatio --rule LossNotDecreasing
  check "healthy_mlp: five rules quiet" test "$(grep -c NoIssuesFound "$work/rules_healthy.out")" -eq 5
  cat >"$work/config.json" <<'JSON'
[{"RuleConfigurationName": "zeros", "RuleParameters": {"rule_to_invoke": "AllZero", "collection_names": "relu_activations", "threshold": "95"}},
 {"RuleConfigurationName": "grad", "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-20"}}]
JSON
  run rules_config 1 "$bin" rules "$golden/dead_relu" --config "$work/config.json" --format json
  check "SageMaker config: both rules run with their configuration names" py "$work/rules_config.out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["configuration_name"] for r in rows] == ["zeros", "grad"], rows
assert rows[0]["status"] == "IssuesFound" and rows[1]["status"] == "NoIssuesFound"
PY
  run rules_no_selection 2 "$bin" rules "$golden/healthy_mlp" --rule AllZero
  check "AllZero without a selection is an Error naming the rule" contains rules_no_selection.out "AllZero"

  # --- bad input costs the affected records only ---------------------------------------------------
  cp -r "$golden/healthy_mlp" "$work/corrupt"
  ev() { printf '%s/corrupt/events/%012d/%012d_worker_0.tfevents' "$work" "$1" "$1"; }
  head -c 5000 /dev/urandom >"$(ev 5)"                                   # random bytes
  truncate -s 20000 "$(ev 10)"                                            # truncated tail
  printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$(ev 15)" bs=1 seek=0 conv=notrunc status=none  # huge length
  : >"$(ev 20)"                                                           # empty file
  echo '{"meta": {"mode": "TRAIN", "mode_step"' >"$work/corrupt/index/000000000/000000000034_worker_0.json"  # malformed index
  run corrupt_stats 0 timeout 60 "$bin" stats "$work/corrupt" --format json
  check "corrupt: random bytes reported with the file name and byte offset" \
      grep -q "000000000005_worker_0.tfevents.*byte" "$work/corrupt_stats.err"
  check "corrupt: truncated tail reported" grep -q "000000000010_worker_0.tfevents" "$work/corrupt_stats.err"
  check "corrupt: huge length reported" grep -q "000000000015_worker_0.tfevents" "$work/corrupt_stats.err"
  check "corrupt: empty file reported" grep -q "000000000020_worker_0.tfevents" "$work/corrupt_stats.err"
  check "corrupt: malformed index reported and its step still read by scanning" \
      grep -q "000000000034_worker_0.json" "$work/corrupt_stats.err"
  check "corrupt: untouched steps and the rescanned step are intact" py "$work/corrupt_stats.out" "$golden/healthy_mlp.expected.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
expected = json.load(open(sys.argv[2]))
want = {(t, r["step"]): r["stats"] for t, b in expected["tensors"].items() for r in b["records"]}
good = [r for r in rows if "error" not in r]
bad_steps = {r["step"] for r in rows if "error" in r}
assert bad_steps <= {5, 10, 15, 20}, bad_steps
assert {r["step"] for r in good} >= {0, 25, 34, 115}
for r in good:
    assert r["min"] == want[(r["tensor"], r["step"])]["min"]
    assert r["hist"]["counts"] == want[(r["tensor"], r["step"])]["hist"]["counts"]
PY
  run corrupt_rules 0 timeout 60 "$bin" rules "$work/corrupt" --rule ExplodingTensor
fi

# --- hostile input (issue 12): clear errors, no hangs, no silent skips -----------------------------
run steps_reversed 2 "$bin" rules "$work/exploding" --steps 5:3
check "an empty --steps range is named" contains steps_reversed.err "empty"
run steps_negative 2 "$bin" stats "$work/exploding" --steps=-5
run steps_int64_max 2 "$bin" stats "$work/exploding" --steps 9223372036854775807
run param_nan 2 "$bin" rules "$work/exploding" --rule VanishingGradient --param threshold=nan
check "a NaN threshold is named" contains param_nan.out "NaN"
mkfifo "$work/config.fifo"
run config_fifo 2 timeout 30 "$bin" rules "$work/exploding" --config "$work/config.fifo"
check "a FIFO --config is refused, not waited on" contains config_fifo.err "not a regular file"
cp -r "$work/exploding" "$work/cut"
cut_file=$(ls "$work"/cut/events/*/*.tfevents | sed -n 3p)
truncate -s 100 "$cut_file"
run cut_rules 1 "$bin" rules "$work/cut" --rule ExplodingTensor
check "rules report the records they could not read" contains cut_rules.err "could not be read"
check "rules name the cut file" contains cut_rules.err "$(basename "$cut_file")"
run cut_rules_json 1 "$bin" rules "$work/cut" --rule ExplodingTensor --format json
check "rules JSON lists the skipped records per rule" py "$work/cut_rules_json.out" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).readline())
assert row["skipped_records"] > 0 and len(row["skipped"]) == row["skipped_records"], row
k = row["skipped"][0]
assert k["file"].endswith(".tfevents") and isinstance(k["offset_bytes"], int) and k["reason"], k
PY
run cut_strict 2 "$bin" rules "$work/cut" --rule ExplodingTensor --strict
run cut_stats_strict 2 "$bin" stats "$work/cut" --strict

# --- verified batches (issue 25): the fault-injection switch, a CPU executor standing in ---------
run verify_cpu 0 "$bin" stats "$work/exploding" --format json --device cpu
# --store off: the fault hits the 9th record computed, which records the statistics store serves would change.
run verify_fault 0 env TRIALSTAT_FAULT_INJECT=cuda-result@9 "$bin" stats "$work/exploding" --format json --store off
check "a wrong device result: output equals --device cpu" cmp -s "$work/verify_cpu.out" "$work/verify_fault.out"
check "a wrong device result is named once" test "$(grep -c 'warning: ' "$work/verify_fault.err")" = 1
check "the warning names the statistic and both values" contains verify_fault.err "moments: nan_count: stand-in 1025 vs cpu 1024"
# --store off below too: records served from the store are not computed, so no fault reaches them.
run verify_launch_rules 1 env TRIALSTAT_FAULT_INJECT=cuda-launch@20 "$bin" rules "$work/exploding" --format json --store off
run verify_cpu_rules 1 "$bin" rules "$work/exploding" --format json --device cpu
check "a failed launch: rules equal --device cpu" cmp -s "$work/verify_cpu_rules.out" "$work/verify_launch_rules.out"
check "the warning names the CUDA error" contains verify_launch_rules.err "kernel launch failed"
run verify_bad_switch 2 env TRIALSTAT_FAULT_INJECT=cuda-sometimes "$bin" stats "$work/exploding" --store off
check "a bad switch value is named" contains verify_bad_switch.err "TRIALSTAT_FAULT_INJECT"
run verify_bad_mode 2 "$bin" stats "$work/exploding" --verify-device always
run verify_off 1 "$bin" rules "$work/exploding" --verify-device off --device cpu --rule ExplodingTensor --format json

echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
