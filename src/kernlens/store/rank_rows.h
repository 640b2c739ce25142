// The ranks of a multi-rank run (model::RunRank) to rows of run_ranks and run_rank_stages
// (schema.cpp, migration 4) and back; inside ingest_run's and load_run's work.
#pragma once

#include <cstdint>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/model/run_record.h"

namespace kernlens::store {

Status insert_ranks(const SqliteDb& db, std::int64_t run_id, const std::vector<model::RunRank>& ranks);
Status load_ranks(const SqliteDb& db, std::int64_t run_id, std::vector<model::RunRank>& ranks);

}  // namespace kernlens::store
