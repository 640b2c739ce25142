// Reader for Nsight Compute's raw page: `ncu --import R --page raw --csv` (with or without
// `--print-units base`, with or without the units row, with `--print-metric-instances`).
// One row per launch; every numeric column becomes a metric in base units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// Whether `bytes` hold this page (ncu/page.h tells the pages apart by their header).
bool is_ncu_raw_csv(std::string_view bytes);

Status read_ncu_raw_csv(std::string_view bytes, ReadContext& ctx);

// The same from a large file, window by window, so that memory does not grow with the file:
// a plain file is mapped (common/file.h, FileMapping) and each window's parts parsed where the
// bytes lie (on several threads the whole file is one window, its pages given back as its
// parts are merged); a gzip file (or one that cannot be mapped) is streamed through a bounded
// buffer while a background thread reads ahead (common/chunk_reader.h).
Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx);
// With window sizes of the caller's choosing (tests use small ones to cross many windows), and
// how the file is read (reader.h). A streamed row longer than `carry_bytes` is an error; a
// mapped one may be of any length.
Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx,
                             std::size_t chunk_bytes, std::size_t carry_bytes, FileAccess access = FileAccess::kMapped);

}  // namespace kernlens::ingest
