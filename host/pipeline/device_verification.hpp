// SPDX-License-Identifier: Apache-2.0
// Verified batches of a device run (issue 25; pipeline_options::verify_device): which steps the
// CPU twin recomputes, the comparison of a step's records, the steps held back until the next
// passed check, and the steps a CPU executor must see again before the held ones so that its
// pairwise history is the device's. Internal to host/pipeline; statistics_pipeline.cpp drives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "host/pipeline/step_reader.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline::detail {

/// A step computed on the device whose records wait for the next passed check.
struct held_step {
  trial::step_info info;
  std::vector<stats::statistics_record> records;
  std::vector<std::vector<std::byte>> kept_values;  // copies the records' values_data point into
  int64_t bytes_read = 0;
  int64_t tensor_bytes = 0;
  int64_t progress_bytes = 0;  // what progress counts for the step when it is emitted
};

/// What the CPU twin does with a step of a pass.
enum class verification_role : uint8_t {
  none,   ///< nothing: the step is emitted or held as the device computed it
  prime,  ///< computed and compared, but it only readies the pairwise history of a check
  check,  ///< computed and compared; when it agrees, every held step and this one are emitted
};

class device_verifier {
 public:
  /// @param stand_in  the device executor is a CPU executor under the fault-injection switch
  device_verifier(const pipeline_options& options, bool stand_in);

  /// Whether device results are checked (a CUDA run not yet fallen back, or the stand-in).
  [[nodiscard]] bool active() const noexcept { return active_; }
  /// After a fallback: nothing is checked or held any more.
  void deactivate() noexcept;

  /// The role of position `position` of a pass of `count` steps, the first of which is the
  /// stream's step number `steps_seen()` (0-based). `last_is_check`: the pass's last step is a
  /// check (a run that is not live knows it is the last); `history_depth`: the plan's
  /// max_history_depth (prime steps before each scheduled check).
  [[nodiscard]] verification_role role_of(std::size_t position, std::size_t count, bool last_is_check,
                                          int history_depth) const;

  /// The CPU twin recomputes `batch` from `clean` (its records as read, before the device
  /// computed them; on return the CPU twin's) and compares with `device`, the device's records
  /// of the same step (`batch.records`, or a held step's). A new reference executor starts with
  /// each window (after a passed check), so its pairwise history holds only the window's steps.
  /// @return the difference in words (statistic, tensor, step, worker, both values), or nullopt
  ///   when they agree; errors: the CPU executor's.
  [[nodiscard]] result<std::optional<std::string>> compare(step_batch& batch, std::vector<stats::statistics_record>& clean,
                                                            std::span<const stats::statistics_record> device,
                                                            const plan::read_plan& plan, const trial::catalog& trial,
                                                            stats::tensor_batch& work);
  /// The device's records of the step held last (what a live poll's late check compares).
  [[nodiscard]] std::span<const stats::statistics_record> last_held_records() const noexcept;
  /// A check passed: the window closes (the next one starts a fresh reference; `first` has
  /// checked all it checks).
  void close_window() noexcept;
  /// Drop the reference executor, so the next comparison starts one with no history (a pass
  /// begins, or a check comes without its prime steps).
  void reset_reference() noexcept { reference_.reset(); }

  /// Hold `batch`'s records until the next passed check: moved out of the batch (the reader
  /// refills it), kept values copied.
  void hold(step_batch& batch, int64_t progress_bytes);
  /// The held steps, oldest first, and no longer held.
  [[nodiscard]] std::vector<held_step> take_held();
  [[nodiscard]] bool has_held() const noexcept { return !held_.empty(); }
  [[nodiscard]] std::optional<int64_t> first_held_step() const noexcept;

  /// The stream's count of steps passed through the device so far (across `advance` calls).
  [[nodiscard]] int64_t steps_seen() const noexcept { return steps_seen_; }
  void count_steps(int64_t steps) noexcept { steps_seen_ += steps; }

  /// The device's name in messages: "cuda", or "stand-in" (a CPU executor under the
  /// fault-injection switch).
  [[nodiscard]] const std::string& device_name() const noexcept { return device_name_; }

 private:
  [[nodiscard]] bool scheduled_check(int64_t index) const noexcept;

  device_verification mode_;
  int64_t interval_;
  std::size_t held_budget_;
  bool active_ = false;
  std::string device_name_;
  std::unique_ptr<stats::statistics_executor> reference_;
  std::vector<held_step> held_;
  std::size_t held_bytes_ = 0;
  int64_t steps_seen_ = 0;
};

/// Whether a compute error is the device's (a CUDA error, a lost context, device or pinned
/// memory exhausted): the run falls back to the CPU instead of failing.
[[nodiscard]] bool is_device_failure(const status& failure) noexcept;

/// The saved steps (ascending) a fresh CPU executor must compute, without emitting them, before
/// step `first_step` so that its pairwise history equals the device's there: for every (tensor,
/// worker) the plan asks pairwise statistics of, its last `history_depth` saved steps before
/// `first_step` within the run's range.
[[nodiscard]] std::vector<trial::step_info> history_steps_before(const trial::catalog& trial,
                                                                 const plan::read_plan& plan,
                                                                 const pipeline_options& options, int64_t first_step);

}  // namespace trialstat::pipeline::detail
