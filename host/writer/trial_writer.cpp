// SPDX-License-Identifier: Apache-2.0
#include "trialstat/writer/trial_writer.hpp"
#include "trialstat/trial/name_regex.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "host/writer/output_file.hpp"
#include "host/writer/python_json.hpp"

namespace trialstat::writer {
namespace {

constexpr std::string_view reductions_prefix = "smdebug/reductions/";
constexpr std::array<std::string_view, 9> reduction_ops = {"min", "max",  "mean", "std", "variance",
                                                          "sum", "prod", "l1",   "l2"};

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// The tensor a name belongs to for collection membership: reduction records attach to their
// base tensor (FORMAT §7: text after the prefix is split at its first '/').
std::string_view base_tensor_name(std::string_view name) {
  if (name.starts_with(reductions_prefix)) {
    const std::string_view rest = name.substr(reductions_prefix.size());
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos) return rest.substr(slash + 1);
  }
  return name;
}

nlohmann::ordered_json save_config_json(const std::optional<save_config_spec>& c) {
  if (!c) return nullptr;
  nlohmann::ordered_json j;
  j["save_interval"] = c->save_interval;
  j["save_steps"] = c->save_steps;
  j["start_step"] = c->start_step;
  j["end_step"] = c->end_step ? nlohmann::ordered_json(*c->end_step) : nlohmann::ordered_json(nullptr);
  return j;
}

struct index_entry {
  std::string name;
  uint64_t start_bytes = 0;
  uint64_t length_bytes = 0;
};

struct shape_entry {
  std::string name;
  std::vector<int64_t> shape;
};

struct compiled_collection {
  std::vector<trial::name_regex> regexes;  // Python re.search semantics, as smdebug
  std::set<std::string> members;
};

/// Validate `specs` (see `validate_collection_specs`) and compile their regexes.
result<std::vector<compiled_collection>> compile_collections(std::span<const collection_spec> specs) {
  std::vector<compiled_collection> out;
  out.reserve(specs.size());
  std::set<std::string_view> names;
  for (const auto& c : specs) {
    if (c.name.empty()) {
      return status(error_code::invalid_argument, "trial writer: a collection has no name");
    }
    if (!names.insert(c.name).second) {
      return status(error_code::invalid_argument,
                    fmt::format("trial writer: collection '{}' given twice", c.name));
    }
    compiled_collection cc;
    for (const auto& rx : c.include_regex) {
      auto compiled = trial::name_regex::compile(rx);
      if (!compiled) {
        return status(error_code::invalid_argument,
                      fmt::format("trial writer: collection '{}': {}", c.name,
                                  compiled.error_status().message()));
      }
      cc.regexes.push_back(std::move(*compiled));
    }
    cc.members.insert(c.tensor_names.begin(), c.tensor_names.end());
    out.push_back(std::move(cc));
  }
  return out;
}

}  // namespace

struct trial_writer::state {
  std::filesystem::path root;
  std::string worker;
  writer_options options;
  std::vector<compiled_collection> collections;
  std::unordered_set<std::string> seen_names;  // base names already matched against regexes
  bool collections_dirty = true;
  bool collections_written = false;
  uint64_t collections_file_bytes = 0;
  bool end_marker_written = false;
  bool closed = false;

  // Current step.
  bool in_step = false;
  int64_t step = 0;
  trialstat::mode step_mode = trialstat::mode::train;
  int64_t mode_step = 0;
  // What the step's records carry in their plugin data (set_record_mode); the index keeps the above.
  trialstat::mode record_mode = trialstat::mode::train;
  int64_t record_mode_step = 0;
  detail::output_file event_file;
  std::vector<index_entry> tensor_entries;
  std::vector<shape_entry> shape_entries;
  std::optional<int64_t> last_step;

  writer_totals totals;

  status require_step(std::string_view what) const {
    if (closed) {
      return {error_code::invalid_argument, fmt::format("{}: the writer for '{}' ({}) is closed",
                                                        what, root.string(), worker)};
    }
    if (!in_step) {
      return {error_code::invalid_argument,
              fmt::format("{}: no open step (call begin_step first) in '{}' ({})", what,
                          root.string(), worker)};
    }
    return status::success();
  }

  void note_member(std::string_view name) {
    if (!options.match_members_by_regex) return;
    const std::string_view base = base_tensor_name(name);
    auto [it, inserted] = seen_names.emplace(base);
    if (inserted) match_member(*it);
  }

  void match_member(const std::string& name) {
    for (auto& c : collections) {
      for (const auto& rx : c.regexes) {
        if (rx.search(name)) {
          collections_dirty |= c.members.insert(name).second;
          break;
        }
      }
    }
  }

  event_header record_header(double wall_time, std::string_view name) const {
    return {wall_time, step, name, record_mode, record_mode_step};
  }

  status append_record(std::string_view name, const result<record_parts>& parts) {
    if (!parts) return parts.error_status();
    if (!event_file.is_open()) {
      auto f = detail::output_file::create(root / event_file_path(step, worker),
                                           std::clamp<std::size_t>(options.buffer_bytes, 4096,
                                                                   std::size_t{64} << 20));
      if (!f) return f.error_status();
      event_file = std::move(*f);
    }
    const uint64_t start = event_file.size_bytes();
    status s = event_file.append(parts->head);
    if (s.ok() && !parts->content.empty()) s = event_file.append(parts->content);
    if (s.ok()) s = event_file.append(parts->tail);
    if (!s.ok()) {
      abandon();
      return s;
    }
    tensor_entries.push_back({std::string(name), start, parts->size_bytes()});
    ++totals.tensor_records_count;
    note_member(name);
    return status::success();
  }

  void abandon() noexcept {
    event_file.discard();
    tensor_entries.clear();
    shape_entries.clear();
    in_step = false;
  }

  status write_index() {
    nlohmann::ordered_json meta;
    meta["mode"] = std::string(mode_name(step_mode));
    meta["mode_step"] = mode_step;
    if (!tensor_entries.empty()) {
      meta["event_file_name"] = event_file_path(step, worker).generic_string();
    }
    nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
    for (const auto& e : tensor_entries) {
      nlohmann::ordered_json j;
      j["tensorname"] = e.name;
      j["start_idx"] = e.start_bytes;
      j["length"] = e.length_bytes;
      tensors.push_back(std::move(j));
    }
    nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
    for (const auto& e : shape_entries) {
      nlohmann::ordered_json j;
      j["tensorname"] = e.name;
      j["originalname"] = e.name;
      j["shape"] = e.shape;
      shapes.push_back(std::move(j));
    }
    nlohmann::ordered_json doc;
    doc["meta"] = std::move(meta);
    doc["tensor_payload"] = std::move(tensors);
    doc["shape_payload"] = std::move(shapes);
    std::string text;
    const auto path = index_file_path(step, worker);
    if (status s = detail::append_python_json(doc, text); !s.ok()) {
      return {s.code(), fmt::format("index file '{}': {}", path.generic_string(), s.message())};
    }
    TRIALSTAT_RETURN_IF_ERROR(detail::write_file_atomically(root / path, text));
    ++totals.files_count;
    totals.bytes += text.size();
    return status::success();
  }

  status write_collections() {
    if (options.collections.empty()) return status::success();
    nlohmann::ordered_json all = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < options.collections.size(); ++i) {
      const auto& spec = options.collections[i];
      nlohmann::ordered_json c;
      c["name"] = spec.name;
      c["include_regex"] = spec.include_regex;
      c["tensor_names"] = std::vector<std::string>(collections[i].members.begin(),
                                                   collections[i].members.end());
      nlohmann::ordered_json rc;
      rc["save_raw_tensor"] = spec.save_raw_tensor;
      rc["reductions"] = spec.reductions;
      rc["save_shape"] = spec.save_shape;
      c["reduction_config"] = std::move(rc);
      nlohmann::ordered_json sc;
      for (trialstat::mode m : all_modes) {
        sc[std::string(mode_name(m))] = save_config_json(spec.save_configs[static_cast<int>(m) - 1]);
      }
      c["save_config"] = std::move(sc);
      c["save_histogram"] = spec.save_histogram;
      all[spec.name] = std::move(c);
    }
    nlohmann::ordered_json doc;
    doc["collections"] = std::move(all);
    doc["_meta"]["num_workers"] = options.num_workers;
    std::string text;
    const auto path = collections_file_path(worker);
    if (status s = detail::append_python_json(doc, text); !s.ok()) {
      return {s.code(), fmt::format("collections file '{}': {}", path.generic_string(), s.message())};
    }
    TRIALSTAT_RETURN_IF_ERROR(detail::write_file_atomically(root / path, text));
    if (!collections_written) {
      ++totals.files_count;
    } else {
      totals.bytes -= collections_file_bytes;
    }
    totals.bytes += text.size();
    collections_file_bytes = text.size();
    collections_written = true;
    collections_dirty = false;
    return status::success();
  }
};

std::array<std::optional<save_config_spec>, 4> uniform_save_configs(int64_t save_interval) {
  std::array<std::optional<save_config_spec>, 4> out;
  for (auto& c : out) c = save_config_spec{save_interval, {}, 0, std::nullopt};
  return out;
}

std::vector<collection_spec> pytorch_default_collections(int64_t save_interval) {
  const auto configs = uniform_save_configs(save_interval);
  auto make = [&](std::string name, std::vector<std::string> regexes, bool histogram) {
    collection_spec c;
    c.name = std::move(name);
    c.include_regex = std::move(regexes);
    c.save_configs = configs;
    c.save_histogram = histogram;
    return c;
  };
  return {make("biases", {"^(?!gradient).*bias"}, true),
          make("all", {}, true),
          make("weights", {"^(?!gradient).*weight"}, true),
          make("gradients", {"^gradient"}, true),
          make("default", {}, true),
          make("losses", {"[Ll]oss_(?!input).*output"}, false)};
}

trial_writer::trial_writer(std::unique_ptr<state> s) : state_(std::move(s)) {}
trial_writer::trial_writer(trial_writer&&) noexcept = default;
trial_writer& trial_writer::operator=(trial_writer&& other) noexcept {
  if (this != &other) {
    if (state_) state_->abandon();
    state_ = std::move(other.state_);
  }
  return *this;
}
trial_writer::~trial_writer() {
  if (state_) state_->abandon();
}

result<trial_writer> trial_writer::create(const std::filesystem::path& root, std::string worker,
                                          writer_options options) {
  if (worker.empty() || worker.find('/') != std::string::npos ||
      worker.find('\0') != std::string::npos) {
    return status(error_code::invalid_argument,
                  fmt::format("trial writer: bad worker name '{}' (non-empty, no '/')", worker));
  }
  if (options.num_workers < 1) {
    return status(error_code::invalid_argument,
                  fmt::format("trial writer: num_workers must be >= 1, got {}", options.num_workers));
  }
  auto s = std::make_unique<state>();
  auto compiled = compile_collections(options.collections);
  if (!compiled) return compiled.error_status();
  s->collections = std::move(*compiled);
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec || !std::filesystem::is_directory(root, ec)) {
    return status(error_code::io_error,
                  fmt::format("trial writer: cannot create trial folder '{}': {}", root.string(),
                              ec ? ec.message() : "not a directory"));
  }
  s->root = root;
  s->worker = std::move(worker);
  s->options = std::move(options);
  return trial_writer(std::move(s));
}

status trial_writer::begin_step(int64_t global_step, trialstat::mode m, int64_t mode_step) {
  auto& s = *state_;
  if (s.closed) {
    return {error_code::invalid_argument,
            fmt::format("begin_step {}: the writer for '{}' ({}) is closed", global_step,
                        s.root.string(), s.worker)};
  }
  if (s.in_step) {
    return {error_code::invalid_argument,
            fmt::format("begin_step {}: step {} is still open (call end_step first)", global_step,
                        s.step)};
  }
  if (global_step < 0 || mode_step < -1) {
    return {error_code::invalid_argument,
            fmt::format("begin_step: negative step (global {}, mode step {})", global_step,
                        mode_step)};
  }
  const int mode_number = static_cast<int>(m);
  if (mode_number < 1 || mode_number > 4) {
    return {error_code::invalid_argument,
            fmt::format("begin_step {}: mode number {} is not 1..4", global_step, mode_number)};
  }
  if (s.last_step && global_step <= *s.last_step) {
    return {error_code::invalid_argument,
            fmt::format("begin_step {}: global steps must increase (previous step {})", global_step,
                        *s.last_step)};
  }
  s.in_step = true;
  s.step = global_step;
  s.step_mode = m;
  s.mode_step = mode_step;
  s.record_mode = m;
  s.record_mode_step = mode_step;
  s.tensor_entries.clear();
  s.shape_entries.clear();
  return status::success();
}

status trial_writer::set_record_mode(trialstat::mode m, int64_t mode_step) {
  auto& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.require_step("set_record_mode"));
  const int mode_number = static_cast<int>(m);
  if (mode_number < 1 || mode_number > 4) {
    return {error_code::invalid_argument,
            fmt::format("set_record_mode: mode number {} is not 1..4", mode_number)};
  }
  if (mode_step < -1) {
    return {error_code::invalid_argument,
            fmt::format("set_record_mode: mode step {} < -1", mode_step)};
  }
  s.record_mode = m;
  s.record_mode_step = mode_step;
  return status::success();
}

status trial_writer::add_tensor(std::string_view name, const tensor_view& tensor,
                                std::optional<double> wall_time) {
  auto& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.require_step(fmt::format("add_tensor '{}'", name)));
  const event_header h = s.record_header(wall_time.value_or(now_seconds()), name);
  return s.append_record(name, encode_tensor_record_parts(h, tensor, s.options.footer));
}

status trial_writer::add_strings(std::string_view name, std::span<const std::string> values,
                                 std::optional<double> wall_time) {
  auto& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.require_step(fmt::format("add_strings '{}'", name)));
  const event_header h = s.record_header(wall_time.value_or(now_seconds()), name);
  return s.append_record(name, encode_string_record_parts(h, values, s.options.footer));
}

status trial_writer::add_reduction(std::string_view tensor_name, std::string_view op, bool abs,
                                   float value, std::optional<double> wall_time) {
  if (std::find(reduction_ops.begin(), reduction_ops.end(), op) == reduction_ops.end()) {
    return {error_code::invalid_argument,
            fmt::format("add_reduction '{}': unknown reduction '{}' (expected one of {})",
                        tensor_name, op, fmt::join(reduction_ops, ", "))};
  }
  if (tensor_name.empty()) return {error_code::invalid_argument, "add_reduction: empty tensor name"};
  const std::string tag = reduction_tag(tensor_name, op, abs);
  const tensor_view view{reinterpret_cast<const std::byte*>(&value), dtype::float32, {}, 1,
                         memory_kind::host};
  return add_tensor(tag, view, wall_time);
}

status trial_writer::add_shape(std::string_view name, std::span<const int64_t> shape) {
  auto& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.require_step(fmt::format("add_shape '{}'", name)));
  if (name.empty()) return {error_code::invalid_argument, "add_shape: empty tensor name"};
  for (int64_t d : shape) {
    if (d < 0) {
      return {error_code::invalid_argument,
              fmt::format("add_shape '{}': negative dimension {}", name, d)};
    }
  }
  s.shape_entries.push_back({std::string(name), std::vector<int64_t>(shape.begin(), shape.end())});
  s.note_member(name);
  return status::success();
}

status trial_writer::end_step() {
  auto& s = *state_;
  TRIALSTAT_RETURN_IF_ERROR(s.require_step("end_step"));
  s.last_step = s.step;
  if (s.tensor_entries.empty() && s.shape_entries.empty()) {
    s.abandon();
    return status::success();
  }
  if (s.event_file.is_open()) {
    const uint64_t bytes = s.event_file.size_bytes();
    if (status st = s.event_file.commit(); !st.ok()) {
      s.abandon();
      return st;
    }
    ++s.totals.files_count;
    s.totals.bytes += bytes;
  }
  status st = s.write_index();
  s.in_step = false;
  s.tensor_entries.clear();
  s.shape_entries.clear();
  TRIALSTAT_RETURN_IF_ERROR(st);
  ++s.totals.steps_count;
  if (s.options.write_collections_early && !s.collections_written) {
    TRIALSTAT_RETURN_IF_ERROR(s.write_collections());
  }
  return status::success();
}

void trial_writer::abandon_step() noexcept { state_->abandon(); }

status trial_writer::write_collections() { return state_->write_collections(); }

status trial_writer::set_collections(std::vector<collection_spec> collections) {
  auto& s = *state_;
  if (s.closed) {
    return {error_code::invalid_argument,
            fmt::format("set_collections: the writer for '{}' ({}) is closed", s.root.string(),
                        s.worker)};
  }
  auto compiled = compile_collections(collections);
  if (!compiled) return compiled.error_status();
  s.collections = std::move(*compiled);
  s.options.collections = std::move(collections);
  for (const auto& name : s.seen_names) s.match_member(name);
  s.collections_dirty = true;
  return status::success();
}

status validate_collection_specs(std::span<const collection_spec> collections) {
  return compile_collections(collections).error_status();
}

status trial_writer::close(bool write_end_marker) {
  auto& s = *state_;
  if (s.in_step) TRIALSTAT_RETURN_IF_ERROR(end_step());
  if (!s.collections_written || s.collections_dirty) {
    TRIALSTAT_RETURN_IF_ERROR(s.write_collections());
  }
  if (write_end_marker && !s.end_marker_written) {
    TRIALSTAT_RETURN_IF_ERROR(trial_writer::write_end_marker(s.root));
    s.end_marker_written = true;
    ++s.totals.files_count;
  }
  s.closed = true;
  return status::success();
}

status trial_writer::write_end_marker(const std::filesystem::path& root) {
  return detail::write_file_atomically(root / "training_job_end.ts", "");
}

const std::filesystem::path& trial_writer::root() const noexcept { return state_->root; }
const std::string& trial_writer::worker() const noexcept { return state_->worker; }
writer_totals trial_writer::totals() const noexcept { return state_->totals; }
bool trial_writer::in_step() const noexcept { return state_->in_step; }

std::filesystem::path trial_writer::event_file_path(int64_t global_step, std::string_view worker) {
  const std::string s12 = fmt::format("{:012d}", global_step);
  return std::filesystem::path("events") / s12 / fmt::format("{}_{}.tfevents", s12, worker);
}

std::filesystem::path trial_writer::index_file_path(int64_t global_step, std::string_view worker) {
  return std::filesystem::path("index") / fmt::format("{:09d}", global_step / 1000) /
         fmt::format("{:012d}_{}.json", global_step, worker);
}

std::filesystem::path trial_writer::collections_file_path(std::string_view worker) {
  return std::filesystem::path("collections") / "000000000" /
         fmt::format("{}_collections.json", worker);
}

}  // namespace trialstat::writer
