// `kernlens export --format perfetto`: the profile's GPU timeline as Chrome trace event JSON
// (the Trace Event Format that ui.perfetto.dev and chrome://tracing open), beside our report:
//
//   a process per GPU ("GPU 0: NVIDIA H100 ..."), a thread track per CUDA stream;
//   kernels as complete ("X") events named by their base name, with the whole name, library,
//     operation class, bottleneck, launch geometry and, for launches Nsight Compute measured,
//     its figures as args; memory copies and sets as events of their own;
//   NVTX push/pop stages as slices around their kernels on each stream (the GPU extent of each
//     range instance on that stream, as Kineto draws record_function ranges), start/end ranges
//     as async slices of the GPU's process.
//
// The file is also a PyTorch-profiler-style trace that `kernlens analyze` reads back: kernel
// events carry Kineto's category ("kernel") and arg names, and the kernel's own name in
// "mangled name" / "full name", so the export of any profile reads back as the same kernels,
// launches and kernel time. Inputs without a timeline (Nsight Compute runs kernels one at a
// time) get their kernels laid end to end in launch order, and the trace says so.
#pragma once

#include <string>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

std::string perfetto_trace(const model::Profile& profile, const analysis::Analysis& analysis);

}  // namespace kernlens::report
