#include "kernlens/store/rank_rows.h"

#include <map>

namespace kernlens::store {
namespace {

Status statement_status(const SqliteStatement& stmt) {
  return stmt.error() ? Status(make_error("", 0, *stmt.error())) : ok_status();
}

Status insert_stages(const SqliteDb& db, std::int64_t run_id, const model::RunRank& rank) {
  auto stmt = db.prepare(
      "INSERT INTO run_rank_stages (run_id, rank, stage_idx, name, kernel_time_ns, wall_ns, comm_ns, exposed_comm_ns) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!stmt) return stmt.error();
  for (std::size_t i = 0; i < rank.stages.size(); ++i) {
    const model::RunRankStage& s = rank.stages[i];
    stmt->reset();
    stmt->bind(1, run_id);
    stmt->bind(2, rank.rank);
    stmt->bind(3, static_cast<std::int64_t>(i));
    stmt->bind(4, std::string_view(s.name));
    stmt->bind(5, s.kernel_time_ns);
    stmt->bind(6, s.wall_ns);
    stmt->bind(7, s.comm_ns);
    stmt->bind(8, s.exposed_comm_ns);
    if (Status st = stmt->run(); !st) return st;
  }
  return ok_status();
}

}  // namespace

Status insert_ranks(const SqliteDb& db, std::int64_t run_id, const std::vector<model::RunRank>& ranks) {
  auto stmt = db.prepare(
      "INSERT INTO run_ranks (run_id, rank, input, launches, kernel_time_ns, busy_ns, wall_ns, comm_ns, "
      "exposed_comm_ns, role) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!stmt) return stmt.error();
  for (const auto& r : ranks) {
    stmt->reset();
    stmt->bind(1, run_id);
    stmt->bind(2, r.rank);
    stmt->bind_text_or_null(3, r.input);
    stmt->bind(4, static_cast<std::int64_t>(r.launches));
    stmt->bind(5, r.kernel_time_ns);
    stmt->bind(6, r.busy_ns);
    stmt->bind(7, r.wall_ns);
    stmt->bind(8, r.comm_ns);
    stmt->bind(9, r.exposed_comm_ns);
    stmt->bind(10, std::string_view(r.role));
    if (Status s = stmt->run(); !s) return s;
    if (Status s = insert_stages(db, run_id, r); !s) return s;
  }
  return ok_status();
}

Status load_ranks(const SqliteDb& db, std::int64_t run_id, std::vector<model::RunRank>& ranks) {
  auto stmt = db.prepare(
      "SELECT rank, input, launches, kernel_time_ns, busy_ns, wall_ns, comm_ns, exposed_comm_ns, role "
      "FROM run_ranks WHERE run_id = ?1 ORDER BY rank");
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  std::map<std::int64_t, std::size_t> index;
  while (stmt->step()) {
    model::RunRank& r = ranks.emplace_back();
    r.rank = stmt->int64(0);
    r.input = stmt->text(1);
    r.launches = static_cast<std::uint64_t>(stmt->int64(2));
    r.kernel_time_ns = stmt->opt_double(3).value_or(0);
    r.busy_ns = stmt->opt_double(4);
    r.wall_ns = stmt->opt_double(5);
    r.comm_ns = stmt->opt_double(6).value_or(0);
    r.exposed_comm_ns = stmt->opt_double(7).value_or(0);
    r.role = stmt->text(8);
    index[r.rank] = ranks.size() - 1;
  }
  if (Status s = statement_status(*stmt); !s) return s;
  auto stages = db.prepare(
      "SELECT rank, name, kernel_time_ns, wall_ns, comm_ns, exposed_comm_ns FROM run_rank_stages "
      "WHERE run_id = ?1 ORDER BY rank, stage_idx");
  if (!stages) return stages.error();
  stages->bind(1, run_id);
  while (stages->step()) {
    auto it = index.find(stages->int64(0));
    if (it == index.end()) continue;  // a stage row of no rank row: nothing to attach it to
    ranks[it->second].stages.push_back(model::RunRankStage{std::string(stages->text(1)),
                                                           stages->opt_double(2).value_or(0), stages->opt_double(3),
                                                           stages->opt_double(4).value_or(0),
                                                           stages->opt_double(5).value_or(0)});
  }
  return statement_status(*stages);
}

}  // namespace kernlens::store
