// SPDX-License-Identifier: Apache-2.0
// Table, CSV and JSON Lines writers for statistics records. JSON rows are formatted with fmt
// rather than a DOM library: a large trial has millions of rows and this is its output hot path.
#include "trialstat/report/statistics_writer.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "host/report/json_number.hpp"

namespace trialstat::report {
namespace {

using buffer = fmt::memory_buffer;

std::optional<double> update_ratio(const plan::statistics_record& r, int64_t* prev_step) {
  if (r.previous.empty() || !r.previous.front().shape_matches) return std::nullopt;
  const auto& p = r.previous.front();
  *prev_step = p.previous_step;
  return p.result.diff_l2() / (p.result.previous_l2() + update_ratio_epsilon);
}

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

class json_writer final : public writer_base {
 public:
  using writer_base::writer_base;

  void write_step(const trial::catalog& trial, const plan::step_statistics& step) override {
    for (const auto& r : step.records) {
      write_record(trial, r);
      maybe_flush();
    }
  }

 private:
  void number(double v) { detail::append_json_number(buf_, v); }
  void key(std::string_view k) {
    buf_.push_back(',');
    detail::append_json_string(buf_, k);
    buf_.push_back(':');
  }
  void finite_or_null(std::string_view k, bool defined, double v) {
    key(k);
    if (defined) {
      number(v);
    } else {
      fmt::format_to(std::back_inserter(buf_), "null");
    }
  }

  void write_record(const trial::catalog& trial, const plan::statistics_record& r) {
    auto out = std::back_inserter(buf_);
    buf_.push_back('{');
    detail::append_json_string(buf_, "tensor");
    buf_.push_back(':');
    detail::append_json_string(buf_, trial.tensor_names()[r.tensor]);
    fmt::format_to(out, ",\"step\":{},\"mode\":\"{}\",\"mode_step\":{},\"worker\":", r.step,
                   mode_name(r.mode), r.mode_step);
    detail::append_json_string(buf_, trial.workers()[r.worker]);
    if (r.type != dtype::invalid || r.moments) {
      fmt::format_to(out, ",\"dtype\":\"{}\"", dtype_name(r.type));
    }
    fmt::format_to(out, ",\"shape\":{},\"numel\":{}", shape_text(r.shape, ','), r.num_elements);
    if (const auto& m = r.moments) {
      const bool any = m->has_finite();
      fmt::format_to(out,
                     ",\"finite_count\":{},\"nan_count\":{},\"pos_inf_count\":{},"
                     "\"neg_inf_count\":{},\"zero_count\":{}",
                     m->finite_count(), m->nan_count, m->pos_inf_count, m->neg_inf_count,
                     m->zero_count);
      finite_or_null("min", any, m->min);
      finite_or_null("max", any, m->max);
      finite_or_null("mean", any, m->mean);
      finite_or_null("variance", any, m->variance());
      finite_or_null("std", any, m->std_dev());
      finite_or_null("sum", any, m->sum);
      finite_or_null("l1", any, m->sum_abs);
      finite_or_null("l2", any, m->l2());
      finite_or_null("linf", any, m->max_abs);
      finite_or_null("mean_abs", any, m->mean_abs());
      key("hist");
      if (r.histogram && r.histogram->bins > 0) {
        const auto& h = *r.histogram;
        fmt::format_to(out, "{{\"bins\":{},\"lo\":", h.bins);
        number(h.lo);
        buf_.append(std::string_view(",\"hi\":"));
        number(h.hi);
        fmt::format_to(out, ",\"counts\":[{}]", fmt::join(h.counts, ","));
        if (h.degenerate) buf_.append(std::string_view(",\"degenerate\":true"));
        buf_.push_back('}');
      } else {
        buf_.append(std::string_view("null"));
      }
    }
    int64_t prev_step = 0;
    if (const auto ratio = update_ratio(r, &prev_step)) {
      fmt::format_to(out, ",\"update_ratio\":{{\"prev_step\":{},\"ratio\":", prev_step);
      number(*ratio);
      buf_.push_back('}');
    }
    if (!r.saved_reductions.empty()) {
      buf_.append(std::string_view(",\"saved_reductions\":["));
      for (std::size_t i = 0; i < r.saved_reductions.size(); ++i) {
        const auto& red = r.saved_reductions[i];
        fmt::format_to(out, "{}{{\"reduction\":\"{}\",\"abs\":{},\"value\":", i ? "," : "",
                       trial::reduction_name(red.op), red.abs);
        number(red.value);
        buf_.push_back('}');
      }
      buf_.push_back(']');
    }
    if (!r.raw_status.ok()) {
      key("error");
      detail::append_json_string(buf_, r.raw_status.to_string());
    }
    buf_.append(std::string_view("}\n"));
  }
};

/// Shared by the table and CSV writers: the scalar columns of one record, as text.
struct row_cells {
  std::vector<std::string> cells;
};

const std::vector<std::string_view> column_names = {
    "tensor", "step", "mode", "mode_step", "worker", "dtype", "shape", "numel", "nan_count",
    "pos_inf_count", "neg_inf_count", "zero_count", "min", "max", "mean", "std", "l2", "mean_abs",
    "update_ratio"};

row_cells make_cells(const trial::catalog& trial, const plan::statistics_record& r, char shape_sep) {
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
  void write_step(const trial::catalog& trial, const plan::step_statistics& step) override {
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
  void write_step(const trial::catalog& trial, const plan::step_statistics& step) override {
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
