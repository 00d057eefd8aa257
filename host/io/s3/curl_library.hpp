// SPDX-License-Identifier: Apache-2.0
// libcurl, loaded (dlopen) at the first s3:// trial instead of linked: its ~30 dependent shared
// libraries (TLS, Kerberos, LDAP, IDN, ...) took ~5 ms of dynamic linking at the start of every
// trialstat process, local trials included (bench/RESULTS.md, "Statistics store", eleventh
// session). The functions the S3 client calls, typed as <curl/curl.h> declares them.
// Internal to host/io/s3.
#pragma once

#include <curl/curl.h>

#include "trialstat/status.hpp"

namespace trialstat::io::detail {

struct curl_library {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  decltype(&::curl_share_init) share_init = nullptr;
  decltype(&::curl_share_setopt) share_setopt = nullptr;
  decltype(&::curl_share_cleanup) share_cleanup = nullptr;
  decltype(&::curl_multi_init) multi_init = nullptr;
  decltype(&::curl_multi_add_handle) multi_add_handle = nullptr;
  decltype(&::curl_multi_remove_handle) multi_remove_handle = nullptr;
  decltype(&::curl_multi_perform) multi_perform = nullptr;
  decltype(&::curl_multi_poll) multi_poll = nullptr;
  decltype(&::curl_multi_wakeup) multi_wakeup = nullptr;
  decltype(&::curl_multi_info_read) multi_info_read = nullptr;
  decltype(&::curl_multi_cleanup) multi_cleanup = nullptr;
};

/// libcurl (libcurl.so.4), loaded and globally initialised once (thread-safe); kept loaded for
/// the process's life. Errors: io_error naming the library and dlerror()'s reason (not installed,
/// or too old: a function missing).
[[nodiscard]] result<const curl_library*> load_curl();

/// The loaded library; call only after `load_curl` succeeded.
[[nodiscard]] const curl_library& curl();

}  // namespace trialstat::io::detail
