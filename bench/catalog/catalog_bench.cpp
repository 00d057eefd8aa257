// SPDX-License-Identifier: Apache-2.0
// Google Benchmark of the catalog's index-file path (issue 10: "≥ 100,000 index files per
// second parsed per core from the page cache"), each stage beside the plain read of the same
// files, in one process:
//
//   plain_read        openat (relative to the file's folder) + fstat + pread + close of every
//                     index file into one buffer, in listing order (POSIX calls only: the floor
//                     any reader of these files pays)
//   listing           the local source's listing of index/ and events/ (as the catalog lists)
//   source_read       the same files through the local source's read_objects (what the catalog
//                     reads with)
//   parse_in_memory   every index file parsed (index_json_parser) from bytes already in memory
//   catalog_open      catalog::open of the whole trial: listing index/ and events/, reading,
//                     parsing and applying every index file (what `trialstat info` does)
//
//   TRIALSTAT_BENCH_TRIAL=<trial folder> bench_catalog [--benchmark_repetitions=3]
//   (bench/catalog/run_catalog_bench.sh writes a 1,000-step × 64-worker trial and runs it)
//
// Counters (from the process's CPU time: each stage runs on one thread, so per core):
// files_per_cpu_second, us_per_file, and vs_plain_read = this stage's CPU per file / the plain
// read's (its best of 5 passes), measured in the same process. Every pass checks its work: the
// plain read and the source read get the same sizes, every file parses (with tensor items), and
// the catalog loads without a warning.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "host/trial/index_json.hpp"
#include "trialstat/io/object_reader.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/trial/catalog.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = trialstat::io;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "bench_catalog: %s\n", message.c_str());
  std::exit(2);
}

/// The trial and its index files (keys relative to the trial, as the catalog lists them).
struct trial_files {
  fs::path root;
  std::shared_ptr<const io::trial_source> source;
  std::vector<std::string> index_keys;
  std::vector<std::vector<std::byte>> index_bytes;  ///< each padded with record_padding_bytes
  uint64_t total_bytes = 0;
};

const trial_files& files() {
  static const trial_files loaded = [] {
    trial_files t;
    const char* root = std::getenv("TRIALSTAT_BENCH_TRIAL");
    if (root == nullptr || *root == '\0') die("set TRIALSTAT_BENCH_TRIAL to a trial folder");
    t.root = root;
    auto source = io::open_trial_source(t.root.string());
    if (!source) die(source.error_status().message());
    t.source = *source;
    std::vector<io::object_info> listed;
    if (const auto s = t.source->list("index", {}, listed); !s.ok()) die(s.message());
    for (auto& object : listed) {
      if (object.key.ends_with(".json")) t.index_keys.push_back(std::move(object.key));
    }
    if (t.index_keys.empty()) die(t.root.string() + ": no index files under index/");
    t.index_bytes.resize(t.index_keys.size());
    t.source->read_objects(t.index_keys, [&](std::size_t i, trialstat::result<std::span<const std::byte>> bytes) {
      if (!bytes) die(bytes.error_status().message());
      t.index_bytes[i].assign(bytes->begin(), bytes->end());
      t.index_bytes[i].resize(bytes->size() + io::record_padding_bytes);
      t.total_bytes += bytes->size();
    });
    return t;
  }();
  return loaded;
}

/// Open, fstat, pread and close every index file into `buffer`, each opened relative to its
/// folder (openat; one open of each folder), so that no path is walked per file: the cheapest
/// plain read of these files. @return the bytes read.
uint64_t plain_read_once(const trial_files& t, std::vector<std::byte>& buffer) {
  uint64_t total = 0;
  std::string folder;
  int folder_fd = -1;
  for (const std::string& key : t.index_keys) {
    const std::size_t slash = key.rfind('/');
    const std::string_view prefix(key.data(), slash + 1);
    if (folder_fd < 0 || prefix != folder) {
      if (folder_fd >= 0) ::close(folder_fd);
      folder.assign(prefix);
      folder_fd = ::open((t.root / folder).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (folder_fd < 0) die(folder + ": cannot open");
    }
    const char* name = key.c_str() + slash + 1;
    const int fd = ::openat(folder_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) die(key + ": cannot open");
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) die(key + ": not a regular file");
    const auto size = static_cast<std::size_t>(info.st_size);
    if (buffer.size() < size) buffer.resize(size);
    if (::pread(fd, buffer.data(), size, 0) != static_cast<ssize_t>(size)) die(key + ": short read");
    ::close(fd);
    total += size;
  }
  if (folder_fd >= 0) ::close(folder_fd);
  return total;
}

double process_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

/// CPU microseconds per file of the plain read: the best of 5 passes, measured once.
double plain_read_us_per_file() {
  static const double us = [] {
    const trial_files& t = files();
    std::vector<std::byte> buffer;
    double best = 1e300;
    for (int pass = 0; pass < 5; ++pass) {
      const double start = process_cpu_seconds();
      if (plain_read_once(t, buffer) != t.total_bytes) die("plain read: bytes differ from the source read");
      best = std::min(best, process_cpu_seconds() - start);
    }
    return 1e6 * best / static_cast<double>(t.index_keys.size());
  }();
  return us;
}

/// Runs `pass` (one pass over every index file) for the benchmark's iterations and sets the
/// counters from the process CPU time they took.
template <typename Pass>
void run(benchmark::State& state, Pass&& pass) {
  const trial_files& t = files();
  const double reference = plain_read_us_per_file();
  const double start = process_cpu_seconds();
  for (auto _ : state) pass(t);
  const double cpu = process_cpu_seconds() - start;
  const auto n = static_cast<double>(t.index_keys.size());
  const double passes = static_cast<double>(state.iterations());
  state.counters["files"] = n;
  state.counters["files_per_cpu_second"] = n * passes / cpu;
  state.counters["us_per_file"] = 1e6 * cpu / (n * passes);
  state.counters["vs_plain_read"] = 1e6 * cpu / (n * passes) / reference;
}

void plain_read(benchmark::State& state) {
  std::vector<std::byte> buffer;
  run(state, [&](const trial_files& t) {
    if (plain_read_once(t, buffer) != t.total_bytes) die("plain read: bytes differ from the source read");
    benchmark::DoNotOptimize(buffer.data());
  });
}

void listing(benchmark::State& state) {
  run(state, [](const trial_files& t) {
    std::vector<io::object_info> index, events;
    if (const auto s = t.source->list("index", {}, index); !s.ok()) die(s.message());
    if (const auto s = t.source->list("events", {}, events); !s.ok()) die(s.message());
    if (index.size() < t.index_keys.size()) die("listing: fewer index files than before");
    benchmark::DoNotOptimize(events.data());
  });
}

void source_read(benchmark::State& state) {
  run(state, [](const trial_files& t) {
    uint64_t bytes = 0;
    t.source->read_objects(t.index_keys, [&](std::size_t i, trialstat::result<std::span<const std::byte>> got) {
      if (!got || got->size() + io::record_padding_bytes != t.index_bytes[i].size()) die("source read: " + t.index_keys[i]);
      bytes += got->size();
    });
    if (bytes != t.total_bytes) die("source read: bytes differ");
  });
}

void parse_in_memory(benchmark::State& state) {
  trialstat::trial::detail::index_json_parser parser;
  trialstat::trial::detail::parsed_index parsed;
  run(state, [&](const trial_files& t) {
    std::size_t tensors = 0;
    for (const auto& bytes : t.index_bytes) {
      const std::size_t size = bytes.size() - io::record_padding_bytes;
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), size);
      if (const auto s = parser.parse(text, bytes.size(), parsed); !s.ok()) die(s.message());
      tensors += parsed.tensors.size();
    }
    if (tensors == 0) die("parse: no tensor items in the index files");
    benchmark::DoNotOptimize(tensors);
  });
}

void catalog_open(benchmark::State& state) {
  run(state, [](const trial_files& t) {
    auto catalog = trialstat::trial::catalog::open(t.source);
    if (!catalog) die(catalog.error_status().message());
    if (!catalog->warnings().empty()) die("catalog: " + catalog->warnings().front().problem.message());
    if (catalog->tensor_names().empty()) die("catalog: no tensors");
    benchmark::DoNotOptimize(catalog->tensor_names().data());
  });
}

}  // namespace

BENCHMARK(plain_read)->Unit(benchmark::kMillisecond);
BENCHMARK(listing)->Unit(benchmark::kMillisecond);
BENCHMARK(source_read)->Unit(benchmark::kMillisecond);
BENCHMARK(parse_in_memory)->Unit(benchmark::kMillisecond);
BENCHMARK(catalog_open)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
