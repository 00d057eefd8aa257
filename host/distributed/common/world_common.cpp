// SPDX-License-Identifier: Apache-2.0
// What every world needs, with or without MPI: launcher detection, the GPU of a rank.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "host/distributed/common/world_common.hpp"
#include "trialstat/distributed/world.hpp"

namespace trialstat::distributed {

bool launched_by_mpi() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int launcher_world_size() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* value = std::getenv(name); value != nullptr) return std::max(1, std::atoi(value));
  }
  return 1;
}

bool launched_alone() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* value = std::getenv(name); value != nullptr) return std::string_view(value) == "1";
  }
  return false;
}

std::optional<std::string> visible_device_for_rank(int local_rank, std::span<const std::string> visible,
                                                   int count) {
  if (local_rank < 0) return std::nullopt;
  if (!visible.empty()) {
    if (visible.size() < 2) return std::nullopt;
    return visible[static_cast<std::size_t>(local_rank) % visible.size()];
  }
  if (count < 2) return std::nullopt;
  return std::to_string(local_rank % count);
}

void assign_gpu_for_rank(int local_rank) {
  std::vector<std::string> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env != nullptr) {
    std::string_view list(env);
    while (!list.empty()) {
      const auto comma = list.find(',');
      const auto item = list.substr(0, comma);
      if (!item.empty()) visible.emplace_back(item);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    if (visible.empty()) return;  // "" hides every device: nothing to choose
  }
  int count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)entry;
    ++count;
  }
  if (auto device = visible_device_for_rank(local_rank, visible, count)) {
    ::setenv("CUDA_VISIBLE_DEVICES", device->c_str(), 1);
  }
}

}  // namespace trialstat::distributed
