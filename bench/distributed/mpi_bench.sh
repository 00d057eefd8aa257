#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 10 benchmarks: `mpirun -np 2` against `-np 1` (one statistics thread per rank), the MPI
# build at np 1 against the same binary without mpirun (MPI never initialised), and the catalog at
# scale (build time, index files parsed per second, bytes per entry, peak RSS, rules at np 1, 2).
#   bench/distributed/mpi_bench.sh <trialstat> <work dir> [big trial bytes, default 1G]
#     [scale steps, default 10000] [scale workers, default 64]
# Results: bench/RESULTS.md, section "MPI ranks and the catalog at scale".
set -euo pipefail
bin=$(realpath "$1")
work=$2
big_bytes=${3:-1G}
scale_steps=${4:-10000}
scale_workers=${5:-64}
mkdir -p "$work"
export OMP_NUM_THREADS=1 TRIALSTAT_FORCE_BACKEND=cpu
mpi=(mpirun --oversubscribe --bind-to none --mca btl self,vader --mca pml ob1 --mca odls_base_sigkill_timeout 0)
[[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)

# seconds (wall), CPU seconds (user + sys, the ranks' included) and peak RSS (KiB) of a command,
# best of $repeats (by wall time); the figures of the best run are left in $work/time.txt.
repeats=${REPEATS:-3}
measure() {
  local label=$1; shift
  local best="" rss="" cpu=""
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f "%e %M %U %S" -o "$work/time1.txt" "$@" >/dev/null 2>"$work/err.txt" || [[ $? == 1 ]]
    read -r t m u s < <(tail -1 "$work/time1.txt")
    if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then
      best=$t; rss=$m; cpu=$(awk "BEGIN{print $u + $s}"); echo "$t $m $cpu" >"$work/time.txt"
    fi
  done
  printf '%-44s %8.2f s  CPU %7.2f s  peak RSS %7d KiB\n' "$label" "$best" "$cpu" "$rss"
}
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"

big="$work/big"
[[ -d $big ]] || "$bin" example --out "$big" --target-bytes "$big_bytes" --workers 2 --threads 1 >/dev/null
echo "== 1 big trial: $(du -sh "$big" | cut -f1), $(find "$big/events" -name '*.tfevents' | wc -l) event files"
find "$big/events" -name "*.tfevents" -exec cat {} + >/dev/null  # page cache
# --output: rank 0 writes the file itself (stdout under mpirun is forwarded through mpirun).
out="$work/stats.jsonl"
measure "stats json, no mpirun (MPI never initialised)" "$bin" stats "$big" --format json --output "$out"
measure "stats json, mpirun -np 1" "${mpi[@]}" -np 1 "$bin" stats "$big" --format json --output "$out"
measure "stats json, mpirun -np 2" "${mpi[@]}" -np 2 "$bin" stats "$big" --format json --output "$out"
measure "stats json to stdout, mpirun -np 2" "${mpi[@]}" -np 2 "$bin" stats "$big" --format json
measure "rules (default), no mpirun" "$bin" rules "$big"
measure "rules (default), mpirun -np 1" "${mpi[@]}" -np 1 "$bin" rules "$big"
measure "rules (default), mpirun -np 2" "${mpi[@]}" -np 2 "$bin" rules "$big"
measure "rules, np 2, split by steps (halo reads)" "${mpi[@]}" -x TRIALSTAT_MPI_SPLIT=steps -np 2 "$bin" rules "$big"
measure "mpirun -np 1 trialstat info (start-up cost)" "${mpi[@]}" -np 1 "$bin" info "$big"

# A 1 GB trial of few large steps (9 MB per step and worker): the statistics, not the catalog,
# are the work. The default `stats`, and `stats --log-hist` (seconds of work per GB), show how
# the gain of 2 ranks grows with the work per process against Open MPI's fixed start and end.
wide="$work/wide"
[[ -d $wide ]] || "$bin" example --out "$wide" --target-bytes "$big_bytes" --workers 2 --width 1024 --threads 1 >/dev/null
echo "== 1b wide trial: $(du -sh "$wide" | cut -f1), $(find "$wide/events" -name '*.tfevents' | wc -l) event files"
find "$wide/events" -name "*.tfevents" -exec cat {} + >/dev/null  # page cache
for extra in "" "--log-hist"; do
  measure "wide stats json $extra, no mpirun" "$bin" stats "$wide" --format json $extra --output "$out"
  measure "wide stats json $extra, mpirun -np 1" "${mpi[@]}" -np 1 "$bin" stats "$wide" --format json $extra --output "$out"
  measure "wide stats json $extra, mpirun -np 2" "${mpi[@]}" -np 2 "$bin" stats "$wide" --format json $extra --output "$out"
done
measure "wide rules (default), mpirun -np 1" "${mpi[@]}" -np 1 "$bin" rules "$wide"
measure "wide rules (default), mpirun -np 2" "${mpi[@]}" -np 2 "$bin" rules "$wide"
# Open MPI's own start and end for 2 ranks on this node (no trialstat work at all).
measure "mpirun -np 2 trialstat --version (MPI start, end)" "${mpi[@]}" -np 2 "$bin" --version

scale="$work/scale_${scale_steps}x${scale_workers}"
if [[ ! -d $scale ]]; then
  /usr/bin/time -f "%e s" -o "$work/gen.txt" "$bin" example --out "$scale" --workers "$scale_workers" \
    --steps "$scale_steps" --save-interval 1 --width 4 --layers 2 --batch 4 --input-dim 4 --classes 2 \
    --threads 1 >/dev/null
  echo "generated in $(cat "$work/gen.txt")"
fi
index_files=$(find "$scale/index" -name '*.json' | wc -l)
echo "== 2 catalog at scale: $scale_steps steps x $scale_workers workers: $index_files index files, $(du -sh "$scale" | cut -f1)"
find "$scale/index" -name '*.json' -exec cat {} + >/dev/null  # page cache
# Baseline for bytes per entry: the same binary's peak RSS without a trial.
measure "baseline (trialstat --version)" "$bin" --version
read -r _ base_rss _ < <(tail -1 "$work/time.txt")
measure "info (catalog build), no mpirun" "$bin" info "$scale"
read -r t rss cpu < <(tail -1 "$work/time.txt")
entries=$("$bin" stats "$scale" --format csv --bins 0 --no-reductions | tail -n +2 | wc -l)
echo "entries (tensor, step, worker): $entries"
echo "index files/s per core (CPU time of info, listing + parsing + start-up): $(awk "BEGIN{printf \"%.0f\", $index_files / $cpu}") (CPU per file $(awk "BEGIN{printf \"%.1f\", 1e6 * $cpu / $index_files}") us)"
echo "index files/s, wall: $(awk "BEGIN{printf \"%.0f\", $index_files / $t}")"
echo "bytes per entry ((peak RSS - baseline) / entries): $(awk "BEGIN{printf \"%.0f\", ($rss - $base_rss) * 1024 / $entries}")"
measure "info, mpirun -np 1" "${mpi[@]}" -np 1 "$bin" info "$scale"
measure "info, mpirun -np 2 (each rank parses half)" "${mpi[@]}" -np 2 "$bin" info "$scale"
measure "rules (default), no mpirun" "$bin" rules "$scale"
measure "rules (default), mpirun -np 1" "${mpi[@]}" -np 1 "$bin" rules "$scale"
measure "rules (default), mpirun -np 2" "${mpi[@]}" -np 2 "$bin" rules "$scale"
