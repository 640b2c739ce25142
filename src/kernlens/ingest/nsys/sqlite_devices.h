// The GPUs of an nsys export: TARGET_INFO_GPU (name, compute capability, SMs, clocks, memory)
// and TARGET_INFO_CUDA_DEVICE (the SMs a process could use). Internal to ingest/nsys.
#pragma once

#include <cstdint>
#include <map>

#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/model/profile.h"

namespace kernlens::ingest::nsys {

// The GPUs by TARGET_INFO_GPU id; empty when the export has neither table.
Result<std::map<std::int64_t, model::Device>> read_nsys_gpus(Schema& schema);

}  // namespace kernlens::ingest::nsys
