#include "kernlens/store/ingest_input.h"

#include <fmt/format.h>

namespace kernlens::store {

Result<IngestedInput> ingest_input(const ingest::SqliteDb& db, const std::string& db_path, const std::string& path,
                                   const Tags& tags, const names::KernelClassifier& classifier) {
  auto db_error = [&](const Error& e) { return make_error(db_path, 0, fmt::format("ingesting {}: {}", path, e.message)); };
  auto key = run_key(path);
  if (!key) return key.error();
  auto present = has_run(db, *key);
  if (!present) return db_error(present.error());
  if (*present) return IngestedInput{IngestOutcome::kAlreadyPresent, *key, 0, 0};
  auto run = read_run(path, tags, classifier, *key);
  if (!run) return run.error();
  auto outcome = ingest_run(db, *run);
  if (!outcome) return db_error(outcome.error());
  return IngestedInput{*outcome, *key, run->kernels.size(), run->stages.size()};
}

}  // namespace kernlens::store
