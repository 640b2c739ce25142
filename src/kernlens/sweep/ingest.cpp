#include "kernlens/sweep/ingest.h"

#include "kernlens/sweep/keyed_ingest.h"
#include "kernlens/sweep/status.h"

namespace kernlens::sweep {
namespace {

IngestResult ingest_point(const Point& p, const KeyedIngester& ingester, const names::KernelClassifier& classifier) {
  using Outcome = IngestResult::Outcome;
  if (!run_complete(p.run_dir())) return {p.index, Outcome::kNotComplete, "", ""};
  auto done = ingester.ingest(p.run_dir(), [&] { return read_point_tags(p); }, classifier);
  if (!done) return {p.index, Outcome::kError, "", done.error().to_string()};
  return {p.index, done->added ? Outcome::kAdded : Outcome::kAlreadyPresent, done->run_key, ""};
}

}  // namespace

Result<std::vector<IngestResult>> ingest_sweep(const Plan& plan, const SqliteDb& db, const std::string& db_path,
                                               const names::KernelClassifier& classifier,
                                               const std::function<void(const IngestResult&)>& on_point) {
  auto ingester = KeyedIngester::open(db, db_path);
  if (!ingester) return ingester.error();
  std::vector<IngestResult> results;
  for (const auto& p : plan.points) {
    results.push_back(ingest_point(p, *ingester, classifier));
    if (on_point) on_point(results.back());
  }
  return results;
}

}  // namespace kernlens::sweep
