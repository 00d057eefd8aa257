// SPDX-License-Identifier: Apache-2.0
// Statistics records to bytes and back (stats/record_codec.hpp): a writer and a reader walk the
// record in the same field order (`fields` below), so the two cannot drift. Used by the MPI step
// messages (distributed/record_codec.hpp) and the statistics store's record blobs (issue 26).
#include "trialstat/stats/record_codec.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

namespace trialstat::stats {
namespace {

/// Appends to `out` through its own cursor: the vector is sized to its capacity (at least 256
/// bytes more) while the record is written, grown by doubling, and cut to what was written when
/// the writer goes (a vector::insert per field cost more than the fields' bytes).
class writer {
 public:
  explicit writer(std::vector<std::byte>& out) : out_(out), used_(out.size()) {
    out_.resize(std::max(out_.capacity(), used_ + 256));
  }
  ~writer() { out_.resize(used_); }
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void pod(const T& value) {
    append(reinterpret_cast<const std::byte*>(&value), sizeof(T));
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<uint64_t>(v.size()));
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (!v.empty()) append(reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(T));
    } else {
      for (const auto& x : v) item(x);
    }
  }
  void bytes(const std::byte* data, uint64_t size) {
    pod(size);
    if (size > 0) append(data, static_cast<std::size_t>(size));
  }
  void str(const std::string& s) { bytes(reinterpret_cast<const std::byte*>(s.data()), s.size()); }
  template <typename T>
  void opt(const std::optional<T>& o) {
    pod(static_cast<uint8_t>(o.has_value()));
    if (o) item(*o);
  }
  template <typename T>
  void item(const T& x) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      pod(x);
    } else {
      fields(*this, const_cast<T&>(x));
    }
  }
  static constexpr bool reading = false;

 private:
  void append(const std::byte* data, std::size_t size) {
    if (out_.size() - used_ < size) out_.resize(std::max(out_.size() * 2, used_ + size));
    std::memcpy(out_.data() + used_, data, size);
    used_ += size;
  }

  std::vector<std::byte>& out_;
  std::size_t used_;  // bytes of out_ written
};

class reader {
 public:
  explicit reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void pod(T& value) {
    if (!take(sizeof(T))) return;
    std::memcpy(&value, in_.data() + at_ - sizeof(T), sizeof(T));
  }
  template <typename T>
  void vec(std::vector<T>& v) {
    uint64_t n = 0;
    pod(n);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (!ok_ || n > (in_.size() - at_) / std::max<std::size_t>(sizeof(T), 1)) return fail();
      v.resize(n);
      if (n != 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));  // data() may be null
      at_ += n * sizeof(T);
    } else {
      if (!ok_ || n > in_.size() - at_) return fail();  // every item takes at least a byte
      v.resize(n);
      for (auto& x : v) item(x);
    }
  }
  const std::byte* bytes(uint64_t& size) {
    pod(size);
    if (!ok_ || size > in_.size() - at_) {
      fail();
      return nullptr;
    }
    const std::byte* p = in_.data() + at_;
    at_ += size;
    return size > 0 ? p : nullptr;
  }
  void str(std::string& s) {
    uint64_t n = 0;
    const std::byte* p = bytes(n);
    if (p != nullptr) {
      s.assign(reinterpret_cast<const char*>(p), n);
    } else if (ok_) {
      s.clear();  // an empty string (a reused record must not keep the old text)
    }
  }
  template <typename T>
  void opt(std::optional<T>& o) {
    uint8_t has = 0;
    pod(has);
    if (has == 0) return o.reset();
    o.emplace();
    item(*o);
  }
  template <typename T>
  void item(T& x) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      pod(x);
    } else {
      fields(*this, x);
    }
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] bool at_end() const noexcept { return at_ == in_.size(); }
  [[nodiscard]] std::size_t position() const noexcept { return at_; }
  static constexpr bool reading = true;

 private:
  bool take(std::size_t n) {
    if (!ok_ || n > in_.size() - at_) {
      fail();
      return false;
    }
    at_ += n;
    return true;
  }
  void fail() { ok_ = false; }
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// The field lists, one per non-trivially-copyable type, shared by writing and reading.
template <typename IO>
void fields(IO& io, std::string& s) {
  io.str(s);
}
template <typename IO>
void fields(IO& io, histogram& h) {
  io.pod(h.bins);
  io.pod(h.lo);
  io.pod(h.hi);
  io.pod(h.degenerate);
  io.vec(h.counts);
}
template <typename IO>
void fields(IO& io, log_histogram& h) {
  io.vec(h.counts);
  io.pod(h.nan_count);
  io.pod(h.pos_inf_count);
  io.pod(h.neg_inf_count);
  io.pod(h.below_count);
  io.pod(h.above_count);
}
template <typename IO>
void fields(IO& io, previous_comparison& c) {
  io.pod(c.previous_step);
  io.pod(c.shape_matches);
  io.pod(c.result);
  io.vec(c.allclose_violations);
}
template <typename IO>
void fields(IO& io, axis0_counts& a) {
  io.pod(a.batch);
  io.vec(a.per_node);
}
template <typename IO>
void fields(IO& io, channel_sums& c) {
  io.pod(c.axis);
  io.vec(c.sum);
  io.vec(c.count);
  io.vec(c.nan_count);
  io.vec(c.pos_inf_count);
  io.vec(c.neg_inf_count);
}
/// A status as its code and message.
template <typename IO>
void status_fields(IO& io, status& s) {
  auto code = s.code();
  std::string message = s.message();
  io.pod(code);
  io.str(message);
  if constexpr (IO::reading) s = code == error_code::ok ? status() : status(code, message);
}
template <typename IO>
void fields(IO& io, record_problem& p) {
  io.pod(p.location);
  status_fields(io, p.reason);
}
template <typename IO>
void fields(IO& io, statistics_record& r) {
  io.pod(r.tensor);
  io.pod(r.worker);
  io.pod(r.step);
  io.pod(r.mode);
  io.pod(r.mode_step);
  io.opt(r.wall_time);
  status_fields(io, r.raw_status);
  io.pod(r.type);
  io.vec(r.shape);
  io.pod(r.num_elements);
  io.opt(r.moments);
  io.opt(r.histogram);
  io.opt(r.log_histogram);
  io.opt(r.scalar);
  io.vec(r.previous);
  io.vec(r.axis0);
  io.vec(r.saved_reductions);
  io.vec(r.reduction_problems);
  io.vec(r.percentiles);
  io.vec(r.equal_counts);
  io.vec(r.channel_sums);
  io.vec(r.strings);
  if constexpr (IO::reading) {
    uint64_t size = 0;
    r.values_data = io.bytes(size);
  } else {
    const uint64_t size =
        r.values_data == nullptr ? 0 : static_cast<uint64_t>(r.num_elements) * dtype_size_bytes(r.type);
    io.bytes(r.values_data, size);
  }
}

}  // namespace

void append_record(const statistics_record& record, std::vector<std::byte>& out) {
  writer w(out);
  w.item(record);
}

bool read_record(std::span<const std::byte> bytes, std::size_t& at, statistics_record& record) {
  if (at > bytes.size()) return false;
  reader in(bytes.subspan(at));
  in.item(record);
  if (!in.ok()) return false;
  at += in.position();
  return true;
}

}  // namespace trialstat::stats
