// The HTML report's charts, as inline SVG drawn from the analysis (no script, no network).
// Each returns one <svg> element with a known id, or "" when the inputs cannot draw it
// (missing.h says which input would).
#pragma once

#include <string>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/tables.h"

namespace kernlens::report {

// Log-log roofline: the GPU's compute roofs and DRAM roof, one dot per kernel with measured
// FLOPs and DRAM bytes (class "dot"), its area proportional to the kernel's time.
std::string roofline_chart(const model::Profile& profile, const analysis::Analysis& analysis);
// Whether roofline_chart has a dot and a roof to draw.
bool roofline_drawable(const analysis::Analysis& analysis);
// Horizontal bars of kernel time per operation class.
std::string op_class_chart(const analysis::Analysis& analysis);
// The GPU busy (kernels running) vs idle over the run, with the stages' ranges above it.
std::string timeline_chart(const model::Profile& profile);
// Per rank of a multi-rank profile (and per top-level stage of it): a stacked bar of compute
// time, communication overlapped by computation and exposed communication (rank_charts.cpp);
// "" for one rank.
std::string rank_overlap_chart(const analysis::Analysis& analysis);
// One stacked bar per top kernel: its largest warp stall reasons.
std::string stall_chart(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);

}  // namespace kernlens::report
