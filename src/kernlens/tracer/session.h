// What the tracer's two entry points share: the CUDA side (tracer.cpp: CUPTI activity records
// and launch calls) and the NVTX side (nvtx_injection.cpp: ranges). Internal to
// libkernlens_tracer.so; depends on the C++ standard library and the trace format only.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kernlens/format/kltrace.h"

namespace kernlens::tracer {

namespace tf = kernlens::trace_format;

struct OpenRange {
  std::uint32_t domain, name, thread;
  std::uint64_t start_ns;
};

// The launch calls of one thread. Each thread appends to its own log, so that a launch takes
// an uncontended lock and never waits for another thread or for the writer at exit.
struct LaunchLog {
  std::mutex mutex;
  std::vector<tf::ApiCallRecord> calls;
};

// Everything the tracer holds. `mutex` guards `data`, the interner and the NVTX maps; the
// application's threads take it for NVTX events, CUPTI's buffer thread once per completed
// buffer. Launch calls go to per-thread logs instead (one per launch would contend).
struct Session {
  std::mutex mutex;
  tf::TraceData data;
  tf::StringInterner strings{data.strings};
  std::unordered_map<const char*, std::uint32_t> kernel_names;  // CUPTI's name pointer -> string id
  // (thread, domain string id) -> open push/pop ranges: NVTX keeps one stack per domain and thread.
  std::unordered_map<std::uint64_t, std::vector<OpenRange>> stacks;
  std::unordered_map<std::uint64_t, tf::RangeRecord> started;  // nvtxRangeId_t -> start/end range
  std::uint64_t next_range_id = 1;
  std::vector<std::unique_ptr<LaunchLog>> launch_logs;  // one per thread that launched
  std::atomic<bool> tracing{false};  // CUDA side started
  std::atomic<bool> recording{true};  // false once the file is written, or in a forked child
  std::atomic<bool> written{false};
};

inline Session& session() {
  static Session* s = new Session;  // never destroyed: atexit handlers and CUPTI threads use it
  return *s;
}

// The OS thread id (gettid), as nsys reports it; CUPTI is told to use the same.
inline std::uint32_t this_thread_id() {
  thread_local const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  return tid;
}

// The trace's clock: CLOCK_REALTIME in ns, which CUPTI is told to use too (tracer.cpp), so that
// GPU times, launch calls and NVTX ranges, even those opened before CUDA starts, share it.
inline std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace kernlens::tracer
