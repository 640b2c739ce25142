// The run database: one SQLite file (schema.h). Opening it for writing creates or migrates
// it; ingesting a run is one transaction (a killed ingest leaves the file as it was) and
// idempotent (a run key already there is left alone). Several processes may ingest at once:
// the file is in WAL mode, and a writer waits up to the busy timeout for another's lock.
// Every value goes through bound parameters, never into SQL text.
//
//   auto db = open_for_writing("runs.db");         auto outcome = ingest_run(*db, record);
//   auto db = open_for_reading("runs.db");         auto run = load_run(*db, "llama-");
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/model/run_record.h"

namespace kernlens::store {

inline constexpr int kBusyTimeoutMs = 30000;

// Creates the file when missing and migrates it to schema_version(). Errors (with the path):
// not an SQLite file, an SQLite database of something else, one from a newer kernlens, a
// damaged file, a lock held longer than the busy timeout.
Result<SqliteDb> open_for_writing(const std::string& path);

// A kernlens database, opened so that nothing can write to it (read-only connection and
// PRAGMA query_only). Errors: a missing file, and those of open_for_writing.
Result<SqliteDb> open_for_reading(const std::string& path);

enum class IngestOutcome { kAdded, kAlreadyPresent };

struct IngestOptions {
  // Called inside the transaction after every row is written, before COMMIT. Tests use it to
  // kill the process there or fail: the run must then be absent.
  std::function<Status()> before_commit;
};

Result<IngestOutcome> ingest_run(const SqliteDb& db, const model::RunRecord& run,
                                 const IngestOptions& options = {});

// Whether a run with this key is in the database already (so that a caller can skip reading
// a run again before ingest_run would find it there).
Result<bool> has_run(const SqliteDb& db, const std::string& run_key);

// Whether any run's key does not match the SQLite GLOB `glob` (rundir::current_key_glob(): keys
// of an older form, which ingest must then compute too to find an unchanged run).
Result<bool> has_run_key_not_matching(const SqliteDb& db, std::string_view glob);

// The run whose key is `key_or_prefix` or starts with it, or whose run_id it is. Errors: no
// such run, or a prefix that several runs share.
Result<model::RunRecord> load_run(const SqliteDb& db, std::string_view key_or_prefix);

}  // namespace kernlens::store
