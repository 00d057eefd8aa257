// SPDX-License-Identifier: Apache-2.0
// A rule's skipped records as JSON, for any JSON type with nlohmann::json's interface (rule
// reports in host/report and watch events in host/live share it). Internal to the areas that
// link trialstat_pipeline; header-only, so pipeline itself needs no JSON library.
#pragma once

#include "trialstat/pipeline/rule_session.hpp"

namespace trialstat::pipeline::detail {

/// Add "skipped_records" (the count) and "skipped" (one object per record: tensor, worker, step,
/// file, offset_bytes, saved_reduction, reason) to a rule's JSON object.
template <typename Json>
void add_skipped_records_json(const pipeline::rule_result& r, Json& row) {
  row["skipped_records"] = r.skipped.size();
  auto& skipped = row["skipped"] = Json::array();
  for (const auto& k : r.skipped) {
    skipped.push_back({{"tensor", k.tensor},
                       {"worker", k.worker},
                       {"step", k.step},
                       {"file", k.file},
                       {"offset_bytes", k.offset_bytes},
                       {"saved_reduction", k.saved_reduction},
                       {"reason", k.reason.to_string()}});
  }
}

}  // namespace trialstat::pipeline::detail
