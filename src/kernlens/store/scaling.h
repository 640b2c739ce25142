// The cross-model views (v_op_class_scaling, v_family_scaling) read into model::CrossModel,
// for `kernlens report --db`.
//
//   auto db = open_for_reading("runs.db");   auto across = load_cross_model(*db, 12);
#pragma once

#include <cstddef>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/model/scaling.h"

namespace kernlens::store {

// Every op class at every point, and the `top_families` families with the most kernel time
// over all runs at every point.
Result<model::CrossModel> load_cross_model(const SqliteDb& db, std::size_t top_families);

}  // namespace kernlens::store
