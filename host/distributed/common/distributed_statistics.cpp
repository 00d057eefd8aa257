// SPDX-License-Identifier: Apache-2.0
// The distributed statistics run: every rank produces its share with an ordinary statistics
// stream (a worker filter, or chunk by chunk with a halo read first), ranks other than 0 send
// each step's records, rank 0 merges them into one step stream in single-process order.
#include "trialstat/distributed/distributed_statistics.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trialstat/distributed/record_codec.hpp"

namespace trialstat::distributed {
namespace {

/// The plan for a halo: only the tensors that keep history, over [begin, end).
plan::read_plan halo_plan(const plan::read_plan& full, int64_t begin, int64_t end) {
  plan::read_plan halo;
  for (const auto& [tensor, request] : full.requests()) {
    if (request.history_depth > 0) halo.request(tensor, request);
  }
  halo.step_begin = begin;
  halo.step_end = end;
  halo.workers = full.workers;
  return halo;
}

/// Runs this rank's share and calls `emit(step index, step)` for each step it owns, in order
/// (halo steps are computed but not emitted).
class local_share {
 public:
  using emit_fn = std::function<void(std::size_t, const stats::step_statistics&)>;

  local_share(const trial::catalog& trial, const plan::read_plan& plan,
              const pipeline::pipeline_options& options, const partition& part, int rank)
      : trial_(trial), plan_(plan), options_(options), part_(part), rank_(rank) {}

  result<pipeline::pipeline_counters> run(const emit_fn& emit) {
    pipeline::pipeline_counters total;
    const auto add = [&](const pipeline::pipeline_counters& c) { total += c; };
    if (part_.kind == split_kind::by_worker) {
      plan::read_plan mine = plan_;
      mine.workers = part_.workers_of(rank_);
      if (mine.workers.empty()) return total;  // owns no worker: not among the steps' owners
      std::size_t index = 0;
      pipeline::statistics_stream stream(trial_, std::move(mine), options_);
      auto counters = stream.advance(
          [&](const stats::step_statistics& step) {
            while (index < part_.steps.size() && part_.steps[index] < step.step) ++index;
            emit(index, step);
          },
          /*include_incomplete=*/true);
      if (!counters) return counters.error_status();
      add(*counters);
      return total;
    }
    std::optional<pipeline::statistics_stream> stream;
    std::size_t visited_end = 0;  // the stream has visited steps before this index (with gaps)
    for (const step_chunk& chunk : part_.chunks) {
      if (chunk.rank != rank_) continue;
      const int64_t first = part_.steps[chunk.begin];
      const std::optional<int64_t> end =
          chunk.end < part_.steps.size() ? std::optional<int64_t>(part_.steps[chunk.end]) : std::nullopt;
      // A halo reaching back over steps this stream skipped (other ranks' chunks) needs a fresh
      // history: start a new stream. A halo after everything visited keeps the stream (each
      // history series gets its `depth` last copies from the halo, replacing older ones).
      if (!stream || chunk.halo_begin < visited_end) stream.emplace(trial_, plan::read_plan{}, options_);
      visited_end = chunk.end;
      if (chunk.halo_begin < chunk.begin) {
        // History of the steps before the chunk: computed, not emitted.
        stream->set_plan(halo_plan(plan_, part_.steps[chunk.halo_begin], first));
        auto counters = stream->advance([](const stats::step_statistics&) {}, true);
        if (!counters) return counters.error_status();
        add(*counters);
      }
      plan::read_plan mine = plan_;
      mine.step_begin = first;
      mine.step_end = end ? end : plan_.step_end;  // the visited steps already lie in range
      stream->set_plan(std::move(mine));
      std::size_t index = chunk.begin;
      auto counters = stream->advance(
          [&](const stats::step_statistics& step) {
            while (index < chunk.end && part_.steps[index] < step.step) ++index;
            emit(index, step);
          },
          true);
      if (!counters) return counters.error_status();
      add(*counters);
    }
    return total;
  }

 private:
  const trial::catalog& trial_;
  const plan::read_plan& plan_;
  const pipeline::pipeline_options& options_;
  const partition& part_;
  int rank_;
};

/// Records in single-process order: per worker group of the step's entries, that worker's
/// records from the rank that read it.
std::vector<stats::statistics_record> merge_by_worker(const trial::catalog& trial, int64_t step,
                                                     const partition& part,
                                                     std::vector<std::vector<stats::statistics_record>>& by_rank) {
  std::vector<stats::statistics_record> merged;
  std::vector<std::size_t> cursor(by_rank.size(), 0);
  std::optional<trial::worker_id> previous;
  for (const trial::tensor_entry& entry : trial.entries_at(step)) {
    if (previous == entry.worker) continue;
    previous = entry.worker;
    const auto rank = static_cast<std::size_t>(part.worker_rank[entry.worker]);
    auto& from = by_rank[rank];
    while (cursor[rank] < from.size() && from[cursor[rank]].worker == entry.worker) {
      merged.push_back(std::move(from[cursor[rank]++]));
    }
  }
  return merged;
}

/// FNV-1a over the partition: ranks that opened the trial at different moments of its writing,
/// or see different files, split it differently — that must fail, never merge wrongly or hang.
uint64_t fingerprint(const partition& part) {
  uint64_t h = 1469598103934665603ULL;
  const auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  mix(static_cast<uint64_t>(part.kind));
  mix(part.steps.size());
  for (int64_t step : part.steps) mix(static_cast<uint64_t>(step));
  for (uint64_t bytes : part.rank_bytes) mix(bytes);
  for (int rank : part.worker_rank) mix(static_cast<uint64_t>(rank));
  for (const auto& c : part.chunks) mix(c.begin), mix(c.end), mix(c.halo_begin);
  return h;
}

/// Steps a rank sends as one message: until the batch holds 64 steps, 1 MiB of message or the
/// statistics of 4 MiB of tensors. Small steps would otherwise cost a message — and a wait of
/// rank 0 — each; big ones go at once, since rank 0 waits for them to emit its own.
constexpr std::size_t batch_bytes = std::size_t{1} << 20;
constexpr std::size_t batch_steps = 64;
constexpr uint64_t batch_tensor_bytes = uint64_t{4} << 20;

uint64_t tensor_bytes_of(std::span<const stats::statistics_record> records) {
  uint64_t bytes = 0;
  for (const auto& r : records) bytes += static_cast<uint64_t>(std::max<int64_t>(0, r.num_elements)) * dtype_size_bytes(r.type);
  return bytes;
}

std::vector<std::byte> fingerprint_message(uint64_t value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

}  // namespace

result<pipeline::pipeline_counters> run_statistics_on(transport& ranks, const trial::catalog& trial,
                                                      const plan::read_plan& plan,
                                                      const pipeline::pipeline_options& options,
                                                      const pipeline::step_callback& on_step,
                                                      const distributed_options& how) {
  partition_options split = how.partitioning;
  split.ranks = ranks.size();
  auto made = make_partition(trial, plan, options, split);
  if (!made) return made.error_status();
  const partition& part = *made;
  const int me = ranks.rank();
  if (how.describe && me == 0) {
    how.describe(fmt::format("split {} over {} ranks: {} steps, {} chunks, bytes per rank [{}] "
                             "(imbalance {:.3f}), halo {} bytes",
                             part.kind == split_kind::by_worker ? "by worker" : "by steps", part.ranks,
                             part.steps.size(), part.chunks.size(), fmt::join(part.rank_bytes, ", "),
                             part.imbalance(), part.halo_bytes));
  }

  status failure;
  const auto fail = [&](status why) {
    if (!failure.ok()) return;
    failure = std::move(why);
    if (how.on_rank_failure) how.on_rank_failure(failure);
  };
  const auto check = [&](std::span<const stats::statistics_record> records) {
    if (!how.fail_on_unreadable_files) return;
    for (const auto& r : records) {
      if (r.raw_status.code() == error_code::io_error) return fail(r.raw_status);
    }
  };

  local_share share(trial, plan, options, part, me);
  const uint64_t own_fingerprint = fingerprint(part);
  if (me != 0) {
    if (status sent = ranks.send(0, fingerprint_message(own_fingerprint)); !sent.ok()) fail(sent);
    std::vector<std::byte> batch;
    std::size_t batched = 0;
    uint64_t batched_tensor_bytes = 0;
    const auto send_batch = [&] {
      if (batch.empty() || !failure.ok()) return;
      if (status sent = ranks.send(0, std::move(batch)); !sent.ok()) fail(sent);
      batch = {};
      batched = 0;
      batched_tensor_bytes = 0;
    };
    auto counters = share.run([&](std::size_t, const stats::step_statistics& step) {
      if (!failure.ok()) return;
      check(step.records);
      if (!failure.ok()) return;
      append_step(step.step, step.records, batch);
      batched_tensor_bytes += tensor_bytes_of(step.records);
      if (batch.size() >= batch_bytes || ++batched >= batch_steps || batched_tensor_bytes >= batch_tensor_bytes) {
        send_batch();
      }
    });
    if (!counters) fail(counters.error_status());
    send_batch();
    if (failure.ok()) {
      if (status flushed = ranks.flush(); !flushed.ok()) fail(flushed);
    }
    if (!failure.ok()) return failure;
    return counters;
  }

  // Rank 0: every rank must have split the same trial the same way.
  for (int r = 1; r < ranks.size() && failure.ok(); ++r) {
    auto other = ranks.receive(r);
    if (!other) {
      fail(other.error_status());
    } else if (*other != fingerprint_message(own_fingerprint)) {
      fail(status(error_code::invalid_argument,
                  fmt::format("rank {} sees a different trial than rank 0 ({} steps here): the trial "
                              "changed while the ranks opened it, or the ranks see different files",
                              r, part.steps.size())));
    }
  }
  if (!failure.ok()) return failure;

  // Rank 0: emit step `i` from its owners' records (its own `local` among them when it owns it).
  // Each other rank's steps arrive in batches, read in order; a step's kept values point into
  // its batch, which stays until every step of it has been emitted.
  std::vector<std::vector<std::byte>> inbox(static_cast<std::size_t>(ranks.size()));
  std::vector<std::size_t> inbox_at(static_cast<std::size_t>(ranks.size()), 0);
  std::size_t next = 0;
  const auto emit = [&](std::size_t i, std::span<const stats::statistics_record> local) {
    const int64_t step = part.steps[i];
    const trial::step_info* info = trial.find_step(step);
    const auto owners = part.owners(i);
    if (owners.size() == 1 && owners[0] == 0) {
      on_step(stats::step_statistics{step, info->mode, info->mode_step, local});
      return;
    }
    std::vector<std::vector<stats::statistics_record>> by_rank(static_cast<std::size_t>(ranks.size()));
    for (const int owner : owners) {
      if (owner == 0) {
        by_rank[0].assign(local.begin(), local.end());
        continue;
      }
      auto& batch = inbox[static_cast<std::size_t>(owner)];
      std::size_t& at = inbox_at[static_cast<std::size_t>(owner)];
      if (at >= batch.size()) {
        auto bytes = ranks.receive(owner);
        if (!bytes) return fail(bytes.error_status());
        batch = std::move(*bytes);
        at = 0;
      }
      auto message = next_batched_step(batch, at);
      if (!message) return fail(message.error_status());
      auto decoded = unpack_step(*message);
      if (!decoded) return fail(decoded.error_status());
      if (decoded->step != step) {
        return fail(status(error_code::data_loss, fmt::format("rank {} sent step {} where step {} was "
                                                              "expected", owner, decoded->step, step)));
      }
      by_rank[static_cast<std::size_t>(owner)] = std::move(decoded->records);
    }
    std::vector<stats::statistics_record> merged;
    if (owners.size() == 1) {
      merged = std::move(by_rank[static_cast<std::size_t>(owners[0])]);
    } else {
      merged = merge_by_worker(trial, step, part, by_rank);
    }
    on_step(stats::step_statistics{step, info->mode, info->mode_step, merged});
  };
  auto counters = share.run([&](std::size_t index, const stats::step_statistics& step) {
    if (!failure.ok()) return;
    check(step.records);
    while (failure.ok() && next < index) emit(next++, {});
    if (failure.ok()) emit(next++, step.records);
  });
  if (!counters) fail(counters.error_status());
  while (failure.ok() && next < part.steps.size()) emit(next++, {});
  if (!failure.ok()) return failure;
  return counters;
}

result<pipeline::pipeline_counters> run_statistics(const trial::catalog& trial, const plan::read_plan& plan,
                                                   const pipeline::pipeline_options& options,
                                                   const pipeline::step_callback& on_step) {
  process_world& w = world();
  if (!w.distributed()) return pipeline::run_statistics(trial, plan, options, on_step);
  distributed_options how;
  if (const char* split = std::getenv("TRIALSTAT_MPI_SPLIT"); split != nullptr) {
    const std::string_view kind(split);
    if (kind == "workers") how.partitioning.force = split_kind::by_worker;
    if (kind == "steps") how.partitioning.force = split_kind::by_steps;
  }
  if (const char* chunk = std::getenv("TRIALSTAT_MPI_CHUNK_BYTES"); chunk != nullptr) {
    how.partitioning.chunk_bytes = std::max<uint64_t>(1, std::strtoull(chunk, nullptr, 10));
  }
  how.on_rank_failure = [&](const status& why) { w.abort(why, 2); };
  if (std::getenv("TRIALSTAT_MPI_VERBOSE") != nullptr) {
    how.describe = [](const std::string& text) { fmt::print(stderr, "trialstat: {}\n", text); };
  }
  auto counters = run_statistics_on(w, trial, plan, options, on_step, how);
  if (!counters) w.abort(counters.error_status(), 2);
  return counters;
}

}  // namespace trialstat::distributed
