// SPDX-License-Identifier: Apache-2.0
// Tensor-name regexes with Python `re.search` semantics, on PCRE2 (8-bit code units, UTF mode).
// Source: spec/TRIAL_API.md §9.
#include "trialstat/trial/name_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>
#include <memory>
#include <string>

#include <fmt/format.h>

namespace trialstat::trial {

struct name_regex::compiled {
  pcre2_code* code = nullptr;
  explicit compiled(pcre2_code* c) : code(c) {}
  compiled(const compiled&) = delete;
  compiled& operator=(const compiled&) = delete;
  ~compiled() { pcre2_code_free(code); }
};

namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Rewrites the Python-only spellings PCRE2 does not read the same way, outside character
/// classes: `(?P<n>` → `(?<n>`, `(?P=n)` → `\k<n>`, `\Z` → `\z` (Python's \Z is the absolute
/// end), `\uXXXX` / `\UXXXXXXXX` → `\x{...}`, `{,n}` → `{0,n}` (PCRE2 < 10.43 reads it as
/// literal text). Everything else is copied verbatim.
std::string translate_python_syntax(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 8);
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      if (n == 'u' && i + 6 <= p.size() && is_hex(p[i + 2]) &&
          is_hex(p[i + 3]) && is_hex(p[i + 4]) && is_hex(p[i + 5])) {
        out += "\\x{";
        out.append(p.substr(i + 2, 4));
        out += '}';
        i += 5;
        continue;
      }
      if (n == 'U' && i + 10 <= p.size()) {
        bool all_hex = true;
        for (std::size_t k = 2; k < 10; ++k) all_hex = all_hex && is_hex(p[i + k]);
        if (all_hex) {
          out += "\\x{";
          out.append(p.substr(i + 2, 8));
          out += '}';
          i += 9;
          continue;
        }
      }
      if (n == 'Z' && !in_class) {
        out += "\\z";
        ++i;
        continue;
      }
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end of the class.
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      if (i + 1 < p.size() && p[i + 1] == ']') {
        out += ']';
        ++i;
      }
      continue;
    }
    if (c == '(' && p.substr(i, 4) == "(?P<") {
      out += "(?<";
      i += 3;
      continue;
    }
    if (c == '(' && p.substr(i, 4) == "(?P=") {
      const auto close = p.find(')', i + 4);
      if (close != std::string_view::npos) {
        out += "\\k<";
        out.append(p.substr(i + 4, close - (i + 4)));
        out += '>';
        i = close;
        continue;
      }
    }
    if (c == '{' && i + 1 < p.size() && p[i + 1] == ',') {
      std::size_t k = i + 2;
      while (k < p.size() && is_digit(p[k])) ++k;
      if (k > i + 2 && k < p.size() && p[k] == '}') {
        out += "{0,";
        out.append(p.substr(i + 2, k - (i + 2)));
        out += '}';
        i = k;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/// One match-data block per thread, reused for every pattern: search() only needs to know
/// whether a match exists, so a single ovector pair suffices (pcre2_match then returns 0
/// instead of a pair count when a pattern has groups, which still means "matched").
struct match_data_holder {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = make_context();
  match_data_holder() = default;
  match_data_holder(const match_data_holder&) = delete;
  match_data_holder& operator=(const match_data_holder&) = delete;
  ~match_data_holder() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
  }
  static pcre2_match_context* make_context() {
    pcre2_match_context* c = pcre2_match_context_create(nullptr);
    if (c != nullptr) {
      pcre2_set_match_limit(c, regex_match_limit);
      pcre2_set_depth_limit(c, 100'000);
    }
    return c;
  }
};

}  // namespace

result<name_regex> name_regex::compile(std::string_view pattern) {
  const std::string translated = translate_python_syntax(pattern);
  int error_number = 0;
  PCRE2_SIZE error_offset = 0;
  // UTF + UCP: Python 3 str patterns are Unicode (\w, \d, \s match Unicode classes).
  // MATCH_INVALID_UTF: a name with invalid UTF-8 is searched, not rejected.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
                                   translated.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                                   &error_number, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buffer[256];
    const int n = pcre2_get_error_message(error_number, buffer, sizeof(buffer));
    std::string reason = n >= 0 ? std::string(reinterpret_cast<const char*>(buffer))
                                : fmt::format("PCRE2 error {}", error_number);
    std::string message =
        fmt::format("invalid regular expression '{}' at offset {}: {}", pattern, error_offset, reason);
    if (translated != pattern) message += fmt::format(" (as translated for PCRE2: '{}')", translated);
    return status(error_code::invalid_argument, std::move(message));
  }
  // JIT is an optimisation only; the interpreter is used when it is unavailable.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  name_regex rx;
  rx.compiled_ = std::make_shared<const compiled>(code);
  rx.pattern_ = std::string(pattern);
  return rx;
}

result<bool> name_regex::find(std::string_view name) const {
  if (!compiled_) return false;
  thread_local match_data_holder holder;
  if (holder.data == nullptr || holder.context == nullptr) {
    return status(error_code::out_of_memory, "cannot allocate PCRE2 match data");
  }
  const char* subject = name.data() != nullptr ? name.data() : "";
  const int rc = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(subject), name.size(),
                             0, 0, holder.data, holder.context);
  if (rc >= 0) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(rc, buffer, sizeof(buffer));
  const std::string reason = n >= 0 ? std::string(reinterpret_cast<const char*>(buffer))
                                    : fmt::format("PCRE2 error {}", rc);
  return status(error_code::invalid_argument,
                fmt::format("regular expression '{}' on '{}': the match could not be decided ({}; "
                            "limit {} backtracking steps); simplify the pattern",
                            pattern_, name, reason, regex_match_limit));
}

bool name_regex::search(std::string_view name) const {
  const auto found = find(name);
  return found.has_value() && *found;
}

bool search_any(std::span<const name_regex> patterns, std::string_view name) {
  for (const auto& p : patterns) {
    if (p.search(name)) return true;
  }
  return false;
}

result<bool> find_any(std::span<const name_regex> patterns, std::string_view name) {
  for (const auto& p : patterns) {
    auto found = p.find(name);
    if (!found || *found) return found;
  }
  return false;
}

}  // namespace trialstat::trial
