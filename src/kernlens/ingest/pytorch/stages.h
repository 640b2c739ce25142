// Stages of a PyTorch profiler trace, from its record_function ranges; and each launch's CPU
// thread and process, from the CUDA call that launched it.
//
// A record_function range is in a trace twice: as a "user_annotation" event on the CPU
// thread that opened it, and as "gpu_user_annotation" events on the GPU. The GPU events are
// Kineto's own projection, and a partial one: one per (device, stream), spanning only the
// GPU work whose innermost range it was. An outer range ("decode" around "layer0" ranges)
// gets a short span or none, and "ProfilerStep#N" spans only the few kernels launched
// outside every other range (seen in tests/fixtures/pytorch/nested_stages_trace.json.gz).
// So stages come from the CPU side: a launch belongs to every range that was open on its
// CPU thread when the CUDA call that launched it ran (the call and the launch share the
// correlation id), nested ranges forming the push/pop path, outermost first: NVTX semantics.
// A range instance's extent (a StageRange) is the GPU span of the kernels it launched.
//
// GPU-side ranges stand in only for ranges whose CPU side launched nothing the trace can
// join (a trace without CUDA runtime events): GPU work on the same device and stream that
// starts inside one belongs to it, and its extent is its own. A range is never counted on
// both sides: the two share an "External id".
//
// "ProfilerStep#N" (torch.profiler's schedule marks each step so) becomes one stage,
// "ProfilerStep", whose instances are the steps, as decode steps are instances of "decode".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// Where an event happened: its "pid" and "tid" (a CPU process and thread; for GPU events
// the device and the stream).
struct TraceTrack {
  std::int64_t pid = model::kUnknown;
  std::int64_t tid = model::kUnknown;
  bool operator==(const TraceTrack&) const = default;
};

// A CUDA runtime or driver call, or the start of an "ac2g" flow (the same link, drawn).
struct CudaCall {
  std::int64_t correlation;
  std::int64_t ts_ns;
  std::uint32_t track;  // index into TraceRecords::tracks
  bool from_flow;       // a flow only stands in for a missing call
};

// A record_function range, CPU or GPU side.
struct TraceRange {
  std::string name;
  std::int64_t start_ns;
  std::int64_t end_ns;  // the end of the trace for a range that never ended
  std::uint32_t track;  // index into TraceRecords::tracks
  std::int64_t external_id = model::kUnknown;
  bool gpu = false;
  bool laid_out = false;  // around laid-out events (kernlens export): places them, has no real extent
};

// What the reader keeps of a trace besides its launches: compact, a few per launch.
struct TraceRecords {
  std::vector<TraceTrack> tracks;
  std::vector<CudaCall> calls;
  std::vector<TraceRange> ranges;
  std::unordered_map<std::int64_t, std::string> process_names;  // "process_name" metadata
  std::size_t first_launch = 0;  // this input's launches start here in profile.launches

  std::uint32_t track(TraceTrack t);  // the index of `t`, added when new
  std::optional<std::uint32_t> find_track(TraceTrack t) const;

 private:
  struct TrackHash {
    std::size_t operator()(const TraceTrack& t) const {
      return std::hash<std::int64_t>{}(t.pid) * 31 + std::hash<std::int64_t>{}(t.tid);
    }
  };
  std::unordered_map<TraceTrack, std::uint32_t, TrackHash> track_index_;
};

// Sets the stage, CPU thread and process of this input's launches and adds its stage ranges.
void link_launches(const TraceRecords& records, ReadContext& ctx);

}  // namespace kernlens::ingest
