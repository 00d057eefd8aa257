// SPDX-License-Identifier: Apache-2.0
// Reading the golden smdebug trials' tensors for rule tests: raw values and saved reductions
// straight from the event-file records the index points at (decode stage), as float64.
#pragma once

#include <cstring>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "tests/rules/rule_harness.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/decode/indexed_record.hpp"

namespace trialstat::rule_testing {

/// Elements of a decoded float32/float64 record as doubles; nullopt for other dtypes.
inline std::optional<tensor_value> to_doubles(const decode::event_record& e) {
  tensor_value v;
  v.shape = e.shape;
  v.data.resize(static_cast<std::size_t>(e.num_elements));
  const std::byte* p = e.content.data();
  for (std::size_t i = 0; i < v.data.size(); ++i) {
    if (e.type == dtype::float32) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      v.data[i] = f;
    } else if (e.type == dtype::float64) {
      std::memcpy(&v.data[i], p + 8 * i, 8);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

/// Reads records of one trial; keeps the buffers and open files.
class golden_reader {
 public:
  explicit golden_reader(const trial::catalog& trial) : trial_(trial) {}

  std::optional<tensor_value> read(const trial::record_location& at) {
    auto file = open(at.event_file);
    if (file == nullptr) return std::nullopt;
    const status s = decode::read_tensor_record(*file, {at.start_bytes, at.length_bytes}, buffers_,
                                                      record_);
    EXPECT_TRUE(s.ok()) << s.to_string();
    if (!s.ok()) return std::nullopt;
    return to_doubles(record_);
  }

  /// value_source over the trial's raw tensors.
  value_source values() {
    return [this](std::string_view name, int64_t step, std::string_view worker)
               -> std::optional<tensor_value> {
      const auto t = trial_.find_tensor(name);
      const auto w = trial_.find_worker(worker);
      if (!t || !w) return std::nullopt;
      const trial::tensor_entry* entry = trial_.find_entry(*t, step, *w);
      if (entry == nullptr || !entry->raw) return std::nullopt;
      return read(*entry->raw);
    };
  }

  /// Saved reductions read from their own records.
  auto reductions() {
    return [this](const trial::tensor_entry&, const trial::saved_reduction& r) -> std::optional<double> {
      const auto v = read(r.location);
      if (!v || v->data.size() != 1) return std::nullopt;
      return v->data[0];
    };
  }

 private:
  const io::file_reader* open(trial::file_id id) {
    auto it = files_.find(id);
    if (it == files_.end()) {
      auto f = io::file_reader::open(std::filesystem::path(trial_.location()) / trial_.event_file(id));
      EXPECT_TRUE(f.has_value()) << f.error_status().to_string();
      if (!f) return nullptr;
      it = files_.emplace(id, std::make_unique<io::file_reader>(std::move(*f))).first;
    }
    return it->second.get();
  }

  const trial::catalog& trial_;
  std::map<trial::file_id, std::unique_ptr<io::file_reader>> files_;
  decode::record_read_buffers buffers_;
  decode::event_record record_;
};

/// A golden trial's catalog and expected.json.
struct golden_trial {
  trial::catalog catalog;
  nlohmann::json expected;
};

inline std::optional<golden_trial> open_golden(const std::filesystem::path& dir, const std::string& name) {
  auto c = trial::catalog::open(dir / name);
  EXPECT_TRUE(c.has_value()) << c.error_status().to_string();
  if (!c) return std::nullopt;
  std::ifstream in(dir / (name + ".expected.json"));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name;
  return golden_trial{std::move(*c), std::move(j)};
}

/// A JSON number, or the strings "NaN"/"Infinity"/"-Infinity" the golden files use.
inline double json_number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  ADD_FAILURE() << "not a number: " << v.dump();
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace trialstat::rule_testing
