// The .kltrace file format (docs/trace-format.md): what the CUPTI tracer writes and
// ingest/kltrace.cpp reads. Writer and reader share this one header so that they cannot drift,
// and it depends on the C++ standard library only: the tracer (a shared library loaded into
// the user's program) must not link the rest of kernlens.
//
//   file     = header, then `section_count` sections
//   header   = magic "KLTRACE\0" (8 bytes), u32 version, u32 section_count
//   section  = u32 id, u32 record_bytes, u64 record_count, u64 payload_bytes, payload
//
// Little-endian throughout. Fixed-size records carry their size in the section header, so a
// later version may append fields and an older reader still reads the prefix it knows. Every
// string (kernel names, NVTX names and domains, the command line) is stored once in the string
// table and referred to by index; index 0 is always the empty string.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace kernlens::trace_format {

inline constexpr std::string_view kMagic{"KLTRACE\0", 8};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kSectionHeaderBytes = 24;
// A range that never ended (the program exited inside it) has this end.
inline constexpr std::uint64_t kOpenEnd = std::numeric_limits<std::uint64_t>::max();

enum class SectionId : std::uint32_t {
  kStrings = 1,   // record_count strings, each u32 length + bytes (record_bytes 0)
  kProcess = 2,   // exactly one ProcessRecord
  kDevices = 3,   // DeviceRecord
  kKernels = 4,   // KernelRecord
  kMemOps = 5,    // MemOpRecord (memcpy and memset)
  kApiCalls = 6,  // ApiCallRecord: the CUDA calls that launched the GPU work above
  kRanges = 7,    // RangeRecord: NVTX push/pop and start/end ranges
};

struct ProcessRecord {
  std::uint32_t pid = 0;
  std::uint32_t parent_pid = 0;
  std::uint32_t command_line = 0;  // string id: argv joined by spaces
  std::uint32_t cupti_version = 0;
  std::uint64_t trace_start_ns = 0;  // CUPTI timestamp when tracing began
  std::uint64_t trace_end_ns = 0;    // CUPTI timestamp when the file was written
};

struct DeviceRecord {
  std::uint32_t ordinal = 0;
  std::uint32_t name = 0;  // string id, e.g. "NVIDIA H100 80GB HBM3"
  std::uint32_t cc_major = 0, cc_minor = 0;
  std::uint32_t sm_count = 0;
  std::uint32_t max_threads_per_sm = 0;
  std::uint32_t max_shared_memory_per_sm_bytes = 0;
  std::uint32_t l2_cache_bytes = 0;
  std::uint32_t core_clock_khz = 0;
  std::uint32_t reserved = 0;
  std::uint64_t global_memory_bytes = 0;
};

struct KernelRecord {
  std::uint32_t name = 0;  // string id: the mangled name as CUPTI reports it
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::array<std::uint32_t, 3> grid{}, block{};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

enum class MemOpKind : std::uint8_t { kMemcpy = 0, kMemset = 1 };

struct MemOpRecord {
  MemOpKind kind = MemOpKind::kMemcpy;
  std::uint8_t copy_kind = 0;  // CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, ...)
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

struct ApiCallRecord {
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0;  // the OS thread id
  std::uint64_t start_ns = 0, end_ns = 0;
};

enum class RangeKind : std::uint8_t { kPushPop = 0, kStartEnd = 1 };

struct RangeRecord {
  std::uint32_t domain = 0;  // string id; 0 (empty) for the default domain
  std::uint32_t name = 0;    // string id
  RangeKind kind = RangeKind::kPushPop;
  std::uint32_t thread = 0;  // where the range started
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = kOpenEnd;
};

// A whole trace in memory: what the writer encodes and the reader decodes.
struct TraceData {
  std::vector<std::string> strings{std::string()};
  ProcessRecord process;
  std::vector<DeviceRecord> devices;
  std::vector<KernelRecord> kernels;
  std::vector<MemOpRecord> memops;
  std::vector<ApiCallRecord> api_calls;
  std::vector<RangeRecord> ranges;
};

// Interns strings into TraceData::strings: each distinct string is stored once.
class StringInterner {
 public:
  explicit StringInterner(std::vector<std::string>& strings) : strings_(strings) {
    for (std::uint32_t i = 0; i < strings_.size(); ++i) index_.emplace(strings_[i], i);
  }
  std::uint32_t intern(std::string_view s) {
    auto it = index_.find(std::string(s));
    if (it != index_.end()) return it->second;
    auto id = static_cast<std::uint32_t>(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(strings_.back(), id);
    return id;
  }

 private:
  std::vector<std::string>& strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

// ---- record layouts: the field order on disk, and record sizes ----------------------------

inline constexpr std::uint32_t kProcessRecordBytes = 32;
inline constexpr std::uint32_t kDeviceRecordBytes = 48;
inline constexpr std::uint32_t kKernelRecordBytes = 72;
inline constexpr std::uint32_t kMemOpRecordBytes = 48;
inline constexpr std::uint32_t kApiCallRecordBytes = 24;
inline constexpr std::uint32_t kRangeRecordBytes = 32;

namespace detail {

class Out {
 public:
  explicit Out(std::string& bytes) : bytes_(bytes) {}
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void pad(std::size_t n) { bytes_.append(n, '\0'); }
  void raw(std::string_view s) { bytes_.append(s); }

 private:
  std::string& bytes_;
};

class In {
 public:
  In(std::string_view bytes, std::size_t at) : bytes_(bytes), at_(at) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(bytes_[at_++]); }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{u8()} << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  void skip(std::size_t n) { at_ += n; }
  std::size_t at() const { return at_; }

 private:
  std::string_view bytes_;
  std::size_t at_;
};

// One function per record type serves both directions (IO is Out or In), so that the
// writer's and the reader's field orders are the same code.
template <class IO, class Rec>
void u32_field(IO& io, Rec& v) {
  if constexpr (std::is_same_v<IO, Out>) io.u32(static_cast<std::uint32_t>(v));
  else v = static_cast<Rec>(io.u32());
}
template <class IO>
void u64_field(IO& io, std::uint64_t& v) {
  if constexpr (std::is_same_v<IO, Out>) io.u64(v);
  else v = io.u64();
}
template <class IO, class Rec>
void u8_field(IO& io, Rec& v) {
  if constexpr (std::is_same_v<IO, Out>) io.u8(static_cast<std::uint8_t>(v));
  else v = static_cast<Rec>(io.u8());
}
template <class IO>
void pad_field(IO& io, std::size_t n) {
  if constexpr (std::is_same_v<IO, Out>) io.pad(n);
  else io.skip(n);
}

template <class IO>
void fields(IO& io, ProcessRecord& r) {
  u32_field(io, r.pid), u32_field(io, r.parent_pid), u32_field(io, r.command_line);
  u32_field(io, r.cupti_version), u64_field(io, r.trace_start_ns), u64_field(io, r.trace_end_ns);
}
template <class IO>
void fields(IO& io, DeviceRecord& r) {
  for (auto* f : {&r.ordinal, &r.name, &r.cc_major, &r.cc_minor, &r.sm_count, &r.max_threads_per_sm,
                  &r.max_shared_memory_per_sm_bytes, &r.l2_cache_bytes, &r.core_clock_khz, &r.reserved}) {
    u32_field(io, *f);
  }
  u64_field(io, r.global_memory_bytes);
}
template <class IO>
void fields(IO& io, KernelRecord& r) {
  for (auto* f : {&r.name, &r.device, &r.context, &r.stream, &r.correlation}) u32_field(io, *f);
  for (auto& v : r.grid) u32_field(io, v);
  for (auto& v : r.block) u32_field(io, v);
  for (auto* f : {&r.registers_per_thread, &r.static_shared_bytes, &r.dynamic_shared_bytes}) u32_field(io, *f);
  u64_field(io, r.start_ns), u64_field(io, r.end_ns);
}
template <class IO>
void fields(IO& io, MemOpRecord& r) {
  u8_field(io, r.kind), u8_field(io, r.copy_kind), pad_field(io, 2);
  for (auto* f : {&r.device, &r.context, &r.stream, &r.correlation}) u32_field(io, *f);
  pad_field(io, 4);
  u64_field(io, r.bytes), u64_field(io, r.start_ns), u64_field(io, r.end_ns);
}
template <class IO>
void fields(IO& io, ApiCallRecord& r) {
  u32_field(io, r.correlation), u32_field(io, r.thread), u64_field(io, r.start_ns), u64_field(io, r.end_ns);
}
template <class IO>
void fields(IO& io, RangeRecord& r) {
  u32_field(io, r.domain), u32_field(io, r.name), u8_field(io, r.kind), pad_field(io, 3);
  u32_field(io, r.thread), u64_field(io, r.start_ns), u64_field(io, r.end_ns);
}

inline void section_header(Out& out, SectionId id, std::uint32_t record_bytes, std::uint64_t count,
                           std::uint64_t payload_bytes) {
  out.u32(static_cast<std::uint32_t>(id));
  out.u32(record_bytes);
  out.u64(count);
  out.u64(payload_bytes);
}

template <class Rec>
void records_section(std::string& bytes, SectionId id, std::uint32_t record_bytes, const std::vector<Rec>& recs) {
  Out out(bytes);
  section_header(out, id, record_bytes, recs.size(), std::uint64_t{record_bytes} * recs.size());
  for (Rec r : recs) fields(out, r);  // a copy: fields() also serves the reader
}

}  // namespace detail

// The file's bytes.
inline std::string encode(const TraceData& trace) {
  std::string bytes;
  detail::Out out(bytes);
  out.raw(kMagic);
  out.u32(kVersion);
  out.u32(7);  // sections
  std::string strings;
  detail::Out s(strings);
  for (const auto& str : trace.strings) {
    s.u32(static_cast<std::uint32_t>(str.size()));
    s.raw(str);
  }
  detail::section_header(out, SectionId::kStrings, 0, trace.strings.size(), strings.size());
  out.raw(strings);
  detail::records_section(bytes, SectionId::kProcess, kProcessRecordBytes, std::vector{trace.process});
  detail::records_section(bytes, SectionId::kDevices, kDeviceRecordBytes, trace.devices);
  detail::records_section(bytes, SectionId::kKernels, kKernelRecordBytes, trace.kernels);
  detail::records_section(bytes, SectionId::kMemOps, kMemOpRecordBytes, trace.memops);
  detail::records_section(bytes, SectionId::kApiCalls, kApiCallRecordBytes, trace.api_calls);
  detail::records_section(bytes, SectionId::kRanges, kRangeRecordBytes, trace.ranges);
  return bytes;
}

inline bool has_magic(std::string_view bytes) { return bytes.substr(0, kMagic.size()) == kMagic; }

// Where and why decoding stopped.
struct DecodeError {
  std::string what;
  std::uint64_t offset = 0;
};

namespace detail {

inline std::string_view section_name(std::uint32_t id) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "unknown", "string", "process", "device", "kernel", "memory operation", "API call", "NVTX range"};
  return id < kNames.size() ? kNames[id] : kNames[0];
}

class Decoder {
 public:
  Decoder(std::string_view bytes, TraceData& trace) : bytes_(bytes), trace_(trace) {}

  bool run(DecodeError& err) {
    if (bytes_.size() < kHeaderBytes || !has_magic(bytes_)) return fail(err, "not a kernlens trace (no KLTRACE magic)", 0);
    In in(bytes_, kMagic.size());
    const std::uint32_t version = in.u32();
    if (version != kVersion) {
      return fail(err, "kernlens trace version " + std::to_string(version) + " (this kernlens reads version " +
                           std::to_string(kVersion) + ")", kMagic.size());
    }
    const std::uint32_t sections = in.u32();
    std::size_t at = kHeaderBytes;
    trace_.strings.clear();
    bool have_process = false, have_strings = false;
    for (std::uint32_t i = 0; i < sections; ++i) {
      if (!section(at, err, have_process, have_strings)) return false;
    }
    if (at != bytes_.size()) return fail(err, "trailing bytes after the last section", at);
    if (!have_strings || trace_.strings.empty()) return fail(err, "no string table", at);
    if (!have_process) return fail(err, "no process section", at);
    return check_string_ids(err);
  }

 private:
  bool fail(DecodeError& err, std::string what, std::uint64_t offset) {
    err = DecodeError{std::move(what), offset};
    return false;
  }

  bool section(std::size_t& at, DecodeError& err, bool& have_process, bool& have_strings) {
    if (bytes_.size() - at < kSectionHeaderBytes) return fail(err, "truncated section header", at);
    In in(bytes_, at);
    const std::uint32_t id = in.u32(), record_bytes = in.u32();
    const std::uint64_t count = in.u64(), payload = in.u64();
    const std::size_t body = at + kSectionHeaderBytes;
    if (payload > bytes_.size() - body) {
      return fail(err, "truncated " + std::string(section_name(id)) + " section (" + std::to_string(payload) +
                           " bytes declared, " + std::to_string(bytes_.size() - body) + " present)", body);
    }
    if (id != static_cast<std::uint32_t>(SectionId::kStrings) &&
        (record_bytes == 0 || payload / record_bytes != count || payload % record_bytes != 0)) {
      return fail(err, std::string(section_name(id)) + " section: " + std::to_string(count) + " records of " +
                           std::to_string(record_bytes) + " bytes do not fill its " + std::to_string(payload) +
                           " bytes", at);
    }
    bool ok = true;
    switch (static_cast<SectionId>(id)) {
      case SectionId::kStrings: ok = strings(body, count, payload, err), have_strings = true; break;
      case SectionId::kProcess: ok = process(body, count, record_bytes, err), have_process = true; break;
      case SectionId::kDevices: ok = records(body, count, record_bytes, kDeviceRecordBytes, trace_.devices, err); break;
      case SectionId::kKernels: ok = records(body, count, record_bytes, kKernelRecordBytes, trace_.kernels, err); break;
      case SectionId::kMemOps: ok = records(body, count, record_bytes, kMemOpRecordBytes, trace_.memops, err); break;
      case SectionId::kApiCalls:
        ok = records(body, count, record_bytes, kApiCallRecordBytes, trace_.api_calls, err);
        break;
      case SectionId::kRanges: ok = records(body, count, record_bytes, kRangeRecordBytes, trace_.ranges, err); break;
      default: break;  // a section a later version added: skipped
    }
    at = body + static_cast<std::size_t>(payload);
    return ok;
  }

  bool strings(std::size_t at, std::uint64_t count, std::uint64_t payload, DecodeError& err) {
    const std::size_t end = at + static_cast<std::size_t>(payload);
    // Every string takes at least its 4-byte length: a larger count is damage, not a reason
    // to reserve memory.
    if (count > payload / 4) return fail(err, "string section: " + std::to_string(count) + " strings cannot fit", at);
    trace_.strings.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
      if (end - at < 4) return fail(err, "truncated string section", at);
      In in(bytes_, at);
      const std::uint32_t length = in.u32();
      if (length > end - at - 4) return fail(err, "truncated string section", at);
      trace_.strings.emplace_back(bytes_.substr(at + 4, length));
      at += 4 + length;
    }
    if (at != end) return fail(err, "string section: bytes left after its last string", at);
    if (!trace_.strings.empty() && !trace_.strings[0].empty()) return fail(err, "string 0 is not empty", at);
    return true;
  }

  bool process(std::size_t at, std::uint64_t count, std::uint32_t record_bytes, DecodeError& err) {
    if (count != 1) return fail(err, "process section: " + std::to_string(count) + " records, expected 1", at);
    std::vector<ProcessRecord> one;
    if (!records(at, count, record_bytes, kProcessRecordBytes, one, err)) return false;
    trace_.process = one[0];
    return true;
  }

  template <class Rec>
  bool records(std::size_t at, std::uint64_t count, std::uint32_t record_bytes, std::uint32_t known_bytes,
               std::vector<Rec>& out, DecodeError& err) {
    if (record_bytes < known_bytes) {
      return fail(err, "records of " + std::to_string(record_bytes) + " bytes, fewer than version 1's " +
                           std::to_string(known_bytes), at);
    }
    out.reserve(out.size() + static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
      In in(bytes_, at);
      fields(in, out.emplace_back());
      at += record_bytes;  // a later version's extra fields are skipped
    }
    return true;
  }

  bool check_id(std::uint32_t id, std::string_view what, DecodeError& err) {
    if (id < trace_.strings.size()) return true;
    return fail(err, std::string(what) + " refers to string " + std::to_string(id) + " of " +
                         std::to_string(trace_.strings.size()), 0);
  }

  bool check_string_ids(DecodeError& err) {
    if (!check_id(trace_.process.command_line, "the process's command line", err)) return false;
    for (const auto& d : trace_.devices) {
      if (!check_id(d.name, "a device name", err)) return false;
    }
    for (const auto& k : trace_.kernels) {
      if (!check_id(k.name, "a kernel name", err)) return false;
    }
    for (const auto& r : trace_.ranges) {
      if (!check_id(r.name, "an NVTX range name", err) || !check_id(r.domain, "an NVTX domain", err)) return false;
    }
    return true;
  }

  std::string_view bytes_;
  TraceData& trace_;
};

}  // namespace detail

// Decodes a whole file. On failure `err` says what and at which byte offset.
inline bool decode(std::string_view bytes, TraceData& trace, DecodeError& err) {
  return detail::Decoder(bytes, trace).run(err);
}

}  // namespace kernlens::trace_format
