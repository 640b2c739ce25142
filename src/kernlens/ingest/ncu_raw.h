// Reader for Nsight Compute's raw page: `ncu --import R --page raw --csv` (with or without
// `--print-units base`, with or without the units row, with `--print-metric-instances`).
// One row per launch; every numeric column becomes a metric in base units.
#pragma once

#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

Status read_ncu_raw_csv(std::string_view bytes, ReadContext& ctx);

}  // namespace kernlens::ingest
