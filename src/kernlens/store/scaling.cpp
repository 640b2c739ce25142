#include "kernlens/store/scaling.h"

#include <fmt/format.h>

namespace kernlens::store {
namespace {

constexpr std::string_view kColumns =
    "gpu, dtype, model, batch, tokens, op_class, runs, time_ns_per_run, share_of_time, sol_pct, sm_pct, memory_pct, "
    "flops_per_s, dram_bytes_per_s, measured_share";

model::ScalingCell read_cell(const SqliteStatement& s) {
  model::ScalingCell c;
  c.gpu = s.text(0);
  c.dtype = s.text(1);
  c.model = s.text(2);
  c.batch = s.opt_int64(3);
  c.tokens = s.opt_int64(4);
  c.op_class = s.text(5);
  c.runs = s.int64(6);
  int col = 7;
  for (auto* field : {&c.time_ns_per_run, &c.share_of_time, &c.sol_pct, &c.sm_pct, &c.memory_pct, &c.flops_per_s,
                      &c.dram_bytes_per_s, &c.measured_share}) {
    *field = s.opt_double(col++);
  }
  if (s.column_count() > col) {
    c.base_name = s.text(col);
    c.library = s.text(col + 1);
  }
  return c;
}

Result<std::vector<model::ScalingCell>> cells(const SqliteDb& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  if (!stmt) return stmt.error();
  std::vector<model::ScalingCell> out;
  while (stmt->step()) out.push_back(read_cell(*stmt));
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return out;
}

Result<std::vector<std::string>> distinct(const SqliteDb& db, std::string_view column) {
  auto stmt = db.prepare(fmt::format("SELECT DISTINCT {0} FROM runs WHERE {0} IS NOT NULL AND {0} <> '' ORDER BY 1", column));
  if (!stmt) return stmt.error();
  std::vector<std::string> out;
  while (stmt->step()) out.emplace_back(stmt->text(0));
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return out;
}

}  // namespace

Result<model::CrossModel> load_cross_model(const SqliteDb& db, std::size_t top_families) {
  model::CrossModel out;
  auto runs = db.prepare("SELECT COUNT(*) FROM runs");
  if (!runs) return runs.error();
  if (runs->step()) out.runs = runs->int64(0);
  auto models = distinct(db, "model");
  auto gpus = distinct(db, "gpu");
  auto classes = cells(db, fmt::format("SELECT {} FROM v_op_class_scaling", kColumns));
  // The families with the most time over all runs (family_totals, kept by ingest), in that order.
  auto families = cells(db, fmt::format(
      "SELECT {}, v.base_name, v.library FROM v_family_scaling v JOIN (SELECT base_name, library, op_class, "
      "ROW_NUMBER() OVER (ORDER BY total_ns DESC) AS rank FROM family_totals ORDER BY total_ns DESC LIMIT {}) t "
      "USING (base_name, library, op_class) ORDER BY t.rank, v.gpu, v.dtype, v.model, v.batch, v.tokens",
      kColumns, top_families));
  for (const Error* e : {models ? nullptr : &models.error(), gpus ? nullptr : &gpus.error(),
                         classes ? nullptr : &classes.error(), families ? nullptr : &families.error()}) {
    if (e) return *e;
  }
  out.models = std::move(models).value();
  out.gpus = std::move(gpus).value();
  out.op_classes = std::move(classes).value();
  out.families = std::move(families).value();
  return out;
}

}  // namespace kernlens::store
