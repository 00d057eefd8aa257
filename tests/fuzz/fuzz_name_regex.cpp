// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: tensor-name regexes (host/trial/name_regex.cpp, PCRE2 with match and depth
// limits). The input is a pattern and a name. Compiling gives a regex or invalid_argument
// naming the pattern; a match is decided (true/false) or refused with invalid_argument naming
// the pattern — within libFuzzer's -timeout, so a hostile pattern such as `(a+)+$` cannot hang
// a watch — and `search` agrees with a decided `find`. An ASCII name, escaped,
// always matches itself.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/trial/name_regex.hpp"

using namespace trialstat;

namespace {

/// ASCII `text` as a pattern that matches exactly it: every character as \xhh (Python's and
/// PCRE2's spelling).
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  return out;
}

bool is_ascii(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string pattern = in.ConsumeRandomLengthString(512);
  const std::string name = in.ConsumeRemainingBytesAsString();
  const auto re = trial::name_regex::compile(pattern);
  if (!re.has_value()) {
    const status s = re.error_status();
    FUZZ_CHECK(s.code() == error_code::invalid_argument, s.to_string());
  } else {
    FUZZ_CHECK(re->pattern() == pattern, "the pattern was not kept");
    const auto found = re->find(name);
    if (found.has_value()) {
      FUZZ_CHECK(re->search(name) == *found, "search disagrees with find");
    } else {
      FUZZ_CHECK(found.error_status().code() == error_code::invalid_argument, found.error_status().to_string());
      FUZZ_CHECK(!re->search(name), "an undecided match read as true");
    }
  }
  if (name.size() <= 256 && is_ascii(name)) {
    const auto self = trial::name_regex::compile(escaped(name));
    FUZZ_CHECK(self.has_value(), self.error_status().to_string());
    const auto found = self->find(name);
    FUZZ_CHECK(found.has_value() && *found, "an escaped name does not match itself");
  }
  return 0;
}
