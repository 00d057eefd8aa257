// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the catalog's entry table — interned tensor, worker and event file
// names, every tensor_entry, the steps, and the views derived from them. Loading commits one
// (step, worker) file at a time; `rebuild` then brings the derived views up to date. Knows
// nothing of sources, listings or file formats. Not a public header.
//
// Layout:
//  * entries: every tensor_entry (64 bytes), grouped in blocks of one (step, worker) file each;
//    blocks are kept sorted by (step, worker id), entries inside a block in index order. New
//    files are appended and the blocks re-ordered (one pass of moves) only when order broke.
//    An entry's shape points into `shapes` (one copy per distinct shape) and its reductions into
//    `reduction_chunks` (fixed chunks, never moved), so moving entries moves 64 bytes each.
//  * tensor_offsets/tensor_entry_index: a CSR index tensor -> entry positions, in entry order,
//    so (step, worker) ascending: a lookup is a binary search, a tensor's steps a walk.
//  * step_map: global step -> step_info (first (mode, mode_step) seen wins), mirrored into the
//    sorted step_infos vector with the entry range of every step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "host/trial/index_json.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial::detail {

/// @brief Hash for heterogeneous lookup of std::string keys by std::string_view.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using string_map = std::unordered_map<std::string, V, string_hash, std::equal_to<>>;
using string_set = std::unordered_set<std::string, string_hash, std::equal_to<>>;

/// @brief The catalog's entries, names and steps. The catalog reads the members directly; only
/// the member functions change them. Not thread-safe.
struct entry_table {
  /// One (step, worker) file's entries: [begin, begin + count) of `entries`.
  struct block {
    int64_t step = 0;
    worker_id worker = 0;
    uint32_t begin = 0;
    uint32_t count = 0;
    bool from_scan = false;  ///< read by scanning the event file (an index file may replace it)
    bool alive = true;       ///< false once replaced (its entries are dropped at the next rebuild)
  };
  struct step_worker_hash {
    std::size_t operator()(const std::pair<int64_t, worker_id>& k) const noexcept {
      return std::hash<uint64_t>{}(static_cast<uint64_t>(k.first) * 0x9E3779B97F4A7C15ull ^ k.second);
    }
  };

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
  static constexpr std::size_t reduction_chunk_size = 4096;
  std::size_t reduction_chunk_used = reduction_chunk_size;
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
  std::vector<tensor_id> sorted_tensors;     ///< tensor ids in name order
  std::vector<worker_id> sorted_workers;     ///< worker ids in name order (sort_workers)

  /// @brief Index of a mode other than GLOBAL into `mode_to_global` (TRAIN 0, EVAL 1, PREDICT 2;
  /// GLOBAL gives 3, out of range).
  [[nodiscard]] static int mode_index(trialstat::mode m) noexcept { return static_cast<int>(m) - 1; }

  /// @brief The id of a tensor name, interning it when new (ids are never reused or moved).
  tensor_id intern_tensor(std::string_view name);
  /// @brief The id of a worker name, interning it when new.
  worker_id intern_worker(std::string_view name);
  /// @brief The id of an event file key (a repeat of the last key reuses its id).
  file_id intern_event_file(std::string_view rel);

  /// @brief Add the (step, worker) file parsed into `file` (an index file, or an event file
  /// scanned): its mode and mode step (the first file of a step sets them), one entry per tensor
  /// with its raw record, saved reductions (FORMAT §7) and shape. A reduction record whose name
  /// is malformed is left out with a data_loss warning on file `rel` in `warnings`.
  /// @param event_file the event file the records are in (nullopt: the file lists no records).
  void commit(const parsed_index& file, std::string_view rel, int64_t step, worker_id w,
              std::optional<file_id> event_file, bool from_scan, std::vector<load_warning>& warnings);

  /// @brief Order the blocks (when a commit broke the order) and rebuild the derived views:
  /// step_infos and step_begin, the tensor CSR index and sorted_tensors.
  void rebuild();
  /// @brief Bring sorted_workers up to date.
  void sort_workers();

  /// @brief The step_info of a global step, or nullptr (after rebuild).
  [[nodiscard]] const step_info* find_step(int64_t step) const;

 private:
  // scratch of commit, reused across files
  std::vector<uint32_t> slot_stamp_;
  std::vector<uint32_t> slot_index_;
  uint32_t stamp_ = 0;
  /// Reductions of the file being committed: (entry index, record) in index order.
  std::vector<std::pair<uint32_t, saved_reduction>> pending_reductions_;
  /// The tensor id interned at each item position of the previous file (raw and reduction
  /// items, then shapes): files of one trial list the same names in the same order, so a name
  /// is checked against the previous file's first (one compare, no hash).
  std::vector<tensor_id> ids_by_position_;
  /// The shape interned at each shape item position of the previous file (as ids_by_position_).
  std::vector<const std::vector<int64_t>*> shapes_by_position_;

  tensor_id intern_tensor_at(std::size_t position, std::string_view name);
  const std::vector<int64_t>* intern_shape_at(std::size_t position, std::span<const int64_t> dims);
  saved_reduction* allocate_reductions(std::size_t count);
  void store_pending_reductions();
  tensor_entry& entry_for(tensor_id t, int64_t step, worker_id w);
  void sort_tail_step();
};

}  // namespace trialstat::trial::detail
