// SPDX-License-Identifier: Apache-2.0
// Table, CSV and JSON Lines writers for statistics records. JSON rows are formatted with fmt
// rather than a DOM library: a large trial has millions of rows and this is its output hot path
// (straight appends into one buffer, table look-ups for small integers, the shortest-double
// writer of shortest_double.hpp, cached escaped names).
#include "trialstat/report/statistics_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "host/report/json_number.hpp"
#include "host/report/shortest_double.hpp"

namespace trialstat::report {

std::optional<double> update_ratio(const stats::statistics_record& r, int64_t* prev_step) {
  if (r.previous.empty() || !r.previous.front().shape_matches) return std::nullopt;
  const auto& p = r.previous.front();
  if (prev_step != nullptr) *prev_step = p.previous_step;
  return p.result.diff_l2() / (p.result.previous_l2() + update_ratio_epsilon);
}

result<std::vector<trial::tensor_id>> select_tensors(const trial::catalog& trial,
                                                     std::span<const std::string> collections,
                                                     std::span<const std::string> regexes) {
  if (collections.empty() && regexes.empty()) return trial.sorted_tensor_ids();
  return trial.select(collections, regexes);
}

void add_statistics_requests(plan::read_plan& plan, const trial::catalog& trial,
                             std::span<const trial::tensor_id> tensors,
                             const statistics_plan_options& options) {
  for (const auto id : tensors) {
    stats::statistics_request request;
    request.moments = true;
    request.histogram_bins = options.histogram_bins;
    request.log_histogram = options.log_histogram;
    request.saved_reductions = options.saved_reductions;
    // The weight-update ratio (README "update_ratio") compares with the previous saved step.
    const bool ratio =
        options.update_ratio == update_ratio_tensors::all ||
        (options.update_ratio == update_ratio_tensors::weights_and_biases &&
         (trial.in_collection(id, "weights") || trial.in_collection(id, "biases")));
    if (ratio) request.history_depth = 1;
    plan.request(id, request);
  }
}

plan::read_plan statistics_plan(const trial::catalog& trial, std::span<const trial::tensor_id> tensors,
                                const statistics_plan_options& options) {
  plan::read_plan plan;
  add_statistics_requests(plan, trial, tensors, options);
  return plan;
}

namespace {

using buffer = fmt::memory_buffer;

std::string shape_text(const std::vector<int64_t>& shape, char sep) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

class writer_base : public statistics_writer {
 public:
  explicit writer_base(std::FILE* out) : out_(out) {}
  void finish() override {
    flush();
    std::fflush(out_);
  }

 protected:
  void maybe_flush() {
    if (buf_.size() > (1u << 20)) flush();
  }
  void flush() {
    std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
  }
  std::FILE* out_;
  buffer buf_;
};

/// The text of one JSON row, written through a raw cursor into space reserved for it (an upper
/// bound of the row's length, so no per-field capacity checks): memcpy of literals and cached
/// escaped names, a table or fmt::format_int for integers, detail::write_shortest_double for
/// doubles. The text is exactly what "{}" formatting and append_json_number /
/// append_json_string produce. Used as a local value whose methods are all inlined, so the
/// cursor stays in a register: as a member of the writer, every character store (which may
/// alias anything) forced it back to memory and a reload after it.
struct json_text {
  char* at;

  [[gnu::always_inline]] void literal(std::string_view text) {
    std::memcpy(at, text.data(), text.size());
    at += text.size();
  }
  [[gnu::always_inline]] void character(char c) { *at++ = c; }

  /// Decimal text of 0..999: up to 3 digits in 4 bytes, and their count.
  struct small_number {
    char digits[4];
    uint32_t length;
  };
  static constexpr std::array<small_number, 1000> small_numbers = [] {
    std::array<small_number, 1000> t{};
    for (uint32_t i = 0; i < 1000; ++i) {
      small_number& n = t[i];
      n.length = i >= 100 ? 3 : i >= 10 ? 2 : 1;
      for (uint32_t k = 0, rest = i; k < n.length; ++k, rest /= 10) {
        n.digits[n.length - 1 - k] = static_cast<char>('0' + rest % 10);
      }
    }
    return t;
  }();
  /// Counts, shapes and steps are mostly below 1000: a table look-up inlined at every use;
  /// larger and negative values take fmt::format_int out of line.
  [[gnu::always_inline]] void integer(int64_t v) {
    if (static_cast<uint64_t>(v) < 1000) {
      const small_number& t = small_numbers[static_cast<std::size_t>(v)];
      std::memcpy(at, t.digits, 4);  // 4 bytes always fit: the bound has slack
      at += t.length;
      return;
    }
    at = large_integer(at, v);
  }
  [[gnu::noinline]] static char* large_integer(char* at, int64_t v) {
    const fmt::format_int text(v);
    std::memcpy(at, text.data(), text.size());
    return at + text.size();
  }
  /// `values` comma-separated.
  [[gnu::always_inline]] void integers(std::span<const int64_t> values) {
    const int64_t* v = values.data();
    const std::size_t n = values.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i) character(',');
      integer(v[i]);
    }
  }

  /// Where the text of a finite double was written in this row (length 0: none).
  struct written_number {
    uint64_t bits = 0;
    const char* text = nullptr;
    uint32_t length = 0;
  };
  static constexpr uint64_t sign_bit = uint64_t{1} << 63;

  /// `v` as JSON: the shortest round-trip digits, or "NaN", "Infinity", "-Infinity" as strings
  /// (rare). Returns where a finite value's text went (for number_repeating).
  [[gnu::always_inline]] written_number number(double v) {
    if (std::isfinite(v)) [[likely]] {
      char* const start = at;
      at = detail::write_shortest_double(v, at);
      return {std::bit_cast<uint64_t>(v), start, static_cast<uint32_t>(at - start)};
    }
    at = non_finite(at, v);
    return {};
  }
  [[gnu::noinline]] static char* non_finite(char* at, double v) {
    fmt::memory_buffer text;
    detail::append_json_number(text, v);
    std::memcpy(at, text.data(), text.size());
    return at + text.size();
  }
  /// number(v) for a value that often repeats one written earlier in the row, ±: linf is
  /// max or −min, the histogram's lo and hi are min and max. The text is copied ("{}" writes −x
  /// as '-' then x's text) instead of formatted again.
  [[gnu::always_inline]] void number_repeating(double v, const written_number& a, const written_number& b) {
    const auto bits = std::bit_cast<uint64_t>(v);
    for (const written_number* f : {&a, &b}) {
      if (f->length == 0) continue;
      if (f->bits == bits) {
        literal({f->text, f->length});
        return;
      }
      if (f->bits == (bits ^ sign_bit)) {
        if (f->text[0] == '-') {
          literal({f->text + 1, f->length - 1});
        } else {
          character('-');
          literal({f->text, f->length});
        }
        return;
      }
    }
    (void)number(v);
  }
  /// `key_colon` then v, or null when the row has no finite value.
  [[gnu::always_inline]] written_number finite_or_null(std::string_view key_colon, bool defined, double v) {
    literal(key_colon);
    if (defined) return number(v);
    literal("null");
    return {};
  }
};

class json_writer final : public writer_base {
 public:
  using writer_base::writer_base;

  void write_step(const trial::catalog& trial, const stats::step_statistics& step) override {
    if (&trial != names_of_) {  // escaped names are cached per catalog
      names_of_ = &trial;
      tensor_keys_.clear();
      worker_keys_.clear();
    }
    for (const auto& r : step.records) {
      write_record(trial, r);
      maybe_flush();
    }
  }

 private:
  /// `"name"` JSON-escaped, cached per id (names never change within a catalog).
  const std::string& quoted(std::vector<std::string>& cache, std::size_t id, const std::string& name) {
    if (cache.size() <= id) cache.resize(id + 1);
    std::string& text = cache[id];
    if (text.empty()) {
      fmt::memory_buffer b;
      detail::append_json_string(b, name);
      text.assign(b.data(), b.size());
    }
    return text;
  }

  // The hot path: each record reserves an upper bound of its length in buf_ once, then writes
  // it through a json_text.
  void write_record(const trial::catalog& trial, const stats::statistics_record& r) {
    using written_number = json_text::written_number;
    const std::string& tensor = quoted(tensor_keys_, r.tensor, trial.tensor_names()[r.tensor]);
    const std::string& worker = quoted(worker_keys_, r.worker, trial.workers()[r.worker]);
    error_text_.clear();
    if (!r.raw_status.ok()) detail::append_json_string(error_text_, r.raw_status.to_string());
    // Upper bound of the record's length: fixed text and 10 doubles (≤ 24 characters each) and
    // 10 integers (≤ 20) fit in 1024; then the variable parts, and the bytes the double writer
    // may write past its text.
    std::size_t bound = 1024 + detail::shortest_double_slack_bytes + tensor.size() + worker.size() +
                        21 * r.shape.size() + 110 * r.saved_reductions.size() + error_text_.size();
    if (r.histogram) bound += 128 + 21 * r.histogram->counts.size();
    if (r.log_histogram) {
      // Fixed text and five counts, then ≤ 28 characters per non-empty bin ("[1547,<int64>],").
      std::size_t nonzero = 0;
      for (const int64_t c : r.log_histogram->counts) nonzero += c != 0 ? 1 : 0;
      bound += 256 + 28 * nonzero;
    }
    const std::size_t start = buf_.size();
    buf_.resize(start + bound);
    json_text out{buf_.data() + start};

    out.literal("{\"tensor\":");
    out.literal(tensor);
    out.literal(",\"step\":");
    out.integer(r.step);
    out.literal(",\"mode\":\"");
    out.literal(mode_name(r.mode));
    out.literal("\",\"mode_step\":");
    out.integer(r.mode_step);
    out.literal(",\"worker\":");
    out.literal(worker);
    if (r.type != dtype::invalid || r.moments) {
      out.literal(",\"dtype\":\"");
      out.literal(dtype_name(r.type));
      out.literal("\"");
    }
    out.literal(",\"shape\":[");
    out.integers(r.shape);
    out.literal("],\"numel\":");
    out.integer(r.num_elements);
    if (const auto& m = r.moments) {
      const bool any = m->has_finite();
      out.literal(",\"finite_count\":");
      out.integer(m->finite_count());
      out.literal(",\"nan_count\":");
      out.integer(m->nan_count);
      out.literal(",\"pos_inf_count\":");
      out.integer(m->pos_inf_count);
      out.literal(",\"neg_inf_count\":");
      out.integer(m->neg_inf_count);
      out.literal(",\"zero_count\":");
      out.integer(m->zero_count);
      const written_number min = out.finite_or_null(",\"min\":", any, m->min);
      const written_number max = out.finite_or_null(",\"max\":", any, m->max);
      out.finite_or_null(",\"mean\":", any, m->mean);
      out.finite_or_null(",\"variance\":", any, m->variance());
      out.finite_or_null(",\"std\":", any, m->std_dev());
      out.finite_or_null(",\"sum\":", any, m->sum);
      out.finite_or_null(",\"l1\":", any, m->sum_abs);
      out.finite_or_null(",\"l2\":", any, m->l2());
      out.literal(",\"linf\":");
      if (any) {
        out.number_repeating(m->max_abs, max, min);
      } else {
        out.literal("null");
      }
      out.finite_or_null(",\"mean_abs\":", any, m->mean_abs());
      out.literal(",\"hist\":");
      if (r.histogram && r.histogram->bins > 0) {
        const auto& h = *r.histogram;
        out.literal("{\"bins\":");
        out.integer(h.bins);
        out.literal(",\"lo\":");
        out.number_repeating(h.lo, min, max);
        out.literal(",\"hi\":");
        out.number_repeating(h.hi, max, min);
        out.literal(",\"counts\":[");
        out.integers(h.counts);
        out.literal("]");
        if (h.degenerate) out.literal(",\"degenerate\":true");
        out.literal("}");
      } else {
        out.literal("null");
      }
    }
    if (const auto& lh = r.log_histogram) out = write_log_histogram(out, *lh);
    int64_t prev_step = 0;
    if (const auto ratio = update_ratio(r, &prev_step)) {
      out.literal(",\"update_ratio\":{\"prev_step\":");
      out.integer(prev_step);
      out.literal(",\"ratio\":");
      (void)out.number(*ratio);
      out.literal("}");
    }
    if (!r.saved_reductions.empty()) {
      out.literal(",\"saved_reductions\":[");
      for (std::size_t i = 0; i < r.saved_reductions.size(); ++i) {
        const auto& red = r.saved_reductions[i];
        out.literal(i ? ",{\"reduction\":\"" : "{\"reduction\":\"");
        out.literal(trial::reduction_name(red.op));
        out.literal(red.abs ? "\",\"abs\":true,\"value\":" : "\",\"abs\":false,\"value\":");
        (void)out.number(red.value);
        out.literal("}");
      }
      out.literal("]");
    }
    if (!r.raw_status.ok()) {
      out.literal(",\"error\":");
      out.literal({error_text_.data(), error_text_.size()});
    }
    out.literal("}\n");
    buf_.resize(static_cast<std::size_t>(out.at - buf_.data()));
  }

  /// `,"log_hist":{"bins":1548,"nonzero":[[bin,count],...],"nan":n,"pos_inf":n,"neg_inf":n,
  /// "below":n,"above":n}` — only the non-empty bins, ascending (statistics_writer.hpp).
  static json_text write_log_histogram(json_text out, const stats::log_histogram& h) {
    out.literal(",\"log_hist\":{\"bins\":");
    out.integer(static_cast<int64_t>(h.counts.size()));
    out.literal(",\"nonzero\":[");
    bool first = true;
    const int64_t* counts = h.counts.data();
    const std::size_t n = h.counts.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (counts[i] == 0) continue;
      out.literal(first ? "[" : ",[");
      first = false;
      out.integer(static_cast<int64_t>(i));
      out.character(',');
      out.integer(counts[i]);
      out.character(']');
    }
    out.literal("],\"nan\":");
    out.integer(h.nan_count);
    out.literal(",\"pos_inf\":");
    out.integer(h.pos_inf_count);
    out.literal(",\"neg_inf\":");
    out.integer(h.neg_inf_count);
    out.literal(",\"below\":");
    out.integer(h.below_count);
    out.literal(",\"above\":");
    out.integer(h.above_count);
    out.literal("}");
    return out;
  }

  fmt::memory_buffer error_text_;
  const trial::catalog* names_of_ = nullptr;
  std::vector<std::string> tensor_keys_, worker_keys_;
};

/// Shared by the table and CSV writers: the scalar columns of one record, as text.
struct row_cells {
  std::vector<std::string> cells;
};

const std::vector<std::string_view> column_names = {
    "tensor", "step", "mode", "mode_step", "worker", "dtype", "shape", "numel", "nan_count",
    "pos_inf_count", "neg_inf_count", "zero_count", "min", "max", "mean", "std", "l2", "mean_abs",
    "update_ratio"};

row_cells make_cells(const trial::catalog& trial, const stats::statistics_record& r, char shape_sep) {
  row_cells row;
  auto& c = row.cells;
  c.push_back(trial.tensor_names()[r.tensor]);
  c.push_back(std::to_string(r.step));
  c.emplace_back(mode_name(r.mode));
  c.push_back(std::to_string(r.mode_step));
  c.push_back(trial.workers()[r.worker]);
  c.emplace_back(r.moments ? dtype_name(r.type) : "");
  c.push_back(shape_text(r.shape, shape_sep));
  c.push_back(std::to_string(r.num_elements));
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  if (const auto& m = r.moments) {
    const bool any = m->has_finite();
    c.push_back(std::to_string(m->nan_count));
    c.push_back(std::to_string(m->pos_inf_count));
    c.push_back(std::to_string(m->neg_inf_count));
    c.push_back(std::to_string(m->zero_count));
    for (double v : {m->min, m->max, m->mean, m->std_dev(), m->l2(), m->mean_abs()}) {
      c.push_back(any ? num(v) : "");
    }
  } else {
    for (int i = 0; i < 10; ++i) c.emplace_back(r.raw_status.ok() ? "" : "-");
  }
  int64_t prev_step = 0;
  const auto ratio = update_ratio(r, &prev_step);
  c.push_back(ratio ? num(*ratio) : "");
  return row;
}

class csv_writer final : public writer_base {
 public:
  explicit csv_writer(std::FILE* out) : writer_base(out) {
    buf_.append(std::string_view(fmt::format("{},hist_lo,hist_hi,hist_counts,error\n",
                                             fmt::join(column_names, ","))));
  }
  void write_step(const trial::catalog& trial, const stats::step_statistics& step) override {
    auto out = std::back_inserter(buf_);
    for (const auto& r : step.records) {
      const auto row = make_cells(trial, r, ' ');
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        if (i) buf_.push_back(',');
        field(row.cells[i]);
      }
      if (r.histogram && r.histogram->bins > 0) {
        fmt::format_to(out, ",{},{},{}", r.histogram->lo, r.histogram->hi,
                       fmt::join(r.histogram->counts, " "));
      } else {
        buf_.append(std::string_view(",,,"));
      }
      buf_.push_back(',');
      field(r.raw_status.ok() ? std::string() : r.raw_status.to_string());
      buf_.push_back('\n');
      maybe_flush();
    }
  }

 private:
  // RFC 4180 quoting: quote fields containing a comma, quote or newline.
  void field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) {
      buf_.append(s);
      return;
    }
    buf_.push_back('"');
    for (char ch : s) {
      if (ch == '"') buf_.push_back('"');
      buf_.push_back(ch);
    }
    buf_.push_back('"');
  }
};

class table_writer final : public writer_base {
 public:
  using writer_base::writer_base;
  void write_step(const trial::catalog& trial, const stats::step_statistics& step) override {
    if (!header_written_) {
      write_row(std::vector<std::string>(column_names.begin(), column_names.end()));
      header_written_ = true;
    }
    for (const auto& r : step.records) {
      auto row = make_cells(trial, r, 'x');
      if (!r.raw_status.ok()) row.cells.push_back(r.raw_status.to_string());
      write_row(row.cells);
      maybe_flush();
    }
  }

 private:
  void write_row(const std::vector<std::string>& cells) {
    static constexpr int widths[] = {28, 6, 7, 9, 10, 8, 10, 8, 9, 13, 13, 10, 12, 12, 12, 12, 12, 12, 12};
    auto out = std::back_inserter(buf_);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const int width = i < std::size(widths) ? widths[i] : 0;
      fmt::format_to(out, "{:<{}} ", cells[i], width);
    }
    buf_.push_back('\n');
  }
  bool header_written_ = false;
};

}  // namespace

result<output_format> parse_output_format(std::string_view text) {
  if (text == "table") return output_format::table;
  if (text == "csv") return output_format::csv;
  if (text == "json") return output_format::json;
  return status(error_code::invalid_argument,
                fmt::format("format '{}': expected table, csv or json", text));
}

std::unique_ptr<statistics_writer> statistics_writer::create(output_format format, std::FILE* out) {
  switch (format) {
    case output_format::table: return std::make_unique<table_writer>(out);
    case output_format::csv: return std::make_unique<csv_writer>(out);
    case output_format::json: return std::make_unique<json_writer>(out);
  }
  return nullptr;
}

}  // namespace trialstat::report
