#include "kernlens/analysis/rank_compare.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

using model::RunRank;

// A rank number listed twice on a side: the side cannot be matched rank by rank.
std::optional<std::int64_t> duplicated_rank(const std::vector<RunRank>& ranks) {
  std::set<std::int64_t> seen;
  for (const auto& r : ranks) {
    if (!seen.insert(r.rank).second) return r.rank;
  }
  return std::nullopt;
}

std::optional<std::int64_t> straggler_of(const std::vector<RunRank>& ranks) {
  for (const auto& r : ranks) {
    if (r.role == "straggler") return r.rank;
  }
  return std::nullopt;
}

std::string ranks_word(std::size_t n) { return n == 1 ? "one rank" : fmt::format("{} ranks", n); }

// Why the two sides cannot be compared rank by rank; empty when they can.
std::string not_comparable(const model::RunRecord& base, const model::RunRecord& candidate) {
  if (base.ranks.empty() != candidate.ranks.empty()) {
    return fmt::format("not compared per rank: the base has {}, the candidate {}",
                       ranks_word(std::max<std::size_t>(base.ranks.size(), 1)),
                       ranks_word(std::max<std::size_t>(candidate.ranks.size(), 1)));
  }
  for (auto [side, run] : {std::pair{"base", &base}, std::pair{"candidate", &candidate}}) {
    if (auto rank = duplicated_rank(run->ranks)) {
      return fmt::format("not compared per rank: the {} lists rank {} twice", side, *rank);
    }
  }
  return {};
}

void add_side(RankDelta& d, const RunRank& r, bool base) {
  (base ? d.base : d.candidate) = &r;
  auto set = [&](Delta& delta, double ns) { (base ? delta.base_ns : delta.candidate_ns) = ns; };
  set(d.kernel, r.kernel_time_ns);
  set(d.comm, r.comm_ns);
  set(d.exposed, r.exposed_comm_ns);
  for (const auto& s : r.stages) {
    auto it = std::find_if(d.stages.begin(), d.stages.end(), [&](const RankStageDelta& x) { return x.name == s.name; });
    if (it == d.stages.end()) it = d.stages.insert(d.stages.end(), RankStageDelta{s.name, {}, {}});
    set(it->kernel, s.kernel_time_ns);
    (base ? it->wall.base_ns : it->wall.candidate_ns) = s.wall_ns;
  }
}

}  // namespace

RankComparison compare_ranks(const model::RunRecord& base, const model::RunRecord& candidate) {
  RankComparison out;
  if (base.ranks.empty() && candidate.ranks.empty()) return out;
  if (std::string why = not_comparable(base, candidate); !why.empty()) {
    out.notes.push_back(std::move(why));
    return out;
  }
  std::map<std::int64_t, RankDelta> by_rank;
  for (const auto& r : base.ranks) add_side(by_rank[r.rank], r, true);
  for (const auto& r : candidate.ranks) add_side(by_rank[r.rank], r, false);
  for (auto& [rank, d] : by_rank) {
    d.rank = rank;
    if (!d.base || !d.candidate) {
      out.notes.push_back(fmt::format("rank {} is in the {} only", rank, d.base ? "base" : "candidate"));
    }
    out.ranks.push_back(std::move(d));
  }
  out.base_straggler = straggler_of(base.ranks);
  out.candidate_straggler = straggler_of(candidate.ranks);
  return out;
}

}  // namespace kernlens::analysis
