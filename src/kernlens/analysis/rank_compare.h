// Before/after per rank (issue 17): when both runs hold several ranks (RunRecord::ranks),
// each rank's kernel time, communication, exposed communication and stage times, base against
// candidate, ranks matched by number; and the straggler of each side. A rank on one side only
// is listed with that side's figures and named in a note. Ranks are shown, not judged: the
// verdict stays the whole run's (compare.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/analysis/delta.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

struct RankStageDelta {
  std::string name;
  Delta kernel, wall;
};

struct RankDelta {
  std::int64_t rank = 0;
  const model::RunRank* base = nullptr;       // null: the rank is in the candidate only
  const model::RunRank* candidate = nullptr;  // null: the rank is in the base only
  Delta kernel, comm, exposed;
  std::vector<RankStageDelta> stages;  // the base's stage order, then the candidate's new ones
};

struct RankComparison {
  std::vector<RankDelta> ranks;  // by rank; empty when not compared per rank
  std::optional<std::int64_t> base_straggler, candidate_straggler;
  // Why the ranks are not compared (one side of one rank, a rank listed twice), or which
  // ranks are on one side only.
  std::vector<std::string> notes;
};

// Both runs must outlive the result. Nothing (no rows, no notes) when neither run has ranks.
RankComparison compare_ranks(const model::RunRecord& base, const model::RunRecord& candidate);

}  // namespace kernlens::analysis
