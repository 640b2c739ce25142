// A .kltrace's content as Chrome trace JSON (the Trace Event Format that chrome://tracing and
// ui.perfetto.dev open): kernels and memory operations as complete events on one track per
// device and stream, NVTX ranges on one track per thread. Header-only and standard-library
// only, like format/kltrace.h: the tracer writes it beside the .kltrace when KERNLENS_TRACE_CHROME=1.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "kernlens/format/kltrace.h"

namespace kernlens::trace_format {

namespace detail {

inline void json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

// Microseconds (the format's unit) with ns precision, relative to the trace's first event.
inline std::string us(std::uint64_t ns, std::uint64_t origin_ns) {
  const std::uint64_t rel = ns >= origin_ns ? ns - origin_ns : 0;
  return std::to_string(rel / 1000) + "." + std::string(3 - std::to_string(rel % 1000).size(), '0') +
         std::to_string(rel % 1000);
}

// One complete ("X") event.
inline void complete_event(std::string& out, std::string_view name, std::string_view category, std::uint64_t pid,
                           std::uint64_t tid, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t origin_ns,
                           const std::string& args) {
  out += out.back() == '[' ? "\n" : ",\n";
  out += "{\"ph\":\"X\",\"name\":";
  json_string(out, name);
  out += ",\"cat\":\"" + std::string(category) + "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + us(start_ns, origin_ns) + ",\"dur\":" + us(end_ns, start_ns) + ",\"args\":{" + args + "}}";
}

inline std::uint64_t earliest_ns(const TraceData& t) {
  std::uint64_t origin = kOpenEnd;
  for (const auto& k : t.kernels) origin = std::min(origin, k.start_ns);
  for (const auto& m : t.memops) origin = std::min(origin, m.start_ns);
  for (const auto& r : t.ranges) origin = std::min(origin, r.start_ns);
  return origin == kOpenEnd ? 0 : origin;
}

}  // namespace detail

// GPU tracks are pid "GPU <device>" numbered 1'000'000 + device so that they cannot collide
// with the process's own pid, which holds the NVTX tracks.
inline std::string chrome_trace_json(const TraceData& t) {
  const std::uint64_t origin = detail::earliest_ns(t);
  const std::uint64_t last = std::max(t.process.trace_end_ns, origin);
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  for (const auto& k : t.kernels) {
    std::string args = "\"correlation\":" + std::to_string(k.correlation) + ",\"grid\":[" + std::to_string(k.grid[0]) +
                       "," + std::to_string(k.grid[1]) + "," + std::to_string(k.grid[2]) + "],\"block\":[" +
                       std::to_string(k.block[0]) + "," + std::to_string(k.block[1]) + "," +
                       std::to_string(k.block[2]) + "],\"registers\":" + std::to_string(k.registers_per_thread);
    detail::complete_event(out, t.strings[k.name], "kernel", 1'000'000 + k.device, k.stream, k.start_ns, k.end_ns,
                           origin, args);
  }
  for (const auto& m : t.memops) {
    detail::complete_event(out, m.kind == MemOpKind::kMemset ? "memset" : "memcpy", "memory", 1'000'000 + m.device,
                           m.stream, m.start_ns, m.end_ns, origin, "\"bytes\":" + std::to_string(m.bytes));
  }
  for (const auto& r : t.ranges) {
    std::string name = t.strings[r.domain].empty() ? t.strings[r.name] : t.strings[r.domain] + "@" + t.strings[r.name];
    detail::complete_event(out, name, "nvtx", t.process.pid, r.thread, r.start_ns,
                           r.end_ns == kOpenEnd ? last : r.end_ns, origin, "");
  }
  out += "\n]}\n";
  return out;
}

}  // namespace kernlens::trace_format
