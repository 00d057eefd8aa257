// SPDX-License-Identifier: Apache-2.0
// SageMaker-shaped rule configurations (DebugRuleConfigurations) → rule_config_entry list.
#include "trialstat/rules/rule_config.hpp"

#include <charconv>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trialstat/io/file_reader.hpp"

namespace trialstat::rules {
namespace {

using json = nlohmann::json;

status shape_error(std::string_view source, std::size_t index, std::string_view what) {
  return status(error_code::invalid_argument,
                fmt::format("{}: rule configuration entry {}: {}", source, index, what));
}

/// A parameter value as SageMaker's string form.
result<std::string> parameter_text(const json& value, std::string_view source, std::size_t index,
                                   const std::string& key) {
  switch (value.type()) {
    case json::value_t::string: return value.get<std::string>();
    case json::value_t::boolean: return std::string(value.get<bool>() ? "True" : "False");
    case json::value_t::null: return std::string("None");
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return value.dump();
    case json::value_t::array: {
      std::string joined;
      for (const json& element : value) {
        if (!element.is_string()) {
          return shape_error(source, index,
                             fmt::format("RuleParameters '{}': a list must hold strings", key));
        }
        if (!joined.empty()) joined += ",";
        joined += element.get<std::string>();
      }
      return joined;
    }
    default:
      return shape_error(source, index,
                         fmt::format("RuleParameters '{}' must be a string, got {}", key,
                                     value.type_name()));
  }
}

/// `Actions` (our addition, issue 4): see rule_config.hpp.
status parse_actions(const json& actions, std::string_view source, std::size_t index,
                     rule_actions& out) {
  if (actions.is_null()) return status::success();
  if (!actions.is_object()) {
    return shape_error(source, index,
                       fmt::format("Actions must be an object, got {}", actions.type_name()));
  }
  for (const auto& [key, value] : actions.items()) {
    if (key == "stop_signal_file") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return shape_error(source, index, "Actions 'stop_signal_file' must be a non-empty string");
      }
      out.stop_signal_file = value.get<std::string>();
    } else if (key == "command") {
      if (value.is_string() && !value.get<std::string>().empty()) {
        out.shell_command = value.get<std::string>();
      } else if (value.is_array() && !value.empty()) {
        for (const json& arg : value) {
          if (!arg.is_string()) {
            return shape_error(source, index, "Actions 'command': a list must hold strings");
          }
          out.command.push_back(arg.get<std::string>());
        }
        if (out.command.front().empty()) {
          return shape_error(source, index, "Actions 'command': the program name is empty");
        }
      } else {
        return shape_error(source, index,
                           "Actions 'command' must be a non-empty list of strings (run without a "
                           "shell) or a non-empty string (run with /bin/sh -c)");
      }
    } else if (key == "exit_status") {
      std::optional<long long> number;
      if (value.is_number_integer()) {
        number = value.get<long long>();
      } else if (value.is_string()) {
        const std::string text = value.get<std::string>();
        long long parsed = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
        if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) number = parsed;
      }
      if (!number || *number < 0 || *number > 255) {
        return shape_error(source, index,
                           fmt::format("Actions 'exit_status' must be an integer in [0, 255], got {}",
                                       value.dump()));
      }
      out.exit_status = static_cast<int>(*number);
    } else {
      return shape_error(source, index,
                         fmt::format("Actions has an unknown key '{}' (known: stop_signal_file, "
                                     "command, exit_status)",
                                     key));
    }
  }
  return status::success();
}

result<rule_config_entry> parse_entry(const json& entry, std::string_view source,
                                      std::size_t index) {
  if (!entry.is_object()) {
    return shape_error(source, index, fmt::format("expected an object, got {}", entry.type_name()));
  }
  const auto params = entry.find("RuleParameters");
  if (params == entry.end() || !params->is_object()) {
    return shape_error(source, index, "missing RuleParameters object (with rule_to_invoke)");
  }
  rule_config_entry out;
  const auto invoke = params->find("rule_to_invoke");
  if (invoke == params->end() || !invoke->is_string() || invoke->get<std::string>().empty()) {
    return shape_error(source, index, "RuleParameters has no rule_to_invoke (the rule's name)");
  }
  out.rule_name = invoke->get<std::string>();
  for (const auto& [key, value] : params->items()) {
    if (key == "rule_to_invoke") continue;
    auto text = parameter_text(value, source, index, key);
    if (!text) return text.error_status();
    out.parameters.emplace(key, std::move(*text));
  }
  const auto name = entry.find("RuleConfigurationName");
  if (name != entry.end() && name->is_string() && !name->get<std::string>().empty()) {
    out.configuration_name = name->get<std::string>();
  } else if (name != entry.end() && !name->is_null() && !name->is_string()) {
    return shape_error(source, index, "RuleConfigurationName must be a string");
  } else {
    out.configuration_name = out.rule_name;
  }
  if (const auto actions = entry.find("Actions"); actions != entry.end()) {
    TRIALSTAT_RETURN_IF_ERROR(parse_actions(*actions, source, index, out.actions));
  }
  return out;
}

}  // namespace

result<std::vector<rule_config_entry>> parse_rule_config(std::string_view json_text,
                                                         std::string_view source_name) {
  json document;
  try {
    document = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    // nlohmann counts the bytes read, so the offending byte's 0-based offset is one less.
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return status(error_code::data_loss, fmt::format("{}: malformed JSON at byte offset {}: {}",
                                                     source_name, offset, e.what()));
  } catch (const json::exception& e) {
    // Not a parse_error but still the document's fault: a number literal beyond a double's range
    // (out_of_range 406, "number overflow parsing '1e999'"), which names the literal.
    return status(error_code::data_loss, fmt::format("{}: malformed JSON: {}", source_name, e.what()));
  }
  const json* list = &document;
  if (document.is_object()) {
    if (const auto wrapped = document.find("DebugRuleConfigurations");
        wrapped != document.end()) {
      list = &*wrapped;
    }
  }
  std::vector<rule_config_entry> entries;
  if (list->is_object()) {
    auto entry = parse_entry(*list, source_name, 0);
    if (!entry) return entry.error_status();
    entries.push_back(std::move(*entry));
    return entries;
  }
  if (!list->is_array()) {
    return status(error_code::invalid_argument,
                  fmt::format("{}: expected a list of rule configurations, got {}", source_name,
                              list->type_name()));
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto entry = parse_entry((*list)[i], source_name, i);
    if (!entry) return entry.error_status();
    entries.push_back(std::move(*entry));
  }
  return entries;
}

result<std::vector<rule_config_entry>> load_rule_config(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    return status(error_code::not_found,
                  fmt::format("{}: rule configuration file not found", file.string()));
  }
  // A regular file only (a FIFO must not hang the open), at most io::json_file_limit_bytes.
  std::string text;
  if (status read = io::read_text_file(file, text); !read.ok()) {
    return status(read.code(), fmt::format("rule configuration file: {}", read.message()));
  }
  return parse_rule_config(text, file.string());
}

}  // namespace trialstat::rules
