// SPDX-License-Identifier: Apache-2.0
#include "trialstat/store/live_writer.hpp"

#include <fmt/format.h>

#include "host/store/record_identity.hpp"
#include "host/store/row_builder.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

struct live_writer::state {
  store_source_options options;
  store_run_summary summary;
  std::optional<statistics_store> db;
  bool off = false;  // warned: nothing more is written
  row_batch rows;
  detail::row_scratch scratch;

  void give_up(const status& why) {
    if (options.warn) options.warn(status(why.code(), why.message() + " (the watch goes on without the store)"));
    off = true;
    db.reset();
  }

  void on_step(const trial::catalog& trial, const plan::read_plan& plan, const stats::step_statistics& step) {
    if (off) return;
    if (!db) {
      auto opened = statistics_store::open(options.path, canonical_location(trial.location()), options.max_store_bytes);
      if (!opened) return give_up(opened.error_status());
      db.emplace(std::move(*opened));
    }
    detail::identity_cache identities(trial);  // one stat or HEAD per file of this step
    detail::record_size_rule sizes(min_record_bytes_for(options, trial));
    const auto for_each_storable = [&](const auto& action) {
      for (const stats::statistics_record& record : step.records) {
        const stats::statistics_request* request = plan.find(record.tensor);
        const trial::tensor_entry* entry = trial.find_entry(record.tensor, step.step, record.worker);
        if (request != nullptr && entry != nullptr && request_storable(*request)) action(record, *entry, *request);
      }
    };
    for_each_storable([&](const stats::statistics_record&, const trial::tensor_entry& entry,
                          const stats::statistics_request& request) { sizes.note(entry, request); });
    rows.clear();
    for_each_storable([&](const stats::statistics_record& record, const trial::tensor_entry& entry,
                          const stats::statistics_request& request) {
      // Keyed by the backend the watch computes on (its pipeline options, set by the caller).
      (void)detail::append_row(rows, trial, identities, entry, request, request_signature(request, options.backend),
                               record, sizes, scratch);
    });
    const status written = db->write_rows(rows);
    if (!written.ok()) return give_up(written);
    summary.written += static_cast<int64_t>(rows.size());
    summary.used = true;
  }
};

live_writer::live_writer(store_source_options options) : state_(std::make_unique<state>()) {
  state_->options = std::move(options);
}
live_writer::~live_writer() = default;

pipeline::step_observer live_writer::observer() {
  return [this](const trial::catalog& trial, const plan::read_plan& plan, const stats::step_statistics& step) {
    state_->on_step(trial, plan, step);
  };
}

const store_run_summary& live_writer::summary() const noexcept { return state_->summary; }

}  // namespace trialstat::store
