// SPDX-License-Identifier: Apache-2.0
// The trial catalog (spec/FORMAT.md §1, §6–§8; spec/TRIAL_API.md §2–§4, §9).
//
// Layout of the loaded state:
//  * entries_: every tensor_entry (64 bytes), grouped in blocks of one (step, worker) file each;
//    blocks are kept sorted by (step, worker id), entries inside a block in index order. New
//    files are appended and the blocks re-ordered (one pass of moves) only when order broke.
//    An entry's shape points into `shapes` (one copy per distinct shape) and its reductions into
//    `reduction_chunks` (fixed chunks, never moved), so moving entries moves 64 bytes each.
//  * tensor_offsets_/tensor_entry_index_: a CSR index tensor -> entry positions, in entry order,
//    so (step, worker) ascending: find_entry is a binary search, tensor_steps a walk.
//  * step_map_: global step -> step_info (first (mode, mode_step) seen wins), mirrored into the
//    sorted step_infos_ vector with the entry range of every step.
#include "trialstat/trial/catalog.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <numeric>
#include <string>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "host/trial/index_json.hpp"
#include "host/trial/index_share.hpp"
#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/io/trial_source.hpp"

namespace fs = std::filesystem;

namespace trialstat::trial {

// ---- reductions --------------------------------------------------------------------------------

std::string_view reduction_name(reduction_op op) noexcept {
  switch (op) {
    case reduction_op::min: return "min";
    case reduction_op::max: return "max";
    case reduction_op::mean: return "mean";
    case reduction_op::std: return "std";
    case reduction_op::variance: return "variance";
    case reduction_op::sum: return "sum";
    case reduction_op::prod: return "prod";
    case reduction_op::l1: return "l1";
    case reduction_op::l2: return "l2";
  }
  return "?";
}

std::optional<reduction_op> parse_reduction(std::string_view name) noexcept {
  static constexpr reduction_op all[] = {reduction_op::min,      reduction_op::max,
                                         reduction_op::mean,     reduction_op::std,
                                         reduction_op::variance, reduction_op::sum,
                                         reduction_op::prod,     reduction_op::l1,
                                         reduction_op::l2};
  for (const reduction_op op : all) {
    if (reduction_name(op) == name) return op;
  }
  return std::nullopt;
}

static_assert(sizeof(tensor_entry) <= 64, "a catalog entry is 64 bytes (issue 10: 10^7 of them per 10^6 index files)");

namespace {

constexpr std::string_view reductions_prefix = "smdebug/reductions/";
constexpr std::string_view end_marker_name = "training_job_end.ts";

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};
template <typename V>
using string_map = std::unordered_map<std::string, V, string_hash, std::equal_to<>>;
using string_set = std::unordered_set<std::string, string_hash, std::equal_to<>>;

struct step_worker_hash {
  std::size_t operator()(const std::pair<int64_t, worker_id>& k) const noexcept {
    return std::hash<uint64_t>{}(static_cast<uint64_t>(k.first) * 0x9E3779B97F4A7C15ull ^ k.second);
  }
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view basename_of(std::string_view rel) {
  const auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

/// smdebug's deserialize_tf_device: `_` -> `/`, then `-` -> `:`.
std::string deserialize_tf_device(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '_') c = '/';
    else if (c == '-') c = ':';
  }
  return out;
}

struct step_file_name {
  int64_t step = 0;
  std::string worker;
};

/// `^(\d+)_(.+)\.<ext>$` on the basename; the worker is de-serialized when the path contains
/// `__` (FORMAT §1, smdebug parse_worker_name_from_file). smdebug tests its full path, root
/// included; we test the trial-relative path ("index/000000000/000000000005_worker_0.json"), so
/// where a trial happens to live (e.g. /tmp/my__runs/) cannot rename its workers.
std::optional<step_file_name> parse_step_file_name(std::string_view rel, std::string_view ext) {
  const std::string_view base = basename_of(rel);
  if (!ends_with(base, ext)) return std::nullopt;
  const std::string_view stem = base.substr(0, base.size() - ext.size());
  std::size_t digits = 0;
  while (digits < stem.size() && stem[digits] >= '0' && stem[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 >= stem.size() || stem[digits] != '_') return std::nullopt;
  int64_t step = 0;
  const auto [ptr, ec] = std::from_chars(stem.data(), stem.data() + digits, step);
  if (ec != std::errc() || ptr != stem.data() + digits) return std::nullopt;
  const std::string_view worker = stem.substr(digits + 1);
  step_file_name out;
  out.step = step;
  out.worker = rel.find("__") != std::string_view::npos ? deserialize_tf_device(worker)
                                                        : std::string(worker);
  return out;
}

/// `.*/collections/.+/(.+)_collections\.(json|ts)$` on the trial-relative path (with a leading
/// `/`); the worker is de-serialized when it starts with `_` (smdebug
/// get_worker_name_from_collection_file).
std::optional<std::string> parse_collection_file_name(std::string_view rel, bool* is_json) {
  if (rel.substr(0, 12) != "collections/") return std::nullopt;
  const std::string_view rest = rel.substr(12);
  const auto slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const std::string_view base = rest.substr(slash + 1);
  std::string_view stem;
  if (ends_with(base, "_collections.json")) {
    stem = base.substr(0, base.size() - 17);
    *is_json = true;
  } else if (ends_with(base, "_collections.ts")) {
    stem = base.substr(0, base.size() - 15);
    *is_json = false;
  } else {
    return std::nullopt;
  }
  if (stem.empty()) return std::nullopt;
  if (stem.front() == '_') return deserialize_tf_device(stem);
  return std::string(stem);
}

int mode_index(trialstat::mode m) { return static_cast<int>(m) - 1; }

}  // namespace

// ---- state --------------------------------------------------------------------------------------

struct catalog::state {
  struct block {
    int64_t step = 0;
    worker_id worker = 0;
    uint32_t begin = 0;
    uint32_t count = 0;
    bool from_scan = false;
    bool alive = true;
  };

  std::shared_ptr<const io::trial_source> source;
  catalog_options options;

  std::vector<std::string> tensor_names;
  string_map<tensor_id> tensor_ids;
  std::vector<std::string> worker_names;
  string_map<worker_id> worker_ids;
  /// Event file keys by file_id (a deque: views into them stay valid as it grows). Not
  /// de-duplicated beyond consecutive repeats: each index file names its own event file (one per
  /// step and worker), and a key under two ids only costs its string (a map of 640,000 keys
  /// cost a cache miss per index file).
  std::deque<std::string> event_files;

  std::vector<tensor_entry> entries;
  /// Distinct shapes (entries point at them; set nodes never move).
  std::set<std::vector<int64_t>> shapes;
  /// Reduction lists of the entries: fixed-size chunks (entries point into them; a chunk never
  /// moves), each list contiguous within one chunk.
  std::vector<std::unique_ptr<saved_reduction[]>> reduction_chunks;
  std::size_t reduction_chunk_used = reduction_chunk_size;
  static constexpr std::size_t reduction_chunk_size = 4096;
  std::vector<block> blocks;
  std::unordered_map<std::pair<int64_t, worker_id>, uint32_t, step_worker_hash> block_of;
  bool blocks_dirty = false;
  /// The blocks of the last step are not in worker id order (listings sort `worker_10` before
  /// `worker_2` in some folders and not in others): sort_tail_step() orders them in place.
  bool tail_dirty = false;
  std::vector<tensor_entry> tail_scratch;

  std::map<int64_t, step_info> step_map;
  std::vector<step_info> step_infos;
  std::vector<std::size_t> step_begin;  ///< [steps + 1] entry ranges of step_infos
  std::map<int64_t, int64_t> mode_to_global[3];  ///< TRAIN, EVAL, PREDICT: mode step -> global

  std::vector<uint32_t> tensor_offsets;      ///< [tensors + 1]
  std::vector<uint32_t> tensor_entry_index;  ///< [entries], grouped by tensor
  std::vector<tensor_id> sorted_tensors;
  std::vector<worker_id> sorted_workers;

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
  string_set seen_files;
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
  std::vector<uint32_t> slot_stamp;
  std::vector<uint32_t> slot_index;
  uint32_t stamp = 0;
  /// Reductions of the file being committed: (entry index, record) in index order.
  std::vector<std::pair<uint32_t, saved_reduction>> pending_reductions;

  // ---- interning ----
  /// The tensor id interned at each item position of the previous file (raw and reduction
  /// items, then shapes): files of one trial list the same names in the same order, so a name
  /// is checked against the previous file's first (one compare, no hash).
  std::vector<tensor_id> ids_by_position;
  tensor_id intern_tensor_at(std::size_t position, std::string_view name) {
    if (position < ids_by_position.size()) {
      tensor_id& cached = ids_by_position[position];
      if (tensor_names[cached] == name) return cached;
      return cached = intern_tensor(name);
    }
    ids_by_position.resize(position + 1);
    return ids_by_position[position] = intern_tensor(name);
  }
  tensor_id intern_tensor(std::string_view name) {
    if (const auto it = tensor_ids.find(name); it != tensor_ids.end()) return it->second;
    const auto id = static_cast<tensor_id>(tensor_names.size());
    tensor_names.emplace_back(name);
    tensor_ids.emplace(tensor_names.back(), id);
    slot_stamp.push_back(0);
    slot_index.push_back(0);
    return id;
  }
  worker_id intern_worker(std::string_view name) {
    if (const auto it = worker_ids.find(name); it != worker_ids.end()) return it->second;
    const auto id = static_cast<worker_id>(worker_names.size());
    worker_names.emplace_back(name);
    worker_ids.emplace(worker_names.back(), id);
    return id;
  }
  file_id intern_event_file(std::string_view rel) {
    if (!event_files.empty() && event_files.back() == rel) return static_cast<file_id>(event_files.size() - 1);
    const auto id = static_cast<file_id>(event_files.size());
    event_files.emplace_back(rel);
    return id;
  }

  void warn(std::string_view rel, error_code code, std::string message) {
    warnings.push_back({fs::path(rel), status(code, std::move(message))});
  }

  [[nodiscard]] bool in_range(int64_t step) const {
    if (options.range_begin && step < *options.range_begin) return false;
    if (options.range_end && step >= *options.range_end) return false;
    return true;
  }

  // ---- listing ----
  /// Trial-relative keys ('/'-separated) of the objects under root/sub, sorted; only those after
  /// `start_after` when it is not empty.
  /// In a group (MPI ranks), each process lists its share of the folder and the group exchanges
  /// the shares, so that each folder is opened once per group rather than once per process (the
  /// step folders of events/ are most of a big trial's listing). Every process of the group
  /// gets the same listing, or the same error (the first failing rank's). `skip_folder`: as
  /// `trial_source::list_share` (folders directly under `sub` not needed; a source may list them).
  status list_files(std::string_view sub, std::vector<std::string>& out, std::string_view start_after = {},
                    const io::folder_filter& skip_folder = {}) const {
    out.clear();
    std::vector<io::object_info> listed;
    if (options.group && options.group->size > 1) return list_files_shared(sub, start_after, skip_folder, listed, out);
    TRIALSTAT_RETURN_IF_ERROR(source->list_share(sub, start_after, 0, 1, listed, skip_folder));
    out.reserve(listed.size());
    for (auto& object : listed) out.push_back(std::move(object.key));
    return status::success();
  }
  status list_files_shared(std::string_view sub, std::string_view start_after, const io::folder_filter& skip_folder,
                           std::vector<io::object_info>& mine, std::vector<std::string>& out) const {
    const load_group& group = *options.group;
    if (!group.exchange) return status(error_code::invalid_argument, "catalog load group without an exchange");
    const status listed = source->list_share(sub, start_after, group.rank, group.size, mine, skip_folder);
    auto shares = group.exchange(detail::write_listing_share(listed, mine));
    if (!shares) return shares.error_status();
    if (shares->size() != static_cast<std::size_t>(group.size)) {
      return status(error_code::data_loss, fmt::format("listing of {}: {} shares from a group of {}", sub,
                                                       shares->size(), group.size));
    }
    status first_failure;
    for (int rank = 0; rank < group.size; ++rank) {
      status read = detail::read_listing_share((*shares)[static_cast<std::size_t>(rank)], rank, out);
      if (!read.ok() && first_failure.ok()) first_failure = std::move(read);
    }
    if (!first_failure.ok()) {
      out.clear();
      return first_failure;
    }
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());  // a source's shares need not be runs
    return status::success();
  }

  // ---- side tables ----
  /// The shape interned at each shape item position of the previous file (as ids_by_position).
  std::vector<const std::vector<int64_t>*> shapes_by_position;
  const std::vector<int64_t>* intern_shape_at(std::size_t position, std::span<const int64_t> dims) {
    if (position >= shapes_by_position.size()) shapes_by_position.resize(position + 1, nullptr);
    const std::vector<int64_t>*& cached = shapes_by_position[position];
    if (cached == nullptr || !std::equal(cached->begin(), cached->end(), dims.begin(), dims.end())) {
      cached = &*shapes.emplace(dims.begin(), dims.end()).first;
    }
    return cached;
  }
  /// Room for `count` (<= reduction_chunk_size) contiguous reduction records.
  saved_reduction* allocate_reductions(std::size_t count) {
    if (reduction_chunk_used + count > reduction_chunk_size) {
      reduction_chunks.push_back(std::make_unique<saved_reduction[]>(reduction_chunk_size));
      reduction_chunk_used = 0;
    }
    saved_reduction* out = reduction_chunks.back().get() + reduction_chunk_used;
    reduction_chunk_used += count;
    return out;
  }
  /// Move `pending_reductions` (one file's, in index order) into the table: per entry, in first
  /// appearance order of each (op, abs), a repeated name replacing the location (last wins).
  void store_pending_reductions() {
    if (pending_reductions.empty()) return;
    std::stable_sort(pending_reductions.begin(), pending_reductions.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    saved_reduction run[18];  // 9 ops x abs: at most 18 distinct records per entry
    std::size_t i = 0;
    while (i < pending_reductions.size()) {
      const uint32_t index = pending_reductions[i].first;
      std::size_t n = 0;
      for (; i < pending_reductions.size() && pending_reductions[i].first == index; ++i) {
        const saved_reduction& r = pending_reductions[i].second;
        auto same = std::find_if(run, run + n, [&](const saved_reduction& x) { return x.op == r.op && x.abs == r.abs; });
        if (same != run + n) {
          same->location = r.location;  // a repeated name: the last entry wins
        } else {
          run[n++] = r;
        }
      }
      saved_reduction* stored = allocate_reductions(n);
      std::copy(run, run + n, stored);
      entries[index].reductions = reduction_list(stored, static_cast<uint32_t>(n));
    }
    pending_reductions.clear();
  }

  // ---- one file's entries ----
  tensor_entry& entry_for(tensor_id t, int64_t step, worker_id w) {
    if (slot_stamp[t] == stamp) return entries[slot_index[t]];
    slot_stamp[t] = stamp;
    slot_index[t] = static_cast<uint32_t>(entries.size());
    tensor_entry& e = entries.emplace_back();
    e.tensor = t;
    e.step = step;
    e.worker = w;
    return e;
  }

  /// Register the (step, worker) file held in `scratch`.
  void commit(std::string_view rel, int64_t step, worker_id w, std::optional<file_id> event_file,
              bool from_scan) {
    const trialstat::mode m = scratch.mode.value_or(trialstat::mode::global);
    const int64_t mode_step = m == trialstat::mode::global ? step : scratch.mode_step.value_or(step);

    auto [it, inserted] = step_map.try_emplace(step);
    step_info& info = it->second;
    if (inserted) {
      info.step = step;
      info.mode = m;
      info.mode_step = mode_step;
    }
    const auto pos = std::lower_bound(info.workers.begin(), info.workers.end(), w);
    if (pos == info.workers.end() || *pos != w) info.workers.insert(pos, w);
    if (m != trialstat::mode::global) mode_to_global[mode_index(m)].try_emplace(mode_step, step);

    const auto begin = static_cast<uint32_t>(entries.size());
    if (++stamp == 0) {  // wrapped: clear the stamps once every 2^32 files
      std::fill(slot_stamp.begin(), slot_stamp.end(), 0);
      stamp = 1;
    }
    std::size_t position = 0;
    for (const auto& item : scratch.tensors) {
      const std::size_t at = position++;
      const std::string_view name = scratch.name(item.name_offset, item.name_length);
      const record_location location{item.start_bytes, item.length_bytes, event_file.value_or(0)};
      if (name.substr(0, reductions_prefix.size()) == reductions_prefix) {
        const std::string_view rest = name.substr(reductions_prefix.size());
        const auto slash = rest.find('/');
        std::optional<reduction_op> op;
        bool abs = false;
        if (slash != std::string_view::npos && slash + 1 < rest.size()) {
          std::string_view red = rest.substr(0, slash);
          if (red.substr(0, 4) == "abs_") {
            abs = true;
            red.remove_prefix(4);
          }
          op = parse_reduction(red);
        }
        if (!op) {
          warn(rel, error_code::data_loss,
               fmt::format("{}: step {}: reduction record name '{}' is not "
                           "smdebug/reductions/[abs_]<min|max|mean|std|variance|sum|prod|l1|l2>/<tensor>; "
                           "record ignored",
                           rel, step, name));
          continue;
        }
        const tensor_id t = intern_tensor_at(at, rest.substr(slash + 1));
        entry_for(t, step, w);  // slot_index[t]: the entry's index
        pending_reductions.emplace_back(slot_index[t], saved_reduction{*op, abs, location});
        continue;
      }
      entry_for(intern_tensor_at(at, name), step, w).raw = location;
    }
    for (std::size_t k = 0; k < scratch.shapes.size(); ++k) {
      const auto& item = scratch.shapes[k];
      const std::string_view name = scratch.name(item.name_offset, item.name_length);
      if (name.substr(0, reductions_prefix.size()) == reductions_prefix) continue;  // never written
      const auto dims = std::span<const int64_t>(scratch.dims).subspan(item.dims_offset, item.dims_count);
      entry_for(intern_tensor_at(position++, name), step, w).shape = optional_shape(intern_shape_at(k, dims));
    }
    store_pending_reductions();
    const auto count = static_cast<uint32_t>(entries.size() - begin);
    if (!blocks.empty()) {
      const block& last = blocks.back();
      if (last.step == step && last.worker > w) {
        tail_dirty = true;  // workers of the last step out of id order: sorted when it ends
      } else if (last.step < step) {
        sort_tail_step();
      } else if (last.step > step) {
        blocks_dirty = true;  // an earlier step: rebuild() re-orders everything
      }
    }
    block_of[{step, w}] = static_cast<uint32_t>(blocks.size());
    blocks.push_back({step, w, begin, count, from_scan, true});
  }

  // ---- index files ----
  /// Parse one index file whose bytes (`bytes`, followed by `io::record_padding_bytes` zero
  /// bytes, as simdjson needs) were read by the source, or the error reading it met, into
  /// `scratch`.
  detail::index_outcome parse_index_file(const result<std::span<const std::byte>>& bytes,
                                         detail::index_json_parser& parser) {
    using kind = detail::index_outcome::kind;
    if (!bytes.has_value()) return {kind::read_failed, bytes.error_status()};
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    status parsed = parser.parse(text, bytes->size() + io::record_padding_bytes, scratch);
    if (!parsed.ok()) return {kind::parse_failed, std::move(parsed)};
    return {kind::parsed, status::success()};
  }

  /// Load one index file from its parse outcome (its parsed form in `scratch`).
  bool load_index_file(const std::string& rel, const step_file_name& name, const detail::index_outcome& outcome) {
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
    const worker_id w = intern_worker(name.worker);
    if (const auto it = block_of.find({name.step, w}); it != block_of.end()) {
      block& old = blocks[it->second];
      if (!old.from_scan) {
        warn(rel, error_code::invalid_argument,
             fmt::format("index file {}: a second index file for step {}, worker {}; ignored", rel,
                         name.step, name.worker));
        return false;
      }
      // The index arrived after its event file was scanned: the index wins (it has shapes).
      old.alive = false;
      blocks_dirty = true;
      block_of.erase(it);
    }
    std::optional<file_id> event_file;
    if (!scratch.tensors.empty()) event_file = intern_event_file(scratch.event_file_name);
    commit(rel, name.step, w, event_file, /*from_scan=*/false);
    std::string& last = last_index_key[name.step];
    if (last < rel) last = rel;
    return true;
  }

  // ---- event-file scan (no usable index) ----
  bool scan_event_file(const std::string& rel, const step_file_name& name) {
    const auto size = source->read_object(rel, event_buffer);
    if (!size.has_value()) {
      const status s = size.error_status();
      warn(rel, s.code(), fmt::format("event file {}: cannot read: {}", rel, s.message()));
      return false;
    }
    scratch.clear();
    io::record_scanner scanner(std::span<const std::byte>(event_buffer.data(), *size), rel);
    decode::event_decoder decoder;
    decode::event_record record;
    bool first = true;
    bool step_mismatch_reported = false;
    for (;;) {
      const uint64_t before = scanner.offset_bytes();
      auto frame = scanner.next();
      if (!frame.has_value()) {
        const status s = frame.error_status();
        if (s.code() == error_code::end_of_stream) break;
        warn(rel, s.code(),
             fmt::format("event file {} (step {}, worker {}), scanned because it has no usable "
                         "index: {}",
                         rel, name.step, name.worker, s.message()));
        if (s.code() == error_code::data_loss && scanner.offset_bytes() > before) continue;
        break;
      }
      const status decoded = decoder.decode(frame->payload, record);
      if (!decoded.ok()) {
        warn(rel, decoded.code(),
             fmt::format("event file {} (step {}, worker {}): record at byte {}: {}; record ignored",
                         rel, name.step, name.worker, frame->offset_bytes, decoded.message()));
        continue;
      }
      if (first) {
        first = false;
        scratch.mode = record.has_mode ? record.mode : trialstat::mode::global;
        scratch.mode_step = record.has_mode ? record.mode_step : record.step;
      }
      if (record.step != name.step && !step_mismatch_reported) {
        step_mismatch_reported = true;
        warn(rel, error_code::data_loss,
             fmt::format("event file {}: record at byte {} has Event.step {} but the file name "
                         "says step {}; the file name's step is used",
                         rel, frame->offset_bytes, record.step, name.step));
      }
      scratch.add_tensor(record.tag, frame->offset_bytes, frame->size_bytes());
    }
    if (scratch.tensors.empty()) return false;
    const worker_id w = intern_worker(name.worker);
    commit(rel, name.step, w, intern_event_file(rel), /*from_scan=*/true);
    return true;
  }

  // ---- collections ----
  void parse_collections_file(const std::string& rel) {
    const auto size = source->read_object(rel, text_buffer, io::json_file_limit_bytes);
    if (!size.has_value()) {
      warn(rel, size.error_status().code(),
           fmt::format("collections file {}: cannot read: {}", rel, size.error_status().message()));
      return;
    }
    using ojson = nlohmann::ordered_json;
    const std::string_view text(reinterpret_cast<const char*>(text_buffer.data()), static_cast<std::size_t>(*size));
    const ojson doc = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
      warn(rel, error_code::data_loss,
           fmt::format("collections file {}: expected a JSON object with \"collections\" and "
                       "\"_meta\"; no collections loaded",
                       rel));
      return;
    }
    if (const auto meta = doc.find("_meta"); meta != doc.end() && meta->is_object()) {
      if (const auto n = meta->find("num_workers"); n != meta->end()) {
        if (n->is_number_integer() && n->get<int64_t>() >= 1 && n->get<int64_t>() < (1 << 30)) {
          collection_num_workers = static_cast<int>(n->get<int64_t>());
        } else {
          warn(rel, error_code::data_loss,
               fmt::format("collections file {}: _meta.num_workers: expected a positive integer", rel));
        }
      }
    }
    const auto all = doc.find("collections");
    if (all == doc.end() || !all->is_object()) {
      warn(rel, error_code::data_loss,
           fmt::format("collections file {}: \"collections\": expected an object", rel));
      return;
    }
    for (auto it = all->begin(); it != all->end(); ++it) {
      const ojson& v = it.value();
      std::vector<std::string> problems;
      if (!v.is_object()) {
        warn(rel, error_code::data_loss,
             fmt::format("collections file {}: collection '{}': expected an object", rel, it.key()));
        continue;
      }
      collection c;
      c.name = it.key();
      if (const auto n = v.find("name"); n != v.end() && n->is_string()) c.name = n->get<std::string>();
      const auto string_list = [&](const char* field, std::vector<std::string>& out) {
        const auto f = v.find(field);
        if (f == v.end() || f->is_null()) return;
        if (!f->is_array()) {
          problems.push_back(fmt::format("{}: expected a list of strings", field));
          return;
        }
        for (const auto& s : *f) {
          if (s.is_string()) {
            out.push_back(s.get<std::string>());
          } else if (s.is_array()) {  // smdebug flattens nested lists
            for (const auto& inner : s) {
              if (inner.is_string()) out.push_back(inner.get<std::string>());
            }
          } else {
            problems.push_back(fmt::format("{}: expected a list of strings", field));
          }
        }
      };
      string_list("include_regex", c.include_regex);
      string_list("tensor_names", c.tensor_names);
      if (const auto f = v.find("save_histogram"); f != v.end() && !f->is_null()) {
        if (f->is_boolean()) c.save_histogram = f->get<bool>();
        else problems.emplace_back("save_histogram: expected a boolean");
      }
      if (const auto rc = v.find("reduction_config"); rc != v.end() && !rc->is_null()) {
        if (!rc->is_object()) {
          problems.emplace_back("reduction_config: expected an object");
        } else {
          c.has_reduction_config = true;
          if (const auto f = rc->find("save_raw_tensor"); f != rc->end()) {
            if (f->is_boolean()) c.save_raw_tensor = f->get<bool>();
            else problems.emplace_back("reduction_config.save_raw_tensor: expected a boolean");
          }
          if (const auto f = rc->find("save_shape"); f != rc->end()) {
            if (f->is_boolean()) c.save_shape = f->get<bool>();
            else problems.emplace_back("reduction_config.save_shape: expected a boolean");
          }
          if (const auto f = rc->find("reductions"); f != rc->end()) {
            if (f->is_string()) c.reductions = f->get<std::string>();
            else problems.emplace_back("reduction_config.reductions: expected a string");
          }
        }
      }
      if (const auto sc = v.find("save_config"); sc != v.end() && !sc->is_null()) {
        if (!sc->is_object()) {
          problems.emplace_back("save_config: expected an object keyed by mode");
        } else {
          for (auto m = sc->begin(); m != sc->end(); ++m) {
            const auto parsed_mode = parse_mode_name(m.key());
            if (!parsed_mode) continue;
            const ojson& cfg = m.value();
            if (cfg.is_null()) continue;
            if (!cfg.is_object()) {
              problems.push_back(fmt::format("save_config.{}: expected an object or null", m.key()));
              continue;
            }
            save_config s;
            bool good = true;
            const auto int_field = [&](const char* field, int64_t& out) {
              const auto f = cfg.find(field);
              if (f == cfg.end() || f->is_null()) return;
              if (f->is_number_integer()) {
                out = f->get<int64_t>();
              } else {
                good = false;
                problems.push_back(fmt::format("save_config.{}.{}: expected an integer", m.key(), field));
              }
            };
            int_field("save_interval", s.save_interval);
            int_field("start_step", s.start_step);
            if (const auto f = cfg.find("end_step"); f != cfg.end() && !f->is_null()) {
              if (f->is_number_integer()) {
                s.end_step = f->get<int64_t>();
              } else {
                good = false;
                problems.push_back(fmt::format("save_config.{}.end_step: expected an integer or null", m.key()));
              }
            }
            if (const auto f = cfg.find("save_steps"); f != cfg.end() && !f->is_null()) {
              if (f->is_array()) {
                for (const auto& x : *f) {
                  if (x.is_number_integer()) {
                    s.save_steps.push_back(x.get<int64_t>());
                  } else {
                    good = false;
                  }
                }
                if (!good) problems.push_back(fmt::format("save_config.{}.save_steps: expected integers", m.key()));
              } else {
                good = false;
                problems.push_back(fmt::format("save_config.{}.save_steps: expected a list", m.key()));
              }
            }
            if (good) c.save_configs[mode_index(*parsed_mode)] = std::move(s);
          }
        }
      }
      if (!problems.empty()) {
        std::string joined;
        for (const auto& p : problems) joined += (joined.empty() ? "" : "; ") + p;
        warn(rel, error_code::data_loss,
             fmt::format("collections file {}: collection '{}': {} (those fields use defaults)", rel,
                         c.name, joined));
      }
      std::vector<name_regex> regexes;
      for (const auto& pattern : c.include_regex) {
        auto compiled = name_regex::compile(pattern);
        if (compiled.has_value()) {
          regexes.push_back(std::move(*compiled));
        } else {
          warn(rel, error_code::invalid_argument,
               fmt::format("collections file {}: collection '{}': {}; that pattern matches nothing",
                           rel, c.name, compiled.error_status().message()));
        }
      }
      std::vector<std::string> sorted_names = c.tensor_names;
      std::sort(sorted_names.begin(), sorted_names.end());
      collections.push_back(std::move(c));
      collection_regexes.push_back(std::move(regexes));
      collection_names_sorted.push_back(std::move(sorted_names));
    }
  }

  status load_collections() {
    std::vector<std::string> files;
    TRIALSTAT_RETURN_IF_ERROR(list_files("collections", files));
    const std::string* first_json = nullptr;
    for (const auto& rel : files) {
      bool is_json = false;
      const auto worker = parse_collection_file_name(rel, &is_json);
      if (!worker) continue;
      intern_worker(*worker);
      if (is_json && first_json == nullptr) first_json = &rel;
    }
    if (!collections_parsed && first_json != nullptr) {
      collections_parsed = true;
      parse_collections_file(*first_json);
    }
    return status::success();
  }

  // ---- a load shared by a group of processes ----
  /// Read and parse this process's slice of `to_load`, exchange the slices' outcomes with the
  /// group and apply every file's outcome in listing order with `load(i, outcome)`. Errors: the
  /// exchange's; invalid_argument when another process listed other files; data_loss for a
  /// malformed share. Files loaded before an error stay loaded.
  template <typename Load>
  status load_shared(std::span<const std::string> to_load, detail::index_json_parser& parser, const Load& load) {
    const load_group& group = *options.group;
    const uint64_t fingerprint = detail::listing_fingerprint(to_load);
    const detail::share_bounds mine = detail::share_of(to_load.size(), group.rank, group.size);
    detail::share_writer writer(to_load.size(), fingerprint, mine);
    source->read_objects(to_load.subspan(mine.first, mine.count),
                         [&](std::size_t, result<std::span<const std::byte>> bytes) {
                           writer.add(parse_index_file(bytes, parser), scratch);
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
  result<std::size_t> load_pass() {
    std::size_t loaded = 0;
    // The end marker first: smdebug writes it after every index and event file, so a marker
    // seen before the listings start means they list everything the job wrote (looked for after
    // them, a marker written in between would end a live trial without its last steps).
    const auto end_marker = source->object_size(end_marker_name);
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
      const std::string_view base = basename_of(rel);
      if (!ends_with(base, ".json")) continue;  // *.tmp (being written), *.csv, others
      const auto name = parse_step_file_name(rel, ".json");
      if (!name) {
        seen_files.insert(rel);
        warn(rel, error_code::invalid_argument,
             fmt::format("index file {}: name does not match <step>_<worker>.json; ignored", rel));
        continue;
      }
      if (!in_range(name->step)) continue;
      names.push_back(*name);
      to_load.push_back(std::move(rel));  // taken: into taken_index_keys after the load
    }
    const auto load = [&](std::size_t i, const detail::index_outcome& outcome) {
      const std::size_t entries_before = entries.size();
      if (!load_index_file(to_load[i], names[i], outcome)) return;
      ++loaded;
      if (entries_before == 0 && blocks.size() == 1) {
        // Opening: size the entry table from the first file (files of one trial are alike),
        // so a big trial does not pay for repeated re-allocation and moves of its entries.
        const std::size_t per_file = entries.size() - entries_before;
        const std::size_t remaining = to_load.size();  // an upper bound on the files to come
        if (per_file > 0 && remaining < (std::size_t{1} << 32) / (per_file + 1)) {
          entries.reserve(entries.size() + per_file * remaining + per_file * remaining / 8);
        }
        blocks.reserve(blocks.size() + remaining);
      }
    };
    if (options.group && options.group->size > 1) {
      if (status shared = load_shared(to_load, parser, load); !shared.ok()) {
        take_index_keys(std::move(to_load));
        if (loaded > 0 || blocks_dirty) rebuild();  // what was applied stays consistent
        update_completeness();
        return shared;
      }
    } else {
      // The source reads them (S3: many at once) and hands them over in order.
      source->read_objects(to_load, [&](std::size_t i, result<std::span<const std::byte>> bytes) {
        load(i, parse_index_file(bytes, parser));
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
        if (loaded > 0 || blocks_dirty) rebuild();
        update_completeness();
        return listed;
      }
      for (const auto& rel : files) {
        if (!seen_files.empty() && seen_files.contains(rel)) continue;  // event files: not index keys
        const std::string_view base = basename_of(rel);
        if (!ends_with(base, ".tfevents")) continue;  // *.tmp and anything else
        const auto name = parse_step_file_name(rel, ".tfevents");
        if (!name) {
          seen_files.insert(rel);
          warn(rel, error_code::invalid_argument,
               fmt::format("event file {}: name does not match <step>_<worker>.tfevents; ignored", rel));
          continue;
        }
        if (!in_range(name->step)) continue;
        if (const auto w = worker_ids.find(name->worker); w != worker_ids.end()) {
          // Covered by an index file: nothing to scan (and no need to remember it).
          if (block_of.contains({name->step, w->second})) continue;
        }
        seen_files.insert(rel);
        if (scan_event_file(rel, *name)) ++loaded;
      }
    }

    training_ended = end_marker.has_value() && end_marker->has_value();
    if (loaded > 0 || blocks_dirty) rebuild();
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
  [[nodiscard]] io::folder_filter indexed_step_folder() const {
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
      const auto it = step_map.find(step);
      return it != step_map.end() && static_cast<int64_t>(it->second.workers.size()) >= *collection_num_workers;
    };
  }

  /// After completeness is known: list only index keys after the last complete step's.
  void advance_index_start_after() {
    if (last_complete < 0 || last_index_key.empty()) return;
    // A step read by scanning its event file may still get its index file: the watermark stays
    // before the first such step.
    int64_t limit = last_complete;
    for (const block& b : blocks) {
      if (b.alive && b.from_scan) limit = std::min(limit, b.step - 1);
    }
    auto it = last_index_key.upper_bound(limit);
    if (it == last_index_key.begin()) return;
    --it;
    if (index_start_after < it->second) index_start_after = it->second;
    last_index_key.erase(last_index_key.begin(), std::next(it));  // steps no file can join now
  }

  /// Order the blocks of the last step by worker id, moving only that step's entries (through
  /// a buffer of one step), so the usual case — steps in order, workers in another order than
  /// their ids — never copies the whole entry table.
  void sort_tail_step() {
    if (!tail_dirty || blocks.empty()) return;
    tail_dirty = false;
    std::size_t first = blocks.size() - 1;
    while (first > 0 && blocks[first - 1].step == blocks.back().step) --first;
    const auto tail = std::span<block>(blocks).subspan(first);
    const uint32_t begin = tail.front().begin;
    const uint32_t end = tail.back().begin + tail.back().count;  // a file being committed may follow
    tail_scratch.assign(entries.begin() + begin, entries.begin() + end);
    std::stable_sort(tail.begin(), tail.end(), [](const block& a, const block& b) { return a.worker < b.worker; });
    uint32_t at = begin;
    for (std::size_t i = 0; i < tail.size(); ++i) {
      block& b = tail[i];
      std::copy_n(tail_scratch.begin() + (b.begin - begin), b.count, entries.begin() + at);
      b.begin = at;
      at += b.count;
      if (b.alive) block_of[{b.step, b.worker}] = static_cast<uint32_t>(first + i);
    }
    tail_scratch.clear();
  }

  // ---- derived views ----
  void rebuild() {
    sort_tail_step();
    if (blocks_dirty) {
      std::vector<uint32_t> order;
      order.reserve(blocks.size());
      std::size_t total = 0;
      for (uint32_t i = 0; i < blocks.size(); ++i) {
        if (!blocks[i].alive) continue;
        order.push_back(i);
        total += blocks[i].count;
      }
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return blocks[a].step != blocks[b].step ? blocks[a].step < blocks[b].step
                                                : blocks[a].worker < blocks[b].worker;
      });
      std::vector<tensor_entry> moved;
      moved.reserve(total);
      std::vector<block> reordered;
      reordered.reserve(order.size());
      block_of.clear();
      for (const uint32_t i : order) {
        block b = blocks[i];
        const auto first = entries.begin() + b.begin;
        b.begin = static_cast<uint32_t>(moved.size());
        std::move(first, first + b.count, std::back_inserter(moved));
        block_of[{b.step, b.worker}] = static_cast<uint32_t>(reordered.size());
        reordered.push_back(b);
      }
      entries.swap(moved);
      blocks.swap(reordered);
      blocks_dirty = false;
      tail_dirty = false;
    }

    step_infos.clear();
    step_infos.reserve(step_map.size());
    step_begin.clear();
    step_begin.reserve(step_map.size() + 1);
    std::size_t bi = 0;
    for (const auto& [step, info] : step_map) {
      while (bi < blocks.size() && blocks[bi].step < step) ++bi;
      step_begin.push_back(bi < blocks.size() ? blocks[bi].begin : entries.size());
      step_infos.push_back(info);
    }
    step_begin.push_back(entries.size());

    const std::size_t num_tensors = tensor_names.size();
    tensor_offsets.assign(num_tensors + 1, 0);
    for (const auto& e : entries) ++tensor_offsets[e.tensor + 1];
    std::partial_sum(tensor_offsets.begin(), tensor_offsets.end(), tensor_offsets.begin());
    tensor_entry_index.resize(entries.size());
    std::vector<uint32_t> cursor(tensor_offsets.begin(), tensor_offsets.end() - 1);
    for (uint32_t i = 0; i < entries.size(); ++i) tensor_entry_index[cursor[entries[i].tensor]++] = i;

    sorted_tensors.resize(num_tensors);
    std::iota(sorted_tensors.begin(), sorted_tensors.end(), tensor_id{0});
    std::sort(sorted_tensors.begin(), sorted_tensors.end(),
              [&](tensor_id a, tensor_id b) { return tensor_names[a] < tensor_names[b]; });
  }

  void update_completeness() {
    sorted_workers.resize(worker_names.size());
    std::iota(sorted_workers.begin(), sorted_workers.end(), worker_id{0});
    std::sort(sorted_workers.begin(), sorted_workers.end(),
              [&](worker_id a, worker_id b) { return worker_names[a] < worker_names[b]; });
    last_complete = -1;
    for (const auto& info : step_infos) {
      if (!complete(info)) break;
      last_complete = info.step;
    }
  }

  [[nodiscard]] int num_workers() const {
    return collection_num_workers.value_or(static_cast<int>(worker_names.size()));
  }
  [[nodiscard]] bool complete(const step_info& info) const {
    return training_ended || static_cast<int64_t>(info.workers.size()) >= num_workers();
  }
  [[nodiscard]] const step_info* find_step(int64_t step) const {
    const auto it = std::lower_bound(step_infos.begin(), step_infos.end(), step,
                                     [](const step_info& s, int64_t v) { return s.step < v; });
    return it != step_infos.end() && it->step == step ? &*it : nullptr;
  }
  [[nodiscard]] bool tensor_in_collection(tensor_id t, std::size_t c) const {
    const auto found = find_in_collection(t, c);
    return found.has_value() && *found;
  }
  /// tensor_in_collection, with an undecidable regex match as an error naming the collection.
  [[nodiscard]] result<bool> find_in_collection(tensor_id t, std::size_t c) const {
    const std::string& name = tensor_names[t];
    const auto& names = collection_names_sorted[c];
    if (std::binary_search(names.begin(), names.end(), name)) return true;
    auto found = find_any(collection_regexes[c], name);
    if (!found) {
      return status(found.error_status().code(),
                    fmt::format("collection '{}': {}", collections[c].name, found.error_status().message()));
    }
    return found;
  }
  [[nodiscard]] std::optional<std::size_t> collection_index(std::string_view name) const {
    for (std::size_t i = 0; i < collections.size(); ++i) {
      if (collections[i].name == name) return i;
    }
    return std::nullopt;
  }
};

// ---- catalog -------------------------------------------------------------------------------------

catalog::catalog(std::unique_ptr<state> s) : state_(std::move(s)) {}
catalog::catalog(catalog&&) noexcept = default;
catalog& catalog::operator=(catalog&&) noexcept = default;
catalog::~catalog() = default;

result<catalog> catalog::open(const std::string& location, catalog_options options) {
  auto source = io::open_trial_source(location, options.source);
  if (!source) return source.error_status();
  return open(std::move(*source), std::move(options));
}

result<catalog> catalog::open(std::shared_ptr<const io::trial_source> source, catalog_options options) {
  if (options.range_begin && *options.range_begin < 0) {
    return status(error_code::invalid_argument,
                  fmt::format("range_begin {} is negative", *options.range_begin));
  }
  if (options.range_begin && options.range_end && *options.range_end <= *options.range_begin) {
    return status(error_code::invalid_argument,
                  fmt::format("range_end {} is not greater than range_begin {}", *options.range_end,
                              *options.range_begin));
  }
  TRIALSTAT_RETURN_IF_ERROR(source->check_root());
  auto s = std::make_unique<state>();
  s->source = std::move(source);
  s->options = std::move(options);
  auto loaded = s->load_pass();
  if (!loaded.has_value()) return loaded.error_status();
  if (s->step_begin.empty()) {  // nothing loaded: still size the derived views
    s->rebuild();
    s->update_completeness();
  }
  return catalog(std::move(s));
}

result<std::size_t> catalog::refresh() { return state_->load_pass(); }

const std::string& catalog::location() const noexcept { return state_->source->location(); }

const io::trial_source& catalog::source() const noexcept { return *state_->source; }

std::shared_ptr<const io::trial_source> catalog::shared_source() const noexcept { return state_->source; }

std::span<const std::string> catalog::tensor_names() const noexcept { return state_->tensor_names; }

std::vector<tensor_id> catalog::sorted_tensor_ids() const { return state_->sorted_tensors; }

std::optional<tensor_id> catalog::find_tensor(std::string_view name) const {
  const auto it = state_->tensor_ids.find(name);
  if (it == state_->tensor_ids.end()) return std::nullopt;
  return it->second;
}

std::span<const std::string> catalog::workers() const noexcept { return state_->worker_names; }

std::vector<worker_id> catalog::sorted_worker_ids() const { return state_->sorted_workers; }

std::optional<worker_id> catalog::find_worker(std::string_view name) const {
  const auto it = state_->worker_ids.find(name);
  if (it == state_->worker_ids.end()) return std::nullopt;
  return it->second;
}

fs::path catalog::event_file(file_id id) const { return fs::path(event_file_key(id)); }

std::string_view catalog::event_file_key(file_id id) const noexcept {
  return id < state_->event_files.size() ? std::string_view(state_->event_files[id]) : std::string_view();
}

std::vector<int64_t> catalog::steps(trialstat::mode m, bool include_incomplete) const {
  std::vector<int64_t> out;
  if (m == trialstat::mode::global) {
    out.reserve(state_->step_infos.size());
    for (const auto& info : state_->step_infos) {
      if (include_incomplete || state_->complete(info)) out.push_back(info.step);
    }
    return out;
  }
  const int index = mode_index(m);
  if (index < 0 || index > 2) return out;
  for (const auto& [mode_step, global] : state_->mode_to_global[index]) {
    if (include_incomplete) {
      out.push_back(mode_step);
    } else if (const step_info* info = state_->find_step(global); info && state_->complete(*info)) {
      out.push_back(mode_step);
    }
  }
  return out;
}

std::span<const step_info> catalog::step_infos() const noexcept { return state_->step_infos; }

const step_info* catalog::find_step(int64_t global_step) const { return state_->find_step(global_step); }

std::optional<int64_t> catalog::global_step(trialstat::mode m, int64_t mode_step) const {
  if (m == trialstat::mode::global) return mode_step;
  const int index = mode_index(m);
  if (index < 0 || index > 2) return std::nullopt;
  const auto& map = state_->mode_to_global[index];
  const auto it = map.find(mode_step);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

std::vector<trialstat::mode> catalog::modes() const {
  std::vector<trialstat::mode> out;
  for (const trialstat::mode m : {trialstat::mode::train, trialstat::mode::eval, trialstat::mode::predict}) {
    if (!state_->mode_to_global[mode_index(m)].empty()) out.push_back(m);
  }
  return out;
}

std::span<const tensor_entry> catalog::entries() const noexcept { return state_->entries; }

std::span<const tensor_entry> catalog::entries_at(int64_t global_step) const {
  const auto& infos = state_->step_infos;
  const auto it = std::lower_bound(infos.begin(), infos.end(), global_step,
                                   [](const step_info& s, int64_t v) { return s.step < v; });
  if (it == infos.end() || it->step != global_step) return {};
  const auto i = static_cast<std::size_t>(it - infos.begin());
  const std::size_t begin = state_->step_begin[i];
  const std::size_t end = state_->step_begin[i + 1];
  return std::span<const tensor_entry>(state_->entries).subspan(begin, end - begin);
}

const tensor_entry* catalog::find_entry(tensor_id tensor, int64_t global_step, worker_id worker) const {
  const auto& s = *state_;
  if (tensor + 1 >= s.tensor_offsets.size()) return nullptr;
  const auto first = s.tensor_entry_index.begin() + s.tensor_offsets[tensor];
  const auto last = s.tensor_entry_index.begin() + s.tensor_offsets[tensor + 1];
  const auto it = std::lower_bound(first, last, std::pair{global_step, worker},
                                   [&](uint32_t i, const std::pair<int64_t, worker_id>& key) {
                                     const tensor_entry& e = s.entries[i];
                                     return e.step != key.first ? e.step < key.first : e.worker < key.second;
                                   });
  if (it == last) return nullptr;
  const tensor_entry& e = s.entries[*it];
  return e.step == global_step && e.worker == worker ? &e : nullptr;
}

std::vector<int64_t> catalog::tensor_steps(tensor_id tensor) const {
  std::vector<int64_t> out;
  const auto& s = *state_;
  if (tensor + 1 >= s.tensor_offsets.size()) return out;
  for (uint32_t k = s.tensor_offsets[tensor]; k < s.tensor_offsets[tensor + 1]; ++k) {
    const int64_t step = s.entries[s.tensor_entry_index[k]].step;
    if (out.empty() || out.back() != step) out.push_back(step);
  }
  return out;
}

int catalog::num_workers() const noexcept { return state_->num_workers(); }

bool catalog::training_ended() const noexcept { return state_->training_ended; }

bool catalog::is_complete(int64_t global_step) const {
  const step_info* info = state_->find_step(global_step);
  return info != nullptr && state_->complete(*info);
}

int64_t catalog::last_complete_step() const noexcept { return state_->last_complete; }

std::span<const collection> catalog::collections() const noexcept { return state_->collections; }

bool catalog::has_collections_file() const noexcept { return state_->collections_parsed; }

const collection* catalog::find_collection(std::string_view name) const {
  const auto i = state_->collection_index(name);
  return i ? &state_->collections[*i] : nullptr;
}

bool catalog::in_collection(tensor_id tensor, std::string_view collection_name) const {
  if (tensor >= state_->tensor_names.size()) return false;
  const auto i = state_->collection_index(collection_name);
  return i && state_->tensor_in_collection(tensor, *i);
}

result<std::vector<tensor_id>> catalog::select(std::span<const std::string> collection_names,
                                               std::span<const std::string> regexes) const {
  std::vector<name_regex> compiled;
  compiled.reserve(regexes.size());
  for (const auto& pattern : regexes) {
    auto rx = name_regex::compile(pattern);
    if (!rx.has_value()) return rx.error_status();
    compiled.push_back(std::move(*rx));
  }
  std::vector<std::size_t> chosen;
  for (const auto& name : collection_names) {
    if (const auto i = state_->collection_index(name)) chosen.push_back(*i);
  }
  std::vector<tensor_id> out;
  for (const tensor_id t : state_->sorted_tensors) {
    auto take = find_any(compiled, state_->tensor_names[t]);
    for (std::size_t k = 0; take && !*take && k < chosen.size(); ++k) {
      take = state_->find_in_collection(t, chosen[k]);
    }
    if (!take) return take.error_status();  // a regex that PCRE2 cannot decide: never "no match"
    if (*take) out.push_back(t);
  }
  return out;
}

std::span<const load_warning> catalog::warnings() const noexcept { return state_->warnings; }

}  // namespace trialstat::trial
