// SPDX-License-Identifier: Apache-2.0
// A catalog as text — names, steps, entries and warnings — so that two catalogs loaded in
// different ways (a group of ranks, a second parsing thread) compare in one assertion and a
// difference prints readably.
#pragma once

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trialstat/trial/catalog.hpp"

namespace trialstat::testing_support {

/// Everything a consumer can see of a catalog, as text, so two catalogs compare in one
/// assertion and a difference prints readably.
inline std::string describe(const trial::catalog& c) {
  std::string out;
  for (const auto& name : c.tensor_names()) out += fmt::format("tensor {}\n", name);
  for (const auto& name : c.workers()) out += fmt::format("worker {}\n", name);
  out += fmt::format("num_workers {} ended {} last_complete {}\n", c.num_workers(), c.training_ended(),
                     c.last_complete_step());
  for (const auto& info : c.step_infos()) {
    out += fmt::format("step {} mode {} mode_step {} workers {} complete {}\n", info.step,
                       static_cast<int>(info.mode), info.mode_step, fmt::join(info.workers, ","),
                       c.is_complete(info.step));
  }
  for (const auto& e : c.entries()) {
    out += fmt::format("entry t{} s{} w{}", e.tensor, e.step, e.worker);
    if (e.raw) {
      out += fmt::format(" raw {}@{}+{}", c.event_file(e.raw->event_file).generic_string(), e.raw->start_bytes,
                         e.raw->length_bytes);
    }
    if (e.shape) out += fmt::format(" shape [{}]", fmt::join(*e.shape, ","));
    for (const auto& r : e.reductions) {
      out += fmt::format(" {}{} {}@{}+{}", r.abs ? "abs_" : "", trial::reduction_name(r.op),
                         c.event_file(r.location.event_file).generic_string(), r.location.start_bytes,
                         r.location.length_bytes);
    }
    out += '\n';
  }
  for (const auto& w : c.warnings()) out += fmt::format("warning {}: {}\n", w.file.generic_string(), w.problem.to_string());
  return out;
}

}  // namespace trialstat::testing_support
