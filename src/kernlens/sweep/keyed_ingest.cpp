#include "kernlens/sweep/keyed_ingest.h"

#include <fmt/format.h>

#include "kernlens/load/run_record.h"
#include "kernlens/rundir/run_key.h"
#include "kernlens/store/database.h"

namespace kernlens::sweep {

Result<KeyedIngester> KeyedIngester::open(const SqliteDb& db, std::string db_path) {
  auto legacy = store::has_run_key_not_matching(db, rundir::current_key_glob());
  if (!legacy) return make_error(db_path, 0, legacy.error().message);
  return KeyedIngester(db, std::move(db_path), *legacy);
}

Error KeyedIngester::db_error(const std::string& path, const Error& e) const {
  return make_error(db_path_, 0, fmt::format("ingesting {}: {}", path, e.message));
}

Result<KeyedIngest> KeyedIngester::ingest(const std::string& path, const std::function<Result<Tags>()>& tags,
                                          const names::KernelClassifier& classifier) const {
  auto keys = rundir::run_keys(rundir::run_inputs(path), legacy_keys_);
  if (!keys) return keys.error();
  for (const std::string* key : {&keys->key, &keys->legacy_key}) {
    if (key->empty()) continue;
    auto present = store::has_run(*db_, *key);
    if (!present) return db_error(path, present.error());
    if (*present) return KeyedIngest{false, false, *key, 0, 0, 0};
  }
  auto run_tags = tags();
  if (!run_tags) return run_tags.error();
  auto run = load::load_run_record(path, *run_tags, classifier, keys->key);
  if (!run) return run.error();
  auto outcome = store::ingest_run(*db_, *run);
  if (!outcome) return db_error(path, outcome.error());
  const bool added = *outcome == store::IngestOutcome::kAdded;
  return KeyedIngest{added, true, keys->key, run->kernels.size(), run->stages.size(), run->ranks.size()};
}

}  // namespace kernlens::sweep
