// The run key makes ingesting a run into the database idempotent (store/). A run directory's
// is "<manifest run_id>-<hash>", the hash (64-bit FNV-1a, hex) taken over the relative path
// and bytes of every file under discovery/ and deep/ and of manifest.json as kernlens writes
// it without its tags: analysis.json is derived from the rest, and tags label a run (as `db
// ingest --tag` does), so rewriting either is the same run. An export file's is
// "file-<hash>" of its bytes as stored (gzip not inflated). A run given as the inputs of
// every rank of one job ("rank-0.json.gz,rank-1.json.gz") is "ranks-<hash>" of their keys, in
// the order given (the order numbers ranks that lack distributedInfo).
#pragma once

#include <string>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::rundir {

// Errors: unreadable files.
Result<std::string> run_key(const std::string& path);
Result<std::string> run_key(const std::vector<std::string>& inputs);

// The inputs of one run as a command names it: a run directory or export file, or the inputs
// of every rank of one job joined by ','. A name that exists as a path is that one path.
std::vector<std::string> run_inputs(const std::string& spec);

}  // namespace kernlens::rundir
