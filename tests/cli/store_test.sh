#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The statistics store (issue 26) end to end: `stats`, `rules`, `report` and `tensorboard`
# outputs byte-identical with `--store off`, cold and warm; a warm run reads no event-file bytes
# and says it used the store; a run that needs more reads exactly what it lacks; changed event
# files are read again; faults (a corrupt or foreign file, an uncreatable cache folder, a full
# store, a store of another trial, concurrent writers, a writer killed mid-write) cost a warning
# and never a wrong number.
#   store_test.sh <trialstat binary> <scratch dir>
# Golden trials: $TRIALSTAT_SHARED_TRIALS (ctest: the generated set); skipped when absent.
set -uo pipefail
bin=$1
work=$2
golden=${TRIALSTAT_SHARED_TRIALS:-}
rm -rf "$work" && mkdir -p "$work"
export XDG_CACHE_HOME="$work/cache"
export SOURCE_DATE_EPOCH=1700000000  # the report's "Generated" time
# Every record is stored here (these trials' tensors are small: by default, local records under
# 4 KiB are read, not stored; that policy is checked at the end).
export TRIALSTAT_STORE_MIN_RECORD_BYTES=0
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# same NAME A B: files A and B are byte-identical.
same() { if cmp -s "$2" "$3"; then ok "$1"; else bad "$1 ($2 and $3 differ)"; fi; }
# The store's summary line of a run's stderr: "<served> <read> <bytes>" ("0 ? ?" when none).
served() { sed -n 's/^trialstat: store: \([0-9]*\) record(s) from .*, \([0-9]*\) read from the trial (\([0-9]*\) bytes).*/\1 \2 \3/p' "$1"; }
# outputs DIR TRIAL STORE [extra args]: the four commands' outputs into DIR (stderr in DIR/*.err).
outputs() {
  local dir=$1 trial=$2 store=$3; shift 3
  mkdir -p "$dir"
  "$bin" stats "$trial" --format json --log-hist --store "$store" "$@" >"$dir/stats.json" 2>"$dir/stats.err"
  echo "exit $?" >>"$dir/stats.json"
  "$bin" rules "$trial" --format json --store "$store" "$@" >"$dir/rules.json" 2>"$dir/rules.err"
  echo "exit $?" >>"$dir/rules.json"
}
compare_outputs() {
  local name=$1 a=$2 b=$3
  same "$name: stats" "$a/stats.json" "$b/stats.json"
  same "$name: rules" "$a/rules.json" "$b/rules.json"
}

# --- an example trial with a pairwise history (update ratio), EVAL steps and two workers ---------
trial="$work/trial"
"$bin" example --out "$trial" --steps 40 --width 24 --save-interval 2 --workers 2 --eval-every 10 \
  --eval-batches 2 >/dev/null 2>&1 || bad "example trial"
outputs "$work/off" "$trial" off
check "the example trial has real statistics" grep -q '"max": *[1-9-]' "$work/off/stats.json"
outputs "$work/cold" "$trial" auto
compare_outputs "cold == off" "$work/off" "$work/cold"
outputs "$work/warm" "$trial" auto
compare_outputs "warm == off" "$work/off" "$work/warm"
read -r s r b <<<"$(served "$work/warm/stats.err")"
check "a warm stats run serves every record and reads no event-file byte ($s $r $b)" \
  test "${s:-0}" -gt 0 -a "${r:-x}" = 0 -a "${b:-x}" = 0
read -r s r b <<<"$(served "$work/warm/rules.err")"
check "a warm rules run reads no event-file byte ($s $r $b)" test "${s:-0}" -gt 0 -a "${r:-x}" = 0 -a "${b:-x}" = 0
"$bin" rules "$trial" --format json --progress >/dev/null 2>"$work/progress.err"
check "a warm run's progress line counts the records from the store" grep -q "steps, [0-9]* records from the store" "$work/progress.err"
check "a warm run's progress line shows no rate of the bytes it did not read" bash -c "! grep -q 'MB/s' '$work/progress.err'"
store_file=$("$bin" store path "$trial")
check "store path is under XDG_CACHE_HOME/trialstat" test "${store_file#"$XDG_CACHE_HOME/trialstat/"}" != "$store_file"
check "the store is a SQLite file sqlite3 opens" test "$(sqlite3 "$store_file" 'PRAGMA integrity_check')" = ok
check "rows hold readable moments" test "$(sqlite3 "$store_file" "SELECT COUNT(*) FROM records WHERE count > 0 AND max IS NOT NULL")" -gt 0
"$bin" store info "$trial" >"$work/info.out"
check "store info counts rows" grep -Eq '^rows: [1-9]' "$work/info.out"

# Report and TensorBoard, cold and warm (a fresh store), byte for byte.
for mode in off cold warm; do
  store=auto; [[ $mode == off ]] && store=off
  [[ $mode == cold ]] && "$bin" store clear "$trial" 2>/dev/null
  "$bin" report "$trial" -o "$work/report.$mode.html" --store "$store" >/dev/null 2>"$work/report.$mode.err"
  "$bin" tensorboard "$trial" --logdir "$work/tb.$mode" --store "$store" >/dev/null 2>"$work/tb.$mode.err"
done
same "report cold == off" "$work/report.off.html" "$work/report.cold.html"
same "report warm == off" "$work/report.off.html" "$work/report.warm.html"
check "tensorboard cold == off" diff -r "$work/tb.off" "$work/tb.cold"
check "tensorboard warm == off" diff -r "$work/tb.off" "$work/tb.warm"
check "a warm report says it used the store" grep -q "^trialstat: store: " "$work/report.warm.err"

# Step ranges: a range that starts later (pairwise comparisons cut at its first step) is served.
"$bin" stats "$trial" --format json >/dev/null 2>&1
for steps in 10:30 8 25:; do
  "$bin" stats "$trial" --format json --steps "$steps" --store off >"$work/range.off" 2>/dev/null
  "$bin" stats "$trial" --format json --steps "$steps" >"$work/range.warm" 2>"$work/range.err"
  same "--steps $steps warm == off" "$work/range.off" "$work/range.warm"
  read -r s r b <<<"$(served "$work/range.err")"
  check "--steps $steps reads nothing ($s $r $b)" test "${r:-x}" = 0
done

# A run that needs more (other bins) reads exactly its records, then is warm too.
"$bin" stats "$trial" --format json --bins 32 --store off >"$work/bins.off" 2>/dev/null
"$bin" stats "$trial" --format json --bins 32 >"$work/bins.cold" 2>"$work/bins.cold.err"
"$bin" stats "$trial" --format json --bins 32 >"$work/bins.warm" 2>"$work/bins.warm.err"
same "--bins 32 after 64: == off" "$work/bins.off" "$work/bins.cold"
same "--bins 32 warm == off" "$work/bins.off" "$work/bins.warm"
records=$(grep -c . "$work/bins.off")
check "--bins 32 with 64 stored reads every record again" test -z "$(served "$work/bins.cold.err")"
read -r s r b <<<"$(served "$work/bins.warm.err")"
check "--bins 32 warm serves all $records records ($s)" test "${s:-0}" = "$records" -a "${r:-x}" = 0
# Only the steps the store lacks: a store filled for steps < 20, then the whole trial.
"$bin" store clear "$trial" 2>/dev/null
"$bin" stats "$trial" --format json --steps :20 >/dev/null 2>&1
"$bin" stats "$trial" --format json >"$work/more.json" 2>"$work/more.err"
"$bin" stats "$trial" --format json --steps 20: --store off >"$work/tail.off" 2>/dev/null
"$bin" stats "$trial" --format json --store off >"$work/more.off" 2>/dev/null
same "the whole trial after steps < 20 stored: == off" "$work/more.off" "$work/more.json"
read -r s r b <<<"$(served "$work/more.err")"
check "the whole trial after steps < 20 reads exactly the records of steps >= 20 ($r of $(grep -c . "$work/tail.off"))" \
  test "${r:-x}" = "$(grep -c . "$work/tail.off")"

# --- changed event files are read again ---------------------------------------------------------
"$bin" stats "$trial" --format json --log-hist >/dev/null 2>&1
file=$(ls "$trial"/events/*/*.tfevents | sed -n 5p)
touch -d '+1 second' "$file"  # same size, new mtime
"$bin" stats "$trial" --format json --log-hist >"$work/touched.json" 2>"$work/touched.err"
echo "exit 0" >>"$work/touched.json"
same "a touched event file: == off" "$work/off/stats.json" "$work/touched.json"
read -r s r b <<<"$(served "$work/touched.err")"
check "a touched event file is read again ($r records)" test "${r:-0}" -gt 0
# Rewritten with other content: another seed, the same layout.
"$bin" example --out "$work/other" --steps 40 --width 24 --save-interval 2 --workers 2 --eval-every 10 \
  --eval-batches 2 --seed 9 >/dev/null 2>&1
cp "$work/other/events/000000000020/"* "$trial/events/000000000020/" 2>/dev/null
cp "$work/other/index/000000000/000000000020_"* "$trial/index/000000000/" 2>/dev/null
"$bin" stats "$trial" --format json --log-hist --store off >"$work/rewritten.off" 2>/dev/null
"$bin" stats "$trial" --format json --log-hist >"$work/rewritten.warm" 2>/dev/null
same "a rewritten event file: == off" "$work/rewritten.off" "$work/rewritten.warm"
check "the rewrite changed the statistics" bash -c "! cmp -s '$work/rewritten.off' <(head -n -1 '$work/off/stats.json')"
# Truncated: the records past the end fail in both runs alike, none from the store.
victim=$(ls "$trial"/events/*/*.tfevents | sed -n 9p)
truncate -s 100 "$victim"
"$bin" stats "$trial" --format json --log-hist --store off >"$work/trunc.off" 2>"$work/trunc.off.err"
"$bin" stats "$trial" --format json --log-hist >"$work/trunc.warm" 2>"$work/trunc.warm.err"
same "a truncated event file: == off" "$work/trunc.off" "$work/trunc.warm"
check "the truncated records are reported" grep -q "warning" "$work/trunc.warm.err"

# --- faults: a warning, the trial is read, the same output -------------------------------------
fresh="$work/fresh"
"$bin" example --out "$fresh" --steps 20 --width 16 --save-interval 1 >/dev/null 2>&1
"$bin" stats "$fresh" --format json --log-hist --store off >"$work/fresh.off" 2>/dev/null
fault() {  # fault NAME STORE [env...]: stats through STORE equals --store off, with a warning
  local name=$1 store=$2; shift 2
  env "$@" "$bin" stats "$fresh" --format json --log-hist --store "$store" >"$work/$name.json" 2>"$work/$name.err"
  local rc=$?
  check "$name: exit 0" test $rc = 0
  same "$name: == off" "$work/fresh.off" "$work/$name.json"
  check "$name: a warning names the store" grep -q "statistics store" "$work/$name.err"
}
head -c 8192 /dev/urandom >"$work/corrupt.sqlite"
fault "a corrupt file at the store path" "$work/corrupt.sqlite"
check "the corrupt file is left alone" test "$(stat -c %s "$work/corrupt.sqlite")" = 8192
sqlite3 "$work/foreign.sqlite" "CREATE TABLE mine(x); INSERT INTO mine VALUES (42);"
fault "a foreign SQLite database" "$work/foreign.sqlite"
check "the foreign database is left alone" test "$(sqlite3 "$work/foreign.sqlite" 'SELECT x FROM mine')" = 42
touch "$work/a_file"
fault "an uncreatable cache folder" auto XDG_CACHE_HOME="$work/a_file/cache"
fault "a full store (TRIALSTAT_STORE_MAX_MB)" "$work/full.sqlite" TRIALSTAT_STORE_MAX_MB=0.03
check "a full store stays consistent" test "$(sqlite3 "$work/full.sqlite" 'PRAGMA integrity_check')" = ok
"$bin" stats "$trial" --format json --store "$work/shared.sqlite" >/dev/null 2>&1
fault "the store of another trial" "$work/shared.sqlite"
# A damaged row (its blob changed under its checksum) is never used.
"$bin" stats "$fresh" --format json --log-hist --store "$work/damaged.sqlite" >/dev/null 2>&1
sqlite3 "$work/damaged.sqlite" "UPDATE records SET record = zeroblob(length(record)) WHERE step = 3"
fault "damaged rows" "$work/damaged.sqlite"

# Concurrent processes on one store (WAL, busy timeout): both right, then warm.
rm -f "$work/concurrent.sqlite"*
for i in 1 2 3; do
  "$bin" stats "$fresh" --format json --log-hist --store "$work/concurrent.sqlite" >"$work/concurrent.$i" 2>"$work/concurrent.$i.err" &
done
wait
for i in 1 2 3; do same "concurrent writer $i == off" "$work/fresh.off" "$work/concurrent.$i"; done
"$bin" stats "$fresh" --format json --log-hist --store "$work/concurrent.sqlite" >"$work/concurrent.warm" 2>"$work/concurrent.warm.err"
same "after concurrent writers: warm == off" "$work/fresh.off" "$work/concurrent.warm"
check "after concurrent writers: served" test -n "$(served "$work/concurrent.warm.err")"

# A writer killed mid-run: the store stays consistent and still gives the right answers.
big="$work/big"
"$bin" example --out "$big" --steps 400 --width 64 --save-interval 1 >/dev/null 2>&1
"$bin" stats "$big" --format json --store off >"$work/big.off" 2>/dev/null
for delay in 0.02 0.05 0.08 0.12; do  # the cold run takes ~0.1-0.3 s: killed between commits or in one
  "$bin" stats "$big" --format json --store "$work/killed.sqlite" >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  check "killed after ${delay}s: integrity_check ok" test "$(sqlite3 "$work/killed.sqlite" 'PRAGMA integrity_check')" = ok
  "$bin" stats "$big" --format json --store "$work/killed.sqlite" >"$work/big.after" 2>/dev/null
  same "killed after ${delay}s: the next run == off" "$work/big.off" "$work/big.after"
  rm -f "$work/killed.sqlite"*
done

# --- live: `watch` writes rows as steps complete; `rules` then reads only the newer steps --------
full="$work/live_full"
"$bin" example --out "$full" --steps 40 --width 32 --save-interval 2 >/dev/null 2>&1
live="$work/live"
mkdir -p "$live/index/000000000" "$live/events"
cp -r "$full/collections" "$live/"
copy_steps() {
  for s in $(seq "$1" 2 "$2"); do
    S=$(printf %012d "$s")
    cp -r "$full/events/$S" "$live/events/"
    cp "$full/index/000000000/${S}_worker_0.json" "$live/index/000000000/"
  done
}
copy_steps 0 18
"$bin" watch "$live" --timeout 2 >"$work/watch.out" 2>"$work/watch.err"
check "watch (training still running) exits 3 at its timeout" test $? = 3
check "watch wrote the rows of the steps it evaluated" \
  test "$(sqlite3 "$("$bin" store path "$live")" 'SELECT COUNT(DISTINCT step) FROM records')" = 10
live_store=$("$bin" store path "$live")
cp "$live_store" "$work/after_watch.sqlite"
# A restarted watch (training still running) serves the stored steps and reads the newer ones.
copy_steps 20 28
cp "$work/after_watch.sqlite" "$work/restart.sqlite"
"$bin" watch "$live" --timeout 1 --format json --store "$work/restart.sqlite" >"$work/restart.out" 2>"$work/restart.err"
"$bin" watch "$live" --timeout 1 --format json --store off >"$work/restart.off" 2>/dev/null
same "restarted watch == watch --store off" <(sed 's/,"time":[0-9.e+-]*//' "$work/restart.out") \
  <(sed 's/,"time":[0-9.e+-]*//' "$work/restart.off")
read -r s r b <<<"$(served "$work/restart.err")"
cp "$work/after_watch.sqlite" "$work/restart.rules.sqlite"
"$bin" rules "$live" --steps :29 --format json --store "$work/restart.rules.sqlite" >/dev/null 2>"$work/restart.rules.err"
read -r rs rr rb <<<"$(served "$work/restart.rules.err")"
check "a restarted watch serves the stored steps and reads what rules would ($s served, $r read, $b bytes; rules: $rs, $rr, $rb)" \
  test "${s:-0}" -gt 0 -a "${s:-0}" = "${rs:-x}" -a "${r:-x}" = "${rr:-y}"
check "a restarted watch writes the rows of the newer steps" \
  test "$(sqlite3 "$work/restart.sqlite" 'SELECT COUNT(DISTINCT step) FROM records')" = 15
copy_steps 30 38
touch "$live/training_job_end.ts"
# Restarted after the end: its final pass serves every stored step.
cp "$work/after_watch.sqlite" "$work/ended.sqlite"
"$bin" watch "$live" --format json --store "$work/ended.sqlite" >"$work/ended.out" 2>"$work/ended.err"
"$bin" watch "$live" --format json --store off >"$work/ended.off" 2>/dev/null
same "watch restarted after the end == --store off" <(sed 's/,"time":[0-9.e+-]*//' "$work/ended.out") \
  <(sed 's/,"time":[0-9.e+-]*//' "$work/ended.off")
read -r s r b <<<"$(served "$work/ended.err")"
check "watch restarted after the end serves the stored steps ($s)" test "${s:-0}" -gt 0
"$bin" rules "$live" --format json --store off >"$work/live.off" 2>/dev/null
"$bin" rules "$live" --format json >"$work/live.on" 2>"$work/live.err"
same "rules after watch == off" "$work/live.off" "$work/live.on"
newer=$("$bin" stats "$live" --steps 20: --format json --store off 2>/dev/null | grep -c .)
read -r s r b <<<"$(served "$work/live.err")"
check "rules after watch reads only the steps newer than the store ($r of $newer records)" test "${r:-x}" = "$newer"

# --- golden trials: cold and warm == off ------------------------------------------------------
if [[ -n "$golden" && -d "$golden" ]]; then
  for t in "$golden"/*/; do
    [[ -d "$t/events" || -d "$t/index" ]] || continue
    name=$(basename "$t")
    outputs "$work/golden/$name.off" "$t" off
    outputs "$work/golden/$name.cold" "$t" "$work/golden/$name.sqlite"
    outputs "$work/golden/$name.warm" "$t" "$work/golden/$name.sqlite"
    compare_outputs "golden $name cold == off" "$work/golden/$name.off" "$work/golden/$name.cold"
    compare_outputs "golden $name warm == off" "$work/golden/$name.off" "$work/golden/$name.warm"
    read -r s r b <<<"$(served "$work/golden/$name.warm/rules.err")"
    check "golden $name: warm rules read no event-file byte" test "${r:-x}" = 0 -a "${b:-x}" = 0
  done
else
  echo "SKIP: golden trials (\$TRIALSTAT_SHARED_TRIALS not set)"
fi

# --- the default bound: local records under 4 KiB go into bundles beside larger ones, else read --
# The weights (72 and 144 KiB) are rows of `records`; the biases, the loss and the activations'
# small records of a step sit in the same event file and go into its bundle: a warm run opens no
# event file. (A trial of small records alone, below, stores none.)
mixed="$work/mixed"
"$bin" example --out "$mixed" --steps 12 --width 192 --input-dim 96 --save-interval 2 --eval-every 4 \
  --eval-batches 1 >/dev/null 2>&1
outputs "$work/mixed.off" "$mixed" off
TRIALSTAT_STORE_MIN_RECORD_BYTES= outputs "$work/mixed.cold" "$mixed" "$work/mixed.sqlite"
TRIALSTAT_STORE_MIN_RECORD_BYTES= outputs "$work/mixed.warm" "$mixed" "$work/mixed.sqlite"
compare_outputs "bundles: cold == off" "$work/mixed.off" "$work/mixed.cold"
compare_outputs "bundles: warm == off" "$work/mixed.off" "$work/mixed.warm"
read -r s r b <<<"$(served "$work/mixed.warm/rules.err")"
check "a warm rules run serves the weights' rows and their bundles' records ($s) and reads no event-file byte ($r, $b)" \
  test "${s:-0}" -gt 0 -a "${r:-x}" = 0 -a "${b:-x}" = 0
read -r s2 r2 b2 <<<"$(served "$work/mixed.warm/stats.err")"
check "a warm stats run (log histograms too) reads no event-file byte ($r2, $b2)" test "${r2:-x}" = 0 -a "${b2:-x}" = 0
check "records has no record under 4 KiB" \
  test "$(sqlite3 "$work/mixed.sqlite" "SELECT COUNT(*) FROM records WHERE num_elements * 4 < 4096")" = 0
check "records has the records from 4 KiB up" \
  test "$(sqlite3 "$work/mixed.sqlite" "SELECT COUNT(*) FROM records WHERE num_elements * 4 >= 4096")" -gt 0
check "record_bundles holds the small records" \
  test "$(sqlite3 "$work/mixed.sqlite" "SELECT SUM(rows) FROM record_bundles")" -gt 0
check "store info counts them" grep -q "small records in bundles: [1-9]" <("$bin" store info "$mixed" --store "$work/mixed.sqlite" 2>&1)
# A trial of 1 KiB tensors alone: nothing is stored, every record is read.
tiny="$work/tiny"
"$bin" example --out "$tiny" --steps 6 --width 16 --layers 3 --input-dim 16 --save-interval 2 >/dev/null 2>&1
"$bin" rules "$tiny" --format json --store off >"$work/tiny.off" 2>/dev/null
TRIALSTAT_STORE_MIN_RECORD_BYTES= "$bin" rules "$tiny" --format json --store "$work/tiny.sqlite" >"$work/tiny.cold" 2>/dev/null
TRIALSTAT_STORE_MIN_RECORD_BYTES= "$bin" rules "$tiny" --format json --store "$work/tiny.sqlite" >"$work/tiny.warm" 2>/dev/null
same "small records alone: warm == off" "$work/tiny.off" "$work/tiny.warm"
check "small records alone in their files are not stored" \
  test "$(sqlite3 "$work/tiny.sqlite" "SELECT (SELECT COUNT(*) FROM records) + (SELECT COUNT(*) FROM record_bundles)")" = 0

# --- store clear -----------------------------------------------------------------------------
"$bin" store clear "$trial" 2>/dev/null
check "store clear removes the store" test ! -e "$store_file"

echo "store tests: $passed passed, $failed failed"
[[ $failed == 0 ]]
