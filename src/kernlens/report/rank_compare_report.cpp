#include "kernlens/report/rank_compare_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernlens/common/text.h"
#include "kernlens/report/delta_format.h"
#include "kernlens/report/markdown_report.h"

namespace kernlens::report {
namespace {

using analysis::Delta;
using analysis::RankComparison;
using analysis::RankDelta;
using Json = nlohmann::ordered_json;

bool empty(const RankComparison& c) { return c.ranks.empty() && c.notes.empty(); }

std::string straggler_text(const std::optional<std::int64_t>& rank) {
  return rank ? fmt::format("rank {}", *rank) : "none";
}

std::string role_text(const model::RunRank* r) { return r ? r->role : "absent"; }

// A figure's change; "-" when it is 0 on both sides (a rank without communication).
std::string rank_change_text(const Delta& d) {
  if (d.base_ns && d.candidate_ns && *d.base_ns == 0 && *d.candidate_ns == 0) return "-";
  return change_text(d);
}

struct Figures {
  std::vector<std::pair<std::string, const Delta*>> rows;
  std::size_t stages_left_out = 0;
};

// The figures of one rank, each a (what, delta) row: its totals, then its stages by the size
// of their kernel time's change, at most `top` of them (0: all).
Figures figures(const RankDelta& d, std::size_t top) {
  Figures out;
  out.rows = {{"kernel time", &d.kernel}, {"communication", &d.comm}, {"exposed communication", &d.exposed}};
  std::vector<const analysis::RankStageDelta*> stages;
  for (const auto& s : d.stages) stages.push_back(&s);
  std::stable_sort(stages.begin(), stages.end(), [](const auto* a, const auto* b) {
    return std::abs(a->kernel.delta_ns()) > std::abs(b->kernel.delta_ns());
  });
  if (top && stages.size() > top) {
    out.stages_left_out = stages.size() - top;
    stages.resize(top);
  }
  for (const auto* s : stages) {
    out.rows.emplace_back("stage " + s->name + " (kernels)", &s->kernel);
    if (s->wall.base_ns || s->wall.candidate_ns) out.rows.emplace_back("stage " + s->name + " (wall)", &s->wall);
  }
  return out;
}

std::string left_out_text(std::size_t n) {
  return fmt::format("{} more stage{} (by the size of the change; --top 0 lists all)", n, n == 1 ? "" : "s");
}

std::string header(const RankComparison& c, bool normalized) {
  std::string out = fmt::format("ranks (matched by rank number; shown, not judged{})",
                                normalized ? "; plain time, not normalised" : "");
  if (c.ranks.empty()) return out;
  return out + fmt::format(": straggler: base {}, candidate {}", straggler_text(c.base_straggler),
                           straggler_text(c.candidate_straggler));
}

}  // namespace

std::string rank_compare_text(const RankComparison& c, bool normalized, std::size_t top) {
  if (empty(c)) return "";
  std::string out = header(c, normalized) + "\n";
  if (!c.ranks.empty()) {
    out += fmt::format("  {:>4}  {:>8}  {:>11}  {:>11}  {:>11}  {}\n", "rank", "change", "base", "candidate", "delta",
                       "figure");
  }
  for (const auto& d : c.ranks) {
    out += fmt::format("  {:>4}  {:>8}  {:>11}  {:>11}  {:>11}  role\n", d.rank, "", role_text(d.base),
                       role_text(d.candidate), "");
    const Figures f = figures(d, top);
    for (const auto& [what, delta] : f.rows) {
      out += fmt::format("  {:>4}  {:>8}  {:>11}  {:>11}  {:>11}  {}\n", d.rank, rank_change_text(*delta),
                         ns_or_dash(delta->base_ns), ns_or_dash(delta->candidate_ns), signed_ns(delta->delta_ns()),
                         escape_controls(what));
    }
    if (f.stages_left_out) out += fmt::format("  {:>4}  ... {}\n", d.rank, left_out_text(f.stages_left_out));
  }
  for (const auto& n : c.notes) out += "  note: " + n + "\n";
  return out + "\n";
}

std::string rank_compare_markdown(const RankComparison& c, bool normalized, std::size_t top) {
  if (empty(c)) return "";
  std::string out = "\n" + header(c, normalized) + "\n\n";
  for (const auto& n : c.notes) out += "- " + n + "\n";
  if (c.ranks.empty()) return out;
  out += "\n| rank | figure | base | candidate | change |\n|---:|---|---:|---:|---:|\n";
  for (const auto& d : c.ranks) {
    out += fmt::format("| {} | role | {} | {} | |\n", d.rank, role_text(d.base), role_text(d.candidate));
    const Figures f = figures(d, top);
    for (const auto& [what, delta] : f.rows) {
      out += fmt::format("| {} | {} | {} | {} | {} |\n", d.rank, code_span(what), ns_or_dash(delta->base_ns),
                         ns_or_dash(delta->candidate_ns), rank_change_text(*delta));
    }
    if (f.stages_left_out) out += fmt::format("| {} | {} | | | |\n", d.rank, left_out_text(f.stages_left_out));
  }
  return out;
}

Json rank_compare_json(const RankComparison& c) {
  if (empty(c)) return nullptr;
  auto rank_or_null = [](const std::optional<std::int64_t>& r) { return r ? Json(*r) : Json(nullptr); };
  auto role_or_null = [](const model::RunRank* r) { return r ? Json(r->role) : Json(nullptr); };
  Json rows = Json::array();
  for (const auto& d : c.ranks) {
    Json stages = Json::array();
    for (const auto& s : d.stages) {
      stages.push_back(Json{{"name", s.name}, {"kernel_time", delta_json(s.kernel)}, {"wall", delta_json(s.wall)}});
    }
    rows.push_back(Json{{"rank", d.rank}, {"in_base", d.base != nullptr}, {"in_candidate", d.candidate != nullptr},
                        {"base_role", role_or_null(d.base)}, {"candidate_role", role_or_null(d.candidate)},
                        {"kernel_time", delta_json(d.kernel)}, {"communication", delta_json(d.comm)},
                        {"exposed_communication", delta_json(d.exposed)}, {"stages", std::move(stages)}});
  }
  return Json{{"straggler", Json{{"base", rank_or_null(c.base_straggler)}, {"candidate", rank_or_null(c.candidate_straggler)}}},
              {"ranks", std::move(rows)},
              {"notes", c.notes}};
}

}  // namespace kernlens::report
