#include "kernlens/ingest/kltrace/reader.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "kernlens/ingest/timeline/memcpy_kinds.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"
#include "kernlens/format/kltrace.h"

namespace kernlens::ingest {
namespace {

namespace tf = trace_format;

// CUPTI timestamps are ns on one clock; far beyond a century they are damage, and rejecting
// them keeps every difference within 64 bits.
constexpr std::uint64_t kMaxPlausibleNs = std::uint64_t{1} << 61;

class KltraceReader {
 public:
  KltraceReader(const tf::TraceData& trace, ReadContext& ctx) : trace_(trace), ctx_(ctx) {}

  Status read() {
    process_ = ctx_.profile.intern_process(model::ProcessInfo{
        "", trace_.process.pid, program_name(trace_.strings[trace_.process.command_line])});
    read_devices();
    for (std::size_t i = 0; i < trace_.kernels.size(); ++i) {
      if (auto s = add_kernel(trace_.kernels[i], i); !s) return s;
    }
    for (std::size_t i = 0; i < trace_.memops.size(); ++i) {
      if (auto s = add_memop(trace_.memops[i], i); !s) return s;
    }
    if (trace_.kernels.empty() && trace_.memops.empty()) {
      ctx_.warn(0, "the trace holds no GPU work (the program launched no kernel while traced)");
    }
    attribute_to_stages();
    return ok_status();
  }

 private:
  // The command line's first word without its directory: "python3", "llm_stages".
  static std::string program_name(std::string_view command_line) {
    std::string_view first = command_line.substr(0, command_line.find(' '));
    auto slash = first.rfind('/');
    return std::string(slash == std::string_view::npos ? first : first.substr(slash + 1));
  }

  void read_devices() {
    for (const auto& d : trace_.devices) {
      if (d.ordinal > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) continue;
      model::Device dev;
      dev.ordinal = static_cast<std::int32_t>(d.ordinal);
      dev.name = trace_.strings[d.name];
      if (d.cc_major > 0) dev.cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
      if (d.sm_count > 0) dev.sm_count = d.sm_count;
      if (d.max_threads_per_sm > 0) dev.max_threads_per_sm = d.max_threads_per_sm;
      if (d.max_shared_memory_per_sm_bytes > 0) dev.max_shared_memory_per_sm_bytes = d.max_shared_memory_per_sm_bytes;
      if (d.l2_cache_bytes > 0) dev.l2_cache_bytes = d.l2_cache_bytes;
      if (d.core_clock_khz > 0) dev.sm_clock_max_hz = d.core_clock_khz * 1e3;
      if (d.global_memory_bytes > 0 && d.global_memory_bytes <= kMaxPlausibleNs)
        dev.memory_total_bytes = static_cast<std::int64_t>(d.global_memory_bytes);
      if (auto conflict = ctx_.profile.device(dev.ordinal).fill_from(dev)) ctx_.warn(0, *conflict + "; ranks that disagree on the GPU are not one GPU: peaks and MFU use the earlier input's");
    }
  }

  Status check_times(std::string_view what, std::size_t index, std::uint64_t start, std::uint64_t end) {
    if (start >= kMaxPlausibleNs || end >= kMaxPlausibleNs) {
      return ctx_.error(0, std::string(what) + " " + std::to_string(index) + ": time out of range (" +
                               std::to_string(start) + " to " + std::to_string(end) + " ns)");
    }
    if (end < start) {
      return ctx_.error(0, std::string(what) + " " + std::to_string(index) + " ends (" + std::to_string(end) +
                               " ns) before it starts (" + std::to_string(start) + " ns)");
    }
    trace_end_ns_ = std::max(trace_end_ns_, static_cast<std::int64_t>(end));
    return ok_status();
  }

  // The fields every GPU operation has.
  model::Launch launch_of(std::uint32_t device, std::uint32_t context, std::uint32_t stream,
                          std::uint32_t correlation, std::uint64_t start_ns, std::uint64_t end_ns) {
    model::Launch l;
    l.input = ctx_.input_index;
    l.process = process_;
    l.device_ordinal = static_cast<std::int16_t>(std::min<std::uint32_t>(device, std::numeric_limits<std::int16_t>::max()));
    l.context_id = model::stream_id_of(context).value_or(model::kUnknown);  // the tracer's are 32-bit
    l.stream_id = model::stream_id_of(stream).value_or(model::kUnknown);
    l.id = correlation;
    l.start_ns = static_cast<std::int64_t>(start_ns);
    l.duration_ns = static_cast<double>(end_ns - start_ns);
    if (!ctx_.profile.find_device(l.device_ordinal)) ctx_.profile.device(l.device_ordinal);
    return l;
  }

  Status add_kernel(const tf::KernelRecord& k, std::size_t index) {
    if (auto s = check_times("kernel", index, k.start_ns, k.end_ns); !s) return s;
    model::Launch l = launch_of(k.device, k.context, k.stream, k.correlation, k.start_ns, k.end_ns);
    l.name = name_id(k.name);
    model::LaunchConfig config;
    config.grid = {k.grid[0], k.grid[1], k.grid[2]};
    config.block = {k.block[0], k.block[1], k.block[2]};
    config.registers_per_thread = static_cast<std::int32_t>(std::min<std::uint32_t>(k.registers_per_thread, 65535));
    config.static_shared_bytes = k.static_shared_bytes;
    config.dynamic_shared_bytes = k.dynamic_shared_bytes;
    l.config = ctx_.profile.intern_config(config);
    push(std::move(l));
    return ok_status();
  }

  Status add_memop(const tf::MemOpRecord& m, std::size_t index) {
    if (auto s = check_times("memory operation", index, m.start_ns, m.end_ns); !s) return s;
    model::Launch l = launch_of(m.device, m.context, m.stream, m.correlation, m.start_ns, m.end_ns);
    if (m.bytes <= kMaxPlausibleNs) l.bytes = static_cast<std::int64_t>(m.bytes);
    if (m.kind == tf::MemOpKind::kMemset) {
      l.kind = model::LaunchKind::kMemset;
      l.name = ctx_.profile.names.intern(kMemsetLaunchName);
    } else {
      l.kind = model::LaunchKind::kMemcpy;
      std::string label = m.copy_kind < kMemcpyKindLabels.size() ? std::string(kMemcpyKindLabels[m.copy_kind])
                                                                  : "kind " + std::to_string(m.copy_kind);
      l.name = ctx_.profile.names.intern(memcpy_launch_name(label));
    }
    push(std::move(l));
    return ok_status();
  }

  model::NameId name_id(std::uint32_t string_id) {
    auto [it, is_new] = names_.try_emplace(string_id, 0);
    if (is_new) it->second = ctx_.profile.names.intern(trace_.strings[string_id]);
    return it->second;
  }

  void push(model::Launch l) {
    launch_indexes_.push_back(ctx_.profile.launches.size());
    ctx_.profile.launches.push_back(std::move(l));
  }

  // The API call of each launch (same correlation id: one file is one process), then the
  // shared NVTX projection. A correlation id seen twice (a runtime call and the driver call
  // inside it) keeps the inner call (is_inner_call), as the nsys reader does.
  void attribute_to_stages() {
    std::unordered_map<std::uint32_t, std::uint32_t> call_of_correlation;
    std::vector<ApiCall> calls;
    for (const auto& a : trace_.api_calls) {
      if (a.end_ns < a.start_ns || a.end_ns >= kMaxPlausibleNs) continue;
      ApiCall call{a.thread, static_cast<std::int64_t>(a.start_ns), static_cast<std::int64_t>(a.end_ns)};
      auto [it, is_new] = call_of_correlation.try_emplace(a.correlation, static_cast<std::uint32_t>(calls.size()));
      if (is_new) {
        calls.push_back(call);
      } else if (is_inner_call(call, calls[it->second])) {
        calls[it->second] = call;
      }
      trace_end_ns_ = std::max(trace_end_ns_, call.end_ns);
    }
    std::vector<RangeInstance> ranges = range_instances();
    std::vector<KernelSpan> kernels;
    std::vector<std::uint32_t> call_of_launch(launch_indexes_.size(), kNoCall);
    std::size_t unmatched = 0;
    for (std::size_t i = 0; i < launch_indexes_.size(); ++i) {
      const model::Launch& l = ctx_.profile.launches[launch_indexes_[i]];
      auto it = call_of_correlation.find(static_cast<std::uint32_t>(l.id));
      if (it == call_of_correlation.end()) {
        unmatched += l.kind == model::LaunchKind::kKernel;
        continue;
      }
      call_of_launch[i] = it->second;
      if (l.kind == model::LaunchKind::kKernel) {
        kernels.push_back(KernelSpan{it->second, *l.start_ns, *l.start_ns + static_cast<std::int64_t>(*l.duration_ns)});
      }
    }
    std::vector<model::StageId> stage_of_call = project_nvtx(calls, ranges, kernels, ctx_.profile);
    for (std::size_t i = 0; i < launch_indexes_.size(); ++i) {
      if (call_of_launch[i] == kNoCall) continue;
      model::Launch& l = ctx_.profile.launches[launch_indexes_[i]];
      l.stage = stage_of_call[call_of_launch[i]];
      l.thread_id = calls[call_of_launch[i]].thread;
    }
    if (!ranges.empty() && unmatched > 0) {
      ctx_.warn(0, std::to_string(unmatched) +
                       " kernels have no CUDA API call with their correlation id: they count outside every NVTX range");
    }
  }

  std::vector<RangeInstance> range_instances() {
    std::vector<RangeInstance> ranges;
    std::size_t unended = 0;
    for (const auto& r : trace_.ranges) trace_end_ns_ = std::max(trace_end_ns_, static_cast<std::int64_t>(std::min(r.start_ns, kMaxPlausibleNs)));
    for (const auto& r : trace_.ranges) {
      if (r.start_ns >= kMaxPlausibleNs) continue;
      bool open = r.end_ns == tf::kOpenEnd;
      if (!open && (r.end_ns < r.start_ns || r.end_ns >= kMaxPlausibleNs)) continue;
      unended += open;
      model::NvtxRange range{trace_.strings[r.domain], trace_.strings[r.name],
                             r.kind == tf::RangeKind::kStartEnd ? model::RangeKind::kStartEnd : model::RangeKind::kPushPop};
      ranges.push_back(RangeInstance{r.thread, static_cast<std::int64_t>(r.start_ns),
                                     open ? trace_end_ns_ : static_cast<std::int64_t>(r.end_ns), std::move(range)});
    }
    if (unended > 0) {
      ctx_.warn(0, std::to_string(unended) + " NVTX ranges never end: they are taken to end with the trace, at " +
                       std::to_string(trace_end_ns_) + " ns");
    }
    return ranges;
  }

  static constexpr std::uint32_t kNoCall = std::numeric_limits<std::uint32_t>::max();

  const tf::TraceData& trace_;
  ReadContext& ctx_;
  std::uint32_t process_ = 0;
  std::unordered_map<std::uint32_t, model::NameId> names_;  // string id -> profile name
  std::vector<std::size_t> launch_indexes_;  // this input's launches in profile.launches
  std::int64_t trace_end_ns_ = 0;
};

}  // namespace

Status read_kltrace(std::string_view bytes, ReadContext& ctx) {
  tf::TraceData trace;
  tf::DecodeError err;
  if (!tf::decode(bytes, trace, err)) {
    return ctx.error(0, err.what + " at byte " + std::to_string(err.offset));
  }
  return KltraceReader(trace, ctx).read();
}

}  // namespace kernlens::ingest
