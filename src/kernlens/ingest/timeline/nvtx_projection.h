// Attributing GPU work to NVTX ranges the way Nsight Systems projects CPU ranges onto the GPU
// (its nvtx_gpu_proj_trace report): a kernel belongs to a range when the CUDA API call that
// launched it lies inside the range, on the thread where the range started. The result is
// a stage per call (the enclosing ranges) and, per range instance, its GPU extent: from the
// first start to the last end of the kernels it launched.
//
// Pure logic over plain vectors (no database), so that it is tested and timed on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

// One CUDA API call that launched GPU work. `thread` is any id unique per thread of the trace.
struct ApiCall {
  std::int64_t thread;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// One NVTX range instance, with its end already resolved (a range that never ends is given
// the end of the trace by the caller).
struct RangeInstance {
  std::int64_t thread;  // where it started
  std::int64_t start_ns;
  std::int64_t end_ns;
  model::NvtxRange range;
};

// A kernel's time on the GPU and the call that launched it.
struct KernelSpan {
  std::uint32_t call;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// For each call, the stage of its enclosing ranges: push/pop ranges outermost first (by start,
// the longer first on a tie), then start/end ranges by start. Interns the stages in `profile`
// and appends one StageRange per range instance that launched a kernel, keyed by the
// instance's own path (its enclosing push/pop ranges and itself; a start/end range alone).
std::vector<model::StageId> project_nvtx(const std::vector<ApiCall>& calls,
                                         const std::vector<RangeInstance>& ranges,
                                         const std::vector<KernelSpan>& kernels,
                                         model::Profile& profile);

// project_nvtx in steps, for a reader that visits its kernels once and keeps no list of them
// (a million-kernel export would hold 24 MB more at its peak). `calls` and `ranges` must
// outlive it.
class NvtxProjection {
 public:
  NvtxProjection(const std::vector<ApiCall>& calls, const std::vector<RangeInstance>& ranges,
                 model::Profile& profile);
  ~NvtxProjection();
  NvtxProjection(const NvtxProjection&) = delete;
  NvtxProjection& operator=(const NvtxProjection&) = delete;

  // Widens the GPU extent of every range instance enclosing the kernel's call.
  void add_kernel(const KernelSpan& kernel);
  // Appends the StageRanges of the instances that launched a kernel; the stage per call.
  std::vector<model::StageId> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kernlens::ingest
