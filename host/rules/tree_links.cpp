// SPDX-License-Identifier: Apache-2.0
// Exact XGBoost tree depth from the Yes/No links (TreeDepth, issue 16).
#include "host/rules/tree_links.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace trialstat::rules::detail {
namespace {

bool is_leaf_link(std::string_view link) noexcept { return link.empty() || link == "nan"; }

}  // namespace

result<int64_t> tree_depth_from_links(std::span<const std::string> ids,
                                      std::span<const std::string> yes,
                                      std::span<const std::string> no) {
  const std::size_t n = ids.size();
  if (yes.size() != n || no.size() != n) {
    return status(error_code::invalid_argument,
                  fmt::format("the link columns differ in length: {} ids, {} yes, {} no", n,
                              yes.size(), no.size()));
  }
  if (n == 0) return status(error_code::invalid_argument, "no nodes");
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!index.emplace(ids[i], i).second) {
      return status(error_code::invalid_argument, fmt::format("node id '{}' repeats", ids[i]));
    }
  }
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<int> parents(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::string* link_ptr : {&yes[i], &no[i]}) {
      const std::string& link = *link_ptr;
      if (is_leaf_link(link)) continue;
      const auto it = index.find(link);
      if (it == index.end()) {
        return status(error_code::invalid_argument,
                      fmt::format("node '{}' links to '{}', which is not a node", ids[i], link));
      }
      if (++parents[it->second] > 1) {
        return status(error_code::invalid_argument,
                      fmt::format("node '{}' has two parents", link));
      }
      children[i].push_back(it->second);
    }
  }
  // Breadth-first from every root; with one parent per node each node is reached once.
  std::vector<std::pair<std::size_t, int64_t>> frontier;
  for (std::size_t i = 0; i < n; ++i) {
    if (parents[i] == 0) frontier.emplace_back(i, 0);
  }
  int64_t deepest = 0;
  std::size_t reached = 0;
  while (!frontier.empty()) {
    const auto [node, depth] = frontier.back();
    frontier.pop_back();
    ++reached;
    deepest = std::max(deepest, depth);
    for (const std::size_t child : children[node]) frontier.emplace_back(child, depth + 1);
  }
  if (reached != n) {
    return status(error_code::invalid_argument,
                  fmt::format("the links form a cycle ({} of {} nodes reachable from a root)",
                              reached, n));
  }
  return deepest;
}

}  // namespace trialstat::rules::detail
