#include "kernlens/store/scaling_rows.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

namespace kernlens::store {
namespace {

// A sum as SQL's SUM() keeps it: absent until a value is added.
void add(std::optional<double>& sum, std::optional<double> v) {
  if (v) sum = sum.value_or(0) + *v;
}

// The time of the kernels where a figure is known, and the figure weighted by it.
struct Timed {
  std::optional<double> ns, weighted;
  void add_kernel(std::optional<double> figure, std::optional<double> time_ns) {
    if (!figure || !time_ns) return;
    add(ns, time_ns);
    add(weighted, *figure * *time_ns);
  }
};

struct CellSums {
  std::int64_t launches = 0;
  std::optional<double> total_ns;
  Timed sol, sm, memory;
  std::optional<double> flops, flops_ns, dram_bytes, dram_ns;
};

// The nullable sums of scaling_cells, in column order after launches.
constexpr std::array<const char*, 11> kSumColumns = {"total_ns",  "sol_ns",   "sol_weighted", "sm_ns",
                                                     "sm_weighted", "memory_ns", "memory_weighted", "flops",
                                                     "flops_ns",  "dram_bytes", "dram_ns"};

std::array<std::optional<double>, 11> values(const CellSums& c) {
  return {c.total_ns, c.sol.ns, c.sol.weighted, c.sm.ns, c.sm.weighted, c.memory.ns, c.memory.weighted,
          c.flops, c.flops_ns, c.dram_bytes, c.dram_ns};
}

// ncu's speed of light: the larger of SM and memory throughput, either when one is missing.
std::optional<double> sol(const model::RunKernel& k) {
  if (!k.sm_pct) return k.memory_pct;
  if (!k.memory_pct) return k.sm_pct;
  return std::max(*k.sm_pct, *k.memory_pct);
}

std::string quoted(const std::string& text) {
  if (text.empty()) return "NULL";
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string quoted(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : std::string("NULL");
}

// "x = CASE WHEN excluded.x IS NULL THEN x ELSE COALESCE(x, 0) + excluded.x END, ..."
std::string upsert_sums() {
  std::string out = "launches = launches + excluded.launches";
  for (const char* c : kSumColumns) {
    out += fmt::format(", {0} = CASE WHEN excluded.{0} IS NULL THEN {0} ELSE COALESCE({0}, 0) + excluded.{0} END", c);
  }
  return out;
}

Status add_point(const SqliteDb& db, const std::string& key, const model::RunRecord& run) {
  auto stmt = db.prepare(
      "INSERT INTO scaling_points VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7) ON CONFLICT DO UPDATE SET runs = runs + 1, "
      "kernel_time_ns = CASE WHEN excluded.kernel_time_ns IS NULL THEN kernel_time_ns "
      "ELSE COALESCE(kernel_time_ns, 0) + excluded.kernel_time_ns END");
  if (!stmt) return stmt.error();
  stmt->bind(1, std::string_view(key));
  stmt->bind_text_or_null(2, run.meta.gpu);
  stmt->bind_text_or_null(3, run.meta.dtype);
  stmt->bind_text_or_null(4, run.meta.model);
  stmt->bind(5, run.meta.batch);
  stmt->bind(6, run.meta.tokens);
  stmt->bind(7, run.kernel_time_ns);
  return stmt->run();
}

}  // namespace

std::string point_key(const model::RunMeta& meta) {
  return fmt::format("{}|{}|{}|{}|{}", quoted(meta.gpu), quoted(meta.dtype), quoted(meta.model), quoted(meta.batch),
                     quoted(meta.tokens));
}

Status add_scaling_sums(const SqliteDb& db, const model::RunRecord& run) {
  const std::string key = point_key(run.meta);
  if (Status s = add_point(db, key, run); !s) return s;
  std::map<std::tuple<std::string, std::string, std::string>, CellSums> cells;
  for (const auto& k : run.kernels) {
    CellSums& c = cells[{k.base_name, k.library, k.op_class}];
    c.launches += static_cast<std::int64_t>(k.launches);
    add(c.total_ns, k.total_ns);
    c.sol.add_kernel(sol(k), k.total_ns);
    c.sm.add_kernel(k.sm_pct, k.total_ns);
    c.memory.add_kernel(k.memory_pct, k.total_ns);
    add(c.flops, k.flops);
    if (k.flops) add(c.flops_ns, k.total_ns);
    add(c.dram_bytes, k.dram_bytes);
    if (k.dram_bytes) add(c.dram_ns, k.total_ns);
  }
  auto stmt = db.prepare(fmt::format(
      "INSERT INTO scaling_cells VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
      "ON CONFLICT DO UPDATE SET {}",
      upsert_sums()));
  if (!stmt) return stmt.error();
  for (const auto& [family, c] : cells) {
    stmt->reset();
    stmt->bind(1, std::string_view(key));
    stmt->bind(2, std::string_view(std::get<0>(family)));
    stmt->bind(3, std::string_view(std::get<1>(family)));
    stmt->bind(4, std::string_view(std::get<2>(family)));
    stmt->bind(5, c.launches);
    int p = 6;
    for (const auto& v : values(c)) stmt->bind(p++, v);
    if (Status s = stmt->run(); !s) return s;
  }
  return ok_status();
}

}  // namespace kernlens::store
