// SPDX-License-Identifier: Apache-2.0
// Verified batches of a device run (device_verification.hpp).
#include "host/pipeline/device_verification.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "trialstat/dtype.hpp"
#include "trialstat/mode.hpp"
#include "trialstat/stats/result_comparison.hpp"

namespace trialstat::pipeline::detail {
namespace {

/// Memory a held record keeps (its kept values are counted where they are copied).
std::size_t held_record_bytes(const stats::statistics_record& r) {
  std::size_t bytes = sizeof r + r.shape.size() * sizeof(int64_t);
  if (r.histogram) bytes += r.histogram->counts.size() * sizeof(int64_t);
  if (r.log_histogram) bytes += r.log_histogram->counts.size() * sizeof(int64_t);
  for (const auto& p : r.previous) bytes += sizeof p + p.allclose_violations.size() * sizeof(int64_t);
  for (const auto& a : r.axis0) bytes += a.per_node.size() * sizeof(int64_t);
  for (const auto& c : r.channel_sums) bytes += c.channels() * 40;
  for (const auto& s : r.strings) bytes += s.size();
  return bytes + r.percentiles.size() * 16 + r.equal_counts.size() * 16 + r.saved_reductions.size() * 24;
}

}  // namespace

device_verifier::device_verifier(const pipeline_options& options, bool stand_in)
    : mode_(options.verify_device),
      interval_(std::max<int64_t>(1, options.verify_interval)),
      held_budget_(options.verify_held_bytes),
      active_(options.verify_device != device_verification::off &&
              (stand_in || options.backend == stats::backend::cuda)),
      device_name_(stand_in ? "stand-in" : std::string(stats::backend_name(options.backend))) {
  // The fault-injection stand-in is checked even when `off` is asked: it exists to be checked.
  if (stand_in && mode_ == device_verification::off) {
    mode_ = device_verification::sampled;
    active_ = true;
  }
}

void device_verifier::deactivate() noexcept {
  active_ = false;
  reference_.reset();
}

bool device_verifier::scheduled_check(int64_t index) const noexcept {
  if (mode_ == device_verification::off) return false;
  if (index == 0) return true;
  return mode_ == device_verification::sampled && index % interval_ == 0;
}

verification_role device_verifier::role_of(std::size_t position, std::size_t count, bool last_is_check,
                                           int history_depth) const {
  if (!active_) return verification_role::none;
  const auto check_at = [&](std::size_t at) {
    const int64_t index = steps_seen_ + static_cast<int64_t>(at - position);
    return scheduled_check(index) ||
           (mode_ == device_verification::sampled && last_is_check && at + 1 == count);
  };
  if (check_at(position)) return verification_role::check;
  if (mode_ == device_verification::sampled && held_bytes_ >= held_budget_) return verification_role::check;
  for (std::size_t ahead = position + 1;
       ahead < count && ahead <= position + static_cast<std::size_t>(std::max(0, history_depth)); ++ahead) {
    if (check_at(ahead)) return verification_role::prime;
  }
  return verification_role::none;
}

result<std::optional<std::string>> device_verifier::compare(step_batch& batch,
                                                            std::vector<stats::statistics_record>& clean,
                                                            std::span<const stats::statistics_record> device_records,
                                                            const plan::read_plan& plan, const trial::catalog& trial,
                                                            stats::tensor_batch& work) {
  if (!reference_) {
    auto made = stats::make_statistics_executor(stats::backend::cpu);
    if (!made) return made.error_status();
    reference_ = std::move(*made);
  }
  // The CPU twin computes into `clean`, swapped into the batch so it sees the same segments.
  std::swap(batch.records, clean);
  status computed = compute_step_batch(*reference_, plan, batch, work);
  if (computed.ok()) discard_damaged(batch);
  std::swap(batch.records, clean);
  if (!computed.ok()) return computed;

  const auto tensors = trial.tensor_names();
  const auto workers = trial.workers();
  stats::record_comparison_options options;
  options.reference_history_may_be_shorter = true;
  if (device_records.size() != clean.size()) {
    return status(error_code::invalid_argument, "verified batch: the device and the CPU twin have different records");
  }
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const stats::statistics_record& device = device_records[i];
    stats::comparison_outcome outcome;
    stats::result_comparer c(outcome, "cpu", device_name_);
    stats::compare_records(c, clean[i], device, options);
    if (!outcome.passed) {  // where, formatted only now
      return std::optional<std::string>(
          fmt::format("step {} ({} step {}), tensor {}, worker {}, {}", device.step, mode_name(device.mode),
                      device.mode_step, device.tensor < tensors.size() ? tensors[device.tensor] : "?",
                      device.worker < workers.size() ? workers[device.worker] : "?", outcome.mismatch));
    }
  }
  return std::optional<std::string>();
}

void device_verifier::close_window() noexcept {
  reference_.reset();
  if (mode_ == device_verification::first) active_ = false;  // its one check is done
}

std::span<const stats::statistics_record> device_verifier::last_held_records() const noexcept {
  if (held_.empty()) return {};
  return held_.back().records;
}

void device_verifier::hold(step_batch& batch, int64_t progress_bytes) {
  held_step& held = held_.emplace_back();
  held.info = batch.info;
  held.records = std::move(batch.records);
  batch.records.clear();
  held.bytes_read = batch.bytes_read;
  held.tensor_bytes = batch.tensor_bytes;
  held.progress_bytes = progress_bytes;
  for (stats::statistics_record& r : held.records) {
    held_bytes_ += held_record_bytes(r);
    if (r.values_data == nullptr) continue;
    const std::size_t bytes = static_cast<std::size_t>(r.num_elements) * dtype_size_bytes(r.type);
    auto& copy = held.kept_values.emplace_back(r.values_data, r.values_data + bytes);
    r.values_data = copy.data();
    held_bytes_ += bytes;
  }
}

std::vector<held_step> device_verifier::take_held() {
  held_bytes_ = 0;
  return std::exchange(held_, {});
}

std::optional<int64_t> device_verifier::first_held_step() const noexcept {
  if (held_.empty()) return std::nullopt;
  return held_.front().info.step;
}

bool is_device_failure(const status& failure) noexcept {
  switch (failure.code()) {
    case error_code::cuda_error:
    case error_code::cuda_fatal:
    case error_code::out_of_memory:
      return true;
    default:
      return false;
  }
}

std::vector<trial::step_info> history_steps_before(const trial::catalog& trial, const plan::read_plan& plan,
                                                   const pipeline_options& options, int64_t first_step) {
  std::vector<trial::step_info> out;
  if (plan.max_history_depth() <= 0) return out;
  std::map<std::pair<trial::tensor_id, trial::worker_id>, int> found;  // saves seen, newest first
  const auto infos = trial.step_infos();
  for (auto it = infos.rbegin(); it != infos.rend(); ++it) {
    if (it->step >= first_step || !step_in_range(it->step, plan, options)) continue;
    bool needed = false;
    for (const trial::tensor_entry& entry : trial.entries_at(it->step)) {
      const stats::statistics_request* request = plan.find(entry.tensor);
      if (request == nullptr || request->history_depth <= 0 || !entry.raw || !plan.reads_worker(entry.worker)) {
        continue;
      }
      if (options.read_entry && !options.read_entry(entry)) continue;  // not read: in no history
      int& seen = found[{entry.tensor, entry.worker}];
      if (seen < request->history_depth) {
        ++seen;
        needed = true;
      }
    }
    if (needed) out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace trialstat::pipeline::detail
