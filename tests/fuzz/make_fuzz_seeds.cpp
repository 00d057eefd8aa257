// SPDX-License-Identifier: Apache-2.0
// make_fuzz_seeds OUT: the seed corpora of the binary-input fuzz targets, from trials written by
// trialstat's own writer (sample_trial.hpp), so no binary seed is committed:
//   OUT/record_reader/     every event file whole (smdebug footers and TensorBoard CRC footers)
//   OUT/event_decoder/     every record payload (one serialized Event each)
//   OUT/index_json/        every index file
//   OUT/collections_json/  the collections file
// Text-input targets (rule config, S3 XML, regexes, parameters) seed from tests/fuzz/seeds/.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/fuzz/fuzz_files.hpp"
#include "tests/fuzz/sample_trial.hpp"
#include "trialstat/io/record_reader.hpp"

namespace fs = std::filesystem;
using namespace trialstat;

namespace {

bool write_all(const fs::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

/// Copy one trial's files into the corpora; `tag` keeps seed names of several trials apart.
bool add_trial(const fs::path& trial, const fs::path& out, const std::string& tag) {
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(trial)) {
    if (!entry.is_regular_file()) continue;
    const fs::path& p = entry.path();
    const std::string name = tag + "_" + std::to_string(n++);
    const auto bytes = fuzz::read_file_bytes(p);
    const std::string file = p.filename().string();
    bool ok = true;
    if (file.ends_with(".tfevents")) {
      ok = write_all(out / "record_reader" / name, bytes);
      io::record_scanner scanner(bytes, p.string());
      for (int r = 0;; ++r) {
        const auto frame = scanner.next();
        if (!frame.has_value()) break;
        ok = ok && write_all(out / "event_decoder" / (name + "_" + std::to_string(r)), frame->payload);
      }
    } else if (file.ends_with("_collections.json")) {
      ok = write_all(out / "collections_json" / name, bytes);
    } else if (file.ends_with(".json")) {
      ok = write_all(out / "index_json" / name, bytes);
    }
    if (!ok) {
      std::fprintf(stderr, "make_fuzz_seeds: cannot write seeds from %s\n", p.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds OUT\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path scratch = out / "trials";
  std::error_code ec;
  fs::remove_all(scratch, ec);
  for (const char* sub : {"record_reader", "event_decoder", "index_json", "collections_json"}) {
    fs::create_directories(out / sub, ec);
  }
  const std::pair<const char*, writer::footer_policy> kinds[] = {
      {"smdebug", writer::footer_policy::smdebug_constant},
      {"payload_crc", writer::footer_policy::payload_crc}};
  for (const auto& [tag, footer] : kinds) {
    const fs::path trial = scratch / tag;
    const status s = fuzz::write_sample_trial(trial, footer);
    if (!s.ok()) {
      std::fprintf(stderr, "make_fuzz_seeds: %s\n", s.to_string().c_str());
      return 1;
    }
    if (!add_trial(trial, out, tag)) return 1;
  }
  fs::remove_all(scratch, ec);
  return 0;
}
