// SPDX-License-Identifier: Apache-2.0
// End to end on the GPU (issue 3): statistics of a trial read from the page cache, as a ratio
// to the pinned host→device bandwidth measured in the same run, with per-stage times and a
// per-step timeline showing the overlap of reading/decoding (reader thread) with copying and
// computing (executor).
//
//   bench_gpu_pipeline --trial DIR [--pinned-mb 256] [--backend cuda|cpu] [--repeat 3]
//                      [--timeline FILE.csv] [--json FILE]
//
// Measured, in order: pinned and pageable H2D bandwidth (256 MiB copies, CUDA events); the
// trial's event files are read once to warm the page cache; then `run_statistics` (moments +
// 64-bin histograms of every tensor, the `trialstat stats` workload) is timed `--repeat` times
// (median); then an instrumented copy of statistics_stream's loop records, per step, when the
// reader read it and when the executor computed it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/stats/cuda_executor.hpp"
#include "host/pipeline/step_reader.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/trial/catalog.hpp"

namespace {

using namespace trialstat;
using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Host→device bandwidth of `bytes` from pinned (or pageable) memory, best of 5 (bytes/s).
double h2d_bandwidth(std::size_t bytes, bool pinned) {
  void* host = nullptr;
  std::vector<char> pageable;
  if (pinned) {
    if (cudaHostAlloc(&host, bytes, cudaHostAllocDefault) != cudaSuccess) return 0;
  } else {
    pageable.assign(bytes, 1);
    host = pageable.data();
  }
  std::memset(host, 1, bytes);
  void* device = nullptr;
  if (cudaMalloc(&device, bytes) != cudaSuccess) return 0;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    cudaEventRecord(start, stream);
    cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i > 0) best = std::max(best, static_cast<double>(bytes) / (ms / 1e3));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  cudaFree(device);
  if (pinned) cudaFreeHost(host);
  return best;
}

uint64_t warm_page_cache(const std::filesystem::path& root) {
  uint64_t total = 0;
  std::vector<char> buf(std::size_t{1} << 20);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "events")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
      total += static_cast<uint64_t>(in.gcount());
    }
  }
  return total;
}

plan::read_plan stats_plan(const trial::catalog& trial) {
  plan::read_plan plan;
  for (const auto id : trial.sorted_tensor_ids()) {
    stats::statistics_request request;
    request.histogram_bins = 64;
    plan.request(id, request);
  }
  return plan;
}

struct step_times {
  int64_t step = 0;
  double read_begin = 0, read_end = 0, compute_begin = 0, compute_end = 0;
  int64_t bytes = 0;
};

/// statistics_stream's loop, instrumented: a reader thread one step ahead, the executor, the
/// per-step timestamps.
std::vector<step_times> instrumented_run(const trial::catalog& trial, const plan::read_plan& plan,
                                         const pipeline::pipeline_options& options,
                                         stats::statistics_executor& executor, double& wall) {
  std::vector<trial::step_info> todo(trial.step_infos().begin(), trial.step_infos().end());
  std::vector<step_times> times(todo.size());
  pipeline::detail::step_batch batches[2];
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<pipeline::detail::step_batch*> free_batches{&batches[0], &batches[1]};
  std::deque<std::pair<std::size_t, pipeline::detail::step_batch*>> full;
  const auto t0 = clock_type::now();
  pipeline::detail::step_reader reader(trial, plan, options, executor.staging_pool());
  std::thread reader_thread([&] {
    for (std::size_t i = 0; i < todo.size(); ++i) {
      pipeline::detail::step_batch* batch = nullptr;
      {
        std::unique_lock lock(mutex);
        ready.wait(lock, [&] { return !free_batches.empty(); });
        batch = free_batches.front();
        free_batches.pop_front();
      }
      times[i].step = todo[i].step;
      times[i].read_begin = since(t0);
      (void)reader.read_step(todo[i], *batch);
      times[i].read_end = since(t0);
      times[i].bytes = batch->bytes_read;
      std::lock_guard lock(mutex);
      full.emplace_back(i, batch);
      ready.notify_all();
    }
  });
  stats::tensor_batch work;
  for (std::size_t n = 0; n < todo.size(); ++n) {
    std::size_t i = 0;
    pipeline::detail::step_batch* batch = nullptr;
    {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return !full.empty(); });
      std::tie(i, batch) = full.front();
      full.pop_front();
    }
    times[i].compute_begin = since(t0);
    const status s = pipeline::detail::compute_step_batch(executor, plan, *batch, work);
    if (!s.ok()) std::fprintf(stderr, "compute: %s\n", s.to_string().c_str());
    times[i].compute_end = since(t0);
    std::lock_guard lock(mutex);
    free_batches.push_back(batch);
    ready.notify_all();
  }
  reader_thread.join();
  wall = since(t0);
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trial_path, timeline_path, json_path, backend_name = "cuda";
  int64_t pinned_mb = 256;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--trial") trial_path = value;
    else if (flag == "--pinned-mb") pinned_mb = std::stoll(value);
    else if (flag == "--backend") backend_name = value;
    else if (flag == "--repeat") repeat = std::stoi(value);
    else if (flag == "--timeline") timeline_path = value;
    else if (flag == "--json") json_path = value;
  }
  if (trial_path.empty()) {
    std::fprintf(stderr, "usage: %s --trial DIR [--pinned-mb N] [--backend cuda|cpu] [--repeat R] "
                         "[--timeline FILE] [--json FILE]\n", argv[0]);
    return 2;
  }
  const stats::backend which = backend_name == "cpu" ? stats::backend::cpu : stats::backend::cuda;
  if (which == stats::backend::cuda && !stats::cuda_device_available()) {
    std::printf("no GPU: bench_gpu_pipeline skipped\n");
    return 0;
  }
  auto trial = trial::catalog::open(trial_path);
  if (!trial) {
    std::fprintf(stderr, "%s\n", trial.error_status().to_string().c_str());
    return 2;
  }
  const plan::read_plan plan = stats_plan(*trial);
  pipeline::pipeline_options options;
  options.backend = which;
  options.pinned_pool_bytes = static_cast<std::size_t>(pinned_mb) << 20;

  double pinned_bw = 0, pageable_bw = 0;
  if (stats::cuda_device_available()) {
    pinned_bw = h2d_bandwidth(std::size_t{256} << 20, true);
    pageable_bw = h2d_bandwidth(std::size_t{256} << 20, false);
  }
  const uint64_t trial_bytes = warm_page_cache(trial_path);
  std::printf("trial: %s, %.3f GB of event files, %zu steps, backend %s, --pinned-mb %lld\n",
              trial_path.c_str(), trial_bytes / 1e9, trial->step_infos().size(),
              backend_name.c_str(), static_cast<long long>(pinned_mb));
  std::printf("H2D bandwidth: pinned %.2f GB/s, pageable %.2f GB/s\n", pinned_bw / 1e9, pageable_bw / 1e9);

  std::vector<double> seconds;
  pipeline::pipeline_counters counters;
  for (int r = 0; r < repeat; ++r) {
    warm_page_cache(trial_path);
    const auto t0 = clock_type::now();
    auto run = pipeline::run_statistics(*trial, plan, options, [](const stats::step_statistics&) {});
    seconds.push_back(since(t0));
    if (!run) {
      std::fprintf(stderr, "run_statistics: %s\n", run.error_status().to_string().c_str());
      return 2;
    }
    counters = *run;
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double throughput = static_cast<double>(counters.bytes_read) / median;
  std::printf("end to end: %.3f s median of %d, %.3f GB read, %.2f GB/s = %.1f%% of pinned H2D\n",
              median, repeat, counters.bytes_read / 1e9, throughput / 1e9,
              pinned_bw > 0 ? 100.0 * throughput / pinned_bw : 0.0);

  // Per-stage times and timeline.
  auto executor = stats::make_statistics_executor(which, {options.pinned_pool_bytes, 0});
  if (!executor) {
    std::fprintf(stderr, "%s\n", executor.error_status().to_string().c_str());
    return 2;
  }
  warm_page_cache(trial_path);
  double wall = 0;
  const auto times = instrumented_run(*trial, plan, options, **executor, wall);
  double read_total = 0, compute_total = 0;
  for (const auto& t : times) {
    read_total += t.read_end - t.read_begin;
    compute_total += t.compute_end - t.compute_begin;
  }
  const double overlap = read_total + compute_total - wall;
  std::printf("stages: wall %.3f s, reader busy %.3f s (read + decode), executor busy %.3f s "
              "(copy + compute), overlapped %.3f s (%.0f%% of the shorter stage)\n",
              wall, read_total, compute_total, overlap,
              100.0 * overlap / std::max(1e-9, std::min(read_total, compute_total)));
  if (const auto c = stats::cuda_counters(**executor)) {
    std::printf("executor: %lld batches, %lld groups, %.3f GB to device (%.3f GB staged through "
                "pinned buffers, the rest straight from pinned reader buffers), staging memcpy "
                "%.3f s, waiting on streams %.3f s\n",
                static_cast<long long>(c->batches), static_cast<long long>(c->groups),
                c->bytes_to_device / 1e9, c->bytes_staged / 1e9, c->stage_seconds, c->wait_seconds);
  }
  if (!timeline_path.empty()) {
    FILE* f = std::fopen(timeline_path.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f, "step,bytes,read_begin_s,read_end_s,compute_begin_s,compute_end_s\n");
      for (const auto& t : times) {
        std::fprintf(f, "%lld,%lld,%.6f,%.6f,%.6f,%.6f\n", static_cast<long long>(t.step),
                     static_cast<long long>(t.bytes), t.read_begin, t.read_end, t.compute_begin,
                     t.compute_end);
      }
      std::fclose(f);
    }
  }
  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f,
                   "{\"trial\":\"%s\",\"backend\":\"%s\",\"pinned_mb\":%lld,\"bytes_read\":%lld,"
                   "\"median_s\":%.6f,\"throughput_GBps\":%.3f,\"pinned_h2d_GBps\":%.3f,"
                   "\"pageable_h2d_GBps\":%.3f,\"ratio\":%.4f,\"wall_s\":%.6f,\"reader_s\":%.6f,"
                   "\"executor_s\":%.6f}\n",
                   trial_path.c_str(), backend_name.c_str(), static_cast<long long>(pinned_mb),
                   static_cast<long long>(counters.bytes_read), median, throughput / 1e9,
                   pinned_bw / 1e9, pageable_bw / 1e9, pinned_bw > 0 ? throughput / pinned_bw : 0.0,
                   wall, read_total, compute_total);
      std::fclose(f);
    }
  }
  return 0;
}
