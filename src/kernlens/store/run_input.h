// One run from the user's files, summed up for the database or compare: a run directory of
// `kernlens profile` or one export file, read, analyzed and described.
//
// The run key makes ingest idempotent. A run directory's is "<manifest run_id>-<hash>", the
// hash (64-bit FNV-1a, hex) taken over the relative path and bytes of manifest.json and every
// file under discovery/ and deep/ (analysis.json is derived from them, so rewriting it is the
// same run). An export file's is "file-<hash>" of its bytes as stored (gzip not inflated).
//
// The metadata: the manifest's command, GPU, tool versions and environment (CUDA_VERSION,
// driver), then, when the command runs examples/workloads/llm_stages.py, its --model, --batch,
// --prompt (as tokens), --dtype and the rest with the script's defaults, then the manifest's
// "tags" (`kernlens profile --tag`), then the user's --tag key=value (model, dtype, batch and
// tokens fill those columns; every tag is kept).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/model/run_record.h"
#include "kernlens/names/classify.h"

namespace kernlens::store {

using Tags = std::vector<std::pair<std::string, std::string>>;

// "key=value" strings into tags. Errors: no '=', an empty key, a key given twice, a key of
// characters other than letters, digits, '_', '-', '.'.
Result<Tags> parse_tags(const std::vector<std::string>& texts);

// The run key of `path` (see above). Errors: unreadable files.
Result<std::string> run_key(const std::string& path);

// The metadata of a profiled command line: what llm_stages.py's arguments say (nothing for
// another program). Tags for the flags without a column (decode_steps, compile, ...).
model::RunMeta workload_meta(const std::vector<std::string>& argv);

// Reads, analyzes and describes the run at `path`; `tags` come last and win. `key`: its run
// key when the caller has it already (empty: computed).
Result<model::RunRecord> read_run(const std::string& path, const Tags& tags,
                                  const names::KernelClassifier& classifier, std::string key = {});

}  // namespace kernlens::store
