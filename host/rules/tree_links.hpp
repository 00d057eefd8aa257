// SPDX-License-Identifier: Apache-2.0
// Internal: the exact depth of XGBoost trees from the node table the XGBoost hook saves
// (`trees/ID`, `trees/Yes`, `trees/No`: xgboost's trees_to_dataframe columns), for TreeDepth
// (spec/RULES.md §3.11 [prop] "or the exact depth from the Yes/No links").
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "trialstat/status.hpp"

namespace trialstat::rules::detail {

/// @brief Depth (edges on the longest root-to-leaf path) of the deepest tree in a node table.
/// @param ids  one id per node, e.g. "3-12" (tree 3, node 12); unique
/// @param yes  per node, the id of its "yes" child, or "nan" / "" for a leaf
/// @param no   per node, the id of its "no" child, likewise
/// Roots are the nodes no link points to; a lone leaf has depth 0.
/// @return the depth; invalid_argument when the columns differ in length, the table is empty,
///   an id repeats, a link names no node, a node has two parents, or the links form a cycle.
[[nodiscard]] result<int64_t> tree_depth_from_links(std::span<const std::string> ids,
                                                    std::span<const std::string> yes,
                                                    std::span<const std::string> no);

}  // namespace trialstat::rules::detail
