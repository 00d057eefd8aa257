// SPDX-License-Identifier: Apache-2.0
// Partitioning arithmetic of the MPI run (issue 10): byte weights per (step, worker), the worker
// and step-range splits, and halos. Every rank computes the same result from the same catalog.
#include "trialstat/distributed/partition.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

namespace trialstat::distributed {
namespace {

/// Bytes the records of one entry need read (plan::for_each_needed_record).
uint64_t entry_bytes(const trial::tensor_entry& entry, const stats::statistics_request& request) {
  uint64_t bytes = 0;
  plan::for_each_needed_record(entry, request,
                               [&](const trial::record_location& at) { bytes += at.length_bytes; });
  return bytes;
}

}  // namespace

std::vector<int> partition::owners(std::size_t i) const {
  if (kind == split_kind::by_worker) {
    std::vector<int> readers;
    for (int r = 0; r < ranks; ++r) {
      if (std::find(worker_rank.begin(), worker_rank.end(), r) != worker_rank.end()) readers.push_back(r);
    }
    return readers;
  }
  for (const auto& c : chunks) {
    if (i >= c.begin && i < c.end) return {c.rank};
  }
  return {};
}

std::vector<trial::worker_id> partition::workers_of(int rank) const {
  std::vector<trial::worker_id> out;
  if (kind != split_kind::by_worker) return out;
  for (std::size_t w = 0; w < worker_rank.size(); ++w) {
    if (worker_rank[w] == rank) out.push_back(static_cast<trial::worker_id>(w));
  }
  return out;
}

double partition::imbalance() const noexcept {
  if (rank_bytes.empty()) return 1.0;
  const uint64_t total = std::accumulate(rank_bytes.begin(), rank_bytes.end(), uint64_t{0});
  if (total == 0) return 1.0;
  const uint64_t most = *std::max_element(rank_bytes.begin(), rank_bytes.end());
  return static_cast<double>(most) * static_cast<double>(rank_bytes.size()) / static_cast<double>(total);
}

std::vector<int> assign_workers_by_bytes(std::span<const uint64_t> worker_bytes, int ranks) {
  std::vector<std::size_t> order(worker_bytes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return worker_bytes[a] > worker_bytes[b]; });
  std::vector<uint64_t> load(static_cast<std::size_t>(std::max(ranks, 1)), 0);
  std::vector<int> out(worker_bytes.size(), 0);
  for (std::size_t w : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    out[w] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += worker_bytes[w];
  }
  return out;
}

std::vector<std::size_t> split_contiguous_by_weight(std::span<const uint64_t> weights, std::size_t parts) {
  parts = std::max<std::size_t>(parts, 1);
  std::vector<std::size_t> bounds(parts + 1, weights.size());
  bounds[0] = 0;
  const uint64_t total = std::accumulate(weights.begin(), weights.end(), uint64_t{0});
  std::size_t i = 0;
  uint64_t running = 0;  // sum of weights[0, i)
  for (std::size_t p = 1; p < parts; ++p) {
    // Target p·total/parts without overflow for totals up to 2^64 / parts.
    const long double target = static_cast<long double>(total) * p / parts;
    while (i < weights.size() && static_cast<long double>(running + weights[i]) <= target) {
      running += weights[i++];
    }
    // Element i straddles the target: take it when that lands nearer.
    if (i < weights.size() && static_cast<long double>(running + weights[i]) - target < target - running) {
      running += weights[i++];
    }
    bounds[p] = std::max(i, bounds[p - 1]);
  }
  return bounds;
}

std::size_t halo_begin(std::span<const std::vector<std::size_t>> series, std::size_t begin,
                       std::size_t end, int depth) {
  std::size_t first = begin;
  if (depth <= 0) return first;
  for (const auto& s : series) {
    const auto at = std::lower_bound(s.begin(), s.end(), begin);
    if (at == s.end() || *at >= end || at == s.begin()) continue;  // nothing in the chunk / before it
    const auto before = static_cast<std::size_t>(at - s.begin());
    const std::size_t need = before >= static_cast<std::size_t>(depth) ? before - depth : 0;
    first = std::min(first, s[need]);
  }
  return first;
}

std::vector<int64_t> visited_steps(const trial::catalog& trial, const plan::read_plan& plan,
                                   const pipeline::pipeline_options& options) {
  std::vector<int64_t> steps;
  for (const auto& info : trial.step_infos()) {
    if (pipeline::step_in_range(info.step, plan, options)) steps.push_back(info.step);
  }
  return steps;
}

result<partition> make_partition(const trial::catalog& trial, const plan::read_plan& plan,
                                 const pipeline::pipeline_options& options, const partition_options& how) {
  if (how.ranks < 1) {
    return status(error_code::invalid_argument, fmt::format("{} ranks: need at least 1", how.ranks));
  }
  partition out;
  out.ranks = how.ranks;
  out.steps = visited_steps(trial, plan, options);
  const std::size_t num_workers = trial.workers().size();

  // Weights: bytes per step and per worker; +1 per record so steps of metadata-only records
  // still count. History series per (tensor, worker) for the halos.
  std::vector<uint64_t> step_bytes(out.steps.size(), 0);
  std::vector<uint64_t> worker_bytes(num_workers, 0);
  std::map<std::pair<trial::tensor_id, trial::worker_id>, std::vector<std::size_t>> history;
  const int depth = plan.max_history_depth();
  for (std::size_t i = 0; i < out.steps.size(); ++i) {
    for (const trial::tensor_entry& entry : trial.entries_at(out.steps[i])) {
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request == nullptr) continue;
      const uint64_t bytes = entry_bytes(entry, *request) + 1;
      step_bytes[i] += bytes;
      worker_bytes[entry.worker] += bytes;
      if (request->history_depth > 0 && entry.raw) history[{entry.tensor, entry.worker}].push_back(i);
    }
  }
  const uint64_t total = std::accumulate(step_bytes.begin(), step_bytes.end(), uint64_t{0});

  // By worker when there are enough workers for an even split.
  if (how.force != split_kind::by_steps && num_workers >= static_cast<std::size_t>(how.ranks)) {
    partition by_worker = out;
    by_worker.kind = split_kind::by_worker;
    by_worker.worker_rank = assign_workers_by_bytes(worker_bytes, how.ranks);
    by_worker.rank_bytes.assign(static_cast<std::size_t>(how.ranks), 0);
    for (std::size_t w = 0; w < num_workers; ++w) {
      by_worker.rank_bytes[static_cast<std::size_t>(by_worker.worker_rank[w])] += worker_bytes[w];
    }
    if (how.force == split_kind::by_worker || by_worker.imbalance() <= how.worker_imbalance_limit) {
      return by_worker;
    }
  }

  // By contiguous step chunks dealt round-robin: chunk c to rank c mod ranks.
  out.kind = split_kind::by_steps;
  const uint64_t per_rank = total / static_cast<uint64_t>(how.ranks) + 1;
  const uint64_t chunks_per_rank = std::max<uint64_t>(1, (per_rank + how.chunk_bytes - 1) / std::max<uint64_t>(how.chunk_bytes, 1));
  const std::size_t num_chunks = static_cast<std::size_t>(chunks_per_rank) * static_cast<std::size_t>(how.ranks);
  const auto bounds = split_contiguous_by_weight(step_bytes, num_chunks);
  std::vector<std::vector<std::size_t>> series;
  series.reserve(history.size());
  for (auto& [key, steps] : history) series.push_back(std::move(steps));
  out.rank_bytes.assign(static_cast<std::size_t>(how.ranks), 0);
  for (std::size_t c = 0; c < num_chunks; ++c) {
    step_chunk chunk;
    chunk.begin = bounds[c];
    chunk.end = bounds[c + 1];
    if (chunk.begin == chunk.end) continue;
    chunk.rank = static_cast<int>(c % static_cast<std::size_t>(how.ranks));
    chunk.halo_begin = halo_begin(series, chunk.begin, chunk.end, depth);
    for (std::size_t i = chunk.begin; i < chunk.end; ++i) {
      out.rank_bytes[static_cast<std::size_t>(chunk.rank)] += step_bytes[i];
    }
    for (std::size_t i = chunk.halo_begin; i < chunk.begin; ++i) {
      for (const trial::tensor_entry& entry : trial.entries_at(out.steps[i])) {
        const stats::statistics_request* request = plan.find(entry.tensor);
        if (request != nullptr && request->history_depth > 0) out.halo_bytes += entry_bytes(entry, *request);
      }
    }
    out.chunks.push_back(chunk);
  }
  return out;
}

}  // namespace trialstat::distributed
