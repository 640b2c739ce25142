// Reader for Nsight Compute's details page: `ncu --import R --page details --csv`
// (optionally `--print-details all`, which adds "Body Item Label"). Rows are ragged:
// metric rows stop after "Metric Value", rule rows carry the rule's name, type, text and
// estimated speedup. Rows are grouped into launches by "ID"; metrics are keyed
// "Section / [Body Item /] Metric Name" with values in base units.
#pragma once

#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// Whether `bytes` hold this page (ncu/page.h tells the pages apart by their header).
bool is_ncu_details_csv(std::string_view bytes);

Status read_ncu_details_csv(std::string_view bytes, ReadContext& ctx);

}  // namespace kernlens::ingest
