// SPDX-License-Identifier: Apache-2.0
#include "host/store/row_builder.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/record_codec.hpp"

namespace trialstat::store::detail {
namespace {

/// Records of these outcomes describe their record for good (the same bytes give them again);
/// anything else (a record cut short, corrupt bytes, a missing file) is read again next time.
bool storable_outcome(const stats::statistics_record& r) {
  const error_code code = r.raw_status.code();
  return (code == error_code::ok || code == error_code::not_found || code == error_code::unsupported_dtype) &&
         r.reduction_problems.empty() && r.values_data == nullptr;
}

row_columns columns_of(const stats::statistics_record& r) {
  row_columns c;
  if (r.type != dtype::invalid) c.dtype = std::string(dtype_name(r.type));
  c.num_elements = r.num_elements;
  c.moments = r.moments;
  if (!r.previous.empty() && r.previous.front().shape_matches) {
    c.update = r.previous.front().result;
    c.update_previous_step = r.previous.front().previous_step;
  }
  c.histogram_bins = r.histogram ? r.histogram->bins : 0;
  c.log_histogram = r.log_histogram.has_value();
  c.saved_reductions = static_cast<int64_t>(r.saved_reductions.size());
  return c;
}

/// Whether a plain run over the whole trial would compare `record` with more earlier steps than
/// it holds: some saved step of its tensor and worker before the first one it compares with (or
/// before it) has a raw record, within `history_depth`.
bool history_cut_short(const trial::catalog& trial, const trial::tensor_entry& entry,
                       const stats::statistics_record& record, const stats::statistics_request& request) {
  const int64_t oldest = record.previous.empty() ? record.step : record.previous.back().previous_step;
  for (const int64_t step : trial.tensor_steps(entry.tensor)) {
    if (step >= oldest) break;
    const trial::tensor_entry* before = trial.find_entry(entry.tensor, step, entry.worker);
    if (before != nullptr && before->raw) return true;
  }
  (void)request;
  return false;
}

}  // namespace

uint64_t needed_record_bytes(const trial::tensor_entry& entry, const stats::statistics_request& request) {
  uint64_t bytes = 0;
  plan::for_each_needed_record(entry, request, [&](const trial::record_location& at) {
    bytes = at.length_bytes > UINT64_MAX - bytes ? UINT64_MAX : bytes + at.length_bytes;
  });
  return bytes;
}

namespace {

/// The event file of the records of `entry` that `request` reads; none when it reads none.
std::optional<trial::file_id> needed_event_file(const trial::tensor_entry& entry,
                                                const stats::statistics_request& request) {
  std::optional<trial::file_id> file;
  plan::for_each_needed_record(entry, request, [&](const trial::record_location& at) { file = at.event_file; });
  return file;
}

bool below(const trial::tensor_entry& entry, const stats::statistics_request& request, int64_t min_bytes) {
  return static_cast<int64_t>(std::min<uint64_t>(needed_record_bytes(entry, request), INT64_MAX)) < min_bytes;
}

}  // namespace

void record_size_rule::note(const trial::tensor_entry& entry, const stats::statistics_request& request) {
  if (min_bytes_ <= 0 || below(entry, request, min_bytes_)) return;
  if (const auto file = needed_event_file(entry, request)) files_kept_.insert(*file);
}

bool record_size_rule::small(const trial::tensor_entry& entry, const stats::statistics_request& request) const {
  if (min_bytes_ <= 0 || !below(entry, request, min_bytes_)) return false;
  const auto file = needed_event_file(entry, request);
  return !file || files_kept_.count(*file) == 0;
}

bool record_size_rule::bundled(const trial::tensor_entry& entry, const stats::statistics_request& request) const {
  return min_bytes_ > 0 && below(entry, request, min_bytes_);
}

bool append_row(row_batch& out, const trial::catalog& trial, identity_cache& identities,
                const trial::tensor_entry& entry, const stats::statistics_request& request,
                std::string_view signature, const stats::statistics_record& fresh, const record_size_rule& sizes,
                row_scratch& scratch) {
  if (!storable_outcome(fresh)) return false;
  if (sizes.small(entry, request)) return false;
  row_identity& described = scratch.identity;
  if (!identities.of(entry, request, described)) return false;
  for (const auto& previous : fresh.previous) {
    const trial::tensor_entry* before = trial.find_entry(entry.tensor, previous.previous_step, entry.worker);
    if (before == nullptr || !identities.of(*before, request, scratch.before)) return false;
    if (!described.previous.empty()) described.previous.push_back('|');
    append_previous_item(described.previous, previous.previous_step, identity_hash(scratch.before));
  }
  if (request.history_depth > 0 && static_cast<int>(fresh.previous.size()) < request.history_depth &&
      history_cut_short(trial, entry, fresh, request)) {
    return false;
  }
  scratch.raw.clear();
  stats::append_record(fresh, scratch.raw);
  pack_record(scratch.raw, scratch.packed);
  row_view row;
  row.tensor = trial.tensor_names()[entry.tensor];
  row.step = fresh.step;
  row.worker = trial.workers()[entry.worker];
  row.request = signature;
  row.mode = static_cast<int>(fresh.mode);
  row.mode_step = fresh.mode_step;
  row.event_file = described.event_file;
  row.ranges = described.ranges;
  row.file_size_bytes = described.file_size_bytes;
  row.file_version = described.file_version;
  row.previous = described.previous;
  row.record = scratch.packed;
  if (sizes.bundled(entry, request)) {
    out.add(row, row_columns(), true);  // a bundle's rows have no SQL columns
  } else {
    out.add(row, columns_of(fresh));
  }
  return true;
}

}  // namespace trialstat::store::detail
