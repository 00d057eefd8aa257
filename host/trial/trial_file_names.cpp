// SPDX-License-Identifier: Apache-2.0
// The naming rules of a trial (spec/FORMAT.md §1, §7, §8): see trial_file_names.hpp.
#include "host/trial/trial_file_names.hpp"

#include <charconv>
#include <system_error>

namespace trialstat::trial {

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

namespace detail {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view basename_of(std::string_view rel) {
  const auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

bool has_extension(std::string_view rel, std::string_view ext) noexcept {
  return ends_with(basename_of(rel), ext);
}

std::string deserialize_tf_device(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '_') c = '/';
    else if (c == '-') c = ':';
  }
  return out;
}

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

bool is_reduction_record_name(std::string_view name) noexcept {
  return name.substr(0, reductions_prefix.size()) == reductions_prefix;
}

std::optional<reduction_record_name> parse_reduction_record_name(std::string_view name) noexcept {
  if (!is_reduction_record_name(name)) return std::nullopt;
  const std::string_view rest = name.substr(reductions_prefix.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 >= rest.size()) return std::nullopt;
  reduction_record_name out;
  std::string_view red = rest.substr(0, slash);
  if (red.substr(0, 4) == "abs_") {
    out.abs = true;
    red.remove_prefix(4);
  }
  const auto op = parse_reduction(red);
  if (!op) return std::nullopt;
  out.op = *op;
  out.tensor = rest.substr(slash + 1);
  return out;
}

}  // namespace detail
}  // namespace trialstat::trial
