// SPDX-License-Identifier: Apache-2.0
// Loading a trial into its catalog (spec/FORMAT.md §1, §6–§8; spec/TRIAL_API.md §2–§4): one
// pass over the trial folder — the end marker, the collections files, the index files not
// taken yet (alone, or shared by a load group), the event files of steps without an index file
// — and the watermarks that keep a refresh of a live trial from listing what cannot change.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <future>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "host/trial/catalog_state.hpp"
#include "host/trial/collections_json.hpp"
#include "host/trial/event_file_scan.hpp"
#include "host/trial/index_read_ahead.hpp"
#include "host/trial/trial_listing.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"

namespace trialstat::trial {

using detail::step_file_name;

status catalog::state::list_files(std::string_view sub, std::vector<std::string>& out, std::string_view start_after,
                                  const io::folder_filter& skip_folder) const {
  return detail::list_trial_keys(*source, options.group, sub, start_after, skip_folder, out);
}

std::optional<step_file_name> catalog::state::step_file_to_load(const std::string& rel, std::string_view kind,
                                                                std::string_view ext) {
  if (!detail::has_extension(rel, ext)) return std::nullopt;
  auto name = detail::parse_step_file_name(rel, ext);
  if (!name) {
    seen_files.insert(rel);
    warn(rel, error_code::invalid_argument,
         fmt::format("{} file {}: name does not match <step>_<worker>{}; ignored", kind, rel, ext));
    return std::nullopt;
  }
  if (!in_range(name->step)) return std::nullopt;
  return name;
}

// ---- index files ----
/// Load one index file from its parse outcome (its parsed form in `scratch`).
bool catalog::state::load_index_file(const std::string& rel, const step_file_name& name,
                                     const detail::index_outcome& outcome) {
  using kind = detail::index_outcome::kind;
  if (outcome.what == kind::read_failed) {
    warn(rel, outcome.problem.code(), fmt::format("index file {}: cannot read: {}", rel, outcome.problem.message()));
    return false;
  }
  if (outcome.what == kind::parse_failed) {
    warn(rel, outcome.problem.code(), fmt::format("index file {} (step {}, worker {}): {}", rel, name.step,
                                                  name.worker, outcome.problem.message()));
    return false;
  }
  for (const std::string& key : scratch.unknown_keys) {
    warn(rel, error_code::data_loss,
         fmt::format("index file {}: unknown key \"{}\" ignored (expected meta, tensor_payload, "
                     "shape_payload){}",
                     rel, key, scratch.tensors.empty() ? "; no tensor records loaded from it" : ""));
  }
  const worker_id w = table.intern_worker(name.worker);
  if (const auto it = table.block_of.find({name.step, w}); it != table.block_of.end()) {
    detail::entry_table::block& old = table.blocks[it->second];
    if (!old.from_scan) {
      warn(rel, error_code::invalid_argument,
           fmt::format("index file {}: a second index file for step {}, worker {}; ignored", rel,
                       name.step, name.worker));
      return false;
    }
    // The index arrived after its event file was scanned: the index wins (it has shapes).
    old.alive = false;
    table.blocks_dirty = true;
    table.block_of.erase(it);
  }
  std::optional<file_id> event_file;
  if (!scratch.tensors.empty()) event_file = table.intern_event_file(scratch.event_file_name);
  table.commit(scratch, rel, name.step, w, event_file, /*from_scan=*/false, warnings);
  std::string& last = last_index_key[name.step];
  if (last < rel) last = rel;
  return true;
}

// ---- event-file scan (no usable index) ----
bool catalog::state::scan_event_file(const std::string& rel, const step_file_name& name) {
  const auto size = source->read_object(rel, event_buffer);
  if (!size.has_value()) {
    const status s = size.error_status();
    warn(rel, s.code(), fmt::format("event file {}: cannot read: {}", rel, s.message()));
    return false;
  }
  detail::scan_event_file_records(std::span<const std::byte>(event_buffer.data(), *size), rel, name, scratch,
                                  warnings);
  if (scratch.tensors.empty()) return false;
  const worker_id w = table.intern_worker(name.worker);
  table.commit(scratch, rel, name.step, w, table.intern_event_file(rel), /*from_scan=*/true, warnings);
  return true;
}

// ---- collections ----
/// Read and parse the collections file `rel` into the catalog's collections (FORMAT §8).
void catalog::state::load_collections_file(const std::string& rel) {
  const auto size = source->read_object(rel, text_buffer, io::json_file_limit_bytes);
  if (!size.has_value()) {
    warn(rel, size.error_status().code(),
         fmt::format("collections file {}: cannot read: {}", rel, size.error_status().message()));
    return;
  }
  const std::string_view text(reinterpret_cast<const char*>(text_buffer.data()), static_cast<std::size_t>(*size));
  detail::parsed_collections parsed = detail::parse_collections_json(text, rel);
  if (parsed.num_workers) collection_num_workers = parsed.num_workers;
  for (status& problem : parsed.warnings) warnings.push_back({std::filesystem::path(rel), std::move(problem)});
  for (std::size_t i = 0; i < parsed.collections.size(); ++i) {
    std::vector<std::string> sorted_names = parsed.collections[i].tensor_names;
    std::sort(sorted_names.begin(), sorted_names.end());
    collections.push_back(std::move(parsed.collections[i]));
    collection_regexes.push_back(std::move(parsed.include_regexes[i]));
    collection_names_sorted.push_back(std::move(sorted_names));
  }
}

status catalog::state::load_collections() {
  std::vector<std::string> files;
  TRIALSTAT_RETURN_IF_ERROR(list_files("collections", files));
  const std::string* first_json = nullptr;
  for (const auto& rel : files) {
    bool is_json = false;
    const auto worker = detail::parse_collection_file_name(rel, &is_json);
    if (!worker) continue;
    table.intern_worker(*worker);
    if (is_json && first_json == nullptr) first_json = &rel;
  }
  if (!collections_parsed && first_json != nullptr) {
    collections_parsed = true;
    load_collections_file(*first_json);
  }
  return status::success();
}

// ---- a load shared by a group of processes ----
/// Read and parse this process's slice of `to_load`, exchange the slices' outcomes with the
/// group and apply every file's outcome in listing order with `load(i, outcome)`. Errors: the
/// exchange's; invalid_argument when another process listed other files; data_loss for a
/// malformed share. Files loaded before an error stay loaded.
template <typename Load>
status catalog::state::load_shared(std::span<const std::string> to_load, detail::index_json_parser& parser,
                                   const Load& load) {
  const load_group& group = *options.group;
  const uint64_t fingerprint = detail::listing_fingerprint(to_load);
  const detail::share_bounds mine = detail::share_of(to_load.size(), group.rank, group.size);
  detail::share_writer writer(to_load.size(), fingerprint, mine);
  source->read_objects(to_load.subspan(mine.first, mine.count),
                       [&](std::size_t, result<std::span<const std::byte>> bytes) {
                         writer.add(detail::parse_index_outcome(bytes, parser, scratch), scratch);
                       },
                       io::json_file_limit_bytes);
  if (!group.exchange) {
    return status(error_code::invalid_argument, "catalog load group without an exchange");
  }
  auto shares = group.exchange(writer.take());
  if (!shares) return shares.error_status();
  if (shares->size() != static_cast<std::size_t>(group.size)) {
    return status(error_code::data_loss, fmt::format("catalog load: {} shares from a group of {}",
                                                     shares->size(), group.size));
  }
  detail::index_outcome outcome;
  for (int rank = 0; rank < group.size; ++rank) {
    const detail::share_bounds slice = detail::share_of(to_load.size(), rank, group.size);
    auto reader = detail::share_reader::open((*shares)[static_cast<std::size_t>(rank)], rank, to_load.size(),
                                             fingerprint, slice);
    if (!reader) return reader.error_status();
    for (std::size_t k = 0; k < slice.count; ++k) {
      TRIALSTAT_RETURN_IF_ERROR(reader->next(outcome, scratch));
      load(slice.first + k, outcome);
    }
    TRIALSTAT_RETURN_IF_ERROR(reader->finish());
    std::vector<std::byte>().swap((*shares)[static_cast<std::size_t>(rank)]);  // applied: free it
  }
  return status::success();
}

// ---- one pass over the folder ----
result<std::size_t> catalog::state::load_pass() {
  std::size_t loaded = 0;
  // The end marker first: smdebug writes it after every index and event file, so a marker
  // seen before the listings start means they list everything the job wrote (looked for after
  // them, a marker written in between would end a live trial without its last steps).
  const auto end_marker = source->object_size(detail::end_marker_key);
  // A remote source lists events/ flat whatever the folder filter says, so its listing does
  // not wait for the index files: it runs beside the collections and index reads, and its
  // round trips (a request per 1,000 keys) overlap theirs. (In a group the ranks share the
  // listing; locally the filter saves opening the step folders, so it waits.)
  std::vector<std::string> early_event_files;
  std::future<status> early_events_listing;
  if (options.scan_missing_index && source->is_remote() && !(options.group && options.group->size > 1)) {
    early_events_listing = std::async(std::launch::async, [this, &early_event_files] {
      return list_files("events", early_event_files, events_start_after);
    });
  }
  TRIALSTAT_RETURN_IF_ERROR(load_collections());

  std::vector<std::string> files;
  TRIALSTAT_RETURN_IF_ERROR(list_files("index", files, index_start_after));
  detail::index_json_parser parser;  // one per pass: its buffers are reused from file to file
  std::vector<std::string> to_load;
  std::vector<step_file_name> names;
  for (auto& rel : files) {
    if (seen(rel)) continue;
    const auto name = step_file_to_load(rel, "index", ".json");  // not *.tmp (being written), *.csv, others
    if (!name) continue;
    names.push_back(*name);
    to_load.push_back(std::move(rel));  // taken: into taken_index_keys after the load
  }
  const auto load = [&](std::size_t i, const detail::index_outcome& outcome) {
    const std::size_t entries_before = table.entries.size();
    if (!load_index_file(to_load[i], names[i], outcome)) return;
    ++loaded;
    if (entries_before == 0 && table.blocks.size() == 1) {
      // Opening: size the entry table from the first file (files of one trial are alike),
      // so a big trial does not pay for repeated re-allocation and moves of its entries.
      const std::size_t per_file = table.entries.size() - entries_before;
      const std::size_t remaining = to_load.size();  // an upper bound on the files to come
      if (per_file > 0 && remaining < (std::size_t{1} << 32) / (per_file + 1)) {
        table.entries.reserve(table.entries.size() + per_file * remaining + per_file * remaining / 8);
      }
      table.blocks.reserve(table.blocks.size() + remaining);
    }
  };
  if (options.group && options.group->size > 1) {
    if (status shared = load_shared(to_load, parser, load); !shared.ok()) {
      take_index_keys(std::move(to_load));
      if (loaded > 0 || table.blocks_dirty) table.rebuild();  // what was applied stays consistent
      update_completeness();
      return shared;
    }
  } else if (!source->is_remote() && options.parse_thread_min_files > 0 &&
             to_load.size() >= options.parse_thread_min_files) {
    // Local: read and parsed on a thread while this one applies (about a third of the work).
    detail::index_read_ahead parsed_ahead(*source, to_load);
    for (std::size_t i = 0; i < to_load.size(); ++i) load(i, parsed_ahead.next(scratch));
  } else {
    // The source reads them (S3: many at once, and parsing waits for the network anyway) and
    // hands them over in order.
    source->read_objects(to_load, [&](std::size_t i, result<std::span<const std::byte>> bytes) {
      load(i, detail::parse_index_outcome(bytes, parser, scratch));
    }, io::json_file_limit_bytes);
  }
  take_index_keys(std::move(to_load));

  if (options.scan_missing_index) {
    status listed = status::success();
    if (early_events_listing.valid()) {
      listed = early_events_listing.get();
      files = std::move(early_event_files);
    } else {
      listed = list_files("events", files, events_start_after, indexed_step_folder());
    }
    if (!listed.ok()) {
      // What the index files gave stays loaded and consistent; the caller may retry.
      if (loaded > 0 || table.blocks_dirty) table.rebuild();
      update_completeness();
      return listed;
    }
    for (const auto& rel : files) {
      if (!seen_files.empty() && seen_files.contains(rel)) continue;  // event files: not index keys
      const auto name = step_file_to_load(rel, "event", ".tfevents");  // not *.tmp or anything else
      if (!name) continue;
      if (const auto w = table.worker_ids.find(name->worker); w != table.worker_ids.end()) {
        // Covered by an index file: nothing to scan (and no need to remember it).
        if (table.block_of.contains({name->step, w->second})) continue;
      }
      seen_files.insert(rel);
      if (scan_event_file(rel, *name)) ++loaded;
    }
  }

  training_ended = end_marker.has_value() && end_marker->has_value();
  if (loaded > 0 || table.blocks_dirty) table.rebuild();
  update_completeness();
  advance_index_start_after();
  if (last_complete >= 0) {
    // After every key of the folder events/<step>/ (smdebug's names there are ASCII: '~' sorts
    // after them; a stranger name is only listed again, and skipped as seen).
    std::string after = fmt::format("events/{:012d}/~", last_complete);
    if (events_start_after < after) events_start_after = std::move(after);
  }
  return loaded;
}

/// For the listing of events/: the step folders that hold no event file to scan, so that a local
/// listing does not open them (one open and getdents per step: most of the listing on trials of
/// few workers). A folder `events/<step>/` qualifies when its step is outside the range asked
/// for, or when index files from as many workers as the collections files declare
/// (`_meta.num_workers`) are loaded for it (or their event files were scanned by an earlier
/// pass): smdebug writes one event file per step and worker into its step's folder, and an
/// event file of a worker with an index for that step is never scanned. Without a
/// declared worker count nothing is skipped (a worker with no index file at all is known only
/// from its event files).
io::folder_filter catalog::state::indexed_step_folder() const {
  return [this](std::string_view folder) {
    uint64_t number = 0;  // unsigned: digits only, no sign
    const auto [end, error] = std::from_chars(folder.data(), folder.data() + folder.size(), number);
    if (error != std::errc() || end != folder.data() + folder.size() ||
        number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;  // not a step folder
    }
    const auto step = static_cast<int64_t>(number);
    if (!in_range(step)) return true;
    if (!collection_num_workers) return false;
    const auto it = table.step_map.find(step);
    return it != table.step_map.end() && static_cast<int64_t>(it->second.workers.size()) >= *collection_num_workers;
  };
}

/// After completeness is known: list only index keys after the last complete step's.
void catalog::state::advance_index_start_after() {
  if (last_complete < 0 || last_index_key.empty()) return;
  // A step read by scanning its event file may still get its index file: the watermark stays
  // before the first such step.
  int64_t limit = last_complete;
  for (const detail::entry_table::block& b : table.blocks) {
    if (b.alive && b.from_scan) limit = std::min(limit, b.step - 1);
  }
  auto it = last_index_key.upper_bound(limit);
  if (it == last_index_key.begin()) return;
  --it;
  if (index_start_after < it->second) index_start_after = it->second;
  last_index_key.erase(last_index_key.begin(), std::next(it));  // steps no file can join now
}
}  // namespace trialstat::trial
