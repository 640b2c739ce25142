// One run into the run database, key first: what `db ingest` (each input) and `sweep ingest`
// (each complete point) do. The run key (rundir/run_key.h, a hash of the input's bytes) is
// computed before anything is parsed and looked up; an input whose key the database holds is
// left unread, so re-ingesting unchanged runs costs reading their bytes once. In a database
// that holds keys of the first form (written before run keys were XXH3), each input's key of
// that form is computed too, from the same reading, so an unchanged run is still found.
//
//   auto ingester = KeyedIngester::open(db, "runs.db");
//   auto done = ingester->ingest("runs/llama", [] { return Pairs{}; }, classifier);
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/names/classify.h"

namespace kernlens::sweep {

struct KeyedIngest {
  bool added = false;  // false: the database held the run already
  bool read = false;   // the input was parsed and analysed (false: found by its key, unread)
  std::string run_key;  // the key the run is stored under (a first-form key when found under it)
  std::size_t kernels = 0, stages = 0;  // when read
  std::size_t ranks = 0;                // when read: the ranks of a multi-rank run (0: one rank)
};

class KeyedIngester {
 public:
  using Tags = std::vector<std::pair<std::string, std::string>>;

  // Asks once whether the database holds keys of the first form. Errors (with db_path): the
  // database's.
  static Result<KeyedIngester> open(const SqliteDb& db, std::string db_path);

  // `tags` is called only when the run is read. Errors: the input's (unreadable, no format,
  // bad tags) as the readers give them; the database's as "DB_PATH: ingesting PATH: ...".
  Result<KeyedIngest> ingest(const std::string& path, const std::function<Result<Tags>()>& tags,
                             const names::KernelClassifier& classifier) const;

 private:
  KeyedIngester(const SqliteDb& db, std::string db_path, bool legacy_keys)
      : db_(&db), db_path_(std::move(db_path)), legacy_keys_(legacy_keys) {}
  Error db_error(const std::string& path, const Error& e) const;

  const SqliteDb* db_;
  std::string db_path_;
  bool legacy_keys_;
};

}  // namespace kernlens::sweep
