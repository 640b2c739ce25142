// An analysis summed up as a run record (model/run_record.h): the kernel table with each
// kernel's launch shape, figures and bottleneck, the stage table, the GPU and the totals.
// The run's metadata (RunRecord::meta) is the caller's to fill.
#pragma once

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

model::RunRecord summarize_run(const model::Profile& profile, const Analysis& analysis);

// "x,y,z", or empty when unknown.
std::string dim3_text(const model::Dim3& dim);

}  // namespace kernlens::analysis
