// SPDX-License-Identifier: Apache-2.0
#include "trialstat/frontend/open_catalog.hpp"

#include <fmt/format.h>

#include "trialstat/io/source_options.hpp"

namespace trialstat::frontend {

result<trial::catalog> open_catalog(const std::string& location, std::optional<int64_t> range_begin,
                                    std::optional<int64_t> range_end) {
  trial::catalog_options options;
  options.range_begin = range_begin;
  options.range_end = range_end;
  auto s3 = io::s3_options_from_environment();
  if (!s3) return s3.error_status();
  options.source.s3 = *s3;
  return trial::catalog::open(location, options);
}

std::string load_warning_text(const trial::load_warning& warning) {
  return fmt::format("{}: {}", warning.file.string(), warning.problem.to_string());
}

}  // namespace trialstat::frontend
