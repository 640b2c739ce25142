// One run summed up for the database and compare (model/run_record.h): a run directory or one
// export file, loaded (load.h), summarized (analysis/run_summary.h) and described.
//
// The description: the manifest's command, GPU, tool versions and environment (CUDA_VERSION,
// driver), then its tags (what `profile --tag` or the workload recorded), then `tags` (the
// --tag of `db ingest`, which win). The tags model, dtype, batch and tokens fill the columns of
// those names; every tag is kept.
#pragma once

#include <string>

#include "kernlens/common/error.h"
#include "kernlens/model/run_record.h"
#include "kernlens/names/classify.h"
#include "kernlens/rundir/tags.h"

namespace kernlens::load {

// Errors: what load() says, a run key that cannot be made (unreadable files), a batch or tokens
// tag that is not an integer.
Result<model::RunRecord> load_run_record(const std::string& path, const rundir::Tags& tags,
                                         const names::KernelClassifier& classifier);

}  // namespace kernlens::load
