// The input file of a benchmark, loaded into memory once, before anything is timed, so that
// the figures measure parsing, not the disk.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "kernlens/common/file.h"

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

}  // namespace kernlens::bench
