// The run key makes ingesting a run into the database idempotent (store/). A run directory's
// is "<manifest run_id>-<hash>", the hash (64-bit FNV-1a, hex) taken over the relative path
// and bytes of every file under discovery/ and deep/ and of manifest.json as kernlens writes
// it without its tags: analysis.json is derived from the rest, and tags label a run (as `db
// ingest --tag` does), so rewriting either is the same run. An export file's is
// "file-<hash>" of its bytes as stored (gzip not inflated).
#pragma once

#include <string>

#include "kernlens/common/error.h"

namespace kernlens::rundir {

// Errors: unreadable files.
Result<std::string> run_key(const std::string& path);

}  // namespace kernlens::rundir
