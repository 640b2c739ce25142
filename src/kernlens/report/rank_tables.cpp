#include "kernlens/report/rank_tables.h"

#include <fmt/format.h>

#include "kernlens/common/text.h"
#include "kernlens/report/format.h"

namespace kernlens::report {
namespace {

using Json = nlohmann::ordered_json;
using analysis::RankRow;
using analysis::role_name;

std::string duration_or_dash(const std::optional<double>& ns) { return ns ? human_duration_ns(*ns) : "-"; }

std::string share_or_dash(double part, double whole) { return whole > 0 ? human_percent(part / whole) : "-"; }

void append_rank_rows(std::string& out, const analysis::RankAnalysis& ranks) {
  out += fmt::format("{:>4}  {:>8}  {:>10}  {:>10}  {:>6}  {:>10}  {:>10}  {:>8}  {:>9}  {}\n", "rank", "launches",
                     "kernels", "wall", "busy", "comm", "exposed", "overlap", "role", "input");
  for (const auto& r : ranks.ranks) {
    auto f = r.busy_fraction();
    out += fmt::format("{:>4}  {:>8}  {:>10}  {:>10}  {:>6}  {:>10}  {:>10}  {:>8}  {:>9}  {}\n", r.rank, r.launches,
                       human_duration_ns(r.kernel_time_ns), duration_or_dash(r.wall_ns), f ? human_percent(*f) : "-",
                       human_duration_ns(r.comm.comm_ns), human_duration_ns(r.comm.exposed_ns()),
                       share_or_dash(r.comm.overlapped_ns, r.comm.comm_ns), role_name(r.role),
                       escape_controls(r.input));
  }
}

void append_lanes(std::string& out, const analysis::RankAnalysis& ranks) {
  out += "\nGPU lanes (one timeline each)\n";
  out += fmt::format("{:>4}  {:>4}  {:>8}  {:>10}  {:>10}  {:>6}  {:>7}  {:>10}\n", "rank", "gpu", "launches",
                     "kernels", "wall", "busy", "gaps", "largest");
  for (const auto& r : ranks.ranks) {
    for (const auto& l : r.lanes) {
      const bool timed = l.busy_ns && l.wall_ns && *l.wall_ns > 0;
      out += fmt::format("{:>4}  {:>4}  {:>8}  {:>10}  {:>10}  {:>6}  {:>7}  {:>10}\n", r.rank,
                         l.device >= 0 ? std::to_string(l.device) : "?", l.launches, human_duration_ns(l.kernel_time_ns),
                         duration_or_dash(l.wall_ns), timed ? human_percent(*l.busy_ns / *l.wall_ns) : "-",
                         l.gaps.count, l.gaps.count ? human_duration_ns(l.gaps.largest_ns) : "-");
    }
  }
}

void append_collectives(std::string& out, const analysis::RankAnalysis& ranks) {
  std::string lines;
  for (const auto& r : ranks.ranks) {
    for (const auto& c : r.collectives) {
      lines += fmt::format("{:>4}  {:>15}  {:>8}  {:>10}  {:>10}\n", r.rank, c.kind, c.count,
                           human_duration_ns(c.time_ns), c.bytes ? human_si(static_cast<double>(*c.bytes), "B") : "-");
    }
  }
  if (lines.empty()) return;
  out += "\nCollectives\n";
  out += fmt::format("{:>4}  {:>15}  {:>8}  {:>10}  {:>10}\n", "rank", "collective", "count", "time", "bytes");
  out += lines;
}

void append_skew(std::string& out, const analysis::RankAnalysis& ranks, std::size_t top) {
  if (ranks.skew.empty()) return;
  out += "\nSkew between ranks (kernel time; wall time for \"stage wall\")\n";
  out += fmt::format("{:>10}  {:>7}  {:>10}  {:>7}  {:>10}  {:>10}  {}\n", "spread", "slowest", "time", "fastest",
                     "time", "kind", "name");
  const std::size_t n = top == 0 ? ranks.skew.size() : std::min(top, ranks.skew.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = ranks.skew[i];
    out += fmt::format("{:>10}  {:>7}  {:>10}  {:>7}  {:>10}  {:>10}  {}\n", human_duration_ns(s.spread_ns()),
                       s.slowest_rank, human_duration_ns(s.slowest_ns), s.fastest_rank,
                       human_duration_ns(s.fastest_ns), s.what, escape_controls(s.name));
  }
  if (n < ranks.skew.size()) out += fmt::format("  ... {} more\n", ranks.skew.size() - n);
}

Json comm_json(const analysis::CommFigures& c) {
  return Json{{"comm_ns", json_number(c.comm_ns)},
              {"overlapped_ns", json_number(c.overlapped_ns)},
              {"exposed_ns", json_number(c.exposed_ns())}};
}

void put_optional(Json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = json_number(*v);
}

Json gaps_json(const analysis::GapStats& g) {
  return Json{{"count", g.count}, {"total_ns", json_number(g.total_ns)}, {"largest_ns", json_number(g.largest_ns)}};
}

Json rank_json(const RankRow& r) {
  Json j;
  j["rank"] = r.rank;
  j["rank_source"] = r.rank_from_input ? "distributedInfo" : "input order";
  if (r.distributed.world_size >= 0) j["world_size"] = r.distributed.world_size;
  if (!r.distributed.backend.empty()) j["backend"] = r.distributed.backend;
  j["input"] = r.input;
  if (r.pid >= 0) j["pid"] = r.pid;
  j["launches"] = r.launches;
  j["kernel_time_ns"] = json_number(r.kernel_time_ns);
  put_optional(j, "busy_ns", r.busy_ns);
  put_optional(j, "wall_ns", r.wall_ns);
  j["gaps"] = gaps_json(r.gaps);
  j["communication"] = comm_json(r.comm);
  j["role"] = role_name(r.role);
  Json lanes = Json::array();
  for (const auto& l : r.lanes) {
    Json lane{{"device", l.device}, {"launches", l.launches}, {"kernel_time_ns", json_number(l.kernel_time_ns)}};
    put_optional(lane, "busy_ns", l.busy_ns);
    put_optional(lane, "wall_ns", l.wall_ns);
    lane["gaps"] = gaps_json(l.gaps);
    lanes.push_back(std::move(lane));
  }
  j["lanes"] = std::move(lanes);
  Json stages = Json::array();
  for (const auto& s : r.stages) {
    Json stage{{"name", s.name}, {"kernel_time_ns", json_number(s.kernel_time_ns)}};
    put_optional(stage, "wall_ns", s.wall_ns);
    stage["communication"] = comm_json(s.comm);
    stages.push_back(std::move(stage));
  }
  j["stages"] = std::move(stages);
  Json collectives = Json::array();
  for (const auto& c : r.collectives) {
    Json cj{{"kind", c.kind}, {"count", c.count}, {"time_ns", json_number(c.time_ns)}};
    if (c.bytes) cj["bytes"] = *c.bytes;
    collectives.push_back(std::move(cj));
  }
  j["collectives"] = std::move(collectives);
  return j;
}

}  // namespace

std::string ranks_text(const analysis::RankAnalysis& ranks, std::size_t top) {
  if (!ranks.multi_rank()) return {};
  std::string out = "\nRanks (communication: NCCL/NVSHMEM kernels and peer copies; overlap: share of it under "
                    "compute kernels on the same GPU)\n";
  append_rank_rows(out, ranks);
  for (const auto& w : ranks.warnings) out += fmt::format("  warning: {}\n", w);
  append_lanes(out, ranks);
  append_collectives(out, ranks);
  append_skew(out, ranks, top);
  return out;
}

Json ranks_json(const analysis::RankAnalysis& ranks) {
  if (!ranks.multi_rank()) return nullptr;
  Json j;
  Json rows = Json::array();
  for (const auto& r : ranks.ranks) rows.push_back(rank_json(r));
  j["ranks"] = std::move(rows);
  Json skew = Json::array();
  for (const auto& s : ranks.skew) {
    skew.push_back(Json{{"kind", s.what}, {"name", s.name}, {"slowest_rank", s.slowest_rank},
                        {"slowest_ns", json_number(s.slowest_ns)}, {"fastest_rank", s.fastest_rank},
                        {"fastest_ns", json_number(s.fastest_ns)}, {"spread_ns", json_number(s.spread_ns())}});
  }
  j["skew"] = std::move(skew);
  Json warnings = Json::array();
  for (const auto& w : ranks.warnings) warnings.push_back(w);
  j["warnings"] = std::move(warnings);
  return j;
}

}  // namespace kernlens::report
