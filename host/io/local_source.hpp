// SPDX-License-Identifier: Apache-2.0
// A trial in a local folder: listing with std::filesystem, reads with io::file_reader (pread or
// mmap). Internal to host/io; users get it from io::open_trial_source.
#pragma once

#include <filesystem>
#include <string>

#include "trialstat/io/trial_source.hpp"

namespace trialstat::io::detail {

class local_source final : public trial_source {
 public:
  explicit local_source(std::string location) : location_(std::move(location)), root_(location_) {}

  [[nodiscard]] const std::string& location() const noexcept override { return location_; }
  [[nodiscard]] std::string display_name(std::string_view key) const override;
  [[nodiscard]] bool is_remote() const noexcept override { return false; }
  [[nodiscard]] const std::filesystem::path* local_root() const noexcept override { return &root_; }
  [[nodiscard]] status check_root() const override;
  [[nodiscard]] status list(std::string_view sub, std::string_view start_after,
                            std::vector<object_info>& out) const override;
  [[nodiscard]] status list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                                  std::vector<object_info>& out, const folder_filter& skip_folder) const override;
  [[nodiscard]] result<uint64_t> read_object(std::string_view key, std::vector<std::byte>& out,
                                             uint64_t max_bytes = UINT64_MAX) const override;
  /// Reads the keys in turn into one reused buffer; consecutive keys of one folder (the sorted
  /// listing's order) are opened relative to that folder's descriptor (openat), so each file
  /// costs openat + pread + close (`read_file_at`) and no walk of the whole path.
  void read_objects(std::span<const std::string> keys, const object_callback& on_object,
                    uint64_t max_bytes = UINT64_MAX) const override;
  [[nodiscard]] result<std::optional<uint64_t>> object_size(std::string_view key) const override;
  [[nodiscard]] result<std::optional<object_identity>> identify(std::string_view key) const override;
  [[nodiscard]] result<std::unique_ptr<object_reader>> open(std::string_view key) const override;

 private:
  std::string location_;
  std::filesystem::path root_;
};

}  // namespace trialstat::io::detail
