// The NVTX ranges of an nsys export (NVTX_EVENTS): push/pop and start/end ranges with their
// domain's name, as nsys's own report scripts read them. Internal to ingest/nsys.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"

namespace kernlens::ingest::nsys {

// NVTX event types. ENUM_NSYS_EVENT_TYPE names them in current exports; older exports lack
// the table and use the numbers that NVIDIA's own report scripts use (nvtx_gpu_proj_trace.py,
// Nsight Systems 2025.3): 59 push/pop, 60 start/end, 70 and 71 the same imported from NVTXT
// files, 75 domain creation.
struct NvtxTypes {
  std::vector<std::int64_t> push_pop, start_end;
  std::optional<std::int64_t> domain_create;
};

class NvtxRanges {
 public:
  static constexpr std::int64_t kOpenEnd = std::numeric_limits<std::int64_t>::max();

  // `file_bytes`: the export's size, which bounds its rows (Schema::row_estimate).
  NvtxRanges(Schema& schema, Strings& strings, std::uint64_t file_bytes)
      : schema_(schema), strings_(strings), file_bytes_(file_bytes) {}

  // Reads the ranges; one that never ends keeps kOpenEnd (it encloses every later call of
  // its thread, as it would ending with the trace, which is not known yet).
  Status read();
  // Warns about ranges that never ended and those that ended on another thread.
  void warn(ReadContext& ctx, std::int64_t trace_end) const;

  std::vector<RangeInstance>& ranges() { return ranges_; }
  // The latest time a range started or ended (INT64_MIN without ranges).
  std::int64_t latest_ns() const { return latest_ns_; }

 private:
  Result<NvtxTypes> types();
  Status read_domains(const NvtxTypes& types);
  std::string text(const SqliteStatement& stmt);

  Schema& schema_;
  Strings& strings_;
  std::uint64_t file_bytes_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains_;  // (pid, domainId) -> name
  std::vector<RangeInstance> ranges_;
  std::map<std::string, std::size_t> unended_;  // label -> instances
  std::size_t ranges_across_threads_ = 0;
  std::int64_t latest_ns_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace kernlens::ingest::nsys
