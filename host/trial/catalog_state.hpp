// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: what a catalog holds (catalog::state). Its members are defined by
// responsibility: loading a pass over the trial folder in catalog_loading.cpp, completeness and
// the queries behind the public API in catalog.cpp; the entry table, the listing, the file
// names, the collections parser and the event-file scan are units of their own
// (entry_table.hpp, trial_listing.hpp, trial_file_names.hpp, collections_json.hpp,
// event_file_scan.hpp). Not a public header.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/trial/entry_table.hpp"
#include "host/trial/index_json.hpp"
#include "host/trial/index_share.hpp"
#include "host/trial/trial_file_names.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial {

struct catalog::state {
  std::shared_ptr<const io::trial_source> source;
  catalog_options options;
  detail::entry_table table;

  std::vector<collection> collections;
  std::vector<std::vector<name_regex>> collection_regexes;
  std::vector<std::vector<std::string>> collection_names_sorted;
  bool collections_parsed = false;
  std::optional<int> collection_num_workers;

  bool training_ended = false;
  int64_t last_complete = -1;

  /// Files not to look at again on refresh: the index files taken (loaded or not), sorted (kept
  /// from each pass's listing, merged: no hashing or copying of 10⁶ keys when opening), and the
  /// others met (bad names, scanned event files) in a set.
  std::vector<std::string> taken_index_keys;
  detail::string_set seen_files;
  [[nodiscard]] bool seen(const std::string& rel) const {
    if (!seen_files.empty() && seen_files.contains(rel)) return true;
    return std::binary_search(taken_index_keys.begin(), taken_index_keys.end(), rel);
  }
  /// Add a pass's keys to load (sorted, none taken before) to taken_index_keys.
  void take_index_keys(std::vector<std::string>&& keys) {
    if (taken_index_keys.empty()) {
      taken_index_keys = std::move(keys);
      return;
    }
    const auto middle = taken_index_keys.size();
    taken_index_keys.insert(taken_index_keys.end(), std::make_move_iterator(keys.begin()),
                            std::make_move_iterator(keys.end()));
    std::inplace_merge(taken_index_keys.begin(), taken_index_keys.begin() + static_cast<std::ptrdiff_t>(middle),
                       taken_index_keys.end());
  }
  /// Index keys listed after this one only (ListObjectsV2 StartAfter on S3): the largest index
  /// key of the largest complete step (no new file can appear at or before a complete step).
  std::string index_start_after;
  std::map<int64_t, std::string> last_index_key;  ///< step -> largest index key loaded, open steps
  /// Event keys listed after this one only (scan_missing_index): past the folder of the largest
  /// complete step, whose event files were all seen (a refresh of a big live trial then lists
  /// the step folders of events/ without reading the complete ones).
  std::string events_start_after;
  std::vector<load_warning> warnings;

  // scratch, reused across files
  detail::parsed_index scratch;
  std::vector<std::byte> text_buffer;
  std::vector<std::byte> event_buffer;

  void warn(std::string_view rel, error_code code, std::string message) {
    warnings.push_back({std::filesystem::path(rel), status(code, std::move(message))});
  }

  [[nodiscard]] bool in_range(int64_t step) const {
    if (options.range_begin && step < *options.range_begin) return false;
    if (options.range_end && step >= *options.range_end) return false;
    return true;
  }

  // ---- loading (catalog_loading.cpp) ----
  /// One pass over the trial folder: the end marker, the collections, the index files not
  /// taken yet, then (scan_missing_index) the event files of steps without an index file.
  /// @return the number of (step, worker) files loaded; errors of the listings and of a load group.
  result<std::size_t> load_pass();
  /// The trial-relative keys under `sub` (detail::list_trial_keys with this trial's group).
  status list_files(std::string_view sub, std::vector<std::string>& out, std::string_view start_after = {},
                    const io::folder_filter& skip_folder = {}) const;
  /// The step and worker of a listed index or event file (`kind` "index" or "event", `ext`
  /// ".json" or ".tfevents") to load: nullopt for another extension, a step outside the range, or
  /// a name that does not parse (then remembered as seen, with an invalid_argument warning).
  std::optional<detail::step_file_name> step_file_to_load(const std::string& rel, std::string_view kind,
                                                          std::string_view ext);
  status load_collections();
  void load_collections_file(const std::string& rel);
  bool load_index_file(const std::string& rel, const detail::step_file_name& name,
                       const detail::index_outcome& outcome);
  template <typename Load>
  status load_shared(std::span<const std::string> to_load, detail::index_json_parser& parser, const Load& load);
  bool scan_event_file(const std::string& rel, const detail::step_file_name& name);
  [[nodiscard]] io::folder_filter indexed_step_folder() const;
  void advance_index_start_after();

  // ---- completeness and queries (catalog.cpp) ----
  void update_completeness();
  [[nodiscard]] int num_workers() const;
  [[nodiscard]] bool complete(const step_info& info) const;
  [[nodiscard]] bool tensor_in_collection(tensor_id t, std::size_t c) const;
  /// tensor_in_collection, with an undecidable regex match as an error naming the collection.
  [[nodiscard]] result<bool> find_in_collection(tensor_id t, std::size_t c) const;
  [[nodiscard]] std::optional<std::size_t> collection_index(std::string_view name) const;
};

}  // namespace trialstat::trial
