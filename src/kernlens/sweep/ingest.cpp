#include "kernlens/sweep/ingest.h"

#include "kernlens/load/run_record.h"
#include "kernlens/rundir/run_key.h"
#include "kernlens/store/database.h"
#include "kernlens/sweep/status.h"

namespace kernlens::sweep {
namespace {

IngestResult ingest_point(const Point& p, const SqliteDb& db, const names::KernelClassifier& classifier) {
  using Outcome = IngestResult::Outcome;
  IngestResult out{p.index, Outcome::kNotComplete, "", ""};
  if (!run_complete(p.run_dir())) return out;
  auto key = rundir::run_key(p.run_dir());
  if (!key) return {p.index, Outcome::kError, "", key.error().to_string()};
  auto present = store::has_run(db, *key);
  if (!present) return {p.index, Outcome::kError, *key, present.error().to_string()};
  if (*present) return {p.index, Outcome::kAlreadyPresent, *key, ""};
  auto tags = read_point_tags(p);
  if (!tags) return {p.index, Outcome::kError, "", tags.error().to_string()};
  auto run = load::load_run_record(p.run_dir(), *tags, classifier, *key);
  if (!run) return {p.index, Outcome::kError, "", run.error().to_string()};
  auto added = store::ingest_run(db, *run);
  if (!added) return {p.index, Outcome::kError, run->meta.run_key, added.error().to_string()};
  return {p.index, *added == store::IngestOutcome::kAdded ? Outcome::kAdded : Outcome::kAlreadyPresent,
          run->meta.run_key, ""};
}

}  // namespace

std::vector<IngestResult> ingest_sweep(const Plan& plan, const SqliteDb& db,
                                       const names::KernelClassifier& classifier,
                                       const std::function<void(const IngestResult&)>& on_point) {
  std::vector<IngestResult> results;
  for (const auto& p : plan.points) {
    results.push_back(ingest_point(p, db, classifier));
    if (on_point) on_point(results.back());
  }
  return results;
}

}  // namespace kernlens::sweep
