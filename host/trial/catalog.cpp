// SPDX-License-Identifier: Apache-2.0
// The trial catalog (spec/FORMAT.md §1, §6–§8; spec/TRIAL_API.md §2–§4, §9): opening, and the
// queries of the public API (trialstat/trial/catalog.hpp) over the loaded state — names, steps
// and modes, entries, completeness, collections and selection. What the state holds is in
// catalog_state.hpp; how a pass over the trial folder fills it, in catalog_loading.cpp.
#include "trialstat/trial/catalog.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "host/trial/catalog_state.hpp"

namespace fs = std::filesystem;

namespace trialstat::trial {

using detail::entry_table;

// ---- completeness and collections ----------------------------------------------------------------

void catalog::state::update_completeness() {
  table.sort_workers();
  last_complete = -1;
  for (const auto& info : table.step_infos) {
    if (!complete(info)) break;
    last_complete = info.step;
  }
}

int catalog::state::num_workers() const {
  return collection_num_workers.value_or(static_cast<int>(table.worker_names.size()));
}

bool catalog::state::complete(const step_info& info) const {
  return training_ended || static_cast<int64_t>(info.workers.size()) >= num_workers();
}

bool catalog::state::tensor_in_collection(tensor_id t, std::size_t c) const {
  const auto found = find_in_collection(t, c);
  return found.has_value() && *found;
}

result<bool> catalog::state::find_in_collection(tensor_id t, std::size_t c) const {
  const std::string& name = table.tensor_names[t];
  const auto& names = collection_names_sorted[c];
  if (std::binary_search(names.begin(), names.end(), name)) return true;
  auto found = find_any(collection_regexes[c], name);
  if (!found) {
    return status(found.error_status().code(),
                  fmt::format("collection '{}': {}", collections[c].name, found.error_status().message()));
  }
  return found;
}

std::optional<std::size_t> catalog::state::collection_index(std::string_view name) const {
  for (std::size_t i = 0; i < collections.size(); ++i) {
    if (collections[i].name == name) return i;
  }
  return std::nullopt;
}

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
  if (s->table.step_begin.empty()) {  // nothing loaded: still size the derived views
    s->table.rebuild();
    s->update_completeness();
  }
  return catalog(std::move(s));
}

result<std::size_t> catalog::refresh() { return state_->load_pass(); }

const std::string& catalog::location() const noexcept { return state_->source->location(); }

const io::trial_source& catalog::source() const noexcept { return *state_->source; }

std::shared_ptr<const io::trial_source> catalog::shared_source() const noexcept { return state_->source; }

std::span<const std::string> catalog::tensor_names() const noexcept { return state_->table.tensor_names; }

std::vector<tensor_id> catalog::sorted_tensor_ids() const { return state_->table.sorted_tensors; }

std::optional<tensor_id> catalog::find_tensor(std::string_view name) const {
  const auto it = state_->table.tensor_ids.find(name);
  if (it == state_->table.tensor_ids.end()) return std::nullopt;
  return it->second;
}

std::span<const std::string> catalog::workers() const noexcept { return state_->table.worker_names; }

std::vector<worker_id> catalog::sorted_worker_ids() const { return state_->table.sorted_workers; }

std::optional<worker_id> catalog::find_worker(std::string_view name) const {
  const auto it = state_->table.worker_ids.find(name);
  if (it == state_->table.worker_ids.end()) return std::nullopt;
  return it->second;
}

fs::path catalog::event_file(file_id id) const { return fs::path(event_file_key(id)); }

std::string_view catalog::event_file_key(file_id id) const noexcept {
  return id < state_->table.event_files.size() ? std::string_view(state_->table.event_files[id]) : std::string_view();
}

std::vector<int64_t> catalog::steps(trialstat::mode m, bool include_incomplete) const {
  std::vector<int64_t> out;
  if (m == trialstat::mode::global) {
    out.reserve(state_->table.step_infos.size());
    for (const auto& info : state_->table.step_infos) {
      if (include_incomplete || state_->complete(info)) out.push_back(info.step);
    }
    return out;
  }
  const int index = entry_table::mode_index(m);
  if (index < 0 || index > 2) return out;
  for (const auto& [mode_step, global] : state_->table.mode_to_global[index]) {
    if (include_incomplete) {
      out.push_back(mode_step);
    } else if (const step_info* info = state_->table.find_step(global); info && state_->complete(*info)) {
      out.push_back(mode_step);
    }
  }
  return out;
}

std::span<const step_info> catalog::step_infos() const noexcept { return state_->table.step_infos; }

const step_info* catalog::find_step(int64_t global_step) const { return state_->table.find_step(global_step); }

std::optional<int64_t> catalog::global_step(trialstat::mode m, int64_t mode_step) const {
  if (m == trialstat::mode::global) return mode_step;
  const int index = entry_table::mode_index(m);
  if (index < 0 || index > 2) return std::nullopt;
  const auto& map = state_->table.mode_to_global[index];
  const auto it = map.find(mode_step);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

std::vector<trialstat::mode> catalog::modes() const {
  std::vector<trialstat::mode> out;
  for (const trialstat::mode m : {trialstat::mode::train, trialstat::mode::eval, trialstat::mode::predict}) {
    if (!state_->table.mode_to_global[entry_table::mode_index(m)].empty()) out.push_back(m);
  }
  return out;
}

std::span<const tensor_entry> catalog::entries() const noexcept { return state_->table.entries; }

std::span<const tensor_entry> catalog::entries_at(int64_t global_step) const {
  const auto& infos = state_->table.step_infos;
  const auto it = std::lower_bound(infos.begin(), infos.end(), global_step,
                                   [](const step_info& s, int64_t v) { return s.step < v; });
  if (it == infos.end() || it->step != global_step) return {};
  const auto i = static_cast<std::size_t>(it - infos.begin());
  const std::size_t begin = state_->table.step_begin[i];
  const std::size_t end = state_->table.step_begin[i + 1];
  return std::span<const tensor_entry>(state_->table.entries).subspan(begin, end - begin);
}

const tensor_entry* catalog::find_entry(tensor_id tensor, int64_t global_step, worker_id worker) const {
  const entry_table& s = state_->table;
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
  const entry_table& s = state_->table;
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
  const step_info* info = state_->table.find_step(global_step);
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
  if (tensor >= state_->table.tensor_names.size()) return false;
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
  for (const tensor_id t : state_->table.sorted_tensors) {
    auto take = find_any(compiled, state_->table.tensor_names[t]);
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
