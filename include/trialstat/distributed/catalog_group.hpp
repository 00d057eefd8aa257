// SPDX-License-Identifier: Apache-2.0
/// @file catalog_group.hpp
/// @brief The ranks of a job loading one catalog together (issue 10): each rank reads and parses
/// 1/N of the index files and the ranks exchange what they parsed (`trial::load_group`), so a
/// catalog-bound trial (10⁵–10⁶ small index files) is not parsed N times over.
#pragma once

#include <cstddef>
#include <vector>

#include "trialstat/distributed/world.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::distributed {

/// @brief Every rank's `mine`, indexed by rank (`mine` itself at `ranks.rank()`): a collective
/// of point-to-point messages, every rank calls it once. Pairs exchange in rank order (the lower
/// rank sends first), so it cannot deadlock even when a send waits for its delivery.
/// Errors: the transport's (io_error).
[[nodiscard]] result<std::vector<std::vector<std::byte>>> all_gather(transport& ranks, std::vector<std::byte> mine);

/// @brief The load group of all ranks of `ranks` (which must outlive the catalog's loads);
/// set it as `catalog_options::group` on every rank.
[[nodiscard]] trial::load_group catalog_group(transport& ranks);

}  // namespace trialstat::distributed
