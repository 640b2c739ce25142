// One run summed up for the database and compare (model/run_record.h): a run directory or one
// export file, loaded (load.h), summarized (analysis/run_summary.h) and described.
//
// The description: the manifest's command, GPU, tool versions and environment (CUDA_VERSION,
// driver), then its tags (what `profile --tag` or the workload recorded), then `tags` (the
// --tag of `db ingest`, which win). The tags model, dtype, batch and tokens fill the columns of
// those names; every tag is kept.
#pragma once

#include <string>
#include <string_view>

#include "kernlens/common/error.h"
#include "kernlens/model/run_record.h"
#include "kernlens/names/classify.h"
#include "kernlens/rundir/tags.h"

namespace kernlens::load {

// False for a tag that fills an integer column of the runs table (batch, tokens) with a value
// that is not an integer: a sweep checks its points' tags before it runs them.
bool tag_fits_column(std::string_view key, std::string_view value);

// `path`: a run directory, an export file, or the inputs of every rank of one job joined by
// ',' (rundir::run_inputs), one multi-rank run.
// Errors: what load() says, a run key that cannot be made (unreadable files), a batch or tokens
// tag that is not an integer. `key`: the run key of `path` when the caller has it already
// (db ingest and sweep ingest look it up first; empty: computed).
Result<model::RunRecord> load_run_record(const std::string& path, const rundir::Tags& tags,
                                         const names::KernelClassifier& classifier, std::string key = {});

}  // namespace kernlens::load
