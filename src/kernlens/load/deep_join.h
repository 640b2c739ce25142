// Joins the deep pass onto the discovery timeline. ncu measures one representative launch of
// each hot kernel; the timeline has every launch's time and stage. The representative's
// metrics and rule results are copied onto one timeline launch of the same kernel: of the
// same grid and block, the one whose duration is nearest the representative's (its FLOPs are
// that launch's, analysis/flops.h), else the one whose duration is closest to the kernel's
// median, so the analysis ranks every kernel by
// its real time, explains the measured ones, and its coverage figures say how much of the
// time was measured (MFU is scaled only over launches nobody profiled; see analysis/mfu.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::load {

struct DeepJoin {
  std::size_t launches_joined = 0;
  std::vector<std::string> unmatched;  // deep kernels the timeline does not have, by name
};

// A deep launch goes to a timeline launch of the same name (and shape, when both have one),
// else of the same base name and grid and block (Nsight Compute demangles names in its own
// style).
DeepJoin join_deep_metrics(model::Profile& timeline, const model::Profile& deep);

}  // namespace kernlens::load
