// The run key makes ingesting a run into the database idempotent (store/). A run directory's
// is "<manifest run_id>-xxh3.<hash>", the hash (XXH3-64, hex) taken over the relative path
// and bytes of every file under discovery/ and deep/ and of manifest.json as kernlens writes
// it without its tags: analysis.json is derived from the rest, and tags label a run (as `db
// ingest --tag` does), so rewriting either is the same run. An export file's is
// "file-xxh3.<hash>" of its bytes as stored (gzip not inflated). A run given as the inputs of
// every rank of one job ("rank-0.json.gz,rank-1.json.gz") is "ranks-xxh3.<hash>" of their keys,
// in the order given (the order numbers ranks that lack distributedInfo).
//
// Keys of the first form ("<run_id>-<hash>" and "file-<hash>", the hash a 64-bit FNV-1a over
// the same bytes, about 15 times slower) are in databases written before: legacy_run_key()
// gives them, so that an unchanged run is still found there. Both forms end in the hash after
// the last '-', 16 hex digits in the first and "xxh3." with them in this one, so no key of one
// form can equal a key of the other.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::rundir {

struct RunKeys {
  std::string key;         // the current form
  std::string legacy_key;  // the first form; empty unless asked for
};

// Errors: unreadable files.
Result<std::string> run_key(const std::string& path);

// The current key and, with `with_legacy`, the first form's too, from one reading of the files.
Result<RunKeys> run_keys(const std::string& path, bool with_legacy);
// The same for the inputs of one run (run_inputs()): one input's keys, or the ranks' key.
Result<RunKeys> run_keys(const std::vector<std::string>& inputs, bool with_legacy);
Result<std::string> run_key(const std::vector<std::string>& inputs);

// The inputs of one run as a command names it: a run directory or export file, or the inputs
// of every rank of one job joined by ','. A name that exists as a path is that one path.
std::vector<std::string> run_inputs(const std::string& spec);

// An SQLite GLOB pattern that every key of the current form matches and no key of the first
// form does (store::has_run_key_not_matching asks whether a database holds keys of another form).
std::string_view current_key_glob();

}  // namespace kernlens::rundir
