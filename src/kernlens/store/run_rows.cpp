// ingest_run and load_run (database.h): a run record to rows and back. The columns are
// listed once, as data, for both directions.
#include <array>
#include <map>
#include <tuple>
#include <optional>

#include <fmt/format.h>

#include "kernlens/store/database.h"
#include "kernlens/store/rank_rows.h"
#include "kernlens/store/scaling_rows.h"
#include "kernlens/store/transaction.h"

namespace kernlens::store {
namespace {

using model::RunKernel;
using model::RunMeta;
using model::RunRecord;
using model::RunStage;

template <class Row, class Member>
struct Column {
  const char* name;
  Member Row::*member;
};

using MetaText = Column<RunMeta, std::string>;
constexpr std::array<MetaText, 11> kRunText = {{
    {"source_path", &RunMeta::source_path}, {"source_format", &RunMeta::source_format},
    {"command", &RunMeta::command},         {"model", &RunMeta::model},
    {"dtype", &RunMeta::dtype},             {"gpu", &RunMeta::gpu},
    {"driver", &RunMeta::driver},           {"cuda_version", &RunMeta::cuda_version},
    {"ncu_version", &RunMeta::ncu_version}, {"nsys_version", &RunMeta::nsys_version},
    {"torch_version", &RunMeta::torch_version},
}};

using KernelText = Column<RunKernel, std::string>;
constexpr std::array<KernelText, 9> kKernelText = {{
    {"name", &RunKernel::name},         {"base_name", &RunKernel::base_name},
    {"library", &RunKernel::library},   {"op_class", &RunKernel::op_class},
    {"grid", &RunKernel::grid},         {"block", &RunKernel::block},
    {"occupancy_limiter", &RunKernel::occupancy_limiter}, {"bottleneck", &RunKernel::bottleneck},
    {"bottleneck_reason", &RunKernel::bottleneck_reason},
}};

using KernelNumber = Column<RunKernel, std::optional<double>>;
constexpr std::array<KernelNumber, 17> kKernelNumbers = {{
    {"total_ns", &RunKernel::total_ns},
    {"mean_ns", &RunKernel::mean_ns},
    {"share", &RunKernel::share},
    {"sm_pct", &RunKernel::sm_pct},
    {"memory_pct", &RunKernel::memory_pct},
    {"dram_pct", &RunKernel::dram_pct},
    {"l1_hit_pct", &RunKernel::l1_hit_pct},
    {"l2_hit_pct", &RunKernel::l2_hit_pct},
    {"achieved_occupancy_pct", &RunKernel::achieved_occupancy_pct},
    {"theoretical_occupancy_pct", &RunKernel::theoretical_occupancy_pct},
    {"tensor_pipe_pct", &RunKernel::tensor_pipe_pct},
    {"flops", &RunKernel::flops},
    {"dram_bytes", &RunKernel::dram_bytes},
    {"arithmetic_intensity", &RunKernel::arithmetic_intensity},
    {"achieved_flops_per_s", &RunKernel::achieved_flops_per_s},
    {"peak_flops_per_s", &RunKernel::peak_flops_per_s},
    {"peak_dram_bytes_per_s", &RunKernel::peak_dram_bytes_per_s},
}};

using StageNumber = Column<RunStage, std::optional<double>>;
constexpr std::array<StageNumber, 6> kStageNumbers = {{
    {"kernel_time_ns", &RunStage::kernel_time_ns}, {"wall_ns", &RunStage::wall_ns},
    {"busy_fraction", &RunStage::busy_fraction},   {"gap_total_ns", &RunStage::gap_total_ns},
    {"flops", &RunStage::flops},                   {"mfu", &RunStage::mfu},
}};

template <class C>
std::string names_of(const C& columns) {
  std::string out;
  for (const auto& c : columns) out += fmt::format("{}{}", out.empty() ? "" : ", ", c.name);
  return out;
}

std::string placeholders(std::size_t first, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += fmt::format("{}?{}", i ? ", " : "", first + i);
  return out;
}

std::string device_key(const model::RunDevice& d) {
  return fmt::format("{}|{}|{}|{}", d.name, d.cc, d.sm_count.value_or(-1), d.memory_total_bytes.value_or(-1));
}

Result<std::optional<std::int64_t>> device_id(const SqliteDb& db, const std::optional<model::RunDevice>& device) {
  if (!device) return std::optional<std::int64_t>();
  auto insert = db.prepare(
      "INSERT INTO devices (device_key, name, cc, sm_count, memory_total_bytes, l2_cache_bytes) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (device_key) DO NOTHING");
  if (!insert) return insert.error();
  std::string key = device_key(*device);
  insert->bind(1, key);
  insert->bind_text_or_null(2, device->name);
  insert->bind_text_or_null(3, device->cc);
  insert->bind(4, device->sm_count);
  insert->bind(5, device->memory_total_bytes);
  insert->bind(6, device->l2_cache_bytes);
  if (Status s = insert->run(); !s) return s.error();
  auto select = db.prepare("SELECT device_id FROM devices WHERE device_key = ?1");
  if (!select) return select.error();
  select->bind(1, key);
  if (!select->step()) return make_error("", 0, select->error().value_or("device row missing"));
  return std::optional<std::int64_t>(select->int64(0));
}

Result<std::int64_t> insert_run_row(const SqliteDb& db, const RunRecord& run, std::optional<std::int64_t> device) {
  auto stmt = db.prepare(fmt::format(
      "INSERT INTO runs (run_key, {}, batch, tokens, kernlens_version, device_id, kernel_time_ns, launches, "
      "unique_kernels) VALUES (?1, {}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
      names_of(kRunText), placeholders(2, kRunText.size()), kRunText.size() + 2, kRunText.size() + 3,
      kRunText.size() + 4, kRunText.size() + 5, kRunText.size() + 6, kRunText.size() + 7, kRunText.size() + 8));
  if (!stmt) return stmt.error();
  int p = 1;
  stmt->bind(p++, run.meta.run_key);
  for (const auto& c : kRunText) stmt->bind_text_or_null(p++, run.meta.*c.member);
  stmt->bind(p++, run.meta.batch);
  stmt->bind(p++, run.meta.tokens);
  stmt->bind(p++, std::string_view(KERNLENS_VERSION));
  stmt->bind(p++, device);
  stmt->bind(p++, run.kernel_time_ns);
  stmt->bind(p++, static_cast<std::int64_t>(run.launches));
  stmt->bind(p++, static_cast<std::int64_t>(run.kernels.size()));
  if (Status s = stmt->run(); !s) return s.error();
  return db.last_insert_rowid();
}

Status insert_tags(const SqliteDb& db, std::int64_t run_id, const RunMeta& meta) {
  auto stmt = db.prepare("INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)");
  if (!stmt) return stmt.error();
  for (const auto& [key, value] : meta.tags) {
    stmt->reset();
    stmt->bind(1, run_id);
    stmt->bind(2, key);
    stmt->bind(3, value);
    if (Status s = stmt->run(); !s) return s;
  }
  return ok_status();
}

Status insert_kernels(const SqliteDb& db, std::int64_t run_id, const std::vector<RunKernel>& kernels) {
  std::size_t n = 3 + kKernelText.size() + kKernelNumbers.size();
  auto stmt = db.prepare(fmt::format("INSERT INTO kernels (run_id, kernel_idx, launches, {}, {}) VALUES ({})",
                                     names_of(kKernelText), names_of(kKernelNumbers), placeholders(1, n)));
  if (!stmt) return stmt.error();
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const RunKernel& k = kernels[i];
    stmt->reset();
    int p = 1;
    stmt->bind(p++, run_id);
    stmt->bind(p++, static_cast<std::int64_t>(i));
    stmt->bind(p++, static_cast<std::int64_t>(k.launches));
    for (const auto& c : kKernelText) stmt->bind(p++, std::string_view(k.*c.member));
    for (const auto& c : kKernelNumbers) stmt->bind(p++, k.*c.member);
    if (Status s = stmt->run(); !s) return s;
  }
  return ok_status();
}

Status insert_stages(const SqliteDb& db, std::int64_t run_id, const std::vector<RunStage>& stages) {
  std::size_t n = 6 + kStageNumbers.size();
  auto stmt = db.prepare(fmt::format(
      "INSERT INTO stages (run_id, stage_idx, name, depth, launches, gap_count, {}) VALUES ({})",
      names_of(kStageNumbers), placeholders(1, n)));
  if (!stmt) return stmt.error();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const RunStage& s = stages[i];
    stmt->reset();
    int p = 1;
    stmt->bind(p++, run_id);
    stmt->bind(p++, static_cast<std::int64_t>(i));
    stmt->bind(p++, std::string_view(s.name));
    stmt->bind(p++, std::int64_t{s.depth});
    stmt->bind(p++, static_cast<std::int64_t>(s.launches));
    stmt->bind(p++, s.gap_count);
    for (const auto& c : kStageNumbers) stmt->bind(p++, s.*c.member);
    if (Status st = stmt->run(); !st) return st;
  }
  return ok_status();
}

struct FamilyTotal {
  std::int64_t occurrences = 0, launches = 0;
  std::optional<double> total_ns;  // absent when no kernel of the family has a time
};

// The run's share of family_totals and family_models: one update per family, not per kernel.
Status add_family_totals(const SqliteDb& db, const RunRecord& run) {
  std::map<std::tuple<std::string, std::string, std::string>, FamilyTotal> families;
  for (const auto& k : run.kernels) {
    FamilyTotal& f = families[{k.base_name, k.library, k.op_class}];
    ++f.occurrences;
    f.launches += static_cast<std::int64_t>(k.launches);
    if (k.total_ns) f.total_ns = f.total_ns.value_or(0) + *k.total_ns;
  }
  auto totals = db.prepare(
      "INSERT INTO family_totals VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6) ON CONFLICT DO UPDATE SET "
      "occurrences = occurrences + excluded.occurrences, runs = runs + 1, launches = launches + excluded.launches, "
      "total_ns = CASE WHEN excluded.total_ns IS NULL THEN total_ns ELSE COALESCE(total_ns, 0) + excluded.total_ns END");
  auto models = db.prepare("INSERT INTO family_models VALUES (?1, ?2, ?3, ?4, 1) ON CONFLICT DO UPDATE SET runs = runs + 1");
  if (!totals) return totals.error();
  if (!models) return models.error();
  const std::string& model_key = run.meta.model.empty() ? run.meta.run_key : run.meta.model;
  for (const auto& [family, f] : families) {
    for (auto* stmt : {&*totals, &*models}) {
      stmt->reset();
      stmt->bind(1, std::string_view(std::get<0>(family)));
      stmt->bind(2, std::string_view(std::get<1>(family)));
      stmt->bind(3, std::string_view(std::get<2>(family)));
    }
    totals->bind(4, f.occurrences);
    totals->bind(5, f.launches);
    totals->bind(6, f.total_ns);
    models->bind(4, std::string_view(model_key));
    if (Status s = totals->run(); !s) return s;
    if (Status s = models->run(); !s) return s;
  }
  return ok_status();
}

Result<bool> run_present(const SqliteDb& db, const std::string& run_key) {
  auto stmt = db.prepare("SELECT 1 FROM runs WHERE run_key = ?1");
  if (!stmt) return stmt.error();
  stmt->bind(1, run_key);
  bool present = stmt->step();
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return present;
}

Status insert_run(const SqliteDb& db, const RunRecord& run) {
  auto device = device_id(db, run.device);
  if (!device) return device.error();
  auto run_id = insert_run_row(db, run, *device);
  if (!run_id) return run_id.error();
  if (Status s = insert_tags(db, *run_id, run.meta); !s) return s;
  if (Status s = insert_kernels(db, *run_id, run.kernels); !s) return s;
  if (Status s = add_family_totals(db, run); !s) return s;
  if (Status s = add_scaling_sums(db, run); !s) return s;
  if (Status s = insert_ranks(db, *run_id, run.ranks); !s) return s;
  return insert_stages(db, *run_id, run.stages);
}


Result<std::int64_t> find_run_id(const SqliteDb& db, std::string_view key_or_prefix) {
  auto stmt = db.prepare(
      "SELECT run_id, run_key, run_key = ?1 FROM runs WHERE run_key = ?1 OR CAST(run_id AS TEXT) = ?1 "
      "OR substr(run_key, 1, length(?1)) = ?1 ORDER BY run_key = ?1 DESC, run_id LIMIT 6");
  if (!stmt) return stmt.error();
  stmt->bind(1, key_or_prefix);
  std::vector<std::pair<std::int64_t, std::string>> found;
  while (stmt->step()) {
    if (stmt->int64(2) == 1) return stmt->int64(0);  // the exact key wins over prefixes
    found.emplace_back(stmt->int64(0), std::string(stmt->text(1)));
  }
  if (stmt->error()) return make_error("", 0, *stmt->error());
  if (found.empty()) return make_error("", 0, fmt::format("no run '{}' in the database", key_or_prefix));
  if (found.size() > 1) {
    std::string keys;
    for (const auto& f : found) keys += (keys.empty() ? "" : ", ") + f.second;
    return make_error("", 0, fmt::format("'{}' names several runs: {}", key_or_prefix, keys));
  }
  return found.front().first;
}

Status load_run_row(const SqliteDb& db, std::int64_t run_id, RunRecord& run) {
  auto stmt = db.prepare(fmt::format(
      "SELECT run_key, {}, batch, tokens, kernel_time_ns, launches, d.name, d.cc, d.sm_count, "
      "d.memory_total_bytes, d.l2_cache_bytes, runs.device_id FROM runs LEFT JOIN devices d "
      "ON d.device_id = runs.device_id WHERE run_id = ?1",
      names_of(kRunText)));
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  if (!stmt->step()) return make_error("", 0, stmt->error().value_or("run row missing"));
  int c = 0;
  run.meta.run_key = stmt->text(c++);
  for (const auto& col : kRunText) run.meta.*col.member = stmt->text(c++);
  run.meta.batch = stmt->opt_int64(c++);
  run.meta.tokens = stmt->opt_int64(c++);
  run.kernel_time_ns = stmt->opt_double(c++);
  run.launches = static_cast<std::uint64_t>(stmt->int64(c++));
  if (!stmt->is_null(c + 5)) {
    run.device = model::RunDevice{std::string(stmt->text(c)), std::string(stmt->text(c + 1)),
                                  stmt->opt_int64(c + 2), stmt->opt_int64(c + 3), stmt->opt_int64(c + 4)};
  }
  return ok_status();
}

Status load_tags(const SqliteDb& db, std::int64_t run_id, RunMeta& meta) {
  auto stmt = db.prepare("SELECT key, value FROM run_tags WHERE run_id = ?1 ORDER BY key");
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  while (stmt->step()) meta.tags.emplace_back(stmt->text(0), stmt->text(1));
  return stmt->error() ? Status(make_error("", 0, *stmt->error())) : ok_status();
}

Status load_kernels(const SqliteDb& db, std::int64_t run_id, std::vector<RunKernel>& kernels) {
  auto stmt = db.prepare(fmt::format("SELECT launches, {}, {} FROM kernels WHERE run_id = ?1 ORDER BY kernel_idx",
                                     names_of(kKernelText), names_of(kKernelNumbers)));
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  while (stmt->step()) {
    RunKernel& k = kernels.emplace_back();
    int c = 0;
    k.launches = static_cast<std::uint64_t>(stmt->int64(c++));
    for (const auto& col : kKernelText) k.*col.member = stmt->text(c++);
    for (const auto& col : kKernelNumbers) k.*col.member = stmt->opt_double(c++);
  }
  return stmt->error() ? Status(make_error("", 0, *stmt->error())) : ok_status();
}

Status load_stages(const SqliteDb& db, std::int64_t run_id, std::vector<RunStage>& stages) {
  auto stmt = db.prepare(fmt::format(
      "SELECT name, depth, launches, gap_count, {} FROM stages WHERE run_id = ?1 ORDER BY stage_idx",
      names_of(kStageNumbers)));
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  while (stmt->step()) {
    RunStage& s = stages.emplace_back();
    s.name = stmt->text(0);
    s.depth = static_cast<int>(stmt->int64(1));
    s.launches = static_cast<std::uint64_t>(stmt->int64(2));
    s.gap_count = stmt->opt_int64(3);
    int c = 4;
    for (const auto& col : kStageNumbers) s.*col.member = stmt->opt_double(c++);
  }
  return stmt->error() ? Status(make_error("", 0, *stmt->error())) : ok_status();
}

}  // namespace


Result<IngestOutcome> ingest_run(const SqliteDb& db, const RunRecord& run, const IngestOptions& options) {
  auto tx = Transaction::begin_immediate(db);
  if (!tx) return tx.error();
  auto present = run_present(db, run.meta.run_key);
  if (!present) return present.error();
  if (*present) return IngestOutcome::kAlreadyPresent;
  if (Status s = insert_run(db, run); !s) return s.error();
  if (options.before_commit) {
    if (Status s = options.before_commit(); !s) return s.error();
  }
  if (Status s = tx->commit(); !s) return s.error();
  return IngestOutcome::kAdded;
}

Result<RunRecord> load_run(const SqliteDb& db, std::string_view key_or_prefix) {
  auto run_id = find_run_id(db, key_or_prefix);
  if (!run_id) return run_id.error();
  RunRecord run;
  if (Status s = load_run_row(db, *run_id, run); !s) return s.error();
  if (Status s = load_tags(db, *run_id, run.meta); !s) return s.error();
  if (Status s = load_kernels(db, *run_id, run.kernels); !s) return s.error();
  if (Status s = load_stages(db, *run_id, run.stages); !s) return s.error();
  if (Status s = load_ranks(db, *run_id, run.ranks); !s) return s.error();
  return run;
}

}  // namespace kernlens::store

namespace kernlens::store {

Result<bool> has_run(const SqliteDb& db, const std::string& run_key) {
  return run_present(db, run_key);
}

Result<bool> has_run_key_not_matching(const SqliteDb& db, std::string_view glob) {
  auto stmt = db.prepare("SELECT EXISTS (SELECT 1 FROM runs WHERE run_key NOT GLOB ?1)");
  if (!stmt) return stmt.error();
  stmt->bind(1, glob);
  if (!stmt->step()) return make_error("", 0, stmt->error().value_or("no answer"));
  return stmt->int64(0) != 0;
}

}  // namespace kernlens::store
