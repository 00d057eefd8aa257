// SPDX-License-Identifier: Apache-2.0
// The ranks' shared catalog load: an all-gather over the transport's point-to-point messages.
#include "trialstat/distributed/catalog_group.hpp"

#include <utility>

namespace trialstat::distributed {

result<std::vector<std::vector<std::byte>>> all_gather(transport& ranks, std::vector<std::byte> mine) {
  const int me = ranks.rank();
  const int n = ranks.size();
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(n));
  // With each peer in rank order: the lower rank of a pair sends first, the higher receives
  // first, so every send meets a receive even if sends block.
  for (int peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    const auto receive = [&]() -> status {
      auto bytes = ranks.receive(peer);
      if (!bytes) return bytes.error_status();
      out[static_cast<std::size_t>(peer)] = std::move(*bytes);
      return status::success();
    };
    if (me < peer) {
      TRIALSTAT_RETURN_IF_ERROR(ranks.send(peer, mine));
      TRIALSTAT_RETURN_IF_ERROR(receive());
    } else {
      TRIALSTAT_RETURN_IF_ERROR(receive());
      TRIALSTAT_RETURN_IF_ERROR(ranks.send(peer, mine));
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(ranks.flush());
  out[static_cast<std::size_t>(me)] = std::move(mine);
  return out;
}

trial::load_group catalog_group(transport& ranks) {
  trial::load_group group;
  group.rank = ranks.rank();
  group.size = ranks.size();
  group.exchange = [&ranks](std::vector<std::byte> mine) { return all_gather(ranks, std::move(mine)); };
  return group;
}

}  // namespace trialstat::distributed
