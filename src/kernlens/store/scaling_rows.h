// The sums behind the scaling views (schema.cpp, migration 3), kept by ingest in the run's own
// transaction: the run's point (GPU, dtype, model, batch, tokens) gains a run and its kernel
// time, and each of its kernel families at that point its launches, time and time-weighted
// figures. Adding them up per run gives what the migration's grouping of every kernel gives.
#pragma once

#include <string>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/model/run_record.h"

namespace kernlens::store {

// SQLite's quote() of the point's five values as stored (an empty text is NULL), joined by '|'.
std::string point_key(const model::RunMeta& meta);

Status add_scaling_sums(const SqliteDb& db, const model::RunRecord& run);

}  // namespace kernlens::store
