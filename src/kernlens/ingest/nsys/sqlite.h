// Reader for Nsight Systems SQLite exports (`nsys export --type sqlite REPORT.nsys-rep`).
//
// Kernels come from CUPTI_ACTIVITY_KIND_KERNEL (names through StringIds: demangled, else
// short, else mangled), memory copies and sets from CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET,
// the GPUs from TARGET_INFO_GPU and TARGET_INFO_CUDA_DEVICE. Stages are NVTX ranges
// (NVTX_EVENTS) projected onto the GPU as Nsight Systems does it (nvtx_projection.h), through
// the CUDA API call of CUPTI_ACTIVITY_KIND_RUNTIME with the launch's correlation id.
//
// nsys creates tables lazily and its schema changes between versions (EXPORT_META_DATA in
// 2.x, META_DATA_EXPORT in 3.x), so tables, columns and enum values are looked up by name;
// a file that cannot be used is reported with the table or column it lacks.
//
// With ReadOptions::threads (--threads) the kernel table is read in rowid ranges and the CUDA
// API calls in a third as many, each range on a read-only connection and thread of its own
// (sqlite_kernels.h), checked against a scan of the rowids alone (damage or a bad row: the table
// is read again in one scan); the result is the one a single scan gives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// The database in memory (read in place, never copied or written).
Status read_nsys_sqlite(std::string_view bytes, ReadContext& ctx);

// The database file at `path`, opened read-only and immutable: large exports are read through
// SQLite's page cache instead of being loaded whole.
Status read_nsys_sqlite_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx);

}  // namespace kernlens::ingest
