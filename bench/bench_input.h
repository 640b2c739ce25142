// The input file of a benchmark, loaded into memory once, before anything is timed, so that
// the figures measure parsing, not the disk.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "kernlens/common/file.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"

namespace kernlens::bench {

struct Input {
  std::string path;
  std::string bytes;  // a private copy (gzip inflated): a file mapping would fault pages in while timed
  std::string error;  // why there are no bytes
};

// $`env`, else `default_path`; `how_to_make` says how to get the default file.
inline Input load_input(const char* env, const std::string& default_path, const std::string& how_to_make) {
  const char* from_env = std::getenv(env);
  Input in{from_env && *from_env ? from_env : default_path, {}, {}};
  auto buffer = InputBuffer::open(in.path);
  if (!buffer) {
    in.error = buffer.error().to_string() + " (set " + env + ", or " + how_to_make + ")";
  } else {
    in.bytes = std::string(buffer->bytes());
  }
  return in;
}

// True when `in` has bytes; else marks the benchmark skipped, with the reason.
inline bool usable(benchmark::State& state, const Input& in) {
  if (in.error.empty()) return true;
  state.SkipWithError(in.error.c_str());
  return false;
}

// One timed read into a fresh `profile`, as `analyze` reads: the bytes in memory, or (with
// `from_file`) the file by path. False, and the benchmark skipped, on an error or when another
// reader took it than `format`'s (another reader's speed is not the figure).
inline bool read_as(benchmark::State& state, const Input& in, bool from_file, const ingest::ReadOptions& options,
                    model::InputFormat format, model::Profile& profile) {
  Status s = from_file ? ingest::read_input(in.path, profile, options)
                       : ingest::read_input_bytes(in.bytes, in.path, profile, options);
  if (!s) {
    state.SkipWithError(s.error().to_string().c_str());
    return false;
  }
  if (profile.inputs[0].format != format) {
    state.SkipWithError(("not the expected format: " + std::string(model::format_id(profile.inputs[0].format))).c_str());
    return false;
  }
  return true;
}

// Bytes and launches per second, and the file's size.
inline void report_throughput(benchmark::State& state, const Input& in, std::size_t launches) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.bytes.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * launches));
  state.counters["file_MB"] = static_cast<double>(in.bytes.size()) / 1e6;
}

}  // namespace kernlens::bench
