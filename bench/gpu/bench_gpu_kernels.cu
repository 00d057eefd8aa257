// SPDX-License-Identifier: Apache-2.0
// GPU kernels alone (issue 3), as ratios to the device-to-device copy bandwidth measured in the
// same run: for one float32 tensor of 4 KiB … 1 GiB and for batches of 10,000 small tensors,
// each statistic's launcher on device memory, timed with CUDA events over back-to-back launches
// replayed from a CUDA graph (no host launch overhead in the loop; the plain stream loop is
// reported beside it). Then the layouts users have (issue 13): tensors at unaligned byte offsets
// as payloads sit inside protobuf records (float32 at +3, float64 at +5: the byte-assembly load
// path and pairwise's per-element dtype switch), skewed data (90 % exact zeros, the rest in a
// narrow ReLU-like band: one hot histogram bin), float16 and bfloat16 tensors, and the
// 10,000-small-tensor batch with mixed dtypes at unaligned offsets.
//
// Bandwidths: a kernel moves the bytes it reads (N for one tensor, 2N for pairwise) per unit
// time; a D2D copy of N bytes moves 2N (read + write) — the memory traffic either way, so the
// ratio says how close the kernel gets to the device's streaming bandwidth.
//
// Usage: bench_gpu_kernels [--max-bytes N] [--json FILE]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/axis_counts/axis_counts_cuda.hpp"
#include "kernels/histogram/histogram_cuda.hpp"
#include "kernels/log_histogram/log_histogram_cuda.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/moments/moments_cuda.hpp"
#include "kernels/pairwise/pairwise_cuda.hpp"
#include "trialstat/stats/segment.hpp"

namespace {

using namespace trialstat;

#define CHECK_CUDA(expr)                                                                     \
  do {                                                                                       \
    const cudaError_t e_ = (expr);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #expr, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

#define CHECK_OK(expr)                                                            \
  do {                                                                            \
    const ::trialstat::status s_ = (expr);                                        \
    if (!s_.ok()) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #expr, s_.to_string().c_str());     \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

/// Benchmark data: uniform in [−4, 4) with rare NaN and +Inf, or skewed (90 % exact zeros,
/// the rest in [0, 0.5): nearly everything in one histogram bin).
enum class fill_mode { uniform, skewed };

template <class T>
__device__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ uint16_t from_float<uint16_t>(float v) {  // float16 bits
  return __half_as_ushort(__float2half_rn(v));
}
struct bf16_bits {
  uint16_t bits;
};
template <>
__device__ bf16_bits from_float<bf16_bits>(float v) {
  return {__bfloat16_as_ushort(__float2bfloat16_rn(v))};
}

template <class T>
__global__ void fill_typed_kernel(T* x, int64_t n, uint32_t seed, fill_mode mode) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float u = static_cast<float>(h) / 4294967296.0f;
    float v = (u - 0.5f) * 8.0f;
    if (mode == fill_mode::skewed) v = h % 10 != 0 ? 0.0f : u * 0.5f;
    if (mode == fill_mode::uniform && h % 100003 == 0) v = __int_as_float(0x7fc00000);  // NaN
    if (mode == fill_mode::uniform && h % 100019 == 0) v = __int_as_float(0x7f800000);  // +Inf
    x[i] = from_float<T>(v);
  }
}

/// n elements of `type` (float32, float64, float16, bfloat16) written at `dst` + `offset`
/// bytes (any offset: filled aligned, then copied byte-exact).
void place_tensor(std::byte* dst, uint64_t offset, dtype type, int64_t n, fill_mode mode,
                  uint32_t seed, cudaStream_t stream) {
  const std::size_t size = type == dtype::float64 ? 8 : type == dtype::float32 ? 4 : 2;
  void* tmp = nullptr;
  CHECK_CUDA(cudaMalloc(&tmp, std::max<std::size_t>(1, static_cast<std::size_t>(n) * size)));
  const unsigned blocks = static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 4096));
  switch (type) {
    case dtype::float64: fill_typed_kernel<<<blocks, 256, 0, stream>>>(static_cast<double*>(tmp), n, seed, mode); break;
    case dtype::float16: fill_typed_kernel<<<blocks, 256, 0, stream>>>(static_cast<uint16_t*>(tmp), n, seed, mode); break;
    case dtype::bfloat16: fill_typed_kernel<<<blocks, 256, 0, stream>>>(static_cast<bf16_bits*>(tmp), n, seed, mode); break;
    default: fill_typed_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(tmp), n, seed, mode); break;
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpyAsync(dst + offset, tmp, static_cast<std::size_t>(n) * size,
                             cudaMemcpyDeviceToDevice, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaFree(tmp));
}

struct timing {
  double stream_seconds = 0;  // per operation, back-to-back launches on a stream
  double graph_seconds = 0;   // per operation, replayed from a CUDA graph
};

/// Time `op` (enqueues on `stream`): warm-up, a stream loop, then a graph of `per_graph` ops.
timing time_op(cudaStream_t stream, int reps, const std::function<void()>& op) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  op();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  timing t;
  CHECK_CUDA(cudaEventRecord(start, stream));
  for (int i = 0; i < reps; ++i) op();
  CHECK_CUDA(cudaEventRecord(stop, stream));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  t.stream_seconds = ms / 1e3 / reps;

  const int per_graph = std::min(reps, 50);
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i) op();
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const int launches = std::max(1, reps / per_graph);
  CHECK_CUDA(cudaEventRecord(start, stream));
  for (int i = 0; i < launches; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaEventRecord(stop, stream));
  CHECK_CUDA(cudaEventSynchronize(stop));
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  t.graph_seconds = ms / 1e3 / (static_cast<double>(launches) * per_graph);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return t;
}

struct row {
  std::string workload;
  std::string op;
  double bytes_read = 0;
  timing t;
  double copy_bandwidth = 0;  // bytes moved per second by the D2D copy (read + write)
};

std::vector<row> rows;
FILE* json = nullptr;

void report(const row& r) {
  const double best = std::min(r.t.stream_seconds, r.t.graph_seconds);
  const double bw = r.bytes_read / best;
  std::printf("| %-26s | %-16s | %12.0f | %10.2f | %10.2f | %9.1f | %9.1f | %6.1f%% |\n",
              r.workload.c_str(), r.op.c_str(), r.bytes_read, r.t.stream_seconds * 1e6,
              r.t.graph_seconds * 1e6, bw / 1e9, r.copy_bandwidth / 1e9,
              100.0 * bw / r.copy_bandwidth);
  if (json != nullptr) {
    std::fprintf(json,
                 "{\"workload\":\"%s\",\"op\":\"%s\",\"bytes_read\":%.0f,\"stream_us\":%.3f,"
                 "\"graph_us\":%.3f,\"bandwidth_GBps\":%.3f,\"d2d_copy_GBps\":%.3f,\"ratio\":%.4f}\n",
                 r.workload.c_str(), r.op.c_str(), r.bytes_read, r.t.stream_seconds * 1e6,
                 r.t.graph_seconds * 1e6, bw / 1e9, r.copy_bandwidth / 1e9, bw / r.copy_bandwidth);
  }
  rows.push_back(r);
}

int reps_for(double bytes) {
  return static_cast<int>(std::clamp(4e9 / std::max(bytes, 1.0), 20.0, 2000.0));
}

/// Every statistic over `batch` (segments already on the device). `bytes` = Σ segment bytes.
void bench_batch(const std::string& workload, const kernels::device_batch& batch,
                 const std::byte* d_other, double bytes, int64_t axis0_rows, int64_t axis0_nodes,
                 cudaStream_t stream, dtype axis0_type = dtype::float32,
                 uint64_t axis0_offset = 0) {
  // D2D copy of the same bytes: the reference bandwidth of this workload's size.
  void* d_copy = nullptr;
  CHECK_CUDA(cudaMalloc(&d_copy, static_cast<std::size_t>(bytes)));
  const int reps = reps_for(bytes);
  const timing copy = time_op(stream, reps, [&] {
    CHECK_CUDA(cudaMemcpyAsync(d_copy, batch.d_base, static_cast<std::size_t>(bytes),
                               cudaMemcpyDeviceToDevice, stream));
  });
  const double copy_bw = 2.0 * bytes / std::min(copy.stream_seconds, copy.graph_seconds);
  report({workload, "d2d_copy", 2.0 * bytes, copy, copy_bw});

  const auto n = static_cast<std::size_t>(batch.num_segments);
  stats::moments* d_moments = nullptr;
  int64_t* d_counts = nullptr;
  stats::pairwise* d_pairs = nullptr;
  CHECK_CUDA(cudaMalloc(&d_moments, n * sizeof(stats::moments)));
  CHECK_CUDA(cudaMalloc(&d_counts, n * std::max<std::size_t>(64, kernels::log_histogram_num_cells) * sizeof(int64_t) +
                                       static_cast<std::size_t>(std::max<int64_t>(axis0_nodes, 1)) * 8));
  CHECK_CUDA(cudaMalloc(&d_pairs, n * sizeof(stats::pairwise)));
  std::size_t ws_bytes = 0, asked = 0;
  CHECK_OK(kernels::launch_moments(batch, nullptr, nullptr, &asked, stream));
  ws_bytes = std::max(ws_bytes, asked);
  CHECK_OK(kernels::launch_histograms(batch, nullptr, 64, nullptr, nullptr, &asked, stream));
  ws_bytes = std::max(ws_bytes, asked);
  CHECK_OK(kernels::launch_log_histograms(batch, nullptr, nullptr, &asked, stream));
  ws_bytes = std::max(ws_bytes, asked);
  CHECK_OK(kernels::launch_pairwise(batch, batch, {}, nullptr, nullptr, &asked, stream));
  ws_bytes = std::max(ws_bytes, asked);
  void* d_ws = nullptr;
  CHECK_CUDA(cudaMalloc(&d_ws, ws_bytes));

  const auto moments_op = [&] {
    std::size_t w = ws_bytes;
    CHECK_OK(kernels::launch_moments(batch, d_moments, d_ws, &w, stream));
  };
  report({workload, "moments", bytes, time_op(stream, reps, moments_op), copy_bw});
  moments_op();
  const auto histogram_op = [&] {
    std::size_t w = ws_bytes;
    CHECK_OK(kernels::launch_histograms(batch, d_moments, 64, d_counts, d_ws, &w, stream));
  };
  report({workload, "histogram64", bytes, time_op(stream, reps, histogram_op), copy_bw});
  // The fused record + histogram of DESIGN.md stage 5: two passes over the data.
  report({workload, "moments+hist64", 2 * bytes,
          time_op(stream, reps, [&] { moments_op(); histogram_op(); }), copy_bw});
  report({workload, "log_histogram", bytes, time_op(stream, reps, [&] {
            std::size_t w = ws_bytes;
            CHECK_OK(kernels::launch_log_histograms(batch, d_counts, d_ws, &w, stream));
          }), copy_bw});
  const kernels::device_batch other{d_other, batch.d_segments, batch.num_segments,
                                    batch.max_total_elements};
  report({workload, "pairwise", 2 * bytes, time_op(stream, reps, [&] {
            std::size_t w = ws_bytes;
            CHECK_OK(kernels::launch_pairwise(other, batch, {}, d_pairs, d_ws, &w, stream));
          }), copy_bw});
  if (axis0_rows > 0) {
    report({workload, "axis0_counts", bytes, time_op(stream, reps, [&] {
              CHECK_OK(kernels::launch_axis0_counts(batch.d_base + axis0_offset, axis0_type,
                                                    axis0_rows, axis0_nodes, {}, d_counts, stream));
            }), copy_bw});
  }
  CHECK_CUDA(cudaFree(d_ws));
  CHECK_CUDA(cudaFree(d_pairs));
  CHECK_CUDA(cudaFree(d_counts));
  CHECK_CUDA(cudaFree(d_moments));
  CHECK_CUDA(cudaFree(d_copy));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = std::size_t{1} << 30;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--max-bytes N] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: bench_gpu_kernels skipped\n");
    return 0;
  }
  if (json_path != nullptr) json = std::fopen(json_path, "w");
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs, %.1f GiB)\n\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("| workload                   | op               |   bytes read |  stream us |   graph us |  GB/s     | copy GB/s | ratio   |\n");
  std::printf("|----------------------------|------------------|--------------|------------|------------|-----------|-----------|---------|\n");

  // Two buffers of the largest size (the second is `previous` for pairwise).
  const std::size_t alloc = std::max<std::size_t>(max_bytes, std::size_t{128} << 20);
  float* d_a = nullptr;
  float* d_b = nullptr;
  CHECK_CUDA(cudaMalloc(&d_a, alloc));
  CHECK_CUDA(cudaMalloc(&d_b, alloc));
  fill_typed_kernel<<<1024, 256, 0, stream>>>(d_a, static_cast<int64_t>(alloc / 4), 1, fill_mode::uniform);
  fill_typed_kernel<<<1024, 256, 0, stream>>>(d_b, static_cast<int64_t>(alloc / 4), 2, fill_mode::uniform);
  stats::segment* d_segments = nullptr;
  CHECK_CUDA(cudaMalloc(&d_segments, 10000 * sizeof(stats::segment)));

  // One tensor, 4 KiB … max_bytes (x4 steps).
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    const int64_t n = static_cast<int64_t>(bytes / 4);
    const stats::segment seg{0, n, dtype::float32};
    CHECK_CUDA(cudaMemcpy(d_segments, &seg, sizeof seg, cudaMemcpyHostToDevice));
    const kernels::device_batch batch{reinterpret_cast<const std::byte*>(d_a), d_segments, 1, n};
    const int64_t nodes = std::min<int64_t>(n, 1024);
    bench_batch("1 tensor " + std::to_string(bytes >> 10) + " KiB", batch,
                reinterpret_cast<const std::byte*>(d_b), static_cast<double>(bytes), n / nodes,
                nodes, stream);
  }
  // 10,000 small tensors in one batch (sizes uniform in [lo, hi] float32 elements, packed
  // back to back at 4-byte alignment, as in an event file's payloads).
  for (const auto& [lo, hi] : {std::pair<int64_t, int64_t>{16, 112}, std::pair<int64_t, int64_t>{256, 1792}}) {
    std::mt19937_64 rng(7);
    std::vector<stats::segment> segments;
    uint64_t offset = 0;
    for (int i = 0; i < 10000; ++i) {
      const int64_t n = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
      segments.push_back({offset, n, dtype::float32});
      offset += static_cast<uint64_t>(n) * 4 + 32;  // a record's framing between tensors
    }
    int64_t total = 0;
    for (const auto& s : segments) total += s.num_elements;
    CHECK_CUDA(cudaMemcpy(d_segments, segments.data(), segments.size() * sizeof(stats::segment),
                          cudaMemcpyHostToDevice));
    const kernels::device_batch batch{reinterpret_cast<const std::byte*>(d_a), d_segments, 10000, total};
    bench_batch("10000 tensors " + std::to_string(lo * 4) + "-" + std::to_string(hi * 4) + " B",
                batch, reinterpret_cast<const std::byte*>(d_b), static_cast<double>(total) * 4, 0, 0,
                stream);
  }

  // The layouts of real event files (issue 13). One tensor of each kind, 1, 16 and 256 MiB (as
  // far as --max-bytes allows), placed in the same two buffers.
  struct layout {
    const char* label;
    dtype type;
    uint64_t offset;
    fill_mode mode;
  };
  const layout layouts[] = {
      {"f32 +3 B", dtype::float32, 3, fill_mode::uniform},
      {"f64 +5 B", dtype::float64, 5, fill_mode::uniform},
      {"f32 skewed", dtype::float32, 0, fill_mode::skewed},
      {"f32 skewed +1 B", dtype::float32, 1, fill_mode::skewed},
      {"f16", dtype::float16, 0, fill_mode::uniform},
      {"bf16", dtype::bfloat16, 0, fill_mode::uniform},
      {"bf16 +1 B", dtype::bfloat16, 1, fill_mode::uniform},
  };
  for (const layout& l : layouts) {
    for (std::size_t bytes = std::size_t{1} << 20; bytes <= std::min(max_bytes, std::size_t{256} << 20);
         bytes *= 16) {
      const std::size_t size = l.type == dtype::float64 ? 8 : l.type == dtype::float32 ? 4 : 2;
      const auto n = static_cast<int64_t>(bytes / size);
      if (bytes + l.offset > alloc) continue;
      auto* a = reinterpret_cast<std::byte*>(d_a);
      auto* b = reinterpret_cast<std::byte*>(d_b);
      place_tensor(a, l.offset, l.type, n, l.mode, 11, stream);
      place_tensor(b, l.offset, l.type, n, l.mode, 12, stream);
      const stats::segment seg{l.offset, n, l.type};
      CHECK_CUDA(cudaMemcpy(d_segments, &seg, sizeof seg, cudaMemcpyHostToDevice));
      const kernels::device_batch batch{a, d_segments, 1, n};
      const int64_t nodes = std::min<int64_t>(n, 1024);
      bench_batch("1 tensor " + std::to_string(bytes >> 20) + " MiB " + l.label, batch, b,
                  static_cast<double>(bytes), n / nodes, nodes, stream, l.type, l.offset);
    }
  }
  // 10,000 small tensors of mixed dtypes at arbitrary byte offsets (payloads inside records).
  {
    std::mt19937_64 rng(9);
    const dtype types[] = {dtype::float32, dtype::float32, dtype::float16, dtype::bfloat16,
                           dtype::float64};
    std::vector<stats::segment> segments;
    uint64_t offset = 0;
    double bytes = 0;
    int64_t total = 0;
    for (int i = 0; i < 10000; ++i) {
      const dtype t = types[rng() % 5];
      const std::size_t size = t == dtype::float64 ? 8 : t == dtype::float32 ? 4 : 2;
      const int64_t n = 64 + static_cast<int64_t>(rng() % 1985);
      offset += 20 + rng() % 13;  // framing and field tags: any byte offset
      segments.push_back({offset, n, t});
      offset += static_cast<uint64_t>(n) * size;
      bytes += static_cast<double>(n) * static_cast<double>(size);
      total += n;
    }
    if (offset <= alloc) {
      for (const auto& seg : segments) {
        place_tensor(reinterpret_cast<std::byte*>(d_a), seg.offset_bytes, seg.type, seg.num_elements,
                     fill_mode::uniform, static_cast<uint32_t>(seg.offset_bytes), stream);
      }
      CHECK_CUDA(cudaMemcpy(d_b, d_a, offset, cudaMemcpyDeviceToDevice));
      CHECK_CUDA(cudaMemcpy(d_segments, segments.data(), segments.size() * sizeof(stats::segment),
                            cudaMemcpyHostToDevice));
      const kernels::device_batch batch{reinterpret_cast<const std::byte*>(d_a), d_segments, 10000, total};
      bench_batch("10000 tensors mixed, unaligned", batch, reinterpret_cast<const std::byte*>(d_b),
                  bytes, 0, 0, stream);
    }
  }
  CHECK_CUDA(cudaFree(d_segments));
  CHECK_CUDA(cudaFree(d_b));
  CHECK_CUDA(cudaFree(d_a));
  CHECK_CUDA(cudaStreamDestroy(stream));
  if (json != nullptr) std::fclose(json);
  std::printf("\nratio = kernel bytes read per second / D2D copy bytes moved (read + write) per second, "
              "best of stream loop and graph replay.\n");
  return 0;
}
