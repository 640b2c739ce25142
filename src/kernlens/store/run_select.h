// Runs of the database chosen by their tags, for a group comparison:
//   compare --db runs.db --base model=llama --base batch=4 --candidate model=llama --candidate batch=8
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"

namespace kernlens::store {

// The keys of the runs that have every tag `key=value` (at least one tag), in ingest order.
// An error when none has them.
Result<std::vector<std::string>> run_keys_with_tags(const SqliteDb& db,
                                                    const std::vector<std::pair<std::string, std::string>>& tags);

}  // namespace kernlens::store
