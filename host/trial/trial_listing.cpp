// SPDX-License-Identifier: Apache-2.0
// Listing a trial folder, alone or shared by a load group: see trial_listing.hpp.
#include "host/trial/trial_listing.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include <fmt/format.h>

#include "host/trial/index_share.hpp"

namespace trialstat::trial::detail {

namespace {

status list_shared(const io::trial_source& source, const load_group& group, std::string_view sub,
                   std::string_view start_after, const io::folder_filter& skip_folder,
                   std::vector<io::object_info>& mine, std::vector<std::string>& out) {
  if (!group.exchange) return status(error_code::invalid_argument, "catalog load group without an exchange");
  const status listed = source.list_share(sub, start_after, group.rank, group.size, mine, skip_folder);
  auto shares = group.exchange(write_listing_share(listed, mine));
  if (!shares) return shares.error_status();
  if (shares->size() != static_cast<std::size_t>(group.size)) {
    return status(error_code::data_loss, fmt::format("listing of {}: {} shares from a group of {}", sub,
                                                     shares->size(), group.size));
  }
  status first_failure;
  for (int rank = 0; rank < group.size; ++rank) {
    status read = read_listing_share((*shares)[static_cast<std::size_t>(rank)], rank, out);
    if (!read.ok() && first_failure.ok()) first_failure = std::move(read);
  }
  if (!first_failure.ok()) {
    out.clear();
    return first_failure;
  }
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());  // a source's shares need not be runs
  return status::success();
}

}  // namespace

status list_trial_keys(const io::trial_source& source, const std::optional<load_group>& group,
                       std::string_view sub, std::string_view start_after,
                       const io::folder_filter& skip_folder, std::vector<std::string>& out) {
  out.clear();
  std::vector<io::object_info> listed;
  if (group && group->size > 1) return list_shared(source, *group, sub, start_after, skip_folder, listed, out);
  TRIALSTAT_RETURN_IF_ERROR(source.list_share(sub, start_after, 0, 1, listed, skip_folder));
  out.reserve(listed.size());
  for (auto& object : listed) out.push_back(std::move(object.key));
  return status::success();
}

}  // namespace trialstat::trial::detail
