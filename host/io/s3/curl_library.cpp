// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/curl_library.hpp"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

namespace trialstat::io::detail {
namespace {

constexpr const char* library_name = "libcurl.so.4";

struct loaded {
  curl_library api;
  status failure;
};

template <typename F>
bool bind(void* handle, const char* name, F& out, status& failure) {
  out = reinterpret_cast<F>(::dlsym(handle, name));
  if (out == nullptr && failure.ok()) {
    failure = status(error_code::io_error, fmt::format("{}: no {} (libcurl 7.75 or newer is needed for s3:// trials)",
                                                       library_name, name));
  }
  return out != nullptr;
}

loaded load() {
  loaded out;
  void* handle = ::dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    out.failure = status(error_code::io_error, fmt::format("cannot load {} (s3:// trials need libcurl): {}",
                                                           library_name, why != nullptr ? why : "unknown"));
    return out;
  }
  curl_library& c = out.api;
  status& f = out.failure;
  bind(handle, "curl_global_init", c.global_init, f);
  bind(handle, "curl_easy_init", c.easy_init, f);
  bind(handle, "curl_easy_setopt", c.easy_setopt, f);
  bind(handle, "curl_easy_getinfo", c.easy_getinfo, f);
  bind(handle, "curl_easy_cleanup", c.easy_cleanup, f);
  bind(handle, "curl_easy_strerror", c.easy_strerror, f);
  bind(handle, "curl_slist_append", c.slist_append, f);
  bind(handle, "curl_slist_free_all", c.slist_free_all, f);
  bind(handle, "curl_share_init", c.share_init, f);
  bind(handle, "curl_share_setopt", c.share_setopt, f);
  bind(handle, "curl_share_cleanup", c.share_cleanup, f);
  bind(handle, "curl_multi_init", c.multi_init, f);
  bind(handle, "curl_multi_add_handle", c.multi_add_handle, f);
  bind(handle, "curl_multi_remove_handle", c.multi_remove_handle, f);
  bind(handle, "curl_multi_perform", c.multi_perform, f);
  bind(handle, "curl_multi_poll", c.multi_poll, f);
  bind(handle, "curl_multi_wakeup", c.multi_wakeup, f);
  bind(handle, "curl_multi_info_read", c.multi_info_read, f);
  bind(handle, "curl_multi_cleanup", c.multi_cleanup, f);
  if (f.ok()) c.global_init(CURL_GLOBAL_DEFAULT);
  return out;
}

const loaded& library() {
  static const loaded once = load();  // thread-safe; the handle is never closed
  return once;
}

}  // namespace

result<const curl_library*> load_curl() {
  const loaded& l = library();
  if (!l.failure.ok()) return l.failure;
  return &l.api;
}

const curl_library& curl() { return library().api; }

}  // namespace trialstat::io::detail
