// SPDX-License-Identifier: Apache-2.0
/// @file record_codec.hpp
/// @brief The bytes one MPI rank sends rank 0 for one saved step: every statistics record of its
/// share of that step, field for field (issue 10); several steps travel as one batch. Binary, host byte order (all ranks of one job
/// run the same binary on the same architecture), no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/status.hpp"

namespace trialstat::distributed {

/// @brief Append the message for `step` holding `records` to `out` (cleared first). Every field
/// of `stats::statistics_record` is kept, the kept values (`values_data`, num_elements × dtype
/// size bytes) included when present.
void pack_step(int64_t step, std::span<const stats::statistics_record> records, std::vector<std::byte>& out);

/// @brief Append the message for `step` (as `pack_step` writes it) to `batch` as one
/// length-prefixed item (uint64 length in bytes, then the message): a rank sends the steps of a
/// run of small steps as one transport message.
void append_step(int64_t step, std::span<const stats::statistics_record> records, std::vector<std::byte>& batch);

/// @brief The step message of `batch` at byte `at`, which is advanced past it.
/// @return the message (a view into `batch`, for `unpack_step`); errors: data_loss when the
///   batch is cut short there.
[[nodiscard]] result<std::span<const std::byte>> next_batched_step(std::span<const std::byte> batch, std::size_t& at);

/// @brief A decoded step message.
struct unpacked_step {
  int64_t step = 0;
  std::vector<stats::statistics_record> records;
};

/// @brief Unpack a message of `pack_step` (an MPI message, not a trial record). Kept values point into `bytes`, which must outlive
/// the records' use of them.
/// @return the step; errors: data_loss when the message is cut short or malformed.
[[nodiscard]] result<unpacked_step> unpack_step(std::span<const std::byte> bytes);

}  // namespace trialstat::distributed
