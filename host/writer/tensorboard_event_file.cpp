// SPDX-License-Identifier: Apache-2.0
// TensorBoard event files from the generated proto/ classes (tensorboard_event_file.hpp).
#include "trialstat/writer/tensorboard_event_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "event.pb.h"
#include "host/writer/output_file.hpp"
#include "trialstat/io/crc32c.hpp"

namespace trialstat::writer {
namespace {

void put_le(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t masked_crc(std::string_view bytes) {
  return io::mask_crc32c(io::crc32c(std::as_bytes(std::span<const char>(bytes.data(), bytes.size()))));
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return tensorboard_tag(buf);
}

}  // namespace

std::string tensorboard_tag(std::string_view tag) {
  std::string out;
  out.reserve(tag.size());
  for (const char c : tag) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = std::isalnum(u) != 0 || c == '_' || c == '-' || c == '/' || c == '.';
    out.push_back(keep ? c : '_');
  }
  const auto first = out.find_first_not_of('/');
  return first == std::string::npos ? std::string() : out.substr(first);
}

struct tensorboard_event_file::state {
  detail::output_file file;
  smdebug::Event event;  // reused: no allocation per record once warm
  std::string payload;
  int64_t records = 0;

  /// Reset the event to {wall_time, step, summary{value{tag}}} and return the value.
  smdebug::Summary::Value* start_value(int64_t step, double wall_time, std::string_view tag) {
    event.Clear();
    event.set_wall_time(wall_time);
    event.set_step(step);
    auto* v = event.mutable_summary()->add_value();
    v->set_tag(std::string(tag));
    return v;
  }

  std::string framed;     // reused

  status write_event() {
    payload.clear();
    if (!event.SerializeToString(&payload)) {
      return status(error_code::invalid_argument,
                    fmt::format("{}: could not serialize an event", file.final_path().string()));
    }
    return write_payload();
  }

  /// Frame `payload` (length, masked CRCs) and append it.
  status write_payload() {
    framed.clear();
    put_le(framed, payload.size(), 8);
    put_le(framed, masked_crc(framed), 4);
    framed.append(payload);
    put_le(framed, masked_crc(payload), 4);
    ++records;
    return file.append(framed);
  }
};

tensorboard_event_file::tensorboard_event_file(std::unique_ptr<state> s) : state_(std::move(s)) {}
tensorboard_event_file::~tensorboard_event_file() = default;
tensorboard_event_file::tensorboard_event_file(tensorboard_event_file&&) noexcept = default;
tensorboard_event_file& tensorboard_event_file::operator=(tensorboard_event_file&&) noexcept = default;

result<tensorboard_event_file> tensorboard_event_file::create(const std::filesystem::path& dir,
                                                              double wall_time) {
  const auto seconds = static_cast<int64_t>(std::floor(wall_time));
  return create_at(dir / fmt::format("events.out.tfevents.{}.{}", seconds, host_name()), wall_time);
}

result<tensorboard_event_file> tensorboard_event_file::create_at(
    const std::filesystem::path& file_path, std::optional<double> file_version_wall_time) {
  auto opened = detail::output_file::create(file_path, std::size_t{1} << 20);
  if (!opened) return opened.error_status();
  auto s = std::make_unique<state>();
  s->file = std::move(*opened);
  if (file_version_wall_time) {
    s->event.set_wall_time(*file_version_wall_time);
    s->event.set_file_version("brain.Event:2");
    TRIALSTAT_RETURN_IF_ERROR(s->write_event());
  }
  return tensorboard_event_file(std::move(s));
}

status tensorboard_event_file::add_scalar(int64_t step, double wall_time, std::string_view tag,
                                          float value) {
  // The export's hot path (a dozen scalars per tensor and step): encoded by hand into a reused
  // buffer, byte for byte what the generated classes write (fields in number order, proto3
  // omission of a zero wall_time/step; simple_value is in a oneof, so always written):
  // Event{1 wall_time, 2 step, 5 summary{1 value{1 tag, 2 simple_value}}}.
  state& s = *state_;
  std::string& p = s.payload;
  p.clear();
  const auto varint = [&p](uint64_t v) {
    while (v >= 0x80) {
      p.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    p.push_back(static_cast<char>(v));
  };
  const auto varint_size = [](uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  };
  if (wall_time != 0.0) {
    p.push_back(static_cast<char>((1 << 3) | 1));
    put_le(p, std::bit_cast<uint64_t>(wall_time), 8);
  }
  if (step != 0) {
    p.push_back(static_cast<char>(2 << 3));
    varint(static_cast<uint64_t>(step));
  }
  const std::size_t value_body = 1 + varint_size(tag.size()) + tag.size() + 5;
  const std::size_t summary_body = 1 + varint_size(value_body) + value_body;
  p.push_back(static_cast<char>((5 << 3) | 2));  // Event.summary
  varint(summary_body);
  p.push_back(static_cast<char>((1 << 3) | 2));  // Summary.value
  varint(value_body);
  p.push_back(static_cast<char>((1 << 3) | 2));  // Value.tag
  varint(tag.size());
  p.append(tag);
  p.push_back(static_cast<char>((2 << 3) | 5));  // Value.simple_value (fixed32)
  put_le(p, std::bit_cast<uint32_t>(value), 4);
  return s.write_payload();
}

status tensorboard_event_file::add_histogram(int64_t step, double wall_time, std::string_view tag,
                                             const tensorboard_histogram& h) {
  if (h.limits.size() != h.counts.size()) {
    return status(error_code::invalid_argument,
                  fmt::format("histogram '{}' at step {}: {} limits but {} counts", tag, step,
                              h.limits.size(), h.counts.size()));
  }
  state& s = *state_;
  auto* histo = s.start_value(step, wall_time, tag)->mutable_histo();
  histo->set_min(h.min);
  histo->set_max(h.max);
  histo->set_num(h.num);
  histo->set_sum(h.sum);
  histo->set_sum_squares(h.sum_squares);
  histo->mutable_bucket_limit()->Add(h.limits.begin(), h.limits.end());
  auto* bucket = histo->mutable_bucket();
  bucket->Reserve(static_cast<int>(h.counts.size()));
  for (const int64_t c : h.counts) bucket->AddAlreadyReserved(static_cast<double>(c));
  return s.write_event();
}

status tensorboard_event_file::close() { return state_->file.commit(); }
const std::filesystem::path& tensorboard_event_file::path() const noexcept {
  return state_->file.final_path();
}
int64_t tensorboard_event_file::records() const noexcept { return state_->records; }

}  // namespace trialstat::writer
