// `sweep ingest`: every complete run of a sweep into the run database with its point's tags
// (from point.json: what was submitted), idempotently (store/database.h: a run already there
// is left alone). Points not done are skipped; a run that cannot be read is reported and the
// others still go in.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/names/classify.h"
#include "kernlens/sweep/plan.h"

namespace kernlens::sweep {

struct IngestResult {
  std::size_t point = 0;
  enum class Outcome { kAdded, kAlreadyPresent, kNotComplete, kError } outcome = Outcome::kNotComplete;
  std::string run_key;
  std::string error;  // kError: what went wrong
};

// Each point key first (keyed_ingest.h). Errors: the database's, before any point (db_path
// names it in errors).
Result<std::vector<IngestResult>> ingest_sweep(const Plan& plan, const SqliteDb& db, const std::string& db_path,
                                               const names::KernelClassifier& classifier,
                                               const std::function<void(const IngestResult&)>& on_point);

}  // namespace kernlens::sweep
