// SPDX-License-Identifier: Apache-2.0
/// @file background_writer.hpp
/// @brief A statistics_writer that formats and writes on its own thread, so that the thread
/// computing the statistics (the pipeline's consumer) does not also format every row.
///
/// `trialstat stats` on a trial of small tensors (1 KiB) spends about as long formatting JSON rows
/// (~650 bytes each: ten shortest-round-trip doubles and 64 histogram counts) as computing them;
/// done on the consumer thread, the two add up while the second core waits (bench/RESULTS.md,
/// issue 24 "rows formatted off the consumer thread"). The background writer copies each step's
/// records into a recycled slot (copy-assignment into the slot's earlier records reuses their
/// vectors: no allocation once the slots are warm) and hands the slot to its thread, which calls
/// the wrapped writer. The output is byte-for-byte that of the wrapped writer.
#pragma once

#include <cstddef>
#include <memory>

#include "trialstat/report/statistics_writer.hpp"

namespace trialstat::report {

/// @brief Records queued at most before write_step waits for the formatting thread (with 1 KiB
/// tensors ~0.4 MB of record copies; bounds memory, not speed).
inline constexpr std::size_t default_background_queue_records = 4096;

/// @brief Wrap `inner` so that its write_step runs on a thread of its own, in call order.
///
/// The returned writer's write_step copies the step (records without `values_data`, which the
/// writers never read) and returns; finish() waits for every queued step, then calls
/// `inner->finish()`. The catalog passed to write_step must stay alive and unchanged until
/// finish() returns (the names are read on the formatting thread). An exception thrown by the
/// wrapped writer (std::bad_alloc) is rethrown by the next write_step or by finish(); the
/// destructor waits for the thread but drops such an exception. Not thread-safe: one producer.
/// @param max_queued_records  write_step blocks while more records than this are queued (≥ 1;
///        a single larger step is still accepted whole).
[[nodiscard]] std::unique_ptr<statistics_writer> make_background_writer(
    std::unique_ptr<statistics_writer> inner, std::size_t max_queued_records = default_background_queue_records);

}  // namespace trialstat::report
