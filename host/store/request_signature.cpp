// SPDX-License-Identifier: Apache-2.0
// What a row is keyed by: the request signature (the record blob's packing: record_packing.cpp).
#include <fmt/format.h>

#include "trialstat/config.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

std::string request_signature(const stats::statistics_request& request, stats::backend backend) {
  stats::statistics_request r = request;
  r.normalise();
  // "s2": the signature's version, raised when a request field, the record codec's layout or
  // the blob's packing changes (rows of an older one then never match; s2: blobs packed by
  // words, record_packing.hpp); the trialstat version too, so a new release never decodes an
  // older one's blobs.
  std::string out = fmt::format("s2;" TRIALSTAT_VERSION ";{};m{};h{};l{};d{};r{};k{}{};w{}", backend == stats::backend::cuda ? "cuda" : "cpu",
                                int{r.moments}, r.histogram_bins, int{r.log_histogram}, r.history_depth,
                                int{r.saved_reductions}, int{r.keep_values}, int{r.keep_strings},
                                int{r.wall_time});
  for (const auto& a : r.allclose) fmt::format_to(std::back_inserter(out), ";a{}/{}/{}", a.rtol, a.atol, int{a.equal_nan});
  for (const auto& p : r.axis0) {
    fmt::format_to(std::back_inserter(out), ";x{}/{}/{}", static_cast<int>(p.what), p.lo, p.hi);
  }
  for (const double q : r.percentiles) fmt::format_to(std::back_inserter(out), ";p{}", q);
  for (const double v : r.equal_values) fmt::format_to(std::back_inserter(out), ";e{}", v);
  for (const int64_t axis : r.channel_axes) fmt::format_to(std::back_inserter(out), ";c{}", axis);
  return out;
}

bool request_storable(const stats::statistics_request& request) noexcept { return !request.keep_values; }

}  // namespace trialstat::store
