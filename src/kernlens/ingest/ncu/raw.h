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

// The same, streaming a large file through a bounded buffer (memory does not grow with the
// file) while a background thread reads ahead.
Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx);
// With chunk sizes of the caller's choosing (tests use small ones to cross many chunks).
// A row longer than `carry_bytes` is an error.
Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx,
                             std::size_t chunk_bytes, std::size_t carry_bytes);

}  // namespace kernlens::ingest
