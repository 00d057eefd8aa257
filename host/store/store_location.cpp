// SPDX-License-Identifier: Apache-2.0
// Where a trial's store lives: `--store PATH|auto|off`, the user's cache folder, the key.
#include <cctype>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "trialstat/io/trial_source.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

namespace fs = std::filesystem;

std::string canonical_location(std::string_view trial_location) {
  std::string text(trial_location);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t')) text.pop_back();
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) text.erase(0, 1);
  if (!io::is_s3_location(text)) {
    std::error_code ec;
    fs::path absolute = fs::absolute(fs::path(text), ec);
    if (!ec) {
      fs::path normal = fs::weakly_canonical(absolute, ec);
      text = (ec ? absolute.lexically_normal() : normal).string();
    }
  }
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

result<fs::path> default_store_path(std::string_view trial_location) {
  fs::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache = fs::path(home) / ".cache";
  } else {
    return status(error_code::invalid_argument,
                  "statistics store: neither XDG_CACHE_HOME nor HOME is set (use --store PATH or --store off)");
  }
  const std::string key = canonical_location(trial_location);
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (const char c : key) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  std::string name = fs::path(key).filename().string();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  if (name.empty() || name == "." || name == "..") name = "trial";
  if (name.size() > 64) name.resize(64);
  return cache / "trialstat" / fmt::format("{}-{:016x}.sqlite", name, hash);
}

result<std::optional<fs::path>> resolve_store_path(std::string_view choice, std::string_view trial_location) {
  if (choice == "off") return std::optional<fs::path>();
  if (choice.empty() || choice == "auto") {
    auto path = default_store_path(trial_location);
    if (!path) return path.error_status();
    return std::optional<fs::path>(std::move(*path));
  }
  return std::optional<fs::path>(fs::path(choice));
}

}  // namespace trialstat::store
