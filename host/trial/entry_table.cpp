// SPDX-License-Identifier: Apache-2.0
// The catalog's entry table: see entry_table.hpp for its layout.
#include "host/trial/entry_table.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <numeric>

#include <fmt/format.h>

#include "host/trial/trial_file_names.hpp"

namespace trialstat::trial::detail {

static_assert(sizeof(tensor_entry) <= 64, "a catalog entry is 64 bytes (issue 10: 10^7 of them per 10^6 index files)");

// ---- interning ----

tensor_id entry_table::intern_tensor_at(std::size_t position, std::string_view name) {
  if (position < ids_by_position_.size()) {
    tensor_id& cached = ids_by_position_[position];
    if (tensor_names[cached] == name) return cached;
    return cached = intern_tensor(name);
  }
  ids_by_position_.resize(position + 1);
  return ids_by_position_[position] = intern_tensor(name);
}

tensor_id entry_table::intern_tensor(std::string_view name) {
  if (const auto it = tensor_ids.find(name); it != tensor_ids.end()) return it->second;
  const auto id = static_cast<tensor_id>(tensor_names.size());
  tensor_names.emplace_back(name);
  tensor_ids.emplace(tensor_names.back(), id);
  slot_stamp_.push_back(0);
  slot_index_.push_back(0);
  return id;
}

worker_id entry_table::intern_worker(std::string_view name) {
  if (const auto it = worker_ids.find(name); it != worker_ids.end()) return it->second;
  const auto id = static_cast<worker_id>(worker_names.size());
  worker_names.emplace_back(name);
  worker_ids.emplace(worker_names.back(), id);
  return id;
}

file_id entry_table::intern_event_file(std::string_view rel) {
  if (!event_files.empty() && event_files.back() == rel) return static_cast<file_id>(event_files.size() - 1);
  const auto id = static_cast<file_id>(event_files.size());
  event_files.emplace_back(rel);
  return id;
}

// ---- side tables ----

const std::vector<int64_t>* entry_table::intern_shape_at(std::size_t position, std::span<const int64_t> dims) {
  if (position >= shapes_by_position_.size()) shapes_by_position_.resize(position + 1, nullptr);
  const std::vector<int64_t>*& cached = shapes_by_position_[position];
  if (cached == nullptr || !std::equal(cached->begin(), cached->end(), dims.begin(), dims.end())) {
    cached = &*shapes.emplace(dims.begin(), dims.end()).first;
  }
  return cached;
}

/// Room for `count` (<= reduction_chunk_size) contiguous reduction records.
saved_reduction* entry_table::allocate_reductions(std::size_t count) {
  if (reduction_chunk_used + count > reduction_chunk_size) {
    reduction_chunks.push_back(std::make_unique<saved_reduction[]>(reduction_chunk_size));
    reduction_chunk_used = 0;
  }
  saved_reduction* out = reduction_chunks.back().get() + reduction_chunk_used;
  reduction_chunk_used += count;
  return out;
}

/// Move `pending_reductions_` (one file's, in index order) into the table: per entry, in first
/// appearance order of each (op, abs), a repeated name replacing the location (last wins).
void entry_table::store_pending_reductions() {
  if (pending_reductions_.empty()) return;
  std::stable_sort(pending_reductions_.begin(), pending_reductions_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  saved_reduction run[18];  // 9 ops x abs: at most 18 distinct records per entry
  std::size_t i = 0;
  while (i < pending_reductions_.size()) {
    const uint32_t index = pending_reductions_[i].first;
    std::size_t n = 0;
    for (; i < pending_reductions_.size() && pending_reductions_[i].first == index; ++i) {
      const saved_reduction& r = pending_reductions_[i].second;
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
  pending_reductions_.clear();
}

// ---- one file's entries ----

tensor_entry& entry_table::entry_for(tensor_id t, int64_t step, worker_id w) {
  if (slot_stamp_[t] == stamp_) return entries[slot_index_[t]];
  slot_stamp_[t] = stamp_;
  slot_index_[t] = static_cast<uint32_t>(entries.size());
  tensor_entry& e = entries.emplace_back();
  e.tensor = t;
  e.step = step;
  e.worker = w;
  return e;
}

void entry_table::commit(const parsed_index& file, std::string_view rel, int64_t step, worker_id w,
                         std::optional<file_id> event_file, bool from_scan, std::vector<load_warning>& warnings) {
  const trialstat::mode m = file.mode.value_or(trialstat::mode::global);
  const int64_t mode_step = m == trialstat::mode::global ? step : file.mode_step.value_or(step);

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
  if (++stamp_ == 0) {  // wrapped: clear the stamps once every 2^32 files
    std::fill(slot_stamp_.begin(), slot_stamp_.end(), 0);
    stamp_ = 1;
  }
  std::size_t position = 0;
  for (const auto& item : file.tensors) {
    const std::size_t at = position++;
    const std::string_view name = file.name(item.name_offset, item.name_length);
    const record_location location{item.start_bytes, item.length_bytes, event_file.value_or(0)};
    if (is_reduction_record_name(name)) {
      const auto reduction = parse_reduction_record_name(name);
      if (!reduction) {
        warnings.push_back(
            {std::filesystem::path(rel),
             status(error_code::data_loss,
                    fmt::format("{}: step {}: reduction record name '{}' is not "
                                "smdebug/reductions/[abs_]<min|max|mean|std|variance|sum|prod|l1|l2>/<tensor>; "
                                "record ignored",
                                rel, step, name))});
        continue;
      }
      const tensor_id t = intern_tensor_at(at, reduction->tensor);
      entry_for(t, step, w);  // slot_index_[t]: the entry's index
      pending_reductions_.emplace_back(slot_index_[t], saved_reduction{reduction->op, reduction->abs, location});
      continue;
    }
    entry_for(intern_tensor_at(at, name), step, w).raw = location;
  }
  for (std::size_t k = 0; k < file.shapes.size(); ++k) {
    const auto& item = file.shapes[k];
    const std::string_view name = file.name(item.name_offset, item.name_length);
    if (is_reduction_record_name(name)) continue;  // never written
    const auto dims = std::span<const int64_t>(file.dims).subspan(item.dims_offset, item.dims_count);
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

// ---- order ----

/// Order the blocks of the last step by worker id, moving only that step's entries (through
/// a buffer of one step), so the usual case — steps in order, workers in another order than
/// their ids — never copies the whole entry table.
void entry_table::sort_tail_step() {
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

void entry_table::rebuild() {
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

void entry_table::sort_workers() {
  sorted_workers.resize(worker_names.size());
  std::iota(sorted_workers.begin(), sorted_workers.end(), worker_id{0});
  std::sort(sorted_workers.begin(), sorted_workers.end(),
            [&](worker_id a, worker_id b) { return worker_names[a] < worker_names[b]; });
}

const step_info* entry_table::find_step(int64_t step) const {
  const auto it = std::lower_bound(step_infos.begin(), step_infos.end(), step,
                                   [](const step_info& s, int64_t v) { return s.step < v; });
  return it != step_infos.end() && it->step == step ? &*it : nullptr;
}

}  // namespace trialstat::trial::detail
