// Reader for the kernlens tracer's own files (.kltrace, docs/trace-format.md): one process's
// kernels, memory copies and sets, the CUDA calls that launched them and its NVTX ranges.
// Stages are the NVTX ranges projected onto the GPU as for Nsight Systems exports
// (nvtx_projection.h): a launch belongs to the ranges open around its API call on its thread.
#pragma once

#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

Status read_kltrace(std::string_view bytes, ReadContext& ctx);

}  // namespace kernlens::ingest
