// `db ingest` of one run directory or export file, key first: the run key (a hash of the
// input's bytes, store/run_input.h) is computed before anything is parsed, and an input whose
// key the database holds already is left unread. Re-ingesting unchanged runs then costs
// reading their bytes once, not parsing and analysing them.
#pragma once

#include <cstddef>
#include <string>

#include "kernlens/common/error.h"
#include "kernlens/ingest/sqlite_db.h"
#include "kernlens/names/classify.h"
#include "kernlens/store/database.h"
#include "kernlens/store/run_input.h"

namespace kernlens::store {

struct IngestedInput {
  IngestOutcome outcome = IngestOutcome::kAdded;
  std::string run_key;
  std::size_t kernels = 0, stages = 0;  // of a run read and added (0 when skipped)
};

// Adds the run at `path` unless its key is there already. Errors: those of run_key and
// read_run; those of the database `db_path` (as "DB: ingesting PATH: what").
Result<IngestedInput> ingest_input(const ingest::SqliteDb& db, const std::string& db_path, const std::string& path,
                                   const Tags& tags, const names::KernelClassifier& classifier);

}  // namespace kernlens::store
