// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: collections JSON (the catalog's collections loader, host/trial/catalog.cpp).
// The input replaces the collections file of a small trial written by trialstat's writer. The
// trial must still load (a bad collections file is a warning, never a failure) with all of its
// tensors; every collection loaded is found by name, and selecting it (its include_regex
// compiled and run over every tensor name) gives tensors of the trial or invalid_argument.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_check.hpp"
#include "tests/fuzz/fuzz_files.hpp"
#include "tests/fuzz/sample_trial.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace fs = std::filesystem;
using namespace trialstat;

namespace {

fs::path trial_root;
fs::path collections_file;
std::size_t tensors_expected = 0;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trial_root = fuzz::make_scratch_folder("trialstat_fuzz_collections_");
  FUZZ_CHECK(!trial_root.empty(), "cannot create a scratch folder");
  const status s = fuzz::write_sample_trial(trial_root);
  FUZZ_CHECK(s.ok(), s.to_string());
  collections_file = trial_root / writer::trial_writer::collections_file_path(fuzz::sample_worker);
  auto cat = trial::catalog::open(trial_root.string());
  FUZZ_CHECK(cat.has_value(), cat.error_status().to_string());
  tensors_expected = cat->tensor_names().size();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  {
    std::ofstream out(collections_file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    FUZZ_CHECK(static_cast<bool>(out), "cannot write the collections file");
  }
  auto cat = trial::catalog::open(trial_root.string());
  FUZZ_CHECK(cat.has_value(), cat.error_status().to_string());
  FUZZ_CHECK(cat->tensor_names().size() == tensors_expected, "a collections file changed the tensors");
  FUZZ_CHECK(cat->has_collections_file(), "the collections file was not read");
  for (const auto& w : cat->warnings()) {
    FUZZ_CHECK(!w.problem.ok() && !w.problem.message().empty(), "a warning without a message");
  }
  for (const trial::collection& c : cat->collections()) {
    FUZZ_CHECK(cat->find_collection(c.name) != nullptr, "a loaded collection is not found by name");
    const std::string names[] = {c.name};
    const auto selected = cat->select(names, {});
    if (!selected.has_value()) {
      FUZZ_CHECK(selected.error_status().code() == error_code::invalid_argument,
                 selected.error_status().to_string());
      continue;
    }
    for (const trial::tensor_id id : *selected) {
      FUZZ_CHECK(id < cat->tensor_names().size(), "selected a tensor the trial does not have");
    }
  }
  return 0;
}
