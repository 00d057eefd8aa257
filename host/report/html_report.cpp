// SPDX-License-Identifier: Apache-2.0
// `trialstat report` (html_report.hpp): rules + curves in one pass (the curves are collected by
// one more rule in the rules' session), heatmaps in a second pass over a few steps, then one
// HTML file: static tables, the data as JSON, BokehJS and the renderer inlined.
#include "trialstat/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "host/report/html_report_assets.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/report/tensorboard_export.hpp"
#include "trialstat/stats/log_histogram.hpp"

namespace trialstat::report {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// Length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

/// HTML text: markup characters escaped, bytes that are not UTF-8 (e.g. a corrupt record's tag
/// quoted in an error message) replaced by U+FFFD.
std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    const char c = s[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string base64(const std::vector<uint8_t>& bytes) {
  static constexpr char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = bytes[i], b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0,
                   b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out.push_back(table[(v >> 18) & 63]);
    out.push_back(table[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? table[v & 63] : '=');
  }
  return out;
}

/// A number for the JSON (non-finite → null, 7 significant digits: display only).
json display_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::stod(fmt::format("{:.7g}", v));
}

/// One curve point.
struct point {
  int64_t step = 0;
  int64_t ordinal = 0;  ///< index among this series' points (for even down-sampling)
  double mean = NAN, std_dev = NAN, min = NAN, max = NAN, l2 = NAN, ratio = NAN;
  bool nonfinite = false, error = false, finding = false;
  [[nodiscard]] bool special() const noexcept { return nonfinite || error || finding; }
};

/// A down-sampled curve: every `stride`-th point by ordinal, plus every special point; the
/// stride doubles when more than 2 × max_points ordinary points are kept.
struct series {
  std::vector<point> points;
  int64_t seen = 0;
  int64_t stride = 1;
  int64_t ordinary = 0;

  void add(point p, int max_points) {
    p.ordinal = seen++;
    const bool on_stride = p.ordinal % stride == 0;
    if (!on_stride && !p.special()) return;
    if (!p.special()) ++ordinary;
    points.push_back(p);
    if (ordinary > 2 * static_cast<int64_t>(max_points)) {
      stride *= 2;
      ordinary = 0;
      std::erase_if(points, [&](const point& q) {
        const bool keep = q.special() || q.ordinal % stride == 0;
        if (keep && !q.special()) ++ordinary;
        return !keep;
      });
    }
  }
};

/// A record that could not be read (listed in the summary, marked on the plots).
struct record_error {
  int64_t step;
  std::string tensor, worker, message;
};

/// The report's own "rule": requests the curves' statistics into the shared read plan and
/// collects the down-sampled curves from every step's records. Added last to the rules'
/// session so it sees the findings the other rules made at the same step.
class curve_collector final : public rules::rule {
 public:
  curve_collector(const html_report_options& options, const std::function<void(const status&)>& warn)
      : options_(options), warn_(warn) {}

  std::string_view name() const override { return "trialstat.report"; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const auto ids = trial.sorted_tensor_ids();
    const plan::read_plan own = statistics_plan(
        trial, ids, {.histogram_bins = 0, .log_histogram = false, .saved_reductions = false});
    for (const auto& [tensor, request] : own.requests()) plan.request(tensor, request);
    return status::success();
  }

  void watch_findings(std::span<const pipeline::rule_result> results, std::size_t self) {
    results_ = results;
    self_ = self;
    seen_.assign(results.size(), 0);
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<rules::finding>& /*findings*/) override {
    absorb_findings();
    ++steps_;
    for (const auto& r : step.records) {
      point p;
      p.step = r.step;
      const std::string& name = trial.tensor_names()[r.tensor];
      p.finding = finding_at(name, r.step);
      if (!r.raw_status.ok()) {
        if (r.raw_status.code() == error_code::not_found) continue;
        p.error = true;
        ++failed_;
        if (warn_) warn_(r.raw_status);
        if (errors_.size() < 200) {
          errors_.push_back({r.step, name, trial.workers()[r.worker], r.raw_status.to_string()});
        }
      } else if (r.moments) {
        const stats::moments& m = *r.moments;
        p.nonfinite = m.nan_count + m.pos_inf_count + m.neg_inf_count > 0;
        if (m.has_finite()) {
          p.mean = m.mean;
          p.std_dev = m.std_dev();
          p.min = m.min;
          p.max = m.max;
          p.l2 = m.l2();
        }
        if (const auto ratio = update_ratio(r)) {
          p.ratio = *ratio;
          has_ratio_.insert(r.tensor);
        }
      } else {
        continue;
      }
      series_[{r.tensor, r.worker}].add(p, options_.max_points);
    }
  }

  void finish(const trial::catalog& /*trial*/, std::vector<rules::finding>& /*findings*/) override {
    absorb_findings();
  }

  const std::map<std::pair<trial::tensor_id, trial::worker_id>, series>& curves() const { return series_; }
  bool has_ratio(trial::tensor_id t) const { return has_ratio_.count(t) != 0; }
  const std::vector<record_error>& errors() const { return errors_; }
  int64_t failed() const { return failed_; }
  int64_t steps() const { return steps_; }

 private:
  void absorb_findings() {
    for (std::size_t i = 0; i < results_.size(); ++i) {
      if (i == self_) continue;
      const auto& f = results_[i].findings;
      for (; seen_[i] < f.size(); ++seen_[i]) finding_steps_[f[seen_[i]].tensor].insert(f[seen_[i]].step);
    }
  }
  bool finding_at(const std::string& tensor, int64_t step) const {
    for (const std::string* key : {&tensor, &empty_}) {
      auto it = finding_steps_.find(*key);
      if (it != finding_steps_.end() && it->second.count(step)) return true;
    }
    return false;
  }

  const html_report_options& options_;
  const std::function<void(const status&)>& warn_;
  std::span<const pipeline::rule_result> results_;
  std::size_t self_ = 0;
  std::vector<std::size_t> seen_;
  std::map<std::string, std::set<int64_t>> finding_steps_;
  const std::string empty_;
  std::map<std::pair<trial::tensor_id, trial::worker_id>, series> series_;
  std::set<trial::tensor_id> has_ratio_;
  std::vector<record_error> errors_;
  int64_t failed_ = 0;
  int64_t steps_ = 0;
};

/// One heatmap being collected: sparse columns of the log-scale histogram.
struct heatmap_data {
  trial::tensor_id tensor = 0;
  trial::worker_id worker = 0;
  std::string reason;
  std::vector<int64_t> steps;
  std::vector<std::vector<std::pair<int, int64_t>>> columns;  // (bin, count), non-empty bins
  std::vector<int64_t> nonfinite;
};

std::string edge_label(double v) {
  if (v == 0) return "0";
  return fmt::format("{:.0e}", v);
}

json heatmap_json(const heatmap_data& h, const trial::catalog& trial,
                  const std::set<int64_t>& finding_steps) {
  int lo = stats::log_histogram_bins, hi = -1;
  for (const auto& col : h.columns) {
    for (const auto& [bin, count] : col) {
      lo = std::min(lo, bin);
      hi = std::max(hi, bin);
    }
  }
  if (hi < 0) lo = hi = stats::log_histogram_bins / 2;
  constexpr int max_rows = 120;
  const int span = hi - lo + 1;
  const int group = (span + max_rows - 1) / max_rows;
  const int rows = (span + group - 1) / group;
  const int cols = static_cast<int>(h.steps.size());
  std::vector<int64_t> cells(static_cast<std::size_t>(rows) * cols, 0);
  int64_t largest = 0;
  for (int c = 0; c < cols; ++c) {
    for (const auto& [bin, count] : h.columns[c]) {
      int64_t& cell = cells[static_cast<std::size_t>((bin - lo) / group) * cols + c];
      cell += count;
      largest = std::max(largest, cell);
    }
  }
  // log(1 + count) scaled to 1..255 (0 = empty): the counts span orders of magnitude.
  std::vector<uint8_t> bytes(cells.size(), 0);
  const double scale = largest > 0 ? 254.0 / std::log1p(static_cast<double>(largest)) : 0.0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i] > 0) bytes[i] = static_cast<uint8_t>(1 + std::lround(std::log1p(static_cast<double>(cells[i])) * scale));
  }
  const auto edges = stats::log_histogram_edges();
  json row_edges = json::array();
  for (int r = 0; r <= rows; ++r) row_edges.push_back(edge_label(edges[std::min(lo + r * group, stats::log_histogram_bins)]));
  json finding_columns = json::array();
  for (int c = 0; c < cols; ++c) {
    if (finding_steps.count(h.steps[c])) finding_columns.push_back(c);
  }
  return json{{"tensor", trial.tensor_names()[h.tensor]},
              {"worker", trial.workers()[h.worker]},
              {"reason", h.reason},
              {"steps", h.steps},
              {"rows", rows},
              {"cols", cols},
              {"bins_per_row", group},
              {"row_edges", row_edges},
              {"max_count", largest},
              {"nonfinite", h.nonfinite},
              {"finding_columns", finding_columns},
              {"data", base64(bytes)}};
}

/// `count` evenly spread elements of sorted `all` (all of them when there are fewer).
std::vector<int64_t> spread(const std::vector<int64_t>& all, int count) {
  if (static_cast<int>(all.size()) <= count || count < 2) return all;
  std::vector<int64_t> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(all[static_cast<std::size_t>(std::llround(static_cast<double>(i) * (all.size() - 1) / (count - 1)))]);
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The report's "Generated" time: now, or SOURCE_DATE_EPOCH when set (reproducible-builds.org:
/// two reports of the same trial are then byte-identical, e.g. with and without the store).
std::string now_text() {
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
    char* end = nullptr;
    const long long seconds = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0' && seconds >= 0) t = static_cast<std::time_t>(seconds);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

/// The static HTML of the trial summary.
std::string trial_section(const trial::catalog& trial, const html_report_options& options,
                          const curve_collector& curves) {
  std::string h;
  h += "<h2 id=\"trial\">Trial</h2>\n<table class=\"summary\">\n";
  h += fmt::format("<tr><th>path</th><td>{}</td></tr>\n", html_escape(trial.location()));
  std::string workers;
  for (const auto w : trial.sorted_worker_ids()) workers += (workers.empty() ? "" : ", ") + html_escape(trial.workers()[w]);
  h += fmt::format("<tr><th>workers</th><td>{} of {} expected: {}</td></tr>\n", trial.workers().size(),
                   trial.num_workers(), workers);
  std::string modes;
  for (const auto m : trial.modes()) {
    const auto steps = trial.steps(m);
    modes += fmt::format("{}{}: {} steps{}", modes.empty() ? "" : "; ", mode_name(m), steps.size(),
                         steps.empty() ? "" : fmt::format(" ({}–{})", steps.front(), steps.back()));
  }
  h += fmt::format("<tr><th>steps per mode</th><td>{}</td></tr>\n", html_escape(modes));
  int64_t complete = 0;
  std::string incomplete;
  int listed = 0;
  for (const auto& info : trial.step_infos()) {
    if (trial.is_complete(info.step)) {
      ++complete;
      continue;
    }
    if (listed++ < 10) {
      std::set<trial::worker_id> seen;
      for (const auto& e : trial.entries_at(info.step)) seen.insert(e.worker);
      incomplete += fmt::format("; step {}: {} of {} workers", info.step, seen.size(), trial.num_workers());
    }
  }
  h += fmt::format("<tr><th>completeness</th><td>{} of {} steps complete{}{}</td></tr>\n", complete,
                   trial.step_infos().size(), html_escape(incomplete),
                   trial.training_ended() ? "; training ended (end marker)" : "; no end marker");
  std::string collections;
  for (const auto& c : trial.collections()) {
    int64_t n = 0;
    for (std::size_t t = 0; t < trial.tensor_names().size(); ++t) {
      n += trial.in_collection(static_cast<trial::tensor_id>(t), c.name) ? 1 : 0;
    }
    collections += fmt::format("{}{}: {}", collections.empty() ? "" : ", ", html_escape(c.name), n);
  }
  h += fmt::format("<tr><th>tensors per collection</th><td>{} tensors; {}</td></tr>\n",
                   trial.tensor_names().size(), collections);
  h += fmt::format("<tr><th>backend</th><td>{}</td></tr>\n", html_escape(options.backend_description));
  h += fmt::format("<tr><th>records that could not be read</th><td class=\"record-errors\">{}</td></tr>\n",
                   curves.failed());
  h += "</table>\n";
  if (!curves.errors().empty()) {
    h += "<table class=\"errors\"><tr><th>step</th><th>tensor</th><th>worker</th><th>error</th></tr>\n";
    for (const auto& e : curves.errors()) {
      h += fmt::format("<tr class=\"record-error\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       e.step, html_escape(e.tensor), html_escape(e.worker), html_escape(e.message));
    }
    h += "</table>\n";
  }
  return h;
}

std::string rules_section(std::span<const pipeline::rule_result> results, std::size_t max_listed) {
  std::string h = "<h2 id=\"rules\">Rules</h2>\n<table class=\"rules\">\n"
                  "<tr><th>rule</th><th>configuration</th><th>status</th><th>findings</th><th>details</th></tr>\n";
  for (const auto& r : results) {
    const auto s = rules::rule_status_name(r.status);
    h += fmt::format("<tr class=\"rule\" data-rule=\"{0}\" data-status=\"{1}\"><td>{0}</td><td>{2}</td>"
                     "<td class=\"status-{1}\">{1}</td><td>{3}</td><td>{4}</td></tr>\n",
                     html_escape(r.rule_name), s, html_escape(r.configuration_name), r.findings.size(),
                     html_escape(r.status_details));
  }
  h += "</table>\n";
  for (const auto& r : results) {
    if (r.findings.empty()) continue;
    // Long lists start folded (the plots come after them); they are in the DOM either way.
    h += fmt::format("<details{}><summary><b>{} findings ({})</b></summary>\n", r.findings.size() <= 15 ? " open" : "",
                     html_escape(r.configuration_name), r.findings.size());
    h += fmt::format("<table class=\"findings\" data-rule=\"{}\">\n<tr><th>step</th><th>mode</th>"
                     "<th>mode step</th><th>tensor</th><th>worker</th><th>value</th><th>message</th></tr>\n",
                     html_escape(r.configuration_name));
    std::size_t n = 0;
    for (const auto& f : r.findings) {
      if (max_listed != 0 && n++ >= max_listed) break;
      h += fmt::format("<tr class=\"finding\" data-rule=\"{}\" data-step=\"{}\" data-tensor=\"{}\"><td>{}</td>"
                       "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       html_escape(r.configuration_name), f.step, html_escape(f.tensor), f.step,
                       mode_name(f.mode), f.mode_step, html_escape(f.tensor), html_escape(f.worker),
                       fmt::format("{:.6g}", f.value), html_escape(f.message));
    }
    if (max_listed != 0 && r.findings.size() > max_listed) {
      h += fmt::format("<tr><td colspan=\"7\" class=\"muted\">… and {} more (all are marked on the plots)</td></tr>\n",
                       r.findings.size() - max_listed);
    }
    h += "</table></details>\n";
  }
  return h;
}

}  // namespace

bool html_report_available() noexcept { return !detail::bokeh_js().empty(); }

result<html_report_summary> write_html_report(const trial::catalog& trial,
                                              std::vector<pipeline::rule_invocation> rules,
                                              const html_report_options& options,
                                              const fs::path& out_path,
                                              const std::function<void(const status&)>& warn) {
  if (!html_report_available()) {
    return status(error_code::invalid_argument,
                  "this build has no charting library for reports: install BokehJS (pip install "
                  "--no-deps -r tools/python/requirements-report.txt into .venv) and configure again");
  }
  std::vector<trial::tensor_id> requested_heatmaps;
  if (!options.heatmap_regexes.empty()) {
    auto chosen = trial.select({}, options.heatmap_regexes);
    if (!chosen) return chosen.error_status();
    requested_heatmaps = std::move(*chosen);
  }

  // Pass 1: the rules and the curves, one read.
  const std::size_t self = rules.size();
  {
    pipeline::rule_invocation collector;
    collector.configuration_name = "trialstat.report";
    collector.rule = std::make_unique<curve_collector>(options, warn);
    rules.push_back(std::move(collector));
  }
  auto* curves = static_cast<curve_collector*>(rules.back().rule.get());
  pipeline::rule_session session(trial, std::move(rules), options.pipeline, /*live=*/false, options.statistics);
  curves->watch_findings(session.results(), self);
  auto finished = session.finish();
  if (!finished) return finished.error_status();
  html_report_summary summary;
  summary.results.assign(session.results().begin(), session.results().begin() + static_cast<std::ptrdiff_t>(self));
  summary.steps = curves->steps();
  summary.failed_records = curves->failed();

  std::map<std::string, std::set<int64_t>> finding_steps;  // tensor ("" = none) → steps
  std::map<std::string, std::size_t> finding_counts;
  for (const auto& r : summary.results) {
    for (const auto& f : r.findings) {
      finding_steps[f.tensor].insert(f.step);
      ++finding_counts[f.tensor];
    }
  }

  // The first finding of each rule about a tensor (or about no single tensor): marked on plots.
  const auto first_finding_steps = [&](const std::string& name) {
    std::set<int64_t> steps;
    for (const auto& r : summary.results) {
      for (const auto& f : r.findings) {
        if (f.tensor == name || f.tensor.empty()) {
          steps.insert(f.step);
          break;
        }
      }
    }
    return steps;
  };

  // Curves by display collection.
  json tensors = json::array();
  std::map<std::string, std::vector<std::pair<std::string, std::size_t>>> by_collection;  // → (name, index)
  {
    std::map<trial::tensor_id, std::vector<const std::pair<const std::pair<trial::tensor_id, trial::worker_id>, series>*>> grouped;
    for (const auto& entry : curves->curves()) grouped[entry.first.first].push_back(&entry);
    for (const trial::tensor_id id : trial.sorted_tensor_ids()) {
      auto it = grouped.find(id);
      if (it == grouped.end()) continue;
      const std::string& name = trial.tensor_names()[id];
      json workers = json::array();
      auto entries = it->second;
      std::sort(entries.begin(), entries.end(), [&](auto* a, auto* b) {
        return trial.workers()[a->first.second] < trial.workers()[b->first.second];
      });
      for (const auto* e : entries) {
        json s = json::array(), mean = json::array(), sd = json::array(), mn = json::array(),
             mx = json::array(), l2 = json::array(), ratio = json::array(), nf = json::array(),
             err = json::array();
        for (const point& p : e->second.points) {
          s.push_back(p.step);
          mean.push_back(display_number(p.mean));
          sd.push_back(display_number(p.std_dev));
          mn.push_back(display_number(p.min));
          mx.push_back(display_number(p.max));
          l2.push_back(display_number(p.l2));
          ratio.push_back(display_number(p.ratio));
          if (p.nonfinite) nf.push_back(p.step);
          if (p.error) err.push_back(p.step);
        }
        workers.push_back({{"worker", trial.workers()[e->first.second]}, {"s", s}, {"mean", mean},
                           {"std", sd}, {"min", mn}, {"max", mx}, {"l2", l2}, {"ratio", ratio},
                           {"nf", nf}, {"err", err}});
      }
      const std::set<int64_t> steps = first_finding_steps(name);
      const std::string collection = display_collection(trial, id);
      by_collection[collection].emplace_back(name, tensors.size());
      tensors.push_back({{"name", name}, {"collection", collection}, {"has_ratio", curves->has_ratio(id)},
                         {"first_findings", std::vector<int64_t>(steps.begin(), steps.end())}, {"workers", workers}});
    }
  }
  summary.tensors_plotted = static_cast<int64_t>(tensors.size());

  // Pass 2: heatmaps of flagged tensors (most findings first) and requested ones.
  std::vector<heatmap_data> heatmaps;
  {
    std::vector<std::pair<std::size_t, trial::tensor_id>> flagged;
    for (const auto& [name, count] : finding_counts) {
      if (auto id = trial.find_tensor(name)) flagged.emplace_back(count, *id);
    }
    std::stable_sort(flagged.begin(), flagged.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::set<trial::tensor_id> chosen;
    const auto choose = [&](trial::tensor_id id, std::string reason) {
      if (static_cast<int>(heatmaps.size()) >= options.max_heatmaps || !chosen.insert(id).second) return;
      // The lexicographically smallest worker with a curve for this tensor.
      std::optional<trial::worker_id> worker;
      for (const auto& entry : curves->curves()) {
        if (entry.first.first != id) continue;
        if (!worker || trial.workers()[entry.first.second] < trial.workers()[*worker]) worker = entry.first.second;
      }
      if (!worker) return;
      heatmap_data h;
      h.tensor = id;
      h.worker = *worker;
      h.reason = std::move(reason);
      heatmaps.push_back(std::move(h));
    };
    for (const auto& [count, id] : flagged) choose(id, fmt::format("flagged by the rules ({} findings)", count));
    for (const auto id : requested_heatmaps) choose(id, "--tensor-regex");
  }
  if (!heatmaps.empty()) {
    std::set<int64_t> all_steps, extra;
    plan::read_plan plan;
    for (const auto& h : heatmaps) {
      for (const int64_t s : trial.tensor_steps(h.tensor)) {
        const auto& o = options.pipeline;
        if ((o.step_begin && s < *o.step_begin) || (o.step_end && s >= *o.step_end)) continue;
        all_steps.insert(s);
      }
      // The step where each rule first flagged it (later findings of a rule that keeps firing,
      // e.g. ExplodingTensor after a NaN, would mean re-reading most of the trial).
      for (const int64_t s : first_finding_steps(trial.tensor_names()[h.tensor])) {
        if (extra.size() < 32) extra.insert(s);
      }
      stats::statistics_request request;
      request.moments = true;
      request.log_histogram = true;
      plan.request(h.tensor, request);
    }
    // At most one saved step in ten (at least 16): the second pass stays a small fraction of
    // the first however long the trial (README "report": cost).
    const int columns = std::min(options.max_heatmap_steps,
                                 std::max(16, static_cast<int>(all_steps.size() / 10)));
    std::vector<int64_t> shown = spread(std::vector<int64_t>(all_steps.begin(), all_steps.end()), columns);
    for (const int64_t s : extra) {
      if (all_steps.count(s)) shown.push_back(s);
    }
    std::sort(shown.begin(), shown.end());
    shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
    pipeline::pipeline_options second = options.pipeline;
    second.only_steps = shown;
    std::map<std::pair<trial::tensor_id, trial::worker_id>, heatmap_data*> index;
    for (auto& h : heatmaps) index[{h.tensor, h.worker}] = &h;
    auto run = pipeline::run_statistics_from(options.statistics, trial, plan, second, [&](const stats::step_statistics& step) {
      for (const auto& r : step.records) {
        auto it = index.find({r.tensor, r.worker});
        if (it == index.end() || !r.log_histogram) continue;
        heatmap_data& h = *it->second;
        h.steps.push_back(r.step);
        auto& col = h.columns.emplace_back();
        const auto& counts = r.log_histogram->counts;
        for (int b = 0; b < static_cast<int>(counts.size()); ++b) {
          if (counts[b] != 0) col.emplace_back(b, counts[b]);
        }
        h.nonfinite.push_back(r.log_histogram->nan_count + r.log_histogram->pos_inf_count +
                              r.log_histogram->neg_inf_count);
      }
    });
    if (!run) return run.error_status();
  }
  json heatmap_list = json::array();
  for (const auto& h : heatmaps) {
    if (h.steps.empty()) continue;
    heatmap_list.push_back(heatmap_json(h, trial, first_finding_steps(trial.tensor_names()[h.tensor])));
  }
  summary.heatmaps = static_cast<int64_t>(heatmap_list.size());

  // The page.
  const json data{{"tensors", tensors}, {"heatmaps", heatmap_list}};
  // Names read from event files may hold any bytes: replace what is not UTF-8.
  std::string data_text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  for (std::size_t at = 0; (at = data_text.find("</", at)) != std::string::npos; at += 3) data_text.replace(at, 2, "<\\/");

  std::string page;
  page.reserve(detail::bokeh_js().size() + data_text.size() + (1 << 16));
  std::string location = trial.location();
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  const std::string title = "trialstat report: " + location.substr(location.find_last_of('/') + 1);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += fmt::format("<title>{}</title>\n<style>{}</style>\n", html_escape(title), detail::report_css());
  page += "<script>window.addEventListener('error', function (e) { var d = document.getElementById("
          "'report-errors'); if (d) { d.style.display = 'block'; d.textContent += 'Script error: ' + "
          "e.message + '\\n'; } });</script>\n";
  page += fmt::format("<!-- BokehJS {} (BSD-3-Clause; licence at the end of this page) -->\n<script>", detail::bokeh_version());
  page += detail::bokeh_js();
  page += "</script>\n</head>\n<body>\n<div id=\"report-errors\"></div>\n";
  page += fmt::format("<h1>{}</h1>\n<p class=\"muted\">Generated {} by trialstat. Curves are down-sampled "
                      "for display (every step with a NaN/±Inf value, a finding or an unreadable "
                      "record is kept). <a href=\"#trial\">Trial</a> · <a href=\"#rules\">Rules</a> · "
                      "<a href=\"#curves\">Statistics</a> · <a href=\"#distributions\">Distributions</a></p>\n",
                      html_escape(title), now_text());
  page += trial_section(trial, options, *curves);
  page += rules_section(summary.results, options.max_findings_listed);
  page += "<h2 id=\"curves\">Statistics over steps</h2>\n<p class=\"legend-key muted\">"
          "<span><i class=\"swatch\" style=\"background:#d62728\"></i>steps with NaN/±Inf</span>"
          "<span><i class=\"swatch\" style=\"background:#ff7f0e\"></i>findings</span>"
          "<span><i class=\"swatch\" style=\"background:#555\"></i>unreadable records</span>"
          "<span>bands: min/max (light), mean ± std (darker)</span></p>\n";
  for (const auto& [collection, members] : by_collection) {
    page += fmt::format("<h3 class=\"collection\">{} ({} tensors)</h3>\n", html_escape(collection), members.size());
    for (const auto& [name, i] : members) {
      page += fmt::format("<div class=\"tensor-plot\" data-index=\"{}\" data-tensor=\"{}\"><div class=\"title\">{}</div>"
                          "<div class=\"plots\"></div></div>\n",
                          i, html_escape(name), html_escape(name));
    }
  }
  page += "<h2 id=\"distributions\">Distributions over steps</h2>\n<p class=\"muted\">The fixed log-scale "
          "histogram (TensorBoard's buckets) of each step as a column, colour = log(1 + count); "
          "flagged tensors and those of --tensor-regex.</p>\n";
  if (heatmap_list.empty()) page += "<p class=\"muted\">No tensor was flagged or requested.</p>\n";
  for (std::size_t i = 0; i < heatmap_list.size(); ++i) {
    const auto& h = heatmap_list[i];
    page += fmt::format("<div class=\"heatmap-plot\" data-index=\"{}\" data-tensor=\"{}\"><div class=\"title\">"
                        "{} <span class=\"muted\">({}; {} steps shown, {} bins per row)</span></div></div>\n",
                        i, html_escape(h["tensor"].get<std::string>()), html_escape(h["tensor"].get<std::string>()),
                        html_escape(h["reason"].get<std::string>()), h["cols"].get<int>(),
                        h["bins_per_row"].get<int>());
  }
  page += fmt::format("<details><summary>Licences</summary><p>Charts: BokehJS {} (bokeh.org), "
                      "BSD-3-Clause:</p><pre>{}</pre></details>\n",
                      detail::bokeh_version(), html_escape(detail::bokeh_license()));
  page += "<script type=\"application/json\" id=\"report-data\">";
  page += data_text;
  page += "</script>\n<script>";
  page += detail::report_js();
  page += "</script>\n</body>\n</html>\n";

  // Write through a .tmp and rename.
  const fs::path tmp = fs::path(out_path.string() + ".tmp");
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return status(error_code::io_error, fmt::format("{}: cannot create", tmp.string()));
  const bool wrote = std::fwrite(page.data(), 1, page.size(), f) == page.size();
  const bool closed = std::fclose(f) == 0;
  std::error_code ec;
  if (!wrote || !closed) {
    fs::remove(tmp, ec);
    return status(error_code::io_error, fmt::format("{}: write failed", tmp.string()));
  }
  fs::rename(tmp, out_path, ec);
  if (ec) return status(error_code::io_error, fmt::format("{}: {}", out_path.string(), ec.message()));
  summary.bytes = page.size();
  return summary;
}

}  // namespace trialstat::report
