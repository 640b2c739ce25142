// Discovery with the kernlens CUPTI tracer (src/kernlens/tracer): where its library is, the
// environment that makes CUDA and NVTX inject it into the program. The files it leaves (one
// kernlens-<pid>.kltrace per process that used CUDA or NVTX) are rundir/layout.h's.
#pragma once

#include <string>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::profile {

inline constexpr const char* kTracerLibraryName = "libkernlens_tracer.so";

struct TracerPaths {
  std::string library;  // libkernlens_tracer.so, absolute
};

// `explicit_path` (--tracer) alone when given; else libkernlens_tracer.so beside the kernlens
// executable (`exe_dir`), then in ../lib and ../lib/kernlens.
Result<TracerPaths> locate_tracer(const std::string& explicit_path, const std::string& exe_dir);

// The variables the program runs with: CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH (both
// the tracer: it is CUDA's and NVTX's injection library) and KERNLENS_TRACE_DIR. Children
// inherit them, so every process of the program writes its own file.
std::vector<std::string> tracer_environment(const TracerPaths& paths, const std::string& trace_dir);

// The directory of the running executable (/proc/self/exe); empty when unknown.
std::string executable_dir();

}  // namespace kernlens::profile
