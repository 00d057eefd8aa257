// SPDX-License-Identifier: Apache-2.0
// The collections file parser (spec/FORMAT.md §8): see collections_json.hpp. nlohmann's
// ordered_json keeps the file's order of collections and modes.
#include "host/trial/collections_json.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trialstat::trial::detail {

parsed_collections parse_collections_json(std::string_view text, std::string_view file_name) {
  parsed_collections out;
  const auto warn = [&](error_code code, std::string message) {
    out.warnings.emplace_back(code, fmt::format("collections file {}: {}", file_name, message));
  };
  using ojson = nlohmann::ordered_json;
  const ojson doc = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    warn(error_code::data_loss, "expected a JSON object with \"collections\" and \"_meta\"; no collections loaded");
    return out;
  }
  if (const auto meta = doc.find("_meta"); meta != doc.end() && meta->is_object()) {
    if (const auto n = meta->find("num_workers"); n != meta->end()) {
      if (n->is_number_integer() && n->get<int64_t>() >= 1 && n->get<int64_t>() < (1 << 30)) {
        out.num_workers = static_cast<int>(n->get<int64_t>());
      } else {
        warn(error_code::data_loss, "_meta.num_workers: expected a positive integer");
      }
    }
  }
  const auto all = doc.find("collections");
  if (all == doc.end() || !all->is_object()) {
    warn(error_code::data_loss, "\"collections\": expected an object");
    return out;
  }
  for (auto it = all->begin(); it != all->end(); ++it) {
    const ojson& v = it.value();
    std::vector<std::string> problems;
    if (!v.is_object()) {
      warn(error_code::data_loss, fmt::format("collection '{}': expected an object", it.key()));
      continue;
    }
    collection c;
    c.name = it.key();
    if (const auto n = v.find("name"); n != v.end() && n->is_string()) c.name = n->get<std::string>();
    const auto string_list = [&](const char* field, std::vector<std::string>& list) {
      const auto f = v.find(field);
      if (f == v.end() || f->is_null()) return;
      if (!f->is_array()) {
        problems.push_back(fmt::format("{}: expected a list of strings", field));
        return;
      }
      for (const auto& s : *f) {
        if (s.is_string()) {
          list.push_back(s.get<std::string>());
        } else if (s.is_array()) {  // smdebug flattens nested lists
          for (const auto& inner : s) {
            if (inner.is_string()) list.push_back(inner.get<std::string>());
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
          const auto int_field = [&](const char* field, int64_t& value) {
            const auto f = cfg.find(field);
            if (f == cfg.end() || f->is_null()) return;
            if (f->is_number_integer()) {
              value = f->get<int64_t>();
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
          // save_configs is indexed by mode − 1 (collection::save_configs).
          if (good) c.save_configs[static_cast<int>(*parsed_mode) - 1] = std::move(s);
        }
      }
    }
    if (!problems.empty()) {
      std::string joined;
      for (const auto& p : problems) joined += (joined.empty() ? "" : "; ") + p;
      warn(error_code::data_loss, fmt::format("collection '{}': {} (those fields use defaults)", c.name, joined));
    }
    std::vector<name_regex> regexes;
    for (const auto& pattern : c.include_regex) {
      auto compiled = name_regex::compile(pattern);
      if (compiled.has_value()) {
        regexes.push_back(std::move(*compiled));
      } else {
        warn(error_code::invalid_argument,
             fmt::format("collection '{}': {}; that pattern matches nothing", c.name,
                         compiled.error_status().message()));
      }
    }
    out.collections.push_back(std::move(c));
    out.include_regexes.push_back(std::move(regexes));
  }
  return out;
}

}  // namespace trialstat::trial::detail
