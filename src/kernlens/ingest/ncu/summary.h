// Reader for Nsight Compute's summary page: `ncu --import R --csv --print-summary per-kernel`
// (and per-gpu, whose columns come in another order). One group of rows per kernel
// configuration; each becomes one Launch record standing for "Invocations" executions,
// with the average of each metric (duration included) as its value.
#pragma once

#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// Whether `bytes` hold this page (ncu/page.h tells the pages apart by their header).
bool is_ncu_summary_csv(std::string_view bytes);

Status read_ncu_summary_csv(std::string_view bytes, ReadContext& ctx);

}  // namespace kernlens::ingest
