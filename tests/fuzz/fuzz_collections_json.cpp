// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: collections JSON (host/trial/collections_json.cpp, the parser the catalog
// calls for a trial's collections file). The input is one collections file, parsed directly (no
// trial is written or opened). The parser never fails: every problem is a warning with a code
// and a message naming the file; there is one list of compiled include_regex patterns per
// collection, no more patterns than the collection lists; `_meta.num_workers` is positive when
// taken; and every compiled pattern, run over the tensor names of the fuzz sample trial, matches,
// does not match, or is refused with invalid_argument (never a crash).
#include <cstdint>
#include <string_view>

#include "host/trial/collections_json.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/trial/catalog.hpp"

using namespace trialstat;

namespace {

constexpr std::string_view file_name = "collections/000000000/worker_0_collections.json";

// The tensor names of tests/fuzz/sample_trial.cpp, and the empty name.
constexpr std::string_view tensor_names[] = {
    "MLP_fc1.weight", "gradient/MLP_fc1.weight", "conv1.weight", "loss_output_0", "relu_output0",
    "labels", "mask", "tokens", "empty", "", "smdebug/reductions/abs_max/MLP_fc1.weight"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const trial::detail::parsed_collections parsed =
      trial::detail::parse_collections_json(fuzz::as_text(data, size), file_name);
  for (const status& w : parsed.warnings) {
    FUZZ_CHECK(w.code() == error_code::data_loss || w.code() == error_code::invalid_argument, w.to_string());
    FUZZ_CHECK(fuzz::starts_with(w.message(), "collections file collections/000000000/worker_0_collections.json: "),
               "a warning that does not name the file: " + w.message());
  }
  FUZZ_CHECK(!parsed.num_workers || *parsed.num_workers >= 1, "a non-positive num_workers taken");
  FUZZ_CHECK(parsed.include_regexes.size() == parsed.collections.size(), "regex lists and collections differ");
  for (std::size_t i = 0; i < parsed.collections.size(); ++i) {
    FUZZ_CHECK(parsed.include_regexes[i].size() <= parsed.collections[i].include_regex.size(),
               "more compiled patterns than listed");
    for (const auto& name : tensor_names) {
      const auto found = trial::find_any(parsed.include_regexes[i], name);
      if (!found) {
        FUZZ_CHECK(found.error_status().code() == error_code::invalid_argument, found.error_status().to_string());
      }
    }
  }
  return 0;
}
