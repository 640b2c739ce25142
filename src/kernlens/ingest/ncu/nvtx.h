// Decoding the NVTX state columns of Nsight Compute's CSV pages (with --nvtx):
//   push/pop:  `649  "<default domain>:step:none:none:none:none:none:none"  "dom:prefill:...:ASCII:prefill" `
//   start/end: ` "0:<default domain>:io:none:none:none:none:none:none" `
// Each quoted entry is DOMAIN:NAME:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg (start/end
// entries lead with the range id). Names may contain ':'; see parse_ncu_nvtx_entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

struct NcuNvtxCell {
  std::int64_t thread_id = model::kUnknown;  // push/pop cells lead with the thread id
  std::vector<model::NvtxRange> ranges;
};

// Parses one cell. On failure returns nullopt and sets `why`.
std::optional<NcuNvtxCell> parse_ncu_nvtx_cell(std::string_view cell, model::RangeKind kind,
                                               std::string& why);

// Parses one entry (the text between the quotes). nullopt when it is not of that shape.
std::optional<model::NvtxRange> parse_ncu_nvtx_entry(std::string_view entry, model::RangeKind kind);

}  // namespace kernlens::ingest
