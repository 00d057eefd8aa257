// SPDX-License-Identifier: Apache-2.0
// A rule's skipped records as JSON (rule reports and watch events share it). Internal.
#pragma once

#include <nlohmann/json.hpp>

#include "trialstat/pipeline/rule_runner.hpp"

namespace trialstat::report::detail {

/// Add "skipped_records" (the count) and "skipped" (one object per record: tensor, worker, step,
/// file, offset_bytes, saved_reduction, reason) to a rule's JSON object.
template <typename Json>
void add_skipped_json(const pipeline::rule_result& r, Json& row) {
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

}  // namespace trialstat::report::detail
